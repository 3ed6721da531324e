"""Execution over REST (docs/protocol.md#execution), on the shop of ``tests.generic.shop``:
one path, checks in order, nothing half-applied."""

from __future__ import annotations

import io
import json
from datetime import timedelta
from decimal import Decimal

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings
from django.utils import timezone

from affordances.catalog import get_catalog
from affordances.execution import perform
from affordances.idempotency import fingerprint
from affordances.models import AuditRecord, IdempotencyRecord
from affordances.problems import Problem
from tests.generic.models import Ticket
from tests.generic.shop import Purchase

PROBLEM = "application/problem+json"
CANCEL_URN = "urn:example:operation:cancel-purchase:v1"
PROBLEM_KEYS = {"type", "title", "status", "code", "detail"}


def url(purchase_or_pk, transition: str) -> str:
    pk = getattr(purchase_or_pk, "pk", purchase_or_pk)
    return f"/api/purchases/{pk}/{transition}/"


def post(client, purchase_or_pk, transition: str, body=None, **headers):
    return client.post(url(purchase_or_pk, transition), body or {}, format="json", headers=headers)


def snapshot(pk) -> tuple[str, int, int]:
    purchase = Purchase.objects.get(pk=pk)
    return purchase.status, purchase.version, AuditRecord.objects.count()


def assert_problem(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith(PROBLEM)
    body = response.json()
    assert set(body) >= PROBLEM_KEYS
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"] == f"urn:example:problem:{code.replace('_', '-')}"
    assert isinstance(body["title"], str)
    assert body["title"]
    assert isinstance(body["detail"], str)
    return body


# --- success -----------------------------------------------------------------------------


def test_cancel_succeeds_with_new_representation_version_and_one_audit_record(shop, shop_api):
    purchase = shop.purchases["p-01"]
    support = shop.users["support"]

    response = post(
        shop_api("support"), purchase, "cancel", {"reason": "customer_request", "note": "by phone"}
    )

    assert response.status_code == 200
    body = response.json()
    assert body["id"] == purchase.pk
    assert body["status"] == "cancelled"
    assert body["version"] == 2
    assert response["ETag"] == '"2"'
    # Fresh affordances: computed for the cancelled purchase, not the pending one.
    assert body["affordances"] == []
    assert sorted((u["name"], u["reason"]) for u in body["unavailableAffordances"]) == [
        ("cancel_purchase", "already_cancelled"),
        ("confirm_purchase", "purchase_cancelled"),
    ]
    fresh = shop.purchase("p-01")
    assert (fresh.status, fresh.version) == ("cancelled", 2)
    (record,) = AuditRecord.objects.all()
    assert record.operation == CANCEL_URN
    assert record.operation_name == "cancel_purchase"
    assert record.object_id == str(purchase.pk)
    assert (record.source_state, record.target_state) == ("pending", "cancelled")
    assert record.arguments == {"reason": "customer_request", "note": "by phone"}
    assert record.user_id == support.pk
    assert record.username == "support"
    assert record.via == "api"
    assert record.version == 2
    assert record.created_at is not None


def test_ship_records_the_tracking_number_and_audits_it_by_its_api_name(shop, shop_api):
    purchase = shop.purchases["p-05"]

    response = post(shop_api("warehouse"), purchase, "ship", {"trackingNumber": "TRK12345678"})

    assert response.status_code == 200
    assert response.json()["trackingNumber"] == "TRK12345678"
    assert response.json()["status"] == "shipped"
    assert shop.purchase("p-05").tracking_number == "TRK12345678"
    (record,) = AuditRecord.objects.all()
    assert record.arguments == {"trackingNumber": "TRK12345678"}
    assert (record.source_state, record.target_state) == ("confirmed", "shipped")


def test_success_response_matches_a_fresh_read(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-10"]

    done = post(client, purchase, "confirm").json()
    read = client.get(f"/api/purchases/{purchase.pk}/").json()

    assert done == read


# --- 404 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "target", "transition", "body"),
    [
        ("alice", "missing", "cancel", {"reason": "customer_request"}),
        ("alice", "p-10", "cancel", {"reason": "customer_request"}),
        ("alice", "p-05", "ship", {"trackingNumber": "TRK12345678"}),
        ("alice", "p-07", "refund", {"amount": 10}),
        ("auditor", "p-01", "cancel", {"reason": "customer_request"}),
        ("warehouse", "p-01", "confirm", {}),
        ("support", "p-07", "refund", {"amount": 10}),
    ],
)
def test_hidden_purchase_or_missing_capability_is_404_and_changes_nothing(
    shop, shop_api, role, target, transition, body
):
    pk = 987654321 if target == "missing" else shop.purchases[target].pk
    watched = shop.purchases["p-01"].pk if target == "missing" else pk
    before = snapshot(watched)

    response = post(shop_api(role), pk, transition, body, **{"If-Match": '"5"'})

    problem = assert_problem(response, 404, "not_found")
    assert "current" not in problem
    assert snapshot(watched) == before


def test_missing_hidden_and_not_permitted_look_identical(shop, shop_api):
    client = shop_api("alice")

    missing = post(client, 987654321, "cancel", {"reason": "customer_request"})
    hidden = post(client, shop.purchases["p-10"], "cancel", {"reason": "customer_request"})
    not_permitted = post(client, shop.purchases["p-05"], "ship", {"trackingNumber": "TRK1234567"})

    assert missing.status_code == hidden.status_code == not_permitted.status_code == 404
    assert missing.content == hidden.content == not_permitted.content
    assert missing["Content-Type"] == hidden["Content-Type"] == not_permitted["Content-Type"]


def test_unknown_transition_route_is_404(shop, shop_api):
    response = post(shop_api("admin"), shop.purchases["p-01"], "explode")

    assert response.status_code == 404


# --- 412 -----------------------------------------------------------------------------------


def test_stale_if_match_is_412_with_current_representation(shop, shop_api):
    purchase = shop.purchases["p-01"]
    before = snapshot(purchase.pk)

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request"},
        **{"If-Match": '"5"'},
    )

    problem = assert_problem(response, 412, "stale_version")
    assert problem["current"]["id"] == purchase.pk
    assert problem["current"]["version"] == 1
    assert problem["current"]["status"] == "pending"
    assert "affordances" in problem["current"]
    assert "unavailableAffordances" in problem["current"]
    assert snapshot(purchase.pk) == before


