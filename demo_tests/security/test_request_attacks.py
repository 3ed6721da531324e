"""The attacks of the adversarial review (issue 14) on the app's faces, kept as tests.

Each test sends what the attacker sent — real bearer tokens, real bodies, through the
whole Django stack — and asserts the exact answer (status, headers, body) and that the
database is as it was (:func:`unchanged`). Numbers in the test names are the review's.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord, IdempotencyRecord
from demo_tests.conftest import DEMO_PASSWORD, Demo
from orders.models import Order

PROBLEM = "application/problem+json"
HAL = "application/prs.hal-forms+json"
MCP_ENDPOINTS = ("/mcp", "/mcp/static", "/mcp/compact", "/mcp/forms")
LEGACY = "2025-11-25"

# Every spelling of a request a client can vary without changing what it asks for.
METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
ACCEPTS = (
    None,
    "application/json",
    HAL,
    "application/hal+json",
    "application/prs.hal-forms+json;q=1.0, application/json;q=0.7, text/html;q=0.6",
    "text/html",
    "application/xml",
    "*/*",
)
FORMATS = (None, "json", "api", "hal-forms", "hal")


def token_for(user: Any) -> str:
    return str(AccessToken.for_user(user))


def bearer(demo: Demo, role: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token_for(demo.users[role])}")


def wire(response: Any) -> tuple[int, tuple[tuple[str, str], ...], bytes]:
    """Everything a client receives: status, every header, the body."""
    return response.status_code, tuple(sorted(response.headers.items())), response.content


def request(client: Client, method: str, path: str, **extra: Any) -> Any:
    return client.generic(method, path, **extra)


def database_state() -> tuple[Any, ...]:
    orders = tuple(
        Order.objects.order_by("pk").values_list(
            "pk", "status", "version", "payment_status", "total", "tracking_number"
        )
    )
    return orders, AuditRecord.objects.count(), IdempotencyRecord.objects.count()


@pytest.fixture
def unchanged(demo: Demo) -> Iterator[Demo]:
    """The demo data, asserted untouched when the test ends."""
    before = database_state()
    yield demo
    assert database_state() == before


# --- 2, 3: a route the caller may not use reads as one that does not exist ------------


def _variants(path: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for method in METHODS:
        for accept in ACCEPTS:
            for fmt in FORMATS:
                url = path if fmt is None else f"{path}?format={fmt}"
                extra: dict[str, Any] = {}
                if accept is not None:
                    extra["HTTP_ACCEPT"] = accept
                if method in {"POST", "PUT", "PATCH"}:
                    extra.update(data=b'{"amount": 10}', content_type="application/json")
                yield method, url, extra


@pytest.mark.parametrize(
    ("role", "verb", "order"),
    [
        ("warehouse", "refund", "demo-07"),
        ("warehouse", "confirm", "demo-01"),
        ("alice", "ship", "demo-05"),
        ("alice", "refund", "demo-07"),
        ("auditor", "cancel", "demo-01"),
    ],
)
def test_3_a_hidden_route_is_byte_identical_to_a_missing_one_for_every_method_accept_and_format(
    unchanged: Demo, role: str, verb: str, order: str
) -> None:
    client = bearer(unchanged, role)
    pk = unchanged.orders[order].pk
    for method, url, extra in _variants(f"/api/orders/{pk}/{verb}/"):
        hidden = request(client, method, url, **extra)
        missing = request(client, method, url.replace(f"/{verb}/", f"/{verb}x/"), **extra)
        assert wire(hidden) == wire(missing), (method, url, extra)
        assert hidden.status_code == 404
        assert not hidden.has_header("Allow")


@pytest.mark.parametrize("debug", [False, True])
def test_3_with_debug_on_too_every_unmatched_or_hidden_api_route_is_the_same_problem(
    unchanged: Demo, settings: Any, debug: bool
) -> None:
    # DEBUG's HTML 404 page must not stand in for the problem the document promises
    # (schemathesis: POST /api/orders/0.5/confirm/ answered HTML with DEBUG=1).
    settings.DEBUG = debug
    client = bearer(unchanged, "alice")
    mine = unchanged.orders["demo-01"].pk  # alice's; confirm is hidden from her
    answers = {
        path: wire(request(client, method, path, HTTP_ACCEPT=accept))
        for path in (
            f"/api/orders/{mine}/confirm/",  # hidden
            "/api/orders/0.5/confirm/",  # a malformed id on a hidden route
            f"/api/orders/{mine}/confirmx/",  # made up
            f"/api/orders/{mine}/cancel/extra/",  # an extra segment
        )
        for method, accept in (("POST", "application/json"),)
    }
    assert len(set(answers.values())) == 1, answers
    # A malformed id on a route she may use: that route's own not_found (with its Allow).
    answers["/api/orders/0.5/cancel/"] = wire(client.post("/api/orders/0.5/cancel/"))
    for status, headers, body in answers.values():
        assert status == 404
        assert dict(headers)["Content-Type"] == PROBLEM
        assert json.loads(body)["code"] == "not_found"


def test_2_the_browsable_api_shows_no_hidden_operation(unchanged: Demo) -> None:
    client = Client()
    client.force_login(unchanged.users["warehouse"])
    pk = unchanged.orders["demo-07"].pk
    page = client.get(f"/api/orders/{pk}/refund/?format=api", HTTP_ACCEPT="text/html")
    assert page.status_code == 404
    text = page.content.decode()
    for trace in ("Refund", "refund_order", "Transition", "refund"):
        assert trace not in text
    assert wire(page) == wire(client.get(f"/api/orders/{pk}/refundx/?format=api"))


def test_3_a_session_post_without_csrf_on_a_hidden_route_reads_as_a_missing_one(
    unchanged: Demo,
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(unchanged.users["alice"])
    pk = unchanged.orders["demo-05"].pk
    hidden = client.post(f"/api/orders/{pk}/ship/", {"trackingNumber": "TRK12345678"})
    missing = client.post(f"/api/orders/{pk}/shipx/", {"trackingNumber": "TRK12345678"})
    assert hidden.status_code == 404
    assert wire(hidden) == wire(missing)


def test_3_a_session_post_without_csrf_on_a_route_it_may_use_is_refused_by_drf(
    unchanged: Demo,
) -> None:
    # The route exists for this caller, so DRF's own CSRF refusal answers: a 403 problem
    # that says so, and nothing runs.
    client = Client(enforce_csrf_checks=True)
    client.force_login(unchanged.users["admin"])
    order = unchanged.orders["demo-05"]
    before = (order.status, order.version)
    refused = client.post(f"/api/orders/{order.pk}/ship/", {"trackingNumber": "TRK12345678"})
    assert refused.status_code == 403
    assert refused["Content-Type"] == PROBLEM
    assert "CSRF" in json.loads(refused.content)["detail"]
    order.refresh_from_db()
    assert (order.status, order.version) == before


ANONYMOUS_PATHS = (
    "/api/",
    "/api/operations/",
    "/api/operations/refund_order/",
    "/api/operations/no_such_operation/",
    "/api/orders/",
    "/api/orders/1/",
    "/api/orders/999999/",
    "/api/orders/1/refund/",
    "/api/orders/1/refundx/",
    "/api/orders/1/nothing/at/all/",
    "/api/ordersx/",
    "/api/nothing/",
)


@pytest.mark.parametrize("credentials", [None, "Bearer not-a-token"])
def test_3_anonymous_callers_get_one_401_on_every_api_url_existing_or_not(
    unchanged: Demo, credentials: str | None
) -> None:
    client = Client() if credentials is None else Client(HTTP_AUTHORIZATION=credentials)
    answers: dict[bool, set[Any]] = {True: set(), False: set()}
    for path in ANONYMOUS_PATHS:
        for method, url, extra in _variants(path):
            response = request(client, method, url, **extra)
            assert response.status_code == 401, (method, url, extra)
            assert response["Content-Type"] == PROBLEM
            assert response["WWW-Authenticate"].startswith("Bearer")
            answers[method == "HEAD"].add(wire(response))
    # One answer (HEAD: the same without its body).
    assert len(answers[False]) == len(answers[True]) == 1
    body = json.loads(next(iter(answers[False]))[2])
    assert body["code"] == "not_authenticated" and body["status"] == 401


# --- 8: a permitted route says it takes POST ------------------------------------------


def test_8_a_permitted_transition_route_allows_post(unchanged: Demo) -> None:
    pk = unchanged.orders["demo-07"].pk
    response = bearer(unchanged, "supervisor").get(f"/api/orders/{pk}/refund/")
    assert response.status_code == 405
    assert response["Content-Type"] == PROBLEM
    assert [m.strip() for m in response["Allow"].split(",")] == ["POST", "OPTIONS"]
    assert response.json()["code"] == "method_not_allowed"


# --- 4: deep nesting is a clean 400 / -32700 everywhere a body is parsed --------------


def _nested(depth: int) -> bytes:
    return b'{"amount": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("depth", [40, 600, 1_000, 100_000])
def test_4_deeply_nested_json_on_the_rest_face_is_a_400(unchanged: Demo, depth: int) -> None:
    pk = unchanged.orders["demo-07"].pk
    for role, path in (("supervisor", f"/api/orders/{pk}/refund/"), ("support", "/api/orders/")):
        client = bearer(unchanged, role)
        response = client.post(path, _nested(depth), content_type="application/json")
        assert response.status_code == 400, path
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "malformed_request"


@pytest.mark.parametrize("path", ["/api/token/", "/api/token/refresh/"])
@pytest.mark.parametrize("depth", [40, 100_000])
def test_4_deeply_nested_json_on_the_token_endpoints_is_a_400(
    unchanged: Demo, path: str, depth: int
) -> None:
    response = Client().post(path, _nested(depth), content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_request"


def test_4_moderate_nesting_still_parses(unchanged: Demo) -> None:
    # The bound is generous: 20 levels are an argument error, not a parse error.
    client = bearer(unchanged, "supervisor")
    pk = unchanged.orders["demo-07"].pk
    response = client.post(
        f"/api/orders/{pk}/refund/", _nested(20), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


@pytest.mark.parametrize("endpoint", MCP_ENDPOINTS)
@pytest.mark.parametrize("depth", [40, 600, 1_000, 100_000])
def test_4_deeply_nested_json_on_mcp_is_a_parse_error(
    unchanged: Demo, endpoint: str, depth: int
) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_order",'
        b' "arguments": {"orderId": ' + b"[" * depth + b"]" * depth + b"}}}"
    )
    response = mcp_post(unchanged, endpoint, body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["error"]["code"] == -32700
    assert answer["id"] is None


def mcp_post(demo: Demo, endpoint: str, body: bytes, role: str = "supervisor") -> Any:
    return Client().post(
        endpoint,
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_for(demo.users[role])}",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION=LEGACY,
    )


def mcp_call(
    demo: Demo,
    endpoint: str,
    tool: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None = None,
    **kw: Any,
) -> Any:
    params: dict[str, Any] = {"name": tool, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    message = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": params}
    # As a client sends it: UTF-8, not ASCII escapes.
    return mcp_post(demo, endpoint, json.dumps(message, ensure_ascii=False).encode(), **kw)


# --- 6: interface C follows URLs as Django would answer them --------------------------


def test_6_read_resource_with_too_many_query_fields_answers_as_rest_does(unchanged: Demo) -> None:
    query = "&".join(f"f{i}=1" for i in range(1_100))
    url = f"http://testserver/api/orders/?{query}"
    rest = bearer(unchanged, "supervisor").get(url, HTTP_ACCEPT=HAL)
    assert rest.status_code == 400
    response = mcp_call(unchanged, "/mcp/forms", "read_resource", {"url": url})
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "malformed_request"


def test_6_submit_form_with_a_huge_note_is_refused_not_a_500(unchanged: Demo) -> None:
    pk = unchanged.orders["demo-01"].pk
    note = "\U0001f600" * 240_000  # 960 KB as UTF-8: under the MCP limit
    arguments = {
        "url": f"http://testserver/api/orders/{pk}/",
        "template": "cancel_order",
        "arguments": {"reason": "customer_request", "note": note},
    }
    response = mcp_call(unchanged, "/mcp/forms", "submit_form", arguments, role="support")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "validation_error"
    assert "note" in result["structuredContent"]["errors"]


# --- 9: JSON APIs take JSON; oversized bodies are problem documents -------------------


def test_9_a_10_mb_json_body_is_a_413_problem(unchanged: Demo) -> None:
    pk = unchanged.orders["demo-07"].pk
    body = json.dumps({"amount": 10, "note": "x" * 10_000_000}).encode()
    for client, path in (
        (bearer(unchanged, "supervisor"), f"/api/orders/{pk}/refund/"),
        (bearer(unchanged, "support"), "/api/orders/"),
        (Client(), "/api/token/"),
    ):
        response = client.post(path, body, content_type="application/json")
        assert response.status_code == 413, path
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "request_too_large"


def test_9_more_than_a_thousand_form_fields_is_a_400_problem(unchanged: Demo) -> None:
    client = Client()
    client.force_login(unchanged.users["supervisor"])
    pk = unchanged.orders["demo-07"].pk
    fields = {f"f{i}": "1" for i in range(1_100)}
    response = client.post(f"/api/orders/{pk}/refund/", fields)
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_request"


def test_9_file_parts_are_refused_everywhere(unchanged: Demo) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = {"username": "alice", "password": DEMO_PASSWORD}
    response = Client().post("/api/token/", {**upload, "f": SimpleUploadedFile("a.txt", b"x")})
    assert response.status_code == 415
    assert response["Content-Type"] == PROBLEM
    client = Client()
    client.force_login(unchanged.users["supervisor"])
    pk = unchanged.orders["demo-07"].pk
    response = client.post(
        f"/api/orders/{pk}/refund/", {"amount": "10", "f": SimpleUploadedFile("a.txt", b"x")}
    )
    assert response.status_code == 415
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "unsupported_media_type"


def test_9_the_browsable_api_forms_still_work(demo: Demo) -> None:
    client = Client()
    client.force_login(demo.users["supervisor"])
    pk = demo.orders["demo-07"].pk
    response = client.post(f"/api/orders/{pk}/refund/", {"amount": "10"})
    assert response.status_code == 200
    assert response.json()["status"] == "refunded"


# --- 10: a replay answers in the replaying face's shape -------------------------------
# confirm_order: an operation that runs on the call on every face (cancel_order asks the
# person first on MCP, docs/protocol.md#confirmations, which is not what these test).


def test_10_an_idempotent_replay_answers_in_the_shape_of_the_face_that_replays(
    demo: Demo,
) -> None:
    pk = demo.orders["demo-01"].pk
    arguments = {"orderId": pk}
    meta = {"affordances/idempotencyKey": "k-1"}

    def call(endpoint: str) -> dict[str, Any]:
        response = mcp_call(demo, endpoint, "confirm_order", arguments, role="support", meta=meta)
        result = response.json()["result"]
        assert result["isError"] is False
        return result

    first = call("/mcp/static")
    static = first["structuredContent"]
    assert static["status"] == "confirmed"
    assert "affordances" not in static and "unavailableAffordances" not in static
    replay = call("/mcp")
    assert replay["_meta"] == {"affordances/replayed": True}
    hybrid = replay["structuredContent"]
    assert set(hybrid) - set(static) == {"affordances", "unavailableAffordances"}
    assert {k: hybrid[k] for k in static} == static
    assert call("/mcp/static")["structuredContent"] == static
    rest = bearer(demo, "support").post(
        f"/api/orders/{pk}/confirm/?affordances=none",
        {},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k-2",
    )
    assert rest.status_code == 409  # a new key: the order is confirmed now
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1


def test_10_a_rest_replay_answers_in_the_shape_asked_for(demo: Demo) -> None:
    client = bearer(demo, "support")
    pk = demo.orders["demo-01"].pk

    def confirm(query: str) -> Any:
        return client.post(
            f"/api/orders/{pk}/confirm/{query}",
            {},
            content_type="application/json",
            HTTP_IDEMPOTENCY_KEY="k-1",
        )

    bare = confirm("?affordances=none")
    assert bare.status_code == 200 and "affordances" not in bare.json()
    assert bare.json()["status"] == "confirmed"
    full = confirm("")
    assert full["Idempotent-Replayed"] == "true"
    assert set(full.json()) - set(bare.json()) == {"affordances", "unavailableAffordances"}
    hybrid = mcp_call(
        demo,
        "/mcp",
        "confirm_order",
        {"orderId": pk},
        role="support",
        meta={"affordances/idempotencyKey": "k-1"},
    )
    assert hybrid.json()["result"]["structuredContent"] == full.json()
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1


# --- 12: money is a JSON number or a plain ASCII decimal ------------------------------


# Arabic-Indic and full-width digits: Python's Decimal reads both as 10.
@pytest.mark.parametrize(
    "amount", ["1_0", "\u0661\u0660", "\uff11\uff10", "1e1", "1E1", " 10", "+10", "0x0a", "10."]
)
def test_12_unusual_spellings_of_money_are_refused(unchanged: Demo, amount: str) -> None:
    pk = unchanged.orders["demo-07"].pk
    response = bearer(unchanged, "supervisor").post(
        f"/api/orders/{pk}/refund/", {"amount": amount}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert list(response.json()["errors"]) == ["amount"]
    created = bearer(unchanged, "support").post(
        "/api/orders/",
        {"customer": "alice", "description": "x", "total": amount},
        content_type="application/json",
    )
    assert created.status_code == 400
    assert "total" in created.json()["errors"]


@pytest.mark.parametrize("amount", [10, 10.5, "10", "10.50", "-1"])
def test_12_plain_money_still_reaches_the_rules(demo: Demo, amount: Any) -> None:
    pk = demo.orders["demo-07"].pk
    response = bearer(demo, "supervisor").post(
        f"/api/orders/{pk}/refund/", {"amount": amount}, content_type="application/json"
    )
    if amount == "-1":
        assert response.status_code == 400  # the constraint, not the spelling
        assert "amount" in response.json()["errors"]
    else:
        assert response.status_code == 200


# --- 13: per-caller documents are private; tokens are never cached --------------------


def test_13_the_openapi_document_is_private_to_its_caller(unchanged: Demo) -> None:
    response = bearer(unchanged, "warehouse").get("/api/schema/")
    assert response.status_code == 200
    assert "private" in response["Cache-Control"]
    vary = {v.strip().lower() for v in response["Vary"].split(",")}
    assert {"authorization", "cookie", "accept"} <= vary


# --- 11: a lock timeout is retryable, not a failed transition -------------------------


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
# transaction=True: the holder's connection must see committed rows. serialized_rollback:
# like every transactional test here, so its flush leaves the content types the next
# serialized test restores (a plain flush re-creates them: duplicate keys).
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_11_a_row_held_by_another_transaction_is_a_503_with_retry_after(
    settings: Any,
) -> None:
    from django.db import connections, transaction

    from orders.services import seed_demo

    seed_demo(password=DEMO_PASSWORD)
    settings.AFFORDANCES = {**settings.AFFORDANCES, "LOCK_TIMEOUT": 0.2}
    user = get_user_model().objects.get(username="supervisor")
    order = Order.objects.get(description="Demo order demo-01")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():
            Order.objects.select_for_update().get(pk=order.pk)
            held.set()
            release.wait(10)
        connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        response = Client(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}").post(
            f"/api/orders/{order.pk}/confirm/", {}, content_type="application/json"
        )
    finally:
        release.set()
        holder.join()
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "lock_timeout"
    order.refresh_from_db()
    assert (order.status, order.version) == ("pending", 1)
    assert not AuditRecord.objects.exists()


def test_11_lock_timeout_is_a_documented_problem_code() -> None:
    from affordances.problems import PROBLEM_SCHEMA, ProblemCode

    assert ProblemCode("lock_timeout")
    assert "lock_timeout" in PROBLEM_SCHEMA["properties"]["code"]["description"]


_SQLITE_LOCK_SCRIPT = """
import json, sqlite3
from django.db import connection
from django.test import Client
from django.contrib.auth import get_user_model
from rest_framework_simplejwt.tokens import AccessToken
from affordances.models import AuditRecord
from orders.models import Order
from orders.services import seed_demo

