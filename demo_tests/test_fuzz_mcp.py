"""Property-based fuzzing of the three MCP endpoints' JSON-RPC bodies (docs/protocol.md#mcp,
docs/protocol.md#mcp-profiles).

For ``/mcp`` (B), ``/mcp/static`` (A) and ``/mcp/forms`` (C), hypothesis sends arbitrary
bytes and JSON values, near-valid JSON-RPC envelopes (a wrong ``jsonrpc``, ids of every
JSON type, real and invented methods, params of the wrong type, protocol-version headers
right and wrong) and ``tools/call`` requests naming real tools with random arguments.
Every answer must be

- never a 5xx;
- ``202`` with no body, only for a notification or a stray response; otherwise
- a well-formed JSON-RPC 2.0 response (``application/json``): ``jsonrpc: "2.0"``, the
  request's id echoed exactly when it had a valid one (a string or an integer) and
  ``null`` otherwise, exactly one of ``result``/``error``, ``error.code`` an integer and
  ``error.message`` a string; an HTTP 4xx carries an error, never a result;

and a call that failed (a JSON-RPC error, an HTTP 4xx, a 202 or a tool result with
``isError``) never changes state: every order's version and status, the number of orders
and the number of audit records are as before.

JSON strings include lone UTF-16 surrogates (``"\\ud800"``: legal JSON, not Unicode).
The budget is fixed (100 derandomized examples per test, no shrinking) so a run is
reproducible and fits CI; what it found is pinned at the end as plain examples.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types
import pytest
from django.test import Client
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_framework_simplejwt.tokens import AccessToken

from affordances.models import AuditRecord
from demo_tests.conftest import ROLES, Demo
from orders.models import Order
from tests.mcp_wire import LEGACY, MODERN, OLDER, check, modern_meta

ENDPOINTS = {"A": "/mcp/static", "B": "/mcp", "B-compact": "/mcp/compact", "C": "/mcp/forms"}

FUZZ = settings(
    max_examples=100,
    deadline=None,
    derandomize=True,
    database=None,
    # A failure is reported as found (with its traceback): shrinking it could take
    # minutes of CI.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
    ],
)

METHODS = [
    "initialize",
    "ping",
    "server/discover",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "notifications/initialized",
    "notifications/cancelled",
]
CATALOG_TOOLS = [
    "get_order",
    "list_orders",
    "create_order",
    "confirm_order",
    "ship_order",
    "deliver_order",
    "cancel_order",
    "refund_order",
]
TOOLS = {
    "A": CATALOG_TOOLS,
    "B": CATALOG_TOOLS,
    "B-compact": CATALOG_TOOLS,
    "C": ["read_resource", "submit_form"],
}
# Real tools of the other interfaces: unknown here, they must fail as any unknown name.
FOREIGN_TOOLS = {
    "A": TOOLS["C"],
    "B": TOOLS["C"],
    "B-compact": TOOLS["C"],
    "C": ["get_order", "cancel_order"],
}
ARGUMENT_NAMES = [
    "orderId",
    "expectedVersion",
    "reason",
    "note",
    "trackingNumber",
    "amount",
    "description",
    "total",
    "customer",
    "status",
    "page",
    "pageSize",
    "url",
    "template",
    "arguments",
]
TEMPLATES = ["confirm_order", "ship_order", "deliver_order", "cancel_order", "refund_order"]
VERSIONS = [LEGACY, OLDER, MODERN]

# --- strategies --------------------------------------------------------------------------

# JSON strings: any Unicode text, and text with lone UTF-16 surrogates — legal JSON
# (`"\\ud800"`) that is not Unicode, so it cannot be written back as UTF-8 unescaped.
strings = st.one_of(
    st.text(max_size=12),
    # (lists, not st.text: text() hardly ever draws from a surrogate alphabet in a union)
    st.lists(st.characters() | st.characters(categories=["Cs"]), min_size=1, max_size=6).map(
        "".join
    ),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**62, max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    strings,
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(strings, children, max_size=3)
    ),
    max_leaves=8,
)
request_ids = st.one_of(
    st.integers(),
    strings,
    st.none(),
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.sampled_from([0, -1, 2**63, 2**80, "", "1", 1.0]),
)
valid_ids = st.one_of(st.integers(), strings)
methods = st.one_of(st.sampled_from(METHODS), strings, json_values)
jsonrpc_versions = st.one_of(st.just("2.0"), st.sampled_from(["1.0", "2", 2.0, 2, None, ""]))
param_keys = st.one_of(
    st.sampled_from(
        ["name", "arguments", "cursor", "uri", "protocolVersion", "capabilities", "_meta"]
    ),
    strings,
)
params = st.one_of(json_values, st.dictionaries(param_keys, json_values, max_size=4))
version_headers = st.one_of(st.none(), st.sampled_from(VERSIONS), st.text(max_size=12))


def _body(envelope: Any) -> bytes:
    return json.dumps(envelope).encode()


# --- the oracle --------------------------------------------------------------------------


def _valid_id(value: Any) -> bool:
    # MCP ids: a string or an integer, never null, a float or a boolean.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _reject(constant: str) -> Any:
    raise ValueError(constant)


def _decoded(body: bytes) -> Any:
    """The message as strict JSON reads it (UTF-8; no NaN/Infinity), or None."""
    try:
        return json.loads(body.decode("utf-8"), parse_constant=_reject)
    except (ValueError, RecursionError):
        return None


def _is_notification_or_response(message: Any) -> bool:
    """What a server answers with 202: a well-formed message that expects no answer."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return False
    if "method" not in message:  # a response to the server
        return ("result" in message or "error" in message) and _valid_id(message.get("id"))
    return (
        "id" not in message
        and isinstance(message["method"], str)
        and bool(message["method"])
        and isinstance(message.get("params", {}), dict | None)
    )