def test_stale_expected_version_in_body_is_412(shop, shop_api):
    purchase = shop.purchases["p-01"]
    before = snapshot(purchase.pk)

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "expectedVersion": 5},
    )

    problem = assert_problem(response, 412, "stale_version")
    assert problem["current"]["version"] == 1
    assert snapshot(purchase.pk) == before


def test_matching_if_match_runs_the_operation(shop, shop_api):
    purchase = shop.purchases["p-01"]
    Purchase.objects.filter(pk=purchase.pk).update(version=4)

    response = post(shop_api("support"), purchase, "confirm", **{"If-Match": '"4"'})

    assert response.status_code == 200
    assert response.json()["version"] == 5


def test_if_match_star_matches_any_version(shop, shop_api):
    purchase = shop.purchases["p-01"]
    Purchase.objects.filter(pk=purchase.pk).update(version=9)

    response = post(shop_api("support"), purchase, "confirm", **{"If-Match": "*"})

    assert response.status_code == 200
    assert response.json()["version"] == 10


def test_expected_version_as_a_string_is_accepted(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "expectedVersion": "1"},
    )

    assert response.status_code == 200
    assert response.json()["version"] == 2
    assert AuditRecord.objects.get().arguments == {"reason": "customer_request"}


def test_stale_expected_version_as_a_string_is_412(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "expectedVersion": "3"},
    )

    assert_problem(response, 412, "stale_version")
    assert snapshot(purchase.pk) == ("pending", 1, 0)


