"""Documents built once per capability set (``affordances.memo``): the catalog's bytes, the
OpenAPI document and MCP ``tools/list`` are generated once — and never served to a caller
whose capabilities, constraints, host, revision or format differ from the one they were
built for."""

from __future__ import annotations

import json
from dataclasses import replace
from decimal import Decimal
from typing import Any

import pytest
from django.test import Client, RequestFactory
from django.utils import timezone, translation
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.settings import spectacular_settings
from rest_framework_simplejwt.tokens import AccessToken

from affordances import memo
from affordances.catalog import get_catalog, reset_catalog
from affordances.mcp import HYBRID, McpView
from affordances.rest.renderers import HalFormsRenderer, hal_document
from demo_tests.conftest import Demo
from orders.models import Order, OrderStatus
from orders.services import order_create

LEGACY = "2025-11-25"
MODERN = "2026-07-28"


def _headers(demo: Demo, username: str, **extra: str) -> dict[str, str]:
    token = AccessToken.for_user(demo.users[username])
    return {"Authorization": f"Bearer {token}", **extra}


def _schema(demo: Demo, username: str, **extra: str) -> Any:
    return Client().get("/api/schema/?format=json", headers=_headers(demo, username, **extra))


@pytest.fixture
def generations(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times an OpenAPI document is generated (drf-spectacular's own generator),
    from an empty memo: documents an earlier test of this process kept are forgotten."""
    reset_catalog()
    calls: list[int] = []
    original = SchemaGenerator.get_schema

    def counted(self: SchemaGenerator, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(SchemaGenerator, "get_schema", counted)
    return calls


def _operation_ids(document: dict[str, Any]) -> set[str]:
    return {
        operation["operationId"]
        for methods in document["paths"].values()
        for operation in methods.values()
        if isinstance(operation, dict) and "operationId" in operation
    }


# OpenAPI --------------------------------------------------------------------------------


def test_the_openapi_document_is_generated_once_per_caller_and_carries_an_etag(
    demo: Demo, generations: list[int]
) -> None:
    first = _schema(demo, "support")
    second = _schema(demo, "support")

    assert first.status_code == second.status_code == 200
    assert first.content == second.content
    assert first["ETag"] == second["ETag"]
    assert first["ETag"].startswith('"') and first["ETag"].endswith('"')
    assert len(generations) == 1


def test_if_none_match_on_the_openapi_document_gives_304_without_a_body(demo: Demo) -> None:
    etag = _schema(demo, "support")["ETag"]

    response = _schema(demo, "support", **{"If-None-Match": etag})

    assert response.status_code == 304
    assert response.content == b""
    assert response["ETag"] == etag
    assert "private" in response["Cache-Control"]
    assert "Authorization" in response["Vary"]


def test_a_caller_never_gets_the_document_or_304_of_another_capability_set(
    demo: Demo,
) -> None:
    admin = _schema(demo, "admin")
    alice = _schema(demo, "alice")

    assert admin["ETag"] != alice["ETag"]
    hidden = _operation_ids(admin.json()) - _operation_ids(alice.json())
    assert {"ship_order", "refund_order", "confirm_order"} <= hidden
    for name in hidden:
        assert name.encode() not in alice.content
    # Another caller's tag is no match for alice's document.
    again = _schema(demo, "alice", **{"If-None-Match": admin["ETag"]})
    assert again.status_code == 200
    assert again.content == alice.content


def test_callers_with_the_same_capabilities_but_their_own_constraints_get_their_own(
    demo: Demo, generations: list[int]
) -> None:
    alice = _schema(demo, "alice").json()
    bob = _schema(demo, "bob").json()

    def customer(document: dict[str, Any]) -> Any:
        schemas = document["components"]["schemas"]
        body = next(s for name, s in schemas.items() if "customer" in s.get("properties", {}))
        return body["properties"]["customer"].get("enum")

    assert customer(alice) == ["alice"]
    assert customer(bob) == ["bob"]
    assert len(generations) == 2


def test_the_document_names_the_host_it_is_served_from(demo: Demo, settings: Any) -> None:
    settings.ALLOWED_HOSTS = [".localhost"]
    one = _schema(demo, "support", Host="one.localhost").json()
    two = _schema(demo, "support", Host="two.localhost").json()

    assert one["servers"] == [{"url": "http://one.localhost"}]
    assert two["servers"] == [{"url": "http://two.localhost"}]


def test_yaml_and_json_are_each_their_own_bytes(demo: Demo) -> None:
    headers = _headers(demo, "support")
    as_json = Client().get("/api/schema/?format=json", headers=headers)
    as_yaml = Client().get("/api/schema/", headers=headers)
    again = Client().get("/api/schema/?format=json", headers=headers)

    assert as_json["Content-Type"].startswith("application/vnd.oai.openapi+json")
    assert as_yaml["Content-Type"].startswith("application/vnd.oai.openapi")
    assert json.loads(as_json.content)["openapi"]
    assert as_yaml.content.startswith(b"openapi:")
    assert again.content == as_json.content
    assert again["Content-Type"] == as_json["Content-Type"]


def test_a_new_catalog_or_a_setting_change_generates_the_document_anew(
    demo: Demo, generations: list[int], settings: Any
) -> None:
    _schema(demo, "support")
    _schema(demo, "support")
    reset_catalog()
    _schema(demo, "support")
    settings.ALLOWED_HOSTS = ["testserver"]
    _schema(demo, "support")

    assert len(generations) == 3


def tenant_hook(result: dict[str, Any], generator: Any, request: Any, public: bool) -> Any:
    """A project's own hook that reads more of the request than the memo's key names."""
    result["info"]["x-tenant"] = request.headers.get("X-Tenant", "")
    return result


def test_openapi_memo_off_generates_each_document_for_its_own_request(
    demo: Demo, generations: list[int], settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.conf import settings as django_settings

    hooks = [*spectacular_settings.POSTPROCESSING_HOOKS, tenant_hook]
    monkeypatch.setattr(spectacular_settings, "POSTPROCESSING_HOOKS", hooks)
    settings.AFFORDANCES = {**django_settings.AFFORDANCES, "OPENAPI_MEMO": False}
    kept = len(memo.DOCUMENTS)

    one = _schema(demo, "support", **{"X-Tenant": "one"})
    two = _schema(demo, "support", **{"X-Tenant": "two"})
    again = _schema(demo, "support", **{"X-Tenant": "two", "If-None-Match": two["ETag"]})

    assert one.json()["info"]["x-tenant"] == "one"
    assert two.json()["info"]["x-tenant"] == "two"
    assert one["ETag"] != two["ETag"]
    assert again.status_code == 304 and again.content == b""
    assert len(generations) == 3
    assert len(memo.DOCUMENTS) == kept  # nothing of these documents was kept


def test_with_the_memo_on_a_hook_reading_more_of_the_request_sees_only_the_first(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Why the setting exists: the memo's key names the capability set, not a tenant header.
    hooks = [*spectacular_settings.POSTPROCESSING_HOOKS, tenant_hook]
    monkeypatch.setattr(spectacular_settings, "POSTPROCESSING_HOOKS", hooks)
    one = _schema(demo, "support", **{"X-Tenant": "one"})
    two = _schema(demo, "support", **{"X-Tenant": "two"})

    assert one.json()["info"]["x-tenant"] == two.json()["info"]["x-tenant"] == "one"


# The catalog ----------------------------------------------------------------------------


def test_catalog_bytes_are_kept_per_media_type(demo: Demo) -> None:
    headers = _headers(demo, "support")
    compact = Client().get("/api/operations/", headers={**headers, "Accept": "application/json"})
    indented = Client().get(
        "/api/operations/", headers={**headers, "Accept": "application/json; indent=4"}
    )
    compact_again = Client().get(
        "/api/operations/", headers={**headers, "Accept": "application/json"}
    )

    assert compact.json() == indented.json()
    assert b"\n    " in indented.content and b"\n" not in compact.content
    assert compact_again.content == compact.content


def test_the_browsable_catalog_is_rendered_for_each_request(demo: Demo) -> None:
    client = Client()
    client.force_login(demo.users["support"])
    page = client.get("/api/operations/", headers={"Accept": "text/html"})
    client.force_login(demo.users["supervisor"])
    other = client.get("/api/operations/", headers={"Accept": "text/html"})

    assert page.status_code == other.status_code == 200
    # The page names who is logged in: it is not one cached page for everyone.
    assert b"support" in page.content and b"supervisor" in other.content
    assert b"refund_order" not in page.content and b"refund_order" in other.content


# MCP tools/list -------------------------------------------------------------------------


def _rpc(demo: Demo, username: str, method: str, *, endpoint: str = "/mcp", **extra: Any) -> Any:
    version = extra.pop("version", LEGACY)
    params = extra.pop("params", {})
    headers = _headers(demo, username, **{"MCP-Protocol-Version": version}, **extra)
    if version == MODERN:
        headers["Mcp-Method"] = method
        params = {
            **params,
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        }
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    response = Client().post(
        endpoint, json.dumps(body), content_type="application/json", headers=headers
    )
    assert response.status_code == 200, response.content
    return response.json()


def _tool_names(envelope: dict[str, Any]) -> list[str]:
    return [tool["name"] for tool in envelope["result"]["tools"]]


def test_tools_list_is_built_once_and_never_crosses_capability_sets(demo: Demo) -> None:
    alice = _tool_names(_rpc(demo, "alice", "tools/list"))
    admin = _tool_names(_rpc(demo, "admin", "tools/list"))
    alice_again = _tool_names(_rpc(demo, "alice", "tools/list"))
    warehouse = _tool_names(_rpc(demo, "warehouse", "tools/list"))

    assert alice == alice_again
    assert "refund_order" in admin and "refund_order" not in alice
    assert "ship_order" in warehouse and "cancel_order" not in warehouse
    assert "ship_order" not in alice_again


def test_tools_list_answers_each_request_with_its_own_id(demo: Demo) -> None:
    headers = _headers(demo, "support", **{"MCP-Protocol-Version": LEGACY})
    answers = []
    for request_id in (1, "abc", 2**40):
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tools/list", "params": {}}
        response = Client().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=headers
        )
        answers.append(response.json())
    assert [answer["id"] for answer in answers] == [1, "abc", 2**40]
    assert answers[0]["result"] == answers[1]["result"] == answers[2]["result"]


def test_tools_list_is_dressed_for_each_revision(demo: Demo) -> None:
    legacy = _rpc(demo, "support", "tools/list")["result"]
    modern = _rpc(demo, "support", "tools/list", version=MODERN)["result"]
    legacy_again = _rpc(demo, "support", "tools/list")["result"]

    assert "ttlMs" not in legacy and "cacheScope" not in legacy
    assert modern["cacheScope"] == "private" and modern["ttlMs"] > 0
    assert legacy_again == legacy


def test_tools_list_is_its_profiles(demo: Demo) -> None:
    def success_schema(endpoint: str) -> dict[str, Any]:
        tools = _rpc(demo, "support", "tools/list", endpoint=endpoint)["result"]["tools"]
        get_order = next(tool for tool in tools if tool["name"] == "get_order")
        return get_order["outputSchema"]["anyOf"][0]

    hybrid = json.dumps(success_schema("/mcp"))
    static = json.dumps(success_schema("/mcp/static"))
    assert "unavailableAffordances" in hybrid
    assert "unavailableAffordances" not in static


def test_tools_list_pages_are_kept_apart(demo: Demo) -> None:
    view = McpView.as_view(profile=replace(HYBRID, page_size=2))
    headers = _headers(demo, "admin", **{"MCP-Protocol-Version": LEGACY})

    def tools_list(params: dict[str, Any]) -> dict[str, Any]:
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": params}
        request = RequestFactory().post(
            "/mcp", json.dumps(body), content_type="application/json", headers=headers
        )
        return dict(json.loads(view(request).content)["result"])

    first = tools_list({})
    second = tools_list({"cursor": first["nextCursor"]})
    again = tools_list({})
    on_the_full_page = _tool_names(_rpc(demo, "admin", "tools/list"))

    assert len(first["tools"]) == len(second["tools"]) == 2
    assert {t["name"] for t in first["tools"]}.isdisjoint(t["name"] for t in second["tools"])
    assert again == first
    assert len(on_the_full_page) > 4  # the endpoint's own profile: its own pages


def test_forms_tools_name_the_entry_point_of_the_host_asked(demo: Demo, settings: Any) -> None:
    settings.ALLOWED_HOSTS = [".localhost"]
    one = _rpc(demo, "support", "tools/list", endpoint="/mcp/forms", Host="one.localhost")
    two = _rpc(demo, "support", "tools/list", endpoint="/mcp/forms", Host="two.localhost")

    def description(envelope: dict[str, Any]) -> str:
        return str(envelope["result"]["tools"][0]["description"])

    assert "http://one.localhost/api/" in description(one)
    assert "http://two.localhost/api/" in description(two)


# The store ------------------------------------------------------------------------------


def test_the_store_is_bounded_and_emptied_when_the_catalog_is_rebuilt() -> None:
    builds: list[int] = []
    for index in range(memo.MAX_ENTRIES + 10):
        memo.memoized(
            ("test", index), lambda index=index: builds.append(index) or index, size=lambda _: 1
        )
    assert len(memo.DOCUMENTS) == memo.MAX_ENTRIES
    assert memo.memoized(("test", 0), lambda: "rebuilt", size=len) == "rebuilt"  # evicted first
    kept = memo.memoized(("test", memo.MAX_ENTRIES + 9), lambda: "x", size=len)
    assert kept == memo.MAX_ENTRIES + 9

    reset_catalog()
    assert memo.memoized(("test", memo.MAX_ENTRIES + 9), lambda: "new", size=len) == "new"
    assert memo.stored_bytes() == 3


def test_the_store_is_bounded_in_bytes() -> None:
    memo.clear()
    chunk = memo.MAX_BYTES // 10
    for index in range(25):
        value = memo.memoized(("big", index), lambda: b"x" * chunk, size=len)
        assert len(value) == chunk
        assert memo.stored_bytes() <= memo.MAX_BYTES
    assert 9 <= len(memo.DOCUMENTS) <= 10
    # The most recent are kept, the oldest went first.
    assert memo.memoized(("big", 24), lambda: b"rebuilt", size=len) == b"x" * chunk
    assert memo.memoized(("big", 0), lambda: b"rebuilt", size=len) == b"rebuilt"
    # A value larger than the whole bound is returned, not kept.
    huge = memo.memoized(("huge",), lambda: b"y" * (memo.MAX_BYTES + 1), size=len)
    assert len(huge) == memo.MAX_BYTES + 1 and ("huge",) not in memo.DOCUMENTS
    memo.clear()
    assert memo.stored_bytes() == 0


# HAL-FORMS: forms shared by rows only when equal ------------------------------------------


def test_hal_forms_rows_with_different_constraints_get_their_own_forms(demo: Demo) -> None:
    for total in ("35.00", "75.50"):
        order = order_create(customer=demo.users["bob"], total=Decimal(total))
        Order.objects.filter(pk=order.pk).update(
            status=OrderStatus.DELIVERED, delivered_at=timezone.now(), version=3
        )
    client = Client()
    headers = _headers(demo, "supervisor", Accept="application/prs.hal-forms+json")
    document = client.get("/api/orders/?page_size=200", headers=headers).json()
    refunds = {
        order["id"]: order["_templates"]["refund_order"]
        for order in document["_embedded"]["orders"]
        if "refund_order" in order["_templates"]
    }
    assert len(refunds) >= 3
    for order_id, template in refunds.items():
        amount = next(p for p in template["properties"] if p["name"] == "amount")
        version = next(p for p in template["properties"] if p["name"] == "expectedVersion")
        order = Order.objects.get(pk=order_id)
        assert amount["max"] == float(order.total)
        assert version["value"] == str(order.version)
        assert template["target"].endswith(f"/api/orders/{order_id}/refund/")


def test_hal_forms_rows_of_every_version_share_one_form_per_operation_and_constraints(
    demo: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from affordances.rest import renderers

    orders = [order_create(customer=demo.users["bob"], total=Decimal("20.00")) for _ in range(5)]
    for version, order in enumerate(orders, start=2):
        Order.objects.filter(pk=order.pk).update(status=OrderStatus.CONFIRMED, version=version)
    built: list[str] = []
    real = renderers.input_fields

    def counted(serializer_class: Any, constraints: dict[str, Any]) -> Any:
        built.append(serializer_class.__name__)
        return real(serializer_class, constraints)

    monkeypatch.setattr(renderers, "input_fields", counted)
    renderers._FORMS.clear()  # none kept from earlier tests
    headers = _headers(demo, "warehouse", Accept="application/prs.hal-forms+json")
    document = Client().get("/api/orders/?status=confirmed&page_size=200", headers=headers).json()
    rows = {row["id"]: row for row in document["_embedded"]["orders"]}
    for version, order in enumerate(orders, start=2):
        ship = rows[order.pk]["_templates"]["ship_order"]
        assert ship["target"].endswith(f"/api/orders/{order.pk}/ship/")
        assert ship["properties"][-1] == {
            "name": "expectedVersion",
            "type": "hidden",
            "readOnly": True,
            "value": str(version),
        }
    # Five versions (and the demo's confirmed orders), one ship form built, not one each.
    ship_input = get_catalog().lookup("ship_order").input_serializer.__name__
    assert len(rows) > 5 and built.count(ship_input) == 1
    # Kept for the process: the next response builds no form, and writes the same ones.
    again = Client().get("/api/orders/?status=confirmed&page_size=200", headers=headers).json()
    assert built.count(ship_input) == 1
    assert again["_embedded"] == document["_embedded"]
    # In another language, the forms are their own.
    with translation.override("fr"):
        Client().get("/api/orders/?status=confirmed&page_size=200", headers=headers)
    assert built.count(ship_input) == 2


def test_hal_document_forms_are_independent_objects(demo: Demo) -> None:
    affordance = {
        "name": "cancel_order",
        "target": "http://testserver/api/orders/1/cancel/",
        "constraints": {},
        "validForVersion": 1,
    }
    data = {
        "count": 2,
        "results": [
            {"id": 1, "url": "u1", "affordances": [affordance]},
            {"id": 2, "url": "u2", "affordances": [dict(affordance)]},
        ],
    }

    class View:
        model = Order

    document = hal_document(data, view=View())
    # The renderer, which only encodes it, may share the forms' objects: same JSON.
    rendered = HalFormsRenderer().render(data, renderer_context={"view": View()})
    assert json.loads(rendered) == json.loads(json.dumps(document))
    first, second = document["_embedded"]["orders"]
    first["_templates"]["cancel_order"]["properties"][0]["prompt"] = "changed"
    assert second["_templates"]["cancel_order"]["properties"][0]["prompt"] != "changed"
    assert first["_links"]["collection"] is not second["_links"]["collection"]