def check_answer(sent: bytes, response: Any) -> dict[str, Any] | None:
    """Assert the answer is a clean one (see the module docstring); the envelope, if any."""
    assert response.status_code < 500, response.content
    message = _decoded(sent)
    if response.status_code == 202:
        assert response.content == b""
        assert _is_notification_or_response(message), sent
        return None
    assert response["Content-Type"] == "application/json", response
    envelope = json.loads(response.content)
    assert isinstance(envelope, dict), envelope
    assert envelope.get("jsonrpc") == "2.0", envelope
    assert set(envelope) in ({"jsonrpc", "id", "result"}, {"jsonrpc", "id", "error"}), envelope
    if isinstance(message, dict) and _valid_id(message.get("id")):
        assert envelope["id"] == message["id"], (message, envelope)
        assert type(envelope["id"]) is type(message["id"]), (message, envelope)
    else:
        assert envelope["id"] is None, (message, envelope)
    if "error" in envelope:
        error = envelope["error"]
        assert isinstance(error, dict), envelope
        assert set(error) <= {"code", "message", "data"}, envelope
        assert isinstance(error["code"], int) and not isinstance(error["code"], bool), envelope
        assert isinstance(error["message"], str), envelope
    else:
        assert response.status_code == 200, envelope
        assert isinstance(envelope["result"], dict), envelope
        # And, being a result, it is a JSON-RPC response by the protocol's own types.
        mcp_types.jsonrpc_message_adapter.validate_python(envelope)
    return envelope


def failed(response: Any, envelope: dict[str, Any] | None) -> bool:
    """Whether a call was refused: nothing may have changed then."""
    if envelope is None or response.status_code >= 400 or "error" in envelope:
        return True
    return envelope["result"].get("isError") is True


def state() -> tuple[Any, ...]:
    orders = tuple(Order.objects.order_by("pk").values_list("pk", "version", "status"))
    return orders, AuditRecord.objects.count()


# --- the harness -------------------------------------------------------------------------