# --- 409 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "key", "transition", "body", "reason"),
    [
        ("support", "p-03", "confirm", {}, "payment_not_authorized"),
        ("support", "p-02", "cancel", {"reason": "customer_request"}, "requires_supervisor"),
        ("warehouse", "p-01", "ship", {"trackingNumber": "TRK12345678"}, "not_confirmed"),
        ("support", "p-05", "confirm", {}, "already_confirmed"),
        ("alice", "p-09", "cancel", {"reason": "customer_request"}, "already_cancelled"),
        ("supervisor", "p-08", "refund", {"amount": 10}, "refund_window_expired"),
        ("warehouse", "p-05", "deliver", {}, "not_shipped"),
        ("bob", "p-11", "cancel", {"reason": "customer_request"}, "requires_supervisor"),
    ],
)
def test_unavailable_operation_is_409_with_reason_and_current(
    shop, shop_api, role, key, transition, body, reason
):
    purchase = shop.purchases[key]
    before = snapshot(purchase.pk)

    response = post(shop_api(role), purchase, transition, body)

    problem = assert_problem(response, 409, "operation_not_available")
    assert problem["reason"] == reason
    assert problem["current"]["id"] == purchase.pk
    assert problem["current"]["version"] == before[1]
    assert problem["current"]["status"] == before[0]
    operation = f"{transition}_purchase"
    assert {"name": operation, "reason": reason}.items() <= next(
        u for u in problem["current"]["unavailableAffordances"] if u["name"] == operation
    ).items()
    assert snapshot(purchase.pk) == before


def test_supervisor_may_cancel_the_high_value_purchase_support_may_not(shop, shop_api):
    purchase = shop.purchases["p-02"]

    refused = post(shop_api("support"), purchase, "cancel", {"reason": "customer_request"})
    allowed = post(shop_api("supervisor"), purchase, "cancel", {"reason": "customer_request"})

    assert refused.status_code == 409
    assert allowed.status_code == 200
    assert allowed.json()["status"] == "cancelled"


# --- 400 -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "key", "transition", "body", "field"),
    [
        ("warehouse", "p-05", "ship", {}, "trackingNumber"),
        ("warehouse", "p-05", "ship", {"trackingNumber": "trk12345678"}, "trackingNumber"),
        ("warehouse", "p-05", "ship", {"trackingNumber": "TRK-1234-5678"}, "trackingNumber"),
        ("warehouse", "p-05", "ship", {"trackingNumber": "TRK1"}, "trackingNumber"),
        (
            "warehouse",
            "p-05",
            "ship",
            {"trackingNumber": "TRK12345678", "carrier": "x"},
            "carrier",
        ),
        ("support", "p-01", "cancel", {}, "reason"),
        ("support", "p-01", "cancel", {"reason": "because"}, "reason"),
        ("support", "p-01", "confirm", {"force": True}, "force"),
        (
            "support",
            "p-01",
            "cancel",
            {"reason": "customer_request", "purchaseId": 1},
            "purchaseId",
        ),
        ("alice", "p-01", "cancel", {"reason": "inventory_failure"}, "reason"),
        ("alice", "p-01", "cancel", {"reason": "payment_failure"}, "reason"),
        ("support", "p-01", "cancel", {"reason": "payment_failure"}, "reason"),
        ("supervisor", "p-07", "refund", {"amount": 300.01}, "amount"),
        ("supervisor", "p-07", "refund", {"amount": "1000"}, "amount"),
        ("supervisor", "p-07", "refund", {"amount": 0}, "amount"),
        ("supervisor", "p-07", "refund", {"amount": 1.005}, "amount"),
        ("supervisor", "p-07", "refund", {}, "amount"),
    ],
)
def test_invalid_arguments_are_400_with_per_field_errors(
    shop, shop_api, role, key, transition, body, field
):
    purchase = shop.purchases[key]
    if body.get("purchaseId") == 1:
        body = {**body, "purchaseId": purchase.pk + 1000}
    before = snapshot(purchase.pk)

    response = post(shop_api(role), purchase, transition, body)

    problem = assert_problem(response, 400, "validation_error")
    assert field in problem["errors"]
    assert isinstance(problem["errors"][field], list)
    assert all(isinstance(message, str) and message for message in problem["errors"][field])
    assert "current" not in problem
    assert snapshot(purchase.pk) == before


def test_purchase_id_equal_to_the_url_is_accepted(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "purchaseId": purchase.pk},
    )

    assert response.status_code == 200


