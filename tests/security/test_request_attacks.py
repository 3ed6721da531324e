"""The attacks of the adversarial review (issue 14) on the library's faces, kept as tests
(on the shop of ``tests.generic.shop``).

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
from tests.generic.shop import Purchase
from tests.security.attacks import echo_free, request, variants, wire
from tests.shop_data import PASSWORD, Shop, seed

PROBLEM = "application/problem+json"
HAL = "application/prs.hal-forms+json"
MCP_ENDPOINTS = ("/mcp", "/mcp/static", "/mcp/compact", "/mcp/forms")
LEGACY = "2025-11-25"


def token_for(user: Any) -> str:
    return str(AccessToken.for_user(user))


def bearer(shop: Shop, role: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {token_for(shop.users[role])}")


def database_state() -> tuple[Any, ...]:
    purchases = tuple(
        Purchase.objects.order_by("pk").values_list(
            "pk", "status", "version", "payment_status", "total", "tracking_number"
        )
    )
    return purchases, AuditRecord.objects.count(), IdempotencyRecord.objects.count()


@pytest.fixture
def unchanged(shop: Shop) -> Iterator[Shop]:
    """The shop data, asserted untouched when the test ends."""
    before = database_state()
    yield shop
    assert database_state() == before


# --- 2, 3: a route the caller may not use reads as one that does not exist ------------


@pytest.mark.parametrize(
    ("role", "verb", "purchase"),
    [
        ("warehouse", "refund", "p-07"),
        ("warehouse", "confirm", "p-01"),
        ("alice", "ship", "p-05"),
        ("alice", "refund", "p-07"),
        ("auditor", "cancel", "p-01"),
    ],
)
def test_3_a_hidden_route_is_byte_identical_to_a_missing_one_for_every_method_accept_and_format(
    unchanged: Shop, role: str, verb: str, purchase: str
) -> None:
    client = bearer(unchanged, role)
    pk = unchanged.purchases[purchase].pk
    for method, url, extra in variants(f"/api/purchases/{pk}/{verb}/"):
        hidden = request(client, method, url, **extra)
        missing = request(client, method, url.replace(f"/{verb}/", f"/{verb}x/"), **extra)
        assert wire(hidden) == wire(missing), (method, url, extra)
        assert hidden.status_code == 404
        assert not hidden.has_header("Allow")


@pytest.mark.parametrize("debug", [False, True])
def test_3_with_debug_on_too_every_unmatched_or_hidden_api_route_is_the_same_problem(
    unchanged: Shop, settings: Any, debug: bool
) -> None:
    # DEBUG's HTML 404 page must not stand in for the problem the document promises
    # (schemathesis: POST /api/purchases/0.5/confirm/ answered HTML with DEBUG=1).
    settings.DEBUG = debug
    client = bearer(unchanged, "alice")
    mine = unchanged.purchases["p-01"].pk  # alice's; confirm is hidden from her
    answers = {
        path: wire(request(client, method, path, HTTP_ACCEPT=accept))
        for path in (
            f"/api/purchases/{mine}/confirm/",  # hidden
            "/api/purchases/0.5/confirm/",  # a malformed id on a hidden route
            f"/api/purchases/{mine}/confirmx/",  # made up
            f"/api/purchases/{mine}/cancel/extra/",  # an extra segment
        )
        for method, accept in (("POST", "application/json"),)
    }
    assert len(set(answers.values())) == 1, answers
    # A malformed id on a route she may use: that route's own not_found (with its Allow).
    answers["/api/purchases/0.5/cancel/"] = wire(client.post("/api/purchases/0.5/cancel/"))
    for status, headers, body in answers.values():
        assert status == 404
        assert dict(headers)["Content-Type"] == PROBLEM
        assert json.loads(body)["code"] == "not_found"


def test_2_the_browsable_api_shows_no_hidden_operation(unchanged: Shop) -> None:
    client = Client()
    client.force_login(unchanged.users["warehouse"])
    pk = unchanged.purchases["p-07"].pk
    page = client.get(f"/api/purchases/{pk}/refund/?format=api", HTTP_ACCEPT="text/html")
    assert page.status_code == 404
    text = page.content.decode()
    for trace in ("Refund", "refund_purchase", "Transition", "refund"):
        assert trace not in text
    assert wire(page) == wire(client.get(f"/api/purchases/{pk}/refundx/?format=api"))


def test_3_a_session_post_without_csrf_on_a_hidden_route_reads_as_a_missing_one(
    unchanged: Shop,
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(unchanged.users["alice"])
    pk = unchanged.purchases["p-05"].pk
    hidden = client.post(f"/api/purchases/{pk}/ship/", {"trackingNumber": "TRK12345678"})
    missing = client.post(f"/api/purchases/{pk}/shipx/", {"trackingNumber": "TRK12345678"})
    assert hidden.status_code == 404
    assert wire(hidden) == wire(missing)


def test_3_a_session_post_without_csrf_on_a_route_it_may_use_is_refused_by_drf(
    unchanged: Shop,
) -> None:
    # The route exists for this caller, so DRF's own CSRF refusal answers: a 403 problem
    # that says so, and nothing runs.
    client = Client(enforce_csrf_checks=True)
    client.force_login(unchanged.users["admin"])
    purchase = unchanged.purchases["p-05"]
    before = (purchase.status, purchase.version)
    refused = client.post(f"/api/purchases/{purchase.pk}/ship/", {"trackingNumber": "TRK12345678"})
    assert refused.status_code == 403
    assert refused["Content-Type"] == PROBLEM
    assert "CSRF" in json.loads(refused.content)["detail"]
    purchase.refresh_from_db()
    assert (purchase.status, purchase.version) == before


ANONYMOUS_PATHS = (
    "/api/",
    "/api/operations/",
    "/api/operations/refund_purchase/",
    "/api/operations/no_such_operation/",
    "/api/purchases/",
    "/api/purchases/1/",
    "/api/purchases/999999/",
    "/api/purchases/1/refund/",
    "/api/purchases/1/refundx/",
    "/api/purchases/1/nothing/at/all/",
    "/api/purchasesx/",
    "/api/nothing/",
)


@pytest.mark.parametrize("credentials", [None, "Bearer not-a-token"])
def test_3_anonymous_callers_get_one_401_on_every_api_url_existing_or_not(
    unchanged: Shop, credentials: str | None
) -> None:
    client = Client() if credentials is None else Client(HTTP_AUTHORIZATION=credentials)
    answers: dict[bool, set[Any]] = {True: set(), False: set()}
    # A browser's read (HTML negotiated) gets the login page instead: one page whatever
    # the route, but for the path it echoes in its link back.
    pages: dict[bool, set[Any]] = {True: set(), False: set()}
    for path in ANONYMOUS_PATHS:
        for method, url, extra in variants(path):
            response = request(client, method, url, **extra)
            assert response.status_code == 401, (method, url, extra)
            assert response["WWW-Authenticate"].startswith("Bearer")
            if response["Content-Type"].startswith("text/html"):
                assert method in ("GET", "HEAD"), (method, url, extra)
                pages[method == "HEAD"].add(echo_free(wire(response), url))
                continue
            assert response["Content-Type"] == PROBLEM, (method, url, extra)
            answers[method == "HEAD"].add(wire(response))
    # One answer (HEAD: the same without its body).
    assert len(answers[False]) == len(answers[True]) == 1
    body = json.loads(next(iter(answers[False]))[2])
    assert body["code"] == "not_authenticated" and body["status"] == 401
    assert len(pages[False]) == len(pages[True]) == 1
    assert b"Log in" in next(iter(pages[False]))[2]


# --- 8: a permitted route says it takes POST ------------------------------------------


def test_8_a_permitted_transition_route_allows_post(unchanged: Shop) -> None:
    pk = unchanged.purchases["p-07"].pk
    response = bearer(unchanged, "supervisor").get(f"/api/purchases/{pk}/refund/")
    assert response.status_code == 405
    assert response["Content-Type"] == PROBLEM
    assert [m.strip() for m in response["Allow"].split(",")] == ["POST", "OPTIONS"]
    assert response.json()["code"] == "method_not_allowed"


# --- 4: deep nesting is a clean 400 / -32700 everywhere a body is parsed --------------


def _nested(depth: int) -> bytes:
    return b'{"amount": ' + b"[" * depth + b"]" * depth + b"}"


@pytest.mark.parametrize("depth", [40, 600, 1_000, 100_000])
def test_4_deeply_nested_json_on_the_rest_face_is_a_400(unchanged: Shop, depth: int) -> None:
    pk = unchanged.purchases["p-07"].pk
    for role, path in (
        ("supervisor", f"/api/purchases/{pk}/refund/"),
        ("support", "/api/purchases/"),
    ):
        client = bearer(unchanged, role)
        response = client.post(path, _nested(depth), content_type="application/json")
        assert response.status_code == 400, path
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "malformed_request"


@pytest.mark.parametrize("path", ["/api/token/", "/api/token/refresh/"])
@pytest.mark.parametrize("depth", [40, 100_000])
def test_4_deeply_nested_json_on_the_token_endpoints_is_a_400(
    unchanged: Shop, path: str, depth: int
) -> None:
    response = Client().post(path, _nested(depth), content_type="application/json")
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_request"


def test_4_moderate_nesting_still_parses(unchanged: Shop) -> None:
    # The bound is generous: 20 levels are an argument error, not a parse error.
    client = bearer(unchanged, "supervisor")
    pk = unchanged.purchases["p-07"].pk
    response = client.post(
        f"/api/purchases/{pk}/refund/", _nested(20), content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"


@pytest.mark.parametrize("endpoint", MCP_ENDPOINTS)
@pytest.mark.parametrize("depth", [40, 600, 1_000, 100_000])
def test_4_deeply_nested_json_on_mcp_is_a_parse_error(
    unchanged: Shop, endpoint: str, depth: int
) -> None:
    body = (
        b'{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_purchase",'
        b' "arguments": {"purchaseId": ' + b"[" * depth + b"]" * depth + b"}}}"
    )
    response = mcp_post(unchanged, endpoint, body)
    assert response.status_code == 400
    answer = response.json()
    assert answer["error"]["code"] == -32700
    assert answer["id"] is None


def mcp_post(shop: Shop, endpoint: str, body: bytes, role: str = "supervisor") -> Any:
    return Client().post(
        endpoint,
        body,
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token_for(shop.users[role])}",
        HTTP_ACCEPT="application/json, text/event-stream",
        HTTP_MCP_PROTOCOL_VERSION=LEGACY,
    )


def mcp_call(
    shop: Shop,
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
    return mcp_post(shop, endpoint, json.dumps(message, ensure_ascii=False).encode(), **kw)


# --- 6: interface C follows URLs as Django would answer them --------------------------


def test_6_read_resource_with_too_many_query_fields_answers_as_rest_does(unchanged: Shop) -> None:
    query = "&".join(f"f{i}=1" for i in range(1_100))
    url = f"http://testserver/api/purchases/?{query}"
    rest = bearer(unchanged, "supervisor").get(url, HTTP_ACCEPT=HAL)
    assert rest.status_code == 400
    response = mcp_call(unchanged, "/mcp/forms", "read_resource", {"url": url})
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "malformed_request"


def test_6_submit_form_with_a_huge_note_is_refused_not_a_500(unchanged: Shop) -> None:
    pk = unchanged.purchases["p-01"].pk
    note = "\U0001f600" * 240_000  # 960 KB as UTF-8: under the MCP limit
    arguments = {
        "url": f"http://testserver/api/purchases/{pk}/",
        "template": "cancel_purchase",
        "arguments": {"reason": "customer_request", "note": note},
    }
    response = mcp_call(unchanged, "/mcp/forms", "submit_form", arguments, role="support")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["code"] == "validation_error"
    assert "note" in result["structuredContent"]["errors"]


# --- 9: JSON APIs take JSON; oversized bodies are problem documents -------------------


def test_9_a_10_mb_json_body_is_a_413_problem(unchanged: Shop) -> None:
    pk = unchanged.purchases["p-07"].pk
    body = json.dumps({"amount": 10, "note": "x" * 10_000_000}).encode()
    for client, path in (
        (bearer(unchanged, "supervisor"), f"/api/purchases/{pk}/refund/"),
        (bearer(unchanged, "support"), "/api/purchases/"),
        (Client(), "/api/token/"),
    ):
        response = client.post(path, body, content_type="application/json")
        assert response.status_code == 413, path
        assert response["Content-Type"] == PROBLEM
        assert response.json()["code"] == "request_too_large"


def test_9_more_than_a_thousand_form_fields_is_a_400_problem(unchanged: Shop) -> None:
    client = Client()
    client.force_login(unchanged.users["supervisor"])
    pk = unchanged.purchases["p-07"].pk
    fields = {f"f{i}": "1" for i in range(1_100)}
    response = client.post(f"/api/purchases/{pk}/refund/", fields)
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "malformed_request"


def test_9_file_parts_are_refused_everywhere(unchanged: Shop) -> None:
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = {"username": "alice", "password": PASSWORD}
    response = Client().post("/api/token/", {**upload, "f": SimpleUploadedFile("a.txt", b"x")})
    assert response.status_code == 415
    assert response["Content-Type"] == PROBLEM
    client = Client()
    client.force_login(unchanged.users["supervisor"])
    pk = unchanged.purchases["p-07"].pk
    response = client.post(
        f"/api/purchases/{pk}/refund/", {"amount": "10", "f": SimpleUploadedFile("a.txt", b"x")}
    )
    assert response.status_code == 415
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "unsupported_media_type"


def test_9_the_browsable_api_forms_still_work(shop: Shop) -> None:
    client = Client()
    client.force_login(shop.users["supervisor"])
    pk = shop.purchases["p-07"].pk
    response = client.post(f"/api/purchases/{pk}/refund/", {"amount": "10"})
    assert response.status_code == 200
    assert response.json()["status"] == "refunded"


# --- 10: a replay answers in the replaying face's shape -------------------------------
# confirm_purchase: an operation that runs on the call on every face (cancel_purchase asks the
# person first on MCP, docs/protocol.md#confirmations, which is not what these test).


def test_10_an_idempotent_replay_answers_in_the_shape_of_the_face_that_replays(
    shop: Shop,
) -> None:
    pk = shop.purchases["p-01"].pk
    arguments = {"purchaseId": pk}
    meta = {"affordances/idempotencyKey": "k-1"}

    def call(endpoint: str) -> dict[str, Any]:
        response = mcp_call(
            shop, endpoint, "confirm_purchase", arguments, role="support", meta=meta
        )
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
    rest = bearer(shop, "support").post(
        f"/api/purchases/{pk}/confirm/?affordances=none",
        {},
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY="k-2",
    )
    assert rest.status_code == 409  # a new key: the purchase is confirmed now
    assert AuditRecord.objects.filter(object_id=str(pk)).count() == 1


def test_10_a_rest_replay_answers_in_the_shape_asked_for(shop: Shop) -> None:
    client = bearer(shop, "support")
    pk = shop.purchases["p-01"].pk

    def confirm(query: str) -> Any:
        return client.post(
            f"/api/purchases/{pk}/confirm/{query}",
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
        shop,
        "/mcp",
        "confirm_purchase",
        {"purchaseId": pk},
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
def test_12_unusual_spellings_of_money_are_refused(unchanged: Shop, amount: str) -> None:
    pk = unchanged.purchases["p-07"].pk
    response = bearer(unchanged, "supervisor").post(
        f"/api/purchases/{pk}/refund/", {"amount": amount}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response["Content-Type"] == PROBLEM
    assert list(response.json()["errors"]) == ["amount"]
    created = bearer(unchanged, "support").post(
        "/api/purchases/",
        {"customer": "alice", "description": "x", "total": amount},
        content_type="application/json",
    )
    assert created.status_code == 400
    assert "total" in created.json()["errors"]


@pytest.mark.parametrize("amount", [10, 10.5, "10", "10.50", "-1"])
def test_12_plain_money_still_reaches_the_rules(shop: Shop, amount: Any) -> None:
    pk = shop.purchases["p-07"].pk
    response = bearer(shop, "supervisor").post(
        f"/api/purchases/{pk}/refund/", {"amount": amount}, content_type="application/json"
    )
    if amount == "-1":
        assert response.status_code == 400  # the constraint, not the spelling
        assert "amount" in response.json()["errors"]
    else:
        assert response.status_code == 200


# --- 13: per-caller documents are private; tokens are never cached --------------------


def test_13_the_openapi_document_is_private_to_its_caller(unchanged: Shop) -> None:
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
    settings: Any, shop_registered: None
) -> None:
    from django.db import connections, transaction

    purchase = seed().purchases["p-01"]
    settings.AFFORDANCES = {**settings.AFFORDANCES, "LOCK_TIMEOUT": 0.2}
    user = get_user_model().objects.get(username="supervisor")
    held, release = threading.Event(), threading.Event()

    def hold() -> None:
        with transaction.atomic():
            Purchase.objects.select_for_update().get(pk=purchase.pk)
            held.set()
            release.wait(10)
        connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert held.wait(10)
        response = Client(HTTP_AUTHORIZATION=f"Bearer {token_for(user)}").post(
            f"/api/purchases/{purchase.pk}/confirm/", {}, content_type="application/json"
        )
    finally:
        release.set()
        holder.join()
    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response["Content-Type"] == PROBLEM
    assert response.json()["code"] == "lock_timeout"
    purchase.refresh_from_db()
    assert (purchase.status, purchase.version) == ("pending", 1)
    assert not AuditRecord.objects.exists()


def test_11_lock_timeout_is_a_documented_problem_code() -> None:
    from affordances.problems import PROBLEM_SCHEMA, ProblemCode

    assert ProblemCode("lock_timeout")
    assert "lock_timeout" in PROBLEM_SCHEMA["properties"]["code"]["description"]


_SQLITE_LOCK_SCRIPT = """
import importlib, json, sqlite3
from django.conf import settings
from django.db import connection
from django.test import Client, override_settings
from django.contrib.auth import get_user_model
from rest_framework_simplejwt.tokens import AccessToken
from affordances.models import AuditRecord
from tests.generic import shop_api
from tests.shop_data import seed