class Caller:
    """Posts raw bodies to one endpoint as a chosen demo user, and checks each answer."""

    def __init__(self, demo: Demo, path: str) -> None:
        self.path = path
        self.client = Client()
        self.tokens = {name: str(AccessToken.for_user(demo.users[name])) for name in ROLES}

    def post(self, role: str, body: bytes, headers: dict[str, str]) -> Any:
        headers = {
            "Authorization": f"Bearer {self.tokens[role]}",
            "Accept": "application/json, text/event-stream",
            **headers,
        }
        return self.client.post(
            self.path, data=body, content_type="application/json", headers=headers
        )

    def exchange(self, role: str, body: bytes, headers: dict[str, str]) -> dict[str, Any] | None:
        before = state()
        try:
            response = self.post(role, body, headers)
        except Exception as exc:  # the test client re-raises what the view raised: a 500
            exc.add_note(f"POST {self.path} as {role} with {headers}: {body!r}")
            raise
        envelope = check_answer(body, response)
        if failed(response, envelope):
            assert state() == before, (body, response.content)
        return envelope


@pytest.fixture
def caller(demo: Demo) -> Callable[[str], Caller]:
    return lambda interface: Caller(demo, ENDPOINTS[interface])


def _version_headers(version: str | None) -> dict[str, str]:
    return {} if version is None else {"MCP-Protocol-Version": version}


# --- arbitrary bodies ----------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("interface", list(ENDPOINTS))
def test_arbitrary_bytes_and_json_values_get_clean_answers(
    caller: Callable[[str], Caller], interface: str
) -> None:
    endpoint = caller(interface)
    bodies = st.one_of(
        st.binary(max_size=64),
        json_values.map(_body),
        st.sampled_from([b"", b"NaN", b"[]", b"{}", b"null", b'{"jsonrpc":"2.0"}', b"[" * 5000]),
    )

    @FUZZ
    @given(body=bodies, role=st.sampled_from(ROLES), version=version_headers)
    def fuzz(body: bytes, role: str, version: str | None) -> None:
        endpoint.exchange(role, body, _version_headers(version))

    fuzz()


# --- near-valid envelopes ------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("interface", list(ENDPOINTS))
def test_near_valid_envelopes_get_well_formed_answers(
    caller: Callable[[str], Caller], interface: str
) -> None:
    endpoint = caller(interface)
    envelopes = st.fixed_dictionaries(
        {"jsonrpc": jsonrpc_versions},
        optional={
            "id": request_ids,
            "method": methods,
            "params": params,
            "result": json_values,
            "error": json_values,
        },
    )

    @FUZZ
    @given(envelope=envelopes, role=st.sampled_from(ROLES), version=version_headers)
    def fuzz(envelope: dict[str, Any], role: str, version: str | None) -> None:
        endpoint.exchange(role, _body(envelope), _version_headers(version))

    fuzz()


@pytest.mark.django_db
@pytest.mark.parametrize("interface", list(ENDPOINTS))
def test_real_methods_with_wrong_params_get_well_formed_answers(
    caller: Callable[[str], Caller], interface: str
) -> None:
    endpoint = caller(interface)

    @FUZZ
    @given(
        request_id=valid_ids,
        method=st.sampled_from(METHODS),
        params=st.one_of(params, st.none()),
        role=st.sampled_from(ROLES),
        version=st.sampled_from(VERSIONS),
    )
    def fuzz(request_id: Any, method: str, params: Any, role: str, version: str) -> None:
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        headers = _version_headers(version)
        if version == MODERN and isinstance(params, dict):
            # Well-formed for the newest revision, so the method itself is reached.
            params = {**params, "_meta": modern_meta()}
            headers["Mcp-Method"] = method
            named = params.get("name") if method == "tools/call" else params.get("uri")
            if isinstance(named, str) and named.isascii() and named.isprintable():
                headers["Mcp-Name"] = named
        if params is not None:
            envelope["params"] = params
        answer = endpoint.exchange(role, _body(envelope), headers)
        if answer is not None and "result" in answer and method != "initialize":
            check(method, version, answer)

    fuzz()


# --- tools/call with random arguments ------------------------------------------------------