def test_expected_version_and_if_match_that_differ_are_400(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "expectedVersion": 1},
        **{"If-Match": '"2"'},
    )

    problem = assert_problem(response, 400, "validation_error")
    assert "expectedVersion" in problem["errors"]
    assert snapshot(purchase.pk) == ("pending", 1, 0)


def test_expected_version_and_if_match_that_agree_are_accepted(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request", "expectedVersion": 1},
        **{"If-Match": '"1"'},
    )

    assert response.status_code == 200


def test_refund_up_to_the_total_is_accepted(shop, shop_api):
    response = post(shop_api("supervisor"), shop.purchases["p-07"], "refund", {"amount": 300})

    assert response.status_code == 200
    assert response.json()["status"] == "refunded"


def test_refund_amount_as_a_decimal_string_is_accepted(shop, shop_api):
    purchase = shop.purchases["p-07"]

    response = post(shop_api("supervisor"), purchase, "refund", {"amount": "10.50"})

    assert response.status_code == 200
    assert response.json()["status"] == "refunded"
    assert response.json()["version"] == 2
    (record,) = AuditRecord.objects.all()
    assert Decimal(str(record.arguments["amount"])) == Decimal("10.50")
    assert (record.source_state, record.target_state) == ("delivered", "refunded")


def test_refund_amount_as_a_json_number_is_accepted(shop, shop_api):
    response = post(shop_api("supervisor"), shop.purchases["p-07"], "refund", {"amount": 10.5})

    assert response.status_code == 200
    assert Decimal(str(AuditRecord.objects.get().arguments["amount"])) == Decimal("10.50")


# --- order of checks -------------------------------------------------------------------------


def test_stale_version_on_an_unavailable_operation_is_412_not_409(shop, shop_api):
    purchase = shop.purchases["p-03"]

    response = post(shop_api("support"), purchase, "confirm", **{"If-Match": '"5"'})

    assert_problem(response, 412, "stale_version")