seed_demo(password="x")
order = Order.objects.get(description="Demo order demo-01")
user = get_user_model().objects.get(username="supervisor")
connection.close()
connection.settings_dict["OPTIONS"]["timeout"] = 0.2  # the busy timeout, made short
holder = sqlite3.connect(connection.settings_dict["NAME"])
holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
response = Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(user)}").post(
    f"/api/orders/{order.pk}/confirm/", {}, content_type="application/json"
)
holder.rollback()
order.refresh_from_db()
print(json.dumps({
    "status": response.status_code,
    "retry": response.get("Retry-After"),
    "type": response["Content-Type"],
    "body": response.json(),
    "order": [order.status, order.version],
    "audit": AuditRecord.objects.count(),
}))
"""


def test_11_on_sqlite_a_locked_database_is_a_503_not_a_failed_transition(tmp_path: Any) -> None:
    # A real file database and a real second writer (the tests' own database is in
    # memory): the run waits SQLite's busy timeout, then answers lock_timeout.
    import os

    from demo_tests.test_production import manage as run_manage

    env = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "demo_tests.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }

    def manage(*args: str) -> str:
        result = run_manage(*args, env=env)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    manage("migrate", "--noinput", "-v", "0")
    seen = json.loads(manage("shell", "-c", _SQLITE_LOCK_SCRIPT).strip().splitlines()[-1])
    assert seen["status"] == 503
    assert seen["retry"] == "1"
    assert seen["type"] == PROBLEM
    assert seen["body"]["code"] == "lock_timeout"
    assert seen["order"] == ["pending", 1]
    assert seen["audit"] == 0


def test_14_every_invalid_token_gets_one_401_whatever_the_account(unchanged: Demo) -> None:
    # Deleted, inactive, malformed or expired: the API does not say which.
    from datetime import timedelta

    users = get_user_model().objects
    gone = users.create_user("gone", password="x")
    asleep = users.create_user("asleep", password="x")
    deleted_token = token_for(gone)
    gone.delete()
    asleep_token = token_for(asleep)
    asleep.is_active = False
    asleep.save()
    expired = AccessToken.for_user(unchanged.users["alice"])
    expired.set_exp(lifetime=-timedelta(minutes=1))
    malformed = AccessToken.for_user(unchanged.users["alice"])
    malformed["user_id"] = "abc"
    answers = set()
    for credential in (deleted_token, asleep_token, str(expired), str(malformed), "x.y.z"):
        for path in ("/api/orders/", "/api/orders/1/refund/", "/api/nothing/"):
            response = Client(HTTP_AUTHORIZATION=f"Bearer {credential}").get(path)
            assert response.status_code == 401
            answers.add(wire(response))
    assert len(answers) == 1
    body = json.loads(answers.pop()[2])
    assert body["detail"] == "The credentials are invalid or expired."