def _urls(pks: list[int]) -> list[str]:
    """URLs for interface C: the API's own, and ones it must refuse to follow."""
    return [
        "http://testserver/api/",
        "/api/",
        "http://testserver/api/orders/",
        "/api/orders/?page=99",
        "/api/orders/?status=pending&customer=alice",
        "/api/operations/",
        "/api/operations/cancel_order/",
        "/api/schema/",
        "/api/token/",
        "/api/orders/999999/",
        "/api/orders/1.5/",
        "/api/../admin/",
        "/admin/",
        "/mcp",
        "http://evil.example/api/orders/1/",
        "",
        *(f"http://testserver/api/orders/{pk}/" for pk in pks),
        *(f"/api/orders/{pk}/" for pk in pks),
        *(f"/api/orders/{pk}/cancel/" for pk in pks[:3]),
    ]


def _argument_strategies(demo: Demo) -> dict[str, st.SearchStrategy[Any]]:
    """Plausible values per argument name — real ids, enum members, near misses — or junk."""
    pks = sorted(order.pk for order in demo.orders.values())

    def plausible(*values: Any) -> st.SearchStrategy[Any]:
        return st.one_of(st.sampled_from(values), st.sampled_from(values), json_values)

    money = ["10.00", "0.01", "0", "-1", "1e3", "0.001", "2500.01", 10, 0.5, 300, "abc"]
    return {
        "orderId": st.one_of(st.sampled_from(pks), plausible(*(str(pk) for pk in pks), 0, 2**64)),
        "expectedVersion": plausible(1, 2, 3, "1", "2", "*", 0, -1, True),
        "reason": plausible("customer_request", "payment_failure", "inventory_failure"),
        "note": st.one_of(strings, json_values),
        "trackingNumber": plausible("TRK12345678", "ABCDEFGH", "trk12345678", "1" * 21, ""),
        "amount": plausible(*money),
        "total": plausible(*money),
        "description": st.one_of(strings, plausible("x" * 201)),
        "customer": plausible("alice", "bob", "support", "admin", "nobody", ""),
        "status": plausible("pending", "confirmed", "shipped", "delivered", "cancelled", "x"),
        "page": plausible(1, 2, 0, -1, "1", 10**6),
        "pageSize": plausible(1, 50, 200, 201, 0, "5"),
        "url": st.one_of(
            st.sampled_from(_urls(pks)),
            st.sampled_from(_urls(pks)).flatmap(lambda url: strings.map(lambda s: url + s)),
            strings,
        ),
        "template": plausible(*TEMPLATES, "create_order", "self"),
    }


FORM_FIELDS = ["reason", "note", "trackingNumber", "amount", "expectedVersion", "total"]
TOOL_ARGUMENTS: dict[str, tuple[list[str], list[str]]] = {
    # tool: (arguments it requires, arguments it takes besides)
    "get_order": (["orderId"], []),
    "list_orders": ([], ["status", "customer", "page", "pageSize"]),
    "create_order": (["description", "total"], ["customer"]),
    "confirm_order": (["orderId"], ["expectedVersion"]),
    "deliver_order": (["orderId"], ["expectedVersion"]),
    "ship_order": (["orderId", "trackingNumber"], ["expectedVersion"]),
    "cancel_order": (["orderId", "reason"], ["note", "expectedVersion"]),
    "refund_order": (["orderId", "amount"], ["note", "expectedVersion"]),
    "read_resource": (["url"], []),
    "submit_form": (["url", "template"], ["arguments"]),
}


