"""Attacks on Idempotency-Key handling, from the external review of the gunicorn +
PostgreSQL deployment, kept as tests over the whole HTTP stack.

F3. A NUL in an MCP ``_meta`` idempotency key was a 500 (-32603, PostgreSQL DataError);
    over REST it was a 500 too, and on SQLite it ran. Every face now refuses a key that
    is not 1 to 255 visible ASCII characters before it reaches the database: REST with
    ``400 malformed_request``, MCP as malformed ``_meta`` (-32602, as a key that is no
    string always was).
F12. A keyed run whose worker died (gunicorn's WORKER TIMEOUT) held its key for the
    whole ``IDEMPOTENCY_TTL``: 409 for 24 hours, the purchase never confirmed. A claim still
    ``running`` past ``REQUEST_TIMEOUT + LOCK_TIMEOUT`` is taken over by a retry with the
    same key and request; of concurrent retries exactly one runs.

The dead worker is simulated by :func:`dead_claim`: ``idempotency.claim`` itself, run
with the clock set back, exactly as the killed worker wrote it before dying.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from datetime import timedelta
from typing import Any
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances import idempotency
from affordances.catalog import get_catalog
from affordances.models import AuditRecord, IdempotencyRecord
from tests.generic.shop import Purchase
from tests.mcp_wire import LEGACY, Wire
from tests.shop_data import Shop

PROBLEM = "application/problem+json"
CATALOG_ENDPOINTS = ("/mcp", "/mcp/static", "/mcp/compact")
META_KEY = "affordances/idempotencyKey"

# What the review sent, and the rest of the class: C0 controls (NUL, CR, LF, TAB, ESC),
# DEL, C1 (NEL), the space (HTTP trims it), non-ASCII (Latin-1 on one face, Unicode on
# the other), and lengths past the column.
BAD_KEYS = [
    pytest.param("k\x00ey", id="nul"),
    pytest.param("\x00", id="only-nul"),
    pytest.param("k\r\ney", id="crlf"),
    pytest.param("k\ney", id="lf"),
    pytest.param("k\tey", id="tab"),
    pytest.param("k\x1bey", id="esc"),
    pytest.param("k\x7fey", id="del"),
    pytest.param("k\x85ey", id="c1-nel"),
    pytest.param("k ey", id="space"),
    pytest.param("ké", id="non-ascii"),
    pytest.param("x" * 256, id="256-chars"),
    pytest.param("x" * 100_000, id="100k-chars"),
    pytest.param("", id="empty"),
]
NOT_STRINGS = [7, 1.5, True, {"k": "ey"}, ["k"]]
EVERY_VISIBLE = "".join(chr(c) for c in range(0x21, 0x7F))

# Older than any run: REQUEST_TIMEOUT + LOCK_TIMEOUT is 35 seconds by default.
DEAD = timedelta(minutes=10)


def confirm_urn() -> str:
    operation = get_catalog().lookup("confirm_purchase")
    assert operation is not None
    return operation.urn


def state(pk: int) -> tuple[str, int, int]:
    purchase = Purchase.objects.get(pk=pk)
    return purchase.status, purchase.version, AuditRecord.objects.filter(object_id=str(pk)).count()


def confirm(client: APIClient, pk: int, key: str, body: dict[str, Any] | None = None) -> Any:
    return client.post(
        f"/api/purchases/{pk}/confirm/", body or {}, format="json", HTTP_IDEMPOTENCY_KEY=key
    )


def wire(shop: Shop, role: str, path: str = "/mcp") -> Wire:
    return Wire(str(AccessToken.for_user(shop.users[role])), path=path, version=LEGACY)


def dead_claim(user: Any, key: str, pk: int, *, age: timedelta = DEAD) -> IdempotencyRecord:
    """The claim a keyed confirm of ``pk`` with an empty body made ``age`` ago, exactly
    as ``perform`` made it (its fingerprint: the arguments, body and If-Match versions),
    its run then killed with its worker: the row stays ``running``."""
    print_ = idempotency.fingerprint(
        operation=confirm_urn(),
        pk=pk,
        arguments={"expectedVersion": None, "ifMatch": None},
    )
    with mock.patch("django.utils.timezone.now", return_value=timezone.now() - age):
        claimed = idempotency.claim(user=user, key=key, print_=print_)
    assert not claimed.replay
    return IdempotencyRecord.objects.get(pk=claimed.record.pk)


def assert_malformed(response: Any) -> None:
    assert response.status_code == 400, response.content[:300]
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_request"


# --- F3: a key with control characters (and the rest of the class) ---------------------


@pytest.mark.parametrize("key", BAD_KEYS)
def test_f3_rest_refuses_a_malformed_key_before_the_database(
    shop: Shop, shop_api: Callable[[str], APIClient], key: str
) -> None:
    client = shop_api("support")
    client.raise_request_exception = False
    pk = shop.purchases["p-01"].pk

    with CaptureQueriesContext(connection) as queries:
        response = confirm(client, pk, key)

    assert_malformed(response)
    assert "Idempotency-Key must be 1 to 255 visible ASCII characters" in response.json()["detail"]
    assert not [q for q in queries.captured_queries if "idempotency" in q["sql"].lower()]
    assert state(pk) == ("pending", 1, 0)
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.parametrize("key", ["k\x00ey", "k\r\ney", "ké"])
def test_f3_rest_create_refuses_a_malformed_key(
    shop: Shop, shop_api: Callable[[str], APIClient], key: str
) -> None:
    client = shop_api("alice")
    client.raise_request_exception = False
    before = Purchase.objects.count()

    response = client.post(
        "/api/purchases/",
        {"description": "Tea", "total": "4.50"},
        format="json",
        HTTP_IDEMPOTENCY_KEY=key,
    )

    assert_malformed(response)
    assert Purchase.objects.count() == before
    assert not IdempotencyRecord.objects.exists()


def test_f3_a_malformed_key_is_refused_alike_on_an_object_the_caller_cannot_see(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    client = shop_api("alice")
    client.raise_request_exception = False
    bobs = shop.purchases["p-10"].pk

    hidden = client.post(
        f"/api/purchases/{bobs}/cancel/",
        {"reason": "customer_request"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k\x00ey",
    )
    missing = client.post(
        "/api/purchases/999999/cancel/",
        {"reason": "customer_request"},
        format="json",
        HTTP_IDEMPOTENCY_KEY="k\x00ey",
    )

    assert_malformed(hidden)
    assert hidden.content == missing.content


@pytest.mark.parametrize("endpoint", CATALOG_ENDPOINTS)
@pytest.mark.parametrize("key", BAD_KEYS)
def test_f3_mcp_refuses_a_malformed_key_as_malformed_meta(
    shop: Shop, endpoint: str, key: str
) -> None:
    caller = wire(shop, "support", endpoint)
    caller.client.raise_request_exception = False
    pk = shop.purchases["p-01"].pk

    answer = caller.call(
        "tools/call",
        {"name": "confirm_purchase", "arguments": {"purchaseId": pk}, "_meta": {META_KEY: key}},
    )

    assert answer["error"]["code"] == -32602, answer
    assert META_KEY in answer["error"]["message"]
    assert "1 to 255 visible ASCII characters" in answer["error"]["message"]
    assert state(pk) == ("pending", 1, 0)
    assert not IdempotencyRecord.objects.exists()


@pytest.mark.parametrize("key", NOT_STRINGS, ids=[type(k).__name__ for k in NOT_STRINGS])
def test_f3_mcp_refuses_a_key_that_is_no_string_alike(shop: Shop, key: Any) -> None:
    caller = wire(shop, "support")
    caller.client.raise_request_exception = False
    pk = shop.purchases["p-01"].pk
    params = {"name": "confirm_purchase", "arguments": {"purchaseId": pk}}

    answer = caller.call("tools/call", {**params, "_meta": {META_KEY: key}})
    nul = caller.call("tools/call", {**params, "_meta": {META_KEY: "k\x00ey"}})

    assert answer["error"] == nul["error"]
    assert answer["error"]["code"] == -32602
    assert state(pk) == ("pending", 1, 0)


def test_f3_a_lone_surrogate_in_a_key_is_refused_by_the_transport(shop: Shop) -> None:
    # JSON can spell one ("\ud800"); the JSON-RPC layer refuses such strings itself.
    caller = wire(shop, "support")
    pk = shop.purchases["p-01"].pk

    answer = caller.call(
        "tools/call",
        {
            "name": "confirm_purchase",
            "arguments": {"purchaseId": pk},
            "_meta": {META_KEY: "k\ud800"},
        },
    )

    assert answer["error"]["code"] == -32600
    assert state(pk) == ("pending", 1, 0)


def test_f3_the_review_request_verbatim_is_no_500(shop: Shop) -> None:
    params = {
        "name": "confirm_purchase",
        "arguments": {"purchaseId": shop.purchases["p-01"].pk},
        "_meta": {META_KEY: "k\x00ey"},
    }
    body = json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
    assert "k\\u0000ey" in body  # as the review sent it
    caller = wire(shop, "support")
    caller.client.raise_request_exception = False

    response = caller.post(body.encode())

    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32602
    assert response.json()["id"] == 9


def test_f3_every_visible_ascii_character_is_a_key_on_both_faces(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk

    first = confirm(shop_api("support"), pk, EVERY_VISIBLE)
    again = wire(shop, "support").tool(
        "confirm_purchase", {"purchaseId": pk}, _meta={META_KEY: EVERY_VISIBLE}
    )

    assert first.status_code == 200
    assert again["_meta"]["affordances/replayed"] is True
    assert again["structuredContent"] == first.json()
    assert state(pk) == ("confirmed", 2, 1)


# --- F12: a run whose worker died -------------------------------------------------------


def test_f12_rest_retry_takes_over_a_dead_workers_claim_and_then_replays(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead = dead_claim(shop.users["support"], "k-dead", pk)
    client = shop_api("support")

    retry = confirm(client, pk, "k-dead")
    later = confirm(client, pk, "k-dead")

    assert retry.status_code == 200, retry.content
    assert not retry.has_header("Idempotent-Replayed")
    assert retry.json()["status"] == "confirmed"
    assert state(pk) == ("confirmed", 2, 1)
    record = IdempotencyRecord.objects.get(key="k-dead")
    assert (record.pk, record.state) == (dead.pk, IdempotencyRecord.DONE)
    assert record.claimed_at > dead.claimed_at
    assert record.expires_at > dead.expires_at
    assert later.status_code == 200
    assert later["Idempotent-Replayed"] == "true"
    assert later.content == retry.content
    assert state(pk) == ("confirmed", 2, 1)


def test_f12_mcp_retry_takes_over_a_dead_workers_claim_and_then_replays(shop: Shop) -> None:
    pk = shop.purchases["p-01"].pk
    dead_claim(shop.users["support"], "k-dead", pk)
    caller = wire(shop, "support")
    meta = {META_KEY: "k-dead"}

    retry = caller.tool("confirm_purchase", {"purchaseId": pk}, _meta=meta)
    later = caller.tool("confirm_purchase", {"purchaseId": pk}, _meta=meta)

    assert retry["isError"] is False, retry
    assert "affordances/replayed" not in retry.get("_meta", {})
    assert retry["structuredContent"]["status"] == "confirmed"
    assert later["_meta"]["affordances/replayed"] is True
    assert later["structuredContent"] == retry["structuredContent"]
    assert state(pk) == ("confirmed", 2, 1)


def test_f12_a_young_running_claim_is_still_in_use(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead_claim(shop.users["support"], "k-young", pk, age=timedelta(seconds=5))

    response = confirm(shop_api("support"), pk, "k-young")
    mcp = wire(shop, "support").tool(
        "confirm_purchase", {"purchaseId": pk}, _meta={META_KEY: "k-young"}
    )

    assert response.status_code == 409
    assert response.json()["code"] == "idempotency_key_in_use"
    assert mcp["isError"] is True
    assert mcp["structuredContent"]["code"] == "idempotency_key_in_use"
    assert state(pk) == ("pending", 1, 0)
    assert IdempotencyRecord.objects.get(key="k-young").state == IdempotencyRecord.RUNNING


def test_f12_a_dead_claim_with_another_request_is_still_reused(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead = dead_claim(shop.users["support"], "k-dead", pk)

    response = confirm(shop_api("support"), pk, "k-dead", {"expectedVersion": 1})
    mcp = wire(shop, "support").tool(
        "confirm_purchase", {"purchaseId": pk, "expectedVersion": 1}, _meta={META_KEY: "k-dead"}
    )

    assert response.status_code == 422
    assert response.json()["code"] == "idempotency_key_reused"
    assert mcp["structuredContent"]["code"] == "idempotency_key_reused"
    assert state(pk) == ("pending", 1, 0)
    record = IdempotencyRecord.objects.get(key="k-dead")
    assert (record.state, record.claimed_at) == (IdempotencyRecord.RUNNING, dead.claimed_at)


def test_f12_a_dead_claim_of_another_user_is_not_taken_over(
    shop: Shop, shop_api: Callable[[str], APIClient]
) -> None:
    pk = shop.purchases["p-01"].pk
    dead = dead_claim(shop.users["supervisor"], "k-dead", pk)

    response = confirm(shop_api("support"), pk, "k-dead")

    assert response.status_code == 200  # support's own key: nothing of supervisor's
    record = IdempotencyRecord.objects.get(pk=dead.pk)
    assert (record.state, record.claimed_at) == (IdempotencyRecord.RUNNING, dead.claimed_at)


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_f12_concurrent_retries_after_a_dead_worker_run_exactly_once(shop: Shop) -> None:
    from tests.test_concurrency import _race

    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL: row locks and concurrent connections")
    pk = shop.purchases["p-01"].pk
    support = get_user_model().objects.get(username="support")
    dead = dead_claim(support, "k-dead", pk)

    responses = _race(8, lambda client: confirm(client, pk, "k-dead"))

    statuses = Counter(response.status_code for response in responses)
    assert set(statuses) <= {200, 409}, statuses
    ran = [r for r in responses if r.status_code == 200 and not r.has_header("Idempotent-Replayed")]
    assert len(ran) == 1, statuses
    for response in responses:
        if response.status_code == 200:
            assert response.json() == ran[0].json()
        else:
            assert response.json()["code"] == "idempotency_key_in_use"
    assert state(pk) == ("confirmed", 2, 1)
    assert AuditRecord.objects.count() == 1
    record = IdempotencyRecord.objects.get(key="k-dead")
    assert (record.pk, record.state) == (dead.pk, IdempotencyRecord.DONE)
    assert json.loads(record.body) == ran[0].json()