def test_invalid_arguments_on_an_unavailable_operation_are_409_not_400(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(shop_api("warehouse"), purchase, "ship", {"trackingNumber": "bad", "x": 1})

    problem = assert_problem(response, 409, "operation_not_available")
    assert problem["reason"] == "not_confirmed"


def test_invalid_arguments_with_a_stale_version_are_412_not_400(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = post(
        shop_api("support"), purchase, "cancel", {"reason": "bogus", "expectedVersion": 7}
    )

    assert_problem(response, 412, "stale_version")


def test_hidden_purchase_with_a_stale_version_is_404_not_412(shop, shop_api):
    response = post(
        shop_api("bob"),
        shop.purchases["p-01"],
        "cancel",
        {"reason": "customer_request"},
        **{"If-Match": '"5"'},
    )

    assert_problem(response, 404, "not_found")


# --- idempotency ----------------------------------------------------------------------------


def test_same_key_and_body_replays_the_stored_success_and_runs_nothing(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-01"]
    body = {"reason": "customer_request"}

    first = post(client, purchase, "cancel", body, **{"Idempotency-Key": "k-1"})
    second = post(client, purchase, "cancel", body, **{"Idempotency-Key": "k-1"})

    assert first.status_code == second.status_code == 200
    assert second.json() == first.json()
    assert AuditRecord.objects.count() == 1
    assert shop.purchase("p-01").version == 2


def test_replayed_body_is_byte_identical(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-01"]
    body = {"reason": "customer_request"}

    first = post(client, purchase, "cancel", body, **{"Idempotency-Key": "k-bytes"})
    second = post(client, purchase, "cancel", body, **{"Idempotency-Key": "k-bytes"})

    assert second.content == first.content


def test_same_key_with_another_body_is_422(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-01"]
    post(client, purchase, "cancel", {"reason": "customer_request"}, **{"Idempotency-Key": "k-2"})

    response = post(
        client, purchase, "cancel", {"reason": "inventory_failure"}, **{"Idempotency-Key": "k-2"}
    )

    assert_problem(response, 422, "idempotency_key_reused")
    assert AuditRecord.objects.count() == 1


def test_same_key_on_another_purchase_is_422_and_leaves_it_alone(shop, shop_api):
    client = shop_api("support")
    body = {"reason": "customer_request"}
    post(client, shop.purchases["p-01"], "cancel", body, **{"Idempotency-Key": "k-3"})
    before = snapshot(shop.purchases["p-10"].pk)

    response = post(client, shop.purchases["p-10"], "cancel", body, **{"Idempotency-Key": "k-3"})

    assert_problem(response, 422, "idempotency_key_reused")
    assert snapshot(shop.purchases["p-10"].pk) == before


def test_same_key_on_another_operation_is_422(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-10"]
    post(client, purchase, "confirm", **{"Idempotency-Key": "k-op"})

    response = post(
        client, purchase, "cancel", {"reason": "customer_request"}, **{"Idempotency-Key": "k-op"}
    )

    assert_problem(response, 422, "idempotency_key_reused")
    assert shop.purchase("p-10").status == "confirmed"


def test_keys_are_per_caller(shop, shop_api):
    body = {"reason": "customer_request"}
    post(
        shop_api("support"), shop.purchases["p-01"], "cancel", body, **{"Idempotency-Key": "shared"}
    )

    response = post(
        shop_api("supervisor"),
        shop.purchases["p-10"],
        "cancel",
        body,
        **{"Idempotency-Key": "shared"},
    )

    assert response.status_code == 200
    assert AuditRecord.objects.count() == 2


def test_refused_request_is_not_stored_and_the_key_works_once_the_cause_is_fixed(shop, shop_api):
    client = shop_api("support")
    purchase = shop.purchases["p-03"]

    refused = post(client, purchase, "confirm", **{"Idempotency-Key": "k-4"})

    assert_problem(refused, 409, "operation_not_available")
    assert not IdempotencyRecord.objects.filter(key="k-4").exists()

    Purchase.objects.filter(pk=purchase.pk).update(payment_status="authorized")
    retried = post(client, purchase, "confirm", **{"Idempotency-Key": "k-4"})

    assert retried.status_code == 200
    assert retried.json()["status"] == "confirmed"
    assert AuditRecord.objects.count() == 1
    assert IdempotencyRecord.objects.get(key="k-4").state == IdempotencyRecord.DONE


@pytest.mark.parametrize(
    ("body", "headers", "status"),
    [
        ({"reason": "bogus"}, {}, 400),
        ({"reason": "customer_request"}, {"If-Match": '"9"'}, 412),
    ],
)
def test_no_refusal_leaves_an_idempotency_record(shop, shop_api, body, headers, status):
    response = post(
        shop_api("support"),
        shop.purchases["p-01"],
        "cancel",
        body,
        **{"Idempotency-Key": "k-r"},
        **headers,
    )

    assert response.status_code == status
    assert not IdempotencyRecord.objects.exists()


def test_hidden_purchase_with_a_key_is_404_and_claims_nothing(shop, shop_api):
    response = post(
        shop_api("alice"),
        shop.purchases["p-10"],
        "cancel",
        {"reason": "customer_request"},
        **{"Idempotency-Key": "k-hidden"},
    )

    assert_problem(response, 404, "not_found")
    assert not IdempotencyRecord.objects.exists()


def test_running_key_with_the_same_request_is_409_in_use(shop, shop_api):
    purchase = shop.purchases["p-01"]
    support = shop.users["support"]
    # Exactly what perform() fingerprints for this POST: the body without purchaseId and
    # expectedVersion, plus the body version and the If-Match version (both absent here).
    print_ = fingerprint(
        operation=CANCEL_URN,
        pk=purchase.pk,
        arguments={"reason": "customer_request", "expectedVersion": None, "ifMatch": None},
    )
    IdempotencyRecord.objects.create(
        user=support,
        key="k-run",
        fingerprint=print_,
        state=IdempotencyRecord.RUNNING,
        expires_at=timezone.now() + timedelta(hours=1),
    )

    response = post(
        shop_api("support"),
        purchase,
        "cancel",
        {"reason": "customer_request"},
        **{"Idempotency-Key": "k-run"},
    )

    assert_problem(response, 409, "idempotency_key_in_use")
    assert snapshot(purchase.pk) == ("pending", 1, 0)
    # The other request's claim is not ours to drop.
    assert IdempotencyRecord.objects.get(key="k-run").state == IdempotencyRecord.RUNNING


def test_running_key_with_another_request_is_422(shop, shop_api):
    IdempotencyRecord.objects.create(
        user=shop.users["support"],
        key="k-run2",
        fingerprint="0" * 64,
        expires_at=timezone.now() + timedelta(hours=1),
    )

    response = post(
        shop_api("support"),
        shop.purchases["p-01"],
        "cancel",
        {"reason": "customer_request"},
        **{"Idempotency-Key": "k-run2"},
    )

    assert_problem(response, 422, "idempotency_key_reused")


def test_expired_key_is_forgotten_and_works_again(shop, shop_api):
    client = shop_api("support")
    body = {"reason": "customer_request"}
    post(client, shop.purchases["p-01"], "cancel", body, **{"Idempotency-Key": "k-old"})
    IdempotencyRecord.objects.filter(key="k-old").update(
        expires_at=timezone.now() - timedelta(seconds=1)
    )

    response = post(client, shop.purchases["p-10"], "cancel", body, **{"Idempotency-Key": "k-old"})

    assert response.status_code == 200
    assert response.json()["id"] == shop.purchases["p-10"].pk
    assert AuditRecord.objects.count() == 2


def test_key_is_kept_for_24_hours_by_default(shop, shop_api):
    before = timezone.now()
    post(
        shop_api("support"),
        shop.purchases["p-01"],
        "cancel",
        {"reason": "customer_request"},
        **{"Idempotency-Key": "k-ttl"},
    )

    record = IdempotencyRecord.objects.get(key="k-ttl")
    assert before + timedelta(hours=23, minutes=59) <= record.expires_at
    assert record.expires_at <= timezone.now() + timedelta(hours=24, seconds=1)


def test_purge_command_deletes_expired_records_only(shop):
    now = timezone.now()
    user = shop.users["support"]
    for key, state, delta in [
        ("expired-done", IdempotencyRecord.DONE, -timedelta(minutes=1)),
        ("expired-running", IdempotencyRecord.RUNNING, -timedelta(days=2)),
        ("fresh-done", IdempotencyRecord.DONE, timedelta(hours=1)),
        ("fresh-running", IdempotencyRecord.RUNNING, timedelta(minutes=1)),
    ]:
        IdempotencyRecord.objects.create(
            user=user, key=key, fingerprint="f" * 64, state=state, expires_at=now + delta
        )

    out = io.StringIO()
    call_command("purge_idempotency_keys", stdout=out)

    assert "2" in out.getvalue()

    assert sorted(IdempotencyRecord.objects.values_list("key", flat=True)) == [
        "fresh-done",
        "fresh-running",
    ]


# --- a transition body that raises ------------------------------------------------------------


def test_transition_body_that_raises_is_rolled_back_as_transition_failed(shop):
    models = {**settings.AFFORDANCES["MODELS"], "generic.Ticket": {}}
    ticket = Ticket.objects.create(state="escalated", assignee="carol")
    audits = AuditRecord.objects.count()

    def represent(t):
        return {"id": t.pk, "state": t.state, "version": t.version}

    with override_settings(AFFORDANCES={"NAMESPACE": "example", "MODELS": models}):
        operation = get_catalog().transition(Ticket, "explode")
        assert operation is not None
        with pytest.raises(Problem) as raised:
            perform(
                operation=operation,
                pk=ticket.pk,
                user=shop.users["support"],
                arguments={},
                via="api",
                represent=represent,
            )

    problem = raised.value
    assert problem.status == 409
    assert problem.code == "transition_failed"
    assert problem.current == {"id": ticket.pk, "state": "escalated", "version": 1}
    fresh = Ticket.objects.get(pk=ticket.pk)
    assert (fresh.state, fresh.assignee, fresh.version) == ("escalated", "carol", 1)
    assert AuditRecord.objects.count() == audits


# --- malformed input never 500 --------------------------------------------------------------


def _nested(depth: int) -> dict:
    value: dict = {"a": 1}
    for _ in range(depth):
        value = {"a": value}
    return value


RAW_BODIES = {
    "not json": ("supervisor", "p-07", "refund", "{not json", "malformed_request"),
    "truncated": ("supervisor", "p-07", "refund", '{"amount": 1', "malformed_request"),
    "json array": ("supervisor", "p-07", "refund", "[1, 2]", "malformed_request"),
    "json string": ("supervisor", "p-07", "refund", '"refund"', "malformed_request"),
    "json number": ("supervisor", "p-07", "refund", "42", "malformed_request"),
    "json null": ("supervisor", "p-07", "refund", "null", "malformed_request"),
    "NaN literal": ("supervisor", "p-07", "refund", '{"amount": NaN}', "malformed_request"),
    "1e400": ("supervisor", "p-07", "refund", '{"amount": 1e400}', "validation_error"),
    "10**30": ("supervisor", "p-07", "refund", f'{{"amount": {10**30}}}', "validation_error"),
    "-1e400": ("supervisor", "p-07", "refund", '{"amount": -1e400}', "validation_error"),
    "amount abc": ("supervisor", "p-07", "refund", '{"amount": "abc"}', "validation_error"),
    "amount true": ("supervisor", "p-07", "refund", '{"amount": true}', "validation_error"),
    "amount object": (
        "supervisor",
        "p-07",
        "refund",
        '{"amount": {"x": 1}}',
        "validation_error",
    ),
    "tracking int": ("warehouse", "p-05", "ship", '{"trackingNumber": 123}', "validation_error"),
    "tracking list": (
        "warehouse",
        "p-05",
        "ship",
        '{"trackingNumber": ["A"]}',
        "validation_error",
    ),
    "reason null": ("support", "p-01", "cancel", '{"reason": null}', "validation_error"),
    "reason nested": (
        "support",
        "p-01",
        "cancel",
        json.dumps({"reason": _nested(20)}),
        "validation_error",
    ),
    "note nested": (
        "support",
        "p-01",
        "cancel",
        json.dumps({"reason": "customer_request", "note": _nested(20)}),
        "validation_error",
    ),
    "deeply nested array": (
        "support",
        "p-01",
        "cancel",
        '{"reason": ' + "[" * 5000 + "]" * 5000 + "}",
        None,
    ),
    "deeply nested object": (
        "support",
        "p-01",
        "cancel",
        '{"reason": ' + '{"a": ' * 5000 + "1" + "}" * 5000 + "}",
        None,
    ),
    "unknown fields": (
        "support",
        "p-01",
        "cancel",
        '{"reason": "customer_request", "status": "shipped", "version": 99}',
        "validation_error",
    ),
    "huge expectedVersion": (
        "support",
        "p-01",
        "cancel",
        f'{{"reason": "customer_request", "expectedVersion": {10**30}}}',
        "validation_error",
    ),
    "float expectedVersion": (
        "support",
        "p-01",
        "cancel",
        '{"reason": "customer_request", "expectedVersion": 1.5}',
        "validation_error",
    ),
    "huge purchaseId": (
        "support",
        "p-01",
        "cancel",
        f'{{"reason": "customer_request", "purchaseId": {10**30}}}',
        "validation_error",
    ),
    "invalid utf-8": ("support", "p-01", "cancel", b'{"reason": "\xff\xfe"}', None),
}


@pytest.mark.parametrize("case", list(RAW_BODIES))
def test_malformed_body_is_a_4xx_problem_never_500(shop, shop_api, case):
    role, key, transition, raw, code = RAW_BODIES[case]
    client = shop_api(role)
    client.raise_request_exception = False
    purchase = shop.purchases[key]
    before = snapshot(purchase.pk)

    response = client.post(url(purchase, transition), data=raw, content_type="application/json")

    assert 400 <= response.status_code < 500, (case, response.status_code)
    assert response["Content-Type"].startswith(PROBLEM)
    problem = response.json()
    assert set(problem) >= PROBLEM_KEYS
    if code is not None:
        assert problem["code"] == code
    assert snapshot(purchase.pk) == before


@pytest.mark.parametrize("pk", [str(10**30), "abc", "0", "-1", str(2**63), "%20", "1e3"], ids=repr)
def test_odd_ids_in_the_url_are_404_problems(shop, shop_api, pk):
    client = shop_api("support")
    client.raise_request_exception = False

    action = client.post(
        f"/api/purchases/{pk}/cancel/", {"reason": "customer_request"}, format="json"
    )
    read = client.get(f"/api/purchases/{pk}/")

    assert_problem(action, 404, "not_found")
    assert_problem(read, 404, "not_found")
    assert AuditRecord.objects.count() == 0


@pytest.mark.parametrize("value", ['"abc"', "3", 'W/"1"', '"1", "2"', f'"{10**30}"'])
def test_malformed_if_match_is_a_400_problem(shop, shop_api, value):
    client = shop_api("support")
    client.raise_request_exception = False

    response = post(
        client,
        shop.purchases["p-01"],
        "cancel",
        {"reason": "customer_request"},
        **{"If-Match": value},
    )

    assert 400 <= response.status_code < 500
    assert response.status_code != 404
    assert response["Content-Type"].startswith(PROBLEM)
    assert snapshot(shop.purchases["p-01"].pk) == ("pending", 1, 0)


@pytest.mark.parametrize("key", ["x" * 256, ""])
def test_bad_idempotency_key_is_a_400_problem(shop, shop_api, key):
    client = shop_api("support")
    client.raise_request_exception = False

    response = post(
        client,
        shop.purchases["p-01"],
        "cancel",
        {"reason": "customer_request"},
        **{"Idempotency-Key": key},
    )

    assert_problem(response, 400, "malformed_request")
    assert snapshot(shop.purchases["p-01"].pk) == ("pending", 1, 0)
    assert not IdempotencyRecord.objects.exists()


def test_unsupported_content_type_is_a_4xx_problem(shop, shop_api):
    client = shop_api("support")
    client.raise_request_exception = False

    response = client.post(
        url(shop.purchases["p-01"], "cancel"), data="reason=x", content_type="text/plain"
    )

    assert 400 <= response.status_code < 500
    assert response["Content-Type"].startswith(PROBLEM)
    assert snapshot(shop.purchases["p-01"].pk) == ("pending", 1, 0)


# --- form posts -------------------------------------------------------------------------------


def test_form_post_of_the_reason_cancels(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = shop_api("alice").post(
        url(purchase, "cancel"), {"reason": "customer_request"}, format="multipart"
    )

    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    assert AuditRecord.objects.get().arguments == {"reason": "customer_request"}


def test_form_post_with_expected_version_string_is_checked(shop, shop_api):
    purchase = shop.purchases["p-01"]

    stale = shop_api("support").post(
        url(purchase, "cancel"),
        {"reason": "customer_request", "expectedVersion": "4"},
        format="multipart",
    )

    assert_problem(stale, 412, "stale_version")
    assert snapshot(purchase.pk) == ("pending", 1, 0)


def test_form_post_is_validated_like_json(shop, shop_api):
    purchase = shop.purchases["p-01"]

    response = shop_api("alice").post(
        url(purchase, "cancel"), {"reason": "inventory_failure"}, format="multipart"
    )

    problem = assert_problem(response, 400, "validation_error")
    assert "reason" in problem["errors"]


def test_affordance_target_and_constraints_are_enough_to_act(shop, shop_api):
    client = shop_api("alice")
    purchase = shop.purchases["p-01"]
    (cancel,) = client.get(f"/api/purchases/{purchase.pk}/").json()["affordances"]

    response = client.post(
        cancel["target"],
        {
            "reason": cancel["constraints"]["properties"]["reason"]["enum"][0],
            "expectedVersion": cancel["validForVersion"],
        },
        format="json",
    )

    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"


@pytest.mark.parametrize("method", ["get", "options", "post", "put"])
def test_an_action_url_the_caller_may_not_use_reads_like_a_url_that_does_not_exist(
    shop_api, shop, method
):
    purchase = shop.purchases["p-05"]
    client = shop_api("alice")
    forbidden = getattr(client, method)(f"/api/purchases/{purchase.pk}/ship/")
    made_up = getattr(client, method)(f"/api/purchases/{purchase.pk}/launch/")
    assert forbidden.status_code == made_up.status_code == 404
    assert forbidden.json() == made_up.json()
    assert "Ship" not in forbidden.content.decode()
    # A caller who may use it learns the method it takes, as for any resource.
    assert shop_api("warehouse").get(f"/api/purchases/{purchase.pk}/ship/").status_code == 405