def _tool_calls(demo: Demo, names: list[str]) -> st.SearchStrategy[tuple[str, Any]]:
    """(tool name, arguments): real tools with near-valid arguments, or anything at all."""
    values = _argument_strategies(demo)
    values["arguments"] = st.one_of(
        st.fixed_dictionaries({}, optional={name: values[name] for name in FORM_FIELDS}),
        json_values,
    )
    junk = st.dictionaries(strings, json_values, max_size=2)

    def near_valid(name: str) -> st.SearchStrategy[Any]:
        required, optional = TOOL_ARGUMENTS[name]
        shaped = st.fixed_dictionaries(
            {key: values[key] for key in required},
            optional={key: values[key] for key in optional},
        )
        return st.one_of(
            shaped,
            shaped,
            # A required argument missing, or an unknown one added.
            st.fixed_dictionaries({}, optional={key: values[key] for key in required}),
            st.tuples(shaped, junk).map(lambda both: {**both[1], **both[0]}),
            json_values,
        )

    real = st.sampled_from(names).flatmap(lambda name: st.tuples(st.just(name), near_valid(name)))
    invented = st.tuples(strings, st.one_of(junk, json_values))
    return st.one_of(real, real, real, invented)


@pytest.mark.django_db
@pytest.mark.parametrize("interface", list(ENDPOINTS))
@pytest.mark.parametrize("version", [LEGACY, MODERN])
def test_tools_call_with_random_arguments_never_half_applies(
    caller: Callable[[str], Caller], demo: Demo, interface: str, version: str
) -> None:
    endpoint = caller(interface)
    # The other interfaces' tool names too: unknown here, they must fail like any other.
    names = TOOLS[interface] + FOREIGN_TOOLS[interface]
    keys = st.one_of(strings, st.sampled_from(["k1", "k2"]), json_values)

    @FUZZ
    @given(
        request_id=valid_ids,
        tool_call=_tool_calls(demo, names),
        key=st.one_of(st.none(), keys),
        role=st.sampled_from(ROLES),
    )
    def fuzz(request_id: Any, tool_call: tuple[str, Any], key: Any, role: str) -> None:
        name, arguments = tool_call
        call: dict[str, Any] = {"name": name, "arguments": arguments}
        headers = _version_headers(version)
        meta: dict[str, Any] = {}
        if key is not None:
            meta["affordances/idempotencyKey"] = key
        if version == MODERN:
            meta.update(modern_meta())
            headers["Mcp-Method"] = "tools/call"
            if name.isascii() and name.isprintable():
                headers["Mcp-Name"] = name
        if meta:
            call["_meta"] = meta
        envelope = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": call}
        answer = endpoint.exchange(role, _body(envelope), headers)
        if answer is not None and "result" in answer:
            check("tools/call", version, answer)

    fuzz()


# --- what the fuzzing found, pinned ------------------------------------------------------

# JSON may escape a lone UTF-16 surrogate (`"\\ud800"`); it is not Unicode, so an answer
# that repeats it unescaped cannot be encoded. One case per place the value travels to.
SURROGATE = "\ud800"


def _tool(name: str, **arguments: Any) -> dict[str, Any]:
    return {"method": "tools/call", "params": {"name": name, "arguments": arguments}}


SURROGATE_CASES: dict[str, tuple[str, Callable[[int], dict[str, Any]]]] = {
    "echoed-request-id": ("B", lambda pk: {"method": "ping", "id": SURROGATE}),
    "echoed-argument": ("B", lambda pk: _tool("cancel_order", orderId=pk, reason=SURROGATE)),
    "list-filter": ("A", lambda pk: _tool("list_orders", customer=SURROGATE)),
    "read_resource-url": (
        "C",
        lambda pk: _tool("read_resource", url=f"/api/orders/?customer={SURROGATE}"),
    ),
    "submit_form-value": (
        "C",
        lambda pk: _tool(
            "submit_form",
            url=f"/api/orders/{pk}/",
            template="cancel_order",
            arguments={"reason": SURROGATE},
        ),
    ),
}


@pytest.mark.django_db
@pytest.mark.parametrize("case", list(SURROGATE_CASES))
def test_a_lone_surrogate_gets_a_clean_answer(
    caller: Callable[[str], Caller], demo: Demo, case: str
) -> None:
    interface, message = SURROGATE_CASES[case]
    envelope = {"jsonrpc": "2.0", "id": 1, **message(demo.orders["demo-01"].pk)}
    caller(interface).exchange("admin", _body(envelope), _version_headers(LEGACY))
