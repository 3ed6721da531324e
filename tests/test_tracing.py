"""The caller's trace continued into OpenTelemetry spans (issue 54): an MCP request's
``_meta.traceparent`` and a REST request's ``traceparent`` header are the parent of the
run's span; a malformed one starts a trace of its own and changes nothing else; with no
tracer provider set, or without opentelemetry at all, nothing is traced and nothing breaks.

The spans are the SDK's own, recorded by its in-memory exporter.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import override_settings
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode
from opentelemetry.util._once import Once
from rest_framework.test import APIClient

import affordances.entries
import affordances.execution
import affordances.mcp.application
import affordances.rest.viewsets
from affordances import tracing
from affordances.catalog import get_catalog
from tests.generic import api as generic_api
from tests.generic.models import Ticket

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"
SPAN_ID = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE_ID}-{SPAN_ID}-01"
TRACESTATE = "congo=t61rcWkgMzE"
MALFORMED = ["00-not-a-trace-01", f"00-{'0' * 32}-{SPAN_ID}-01", "x" * 300]


def _reset_tracer_provider() -> None:
    # What opentelemetry-test-utils does between tests: the API lets a process set its
    # provider once, so the tests put the unset state back.
    trace._TRACER_PROVIDER_SET_ONCE = Once()
    trace._TRACER_PROVIDER = None


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _reset_tracer_provider()
    trace.set_tracer_provider(provider)
    try:
        yield exporter
    finally:
        provider.shutdown()
        _reset_tracer_provider()


@pytest.fixture
def project(db: None) -> Iterator[None]:
    models = {"generic.Ticket": generic_api.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(generic_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def client(project: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


@pytest.fixture
def ticket(project: None) -> Ticket:
    return Ticket.objects.create(assignee="ada")


def _mcp_call(
    client: APIClient,
    name: str,
    arguments: dict[str, Any],
    meta: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta is not None:
        params["_meta"] = meta
    response = client.post(
        "/agents/mcp",
        data=json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
        content_type="application/json",
        headers={
            "Accept": "application/json",
            "MCP-Protocol-Version": "2025-11-25",
            **(headers or {}),
        },
    )
    assert response.status_code == 200, response.content
    result: dict[str, Any] = response.json()["result"]
    return result


def _runs(exporter: InMemorySpanExporter, name: str = "close_ticket") -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == f"affordances.run {name}"]


def _only_run(exporter: InMemorySpanExporter, name: str = "close_ticket") -> ReadableSpan:
    (span,) = _runs(exporter, name)
    return span


def _continues_the_caller(span: ReadableSpan) -> bool:
    assert span.context is not None
    return (
        trace.format_trace_id(span.context.trace_id) == TRACE_ID
        and span.parent is not None
        and trace.format_span_id(span.parent.span_id) == SPAN_ID
        and span.parent.is_remote
    )


# --- MCP ---------------------------------------------------------------------------


def test_an_mcp_call_continues_the_trace_of_its_meta(spans, client, ticket):
    meta = {"traceparent": TRACEPARENT, "tracestate": TRACESTATE}
    result = _mcp_call(client, "close_ticket", {"ticketId": ticket.pk}, meta)
    assert result["isError"] is False
    span = _only_run(spans)
    assert _continues_the_caller(span)
    assert span.context.trace_state.to_header() == TRACESTATE
    assert span.status.status_code is StatusCode.UNSET
    assert span.attributes["affordances.operation.name"] == "close_ticket"
    assert span.attributes["affordances.operation.urn"] == get_catalog().lookup("close_ticket").urn
    assert span.attributes["affordances.model"] == "generic.Ticket"
    assert span.attributes["affordances.object.id"] == str(ticket.pk)
    assert span.attributes["affordances.face"] == "mcp"
    assert span.attributes["affordances.outcome"] == "ok"
    assert span.attributes["affordances.status"] == 200
    # The representation's affordances were evaluated inside the run.
    evaluations = [s for s in spans.get_finished_spans() if s.name == "affordances.evaluate ticket"]
    assert evaluations
    assert all(s.parent.span_id == span.context.span_id for s in evaluations)


def test_the_meta_context_wins_over_the_http_headers(spans, client, ticket):
    other = f"00-{'1' * 32}-{'2' * 16}-01"
    _mcp_call(
        client,
        "close_ticket",
        {"ticketId": ticket.pk},
        {"traceparent": TRACEPARENT},
        headers={"traceparent": other},
    )
    assert _continues_the_caller(_only_run(spans))


def test_without_meta_an_mcp_call_continues_the_http_headers(spans, client, ticket):
    _mcp_call(client, "close_ticket", {"ticketId": ticket.pk}, headers={"traceparent": TRACEPARENT})
    assert _continues_the_caller(_only_run(spans))


def test_a_malformed_meta_context_gives_way_to_the_http_headers(spans, client, ticket):
    _mcp_call(
        client,
        "close_ticket",
        {"ticketId": ticket.pk},
        {"traceparent": MALFORMED[0]},
        headers={"traceparent": TRACEPARENT},
    )
    assert _continues_the_caller(_only_run(spans))


@pytest.mark.parametrize("traceparent", [*MALFORMED, 42, {"a": 1}, None], ids=repr)
def test_a_malformed_meta_context_starts_a_trace_of_its_own(spans, client, ticket, traceparent):
    meta = {"traceparent": traceparent, "tracestate": ["not", "a", "string"]}
    result = _mcp_call(client, "close_ticket", {"ticketId": ticket.pk}, meta)
    assert result["isError"] is False
    span = _only_run(spans)
    assert span.parent is None
    assert trace.format_trace_id(span.context.trace_id) != TRACE_ID
    assert Ticket.objects.get(pk=ticket.pk).state == "closed"


def test_a_refused_run_is_an_error_span_with_its_problem_code(spans, client, project):
    unassigned = Ticket.objects.create()
    meta = {"traceparent": TRACEPARENT}
    result = _mcp_call(client, "close_ticket", {"ticketId": unassigned.pk}, meta)
    assert result["isError"] is True
    span = _only_run(spans)
    assert _continues_the_caller(span)
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes["affordances.outcome"] == "operation_not_available"
    assert span.attributes["affordances.problem.code"] == "operation_not_available"
    assert span.attributes["error.type"] == "operation_not_available"
    assert span.attributes["affordances.status"] == 409


# --- REST --------------------------------------------------------------------------


def test_a_rest_transition_continues_the_trace_of_its_headers(spans, client, ticket):
    response = client.post(
        f"/v2/tickets/{ticket.pk}/close/",
        {},
        format="json",
        headers={"traceparent": TRACEPARENT, "tracestate": TRACESTATE},
    )
    assert response.status_code == 200, response.content
    span = _only_run(spans)
    assert _continues_the_caller(span)
    assert span.context.trace_state.to_header() == TRACESTATE
    assert span.attributes["affordances.face"] == "api"
    assert span.attributes["affordances.outcome"] == "ok"


@pytest.mark.parametrize("traceparent", MALFORMED)
def test_a_malformed_traceparent_header_starts_a_trace_of_its_own(
    spans, client, ticket, traceparent
):
    response = client.post(
        f"/v2/tickets/{ticket.pk}/close/", {}, format="json", headers={"traceparent": traceparent}
    )
    assert response.status_code == 200, response.content
    span = _only_run(spans)
    assert span.parent is None
    assert trace.format_trace_id(span.context.trace_id) != TRACE_ID


def test_a_server_instrumentations_span_stays_the_parent(spans, client, ticket):
    # opentelemetry-instrumentation-django continues the headers itself: its server span,
    # current when the view runs, is the run's parent (not the header's span once more).
    with trace.get_tracer("server").start_as_current_span("POST") as server:
        response = client.post(
            f"/v2/tickets/{ticket.pk}/close/",
            {},
            format="json",
            headers={"traceparent": TRACEPARENT},
        )
    assert response.status_code == 200
    span = _only_run(spans)
    assert span.parent.span_id == server.get_span_context().span_id
    assert span.context.trace_id == server.get_span_context().trace_id


def test_a_read_evaluates_its_affordances_in_the_callers_trace(spans, client, ticket):
    response = client.get(f"/v2/tickets/{ticket.pk}/", headers={"traceparent": TRACEPARENT})
    assert response.status_code == 200
    assert response.json()["affordances"]
    (span,) = [s for s in spans.get_finished_spans() if s.name == "affordances.evaluate ticket"]
    assert _continues_the_caller(span)
    assert span.attributes["affordances.objects"] == 1
    assert span.attributes["affordances.model"] == "generic.Ticket"
    assert not _runs(spans)


def test_a_page_is_evaluated_in_one_span(spans, client, project):
    Ticket.objects.bulk_create([Ticket(assignee="ada") for _ in range(2)])
    response = client.get("/v2/tickets/", headers={"traceparent": TRACEPARENT})
    assert response.status_code == 200
    (span,) = [s for s in spans.get_finished_spans() if s.name == "affordances.evaluate ticket"]
    assert _continues_the_caller(span)
    assert span.attributes["affordances.objects"] == 2


# --- nothing configured, nothing installed -------------------------------------------


def test_without_a_tracer_provider_nothing_is_traced_and_nothing_breaks(client, ticket):
    _reset_tracer_provider()
    assert not tracing.enabled()
    response = client.post(
        f"/v2/tickets/{ticket.pk}/close/", {}, format="json", headers={"traceparent": TRACEPARENT}
    )
    assert response.status_code == 200, response.content
    other = Ticket.objects.create(assignee="ada")
    result = _mcp_call(client, "close_ticket", {"ticketId": other.pk}, {"traceparent": TRACEPARENT})
    assert result["isError"] is False


def _without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """affordances.tracing as a process without the package imports it."""
    for name in [n for n in sys.modules if n == "opentelemetry" or n.startswith("opentelemetry.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # import fails: ImportError
    spec = importlib.util.find_spec("affordances.tracing")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_without_opentelemetry_every_face_runs_untraced(monkeypatch, spans, client, ticket):
    bare = _without_opentelemetry(monkeypatch)
    assert bare.INSTALLED is False
    assert bare.enabled() is False
    for module in (
        affordances.execution,
        affordances.entries,
        affordances.rest.viewsets,
        affordances.mcp.application,
    ):
        monkeypatch.setattr(module, "tracing", bare)
    response = client.post(
        f"/v2/tickets/{ticket.pk}/close/", {}, format="json", headers={"traceparent": TRACEPARENT}
    )
    assert response.status_code == 200, response.content
    other = Ticket.objects.create(assignee="ada")
    result = _mcp_call(client, "close_ticket", {"ticketId": other.pk}, {"traceparent": TRACEPARENT})
    assert result["isError"] is False
    # A provider is set, but the library that would use it is not there: no span.
    assert spans.get_finished_spans() == ()