models = {"generic.Purchase": shop_api.REGISTRATION}
with override_settings(AFFORDANCES={**settings.AFFORDANCES, "MODELS": models}):
    importlib.reload(shop_api)
    with override_settings(ROOT_URLCONF="tests.generic.shop_api"):
        purchase = seed().purchases["p-01"]
        user = get_user_model().objects.get(username="supervisor")
        connection.close()
        connection.settings_dict["OPTIONS"]["timeout"] = 0.2  # the busy timeout, made short
        holder = sqlite3.connect(connection.settings_dict["NAME"])
        holder.execute("BEGIN IMMEDIATE")  # another writer holds the database
        response = Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(user)}").post(
            f"/api/purchases/{purchase.pk}/confirm/", {}, content_type="application/json"
        )
        holder.rollback()
        purchase.refresh_from_db()
print(json.dumps({
    "status": response.status_code,
    "retry": response.get("Retry-After"),
    "type": response["Content-Type"],
    "body": response.json(),
    "purchase": [purchase.status, purchase.version],
    "audit": AuditRecord.objects.count(),
}))
"""


def test_11_on_sqlite_a_locked_database_is_a_503_not_a_failed_transition(tmp_path: Any) -> None:
    # A real file database and a real second writer (the tests' own database is in
    # memory): the run waits SQLite's busy timeout, then answers lock_timeout.
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **{k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }

    def django(*args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "django", *args],
            cwd=Path(__file__).resolve().parents[2],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout

    django("migrate", "--run-syncdb", "--noinput", "-v", "0")
    seen = json.loads(django("shell", "-c", _SQLITE_LOCK_SCRIPT).strip().splitlines()[-1])
    assert seen["status"] == 503
    assert seen["retry"] == "1"
    assert seen["type"] == PROBLEM
    assert seen["body"]["code"] == "lock_timeout"
    assert seen["purchase"] == ["pending", 1]
    assert seen["audit"] == 0
