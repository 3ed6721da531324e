"""OpenTelemetry spans around the execution path, with the caller's trace continued.

A face continues the trace a request carries, once per request (:func:`continued`): the
W3C trace context of an MCP request's ``_meta`` (``traceparent``, ``tracestate``,
``baggage``) or of a REST request's headers, read by OpenTelemetry's own propagators
(``opentelemetry.propagate.extract``). The core makes the spans inside it: one per run
(:func:`run`) and one per evaluation of a read's affordances (:func:`evaluation`).

All of it is optional (the ``opentelemetry`` extra: opentelemetry-api). Without the
package, or without a tracer provider set (the SDK, configured by the project), every
function here does nothing and costs next to nothing; a malformed context is ignored —
the run becomes a root span of its own — never an error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from typing import Any

try:
    from opentelemetry import context as otel_context
    from opentelemetry import propagate, trace
    from opentelemetry.trace import (
        NoOpTracerProvider,
        ProxyTracerProvider,
        Span,
        Status,
        StatusCode,
        Tracer,
    )
except ImportError:  # the extra is not installed: nothing is traced
    INSTALLED = False
else:
    INSTALLED = True

__all__ = ["CARRIER_KEYS", "INSTALLED", "Run", "continued", "enabled", "evaluation", "run"]

logger = logging.getLogger(__name__)

# The keys of a W3C trace context: HTTP headers, and MCP ``_meta`` keys (reserved there
# unprefixed for exactly this).
CARRIER_KEYS = ("traceparent", "tracestate", "baggage")
# W3C Baggage's own bound on a header; a longer value is nobody's trace context.
_MAX_VALUE = 8192

TRACER_NAME = "affordances"

Attributes = Mapping[str, str | int | bool]


def _carrier(source: Any) -> dict[str, str]:
    """The trace-context entries of ``source`` (a ``_meta`` object, request headers):
    strings only, so that a number or an object in ``_meta`` reaches no propagator."""
    if source is None:
        return {}
    found: dict[str, str] = {}
    for key in CARRIER_KEYS:
        value = source.get(key)
        if isinstance(value, str) and len(value) <= _MAX_VALUE:
            found[key] = value
    return found


def _has_span(context: Any) -> bool:
    return bool(trace.get_current_span(context).get_span_context().is_valid)


def _parent(message: Any, headers: Any) -> Any:
    """The context the request's spans continue, or None to keep the current one."""
    current = otel_context.get_current()
    carrier = _carrier(message)
    if carrier:
        # The message's own context (MCP ``_meta``) names the caller's operation: it wins
        # over the HTTP request's, and over a server instrumentation's span of that request.
        extracted = propagate.extract(carrier, context=current)
        if _has_span(extracted):
            return extracted
        # A malformed one is ignored: the HTTP request's context, else a trace of its own.
    carrier = _carrier(headers)
    if not carrier or _has_span(current):
        # Nothing to continue, or a server instrumentation (opentelemetry-instrumentation-
        # django, an ASGI one) continued the headers already: its span is the parent.
        return None
    # A malformed traceparent extracts no span: the run is a root span of its own.
    return propagate.extract(carrier, context=current)


@contextmanager
def continued(*, message: Any = None, headers: Any = None) -> Iterator[None]:
    """Within the block, the current context is the caller's: the W3C trace context of
    ``message`` (an MCP request's ``_meta``), else — unless a span is current already —
    of ``headers`` (the HTTP request's). A face wraps each request in it once."""
    parent = None
    if INSTALLED and (message is not None or headers is not None):
        try:
            parent = _parent(message, headers)
        except Exception:  # a configured propagator of the project's own failed
            logger.debug("trace context not extracted", exc_info=True)
    if parent is None:
        yield
        return
    token = otel_context.attach(parent)
    try:
        yield
    finally:
        otel_context.detach(token)


def _package_version() -> str:
    try:
        return version("django-affordances")
    except PackageNotFoundError:  # a source checkout that was never installed
        return "0.0.0"


# The provider the tracer was asked of, and the tracer (one provider per process, in
# practice: asked once).
_cached: tuple[Any, Any] = (None, None)


def _tracer() -> Any:
    """The library's tracer, or None where spans would go nowhere (no provider set)."""
    global _cached
    if not INSTALLED:
        return None
    provider = trace.get_tracer_provider()
    if isinstance(provider, ProxyTracerProvider | NoOpTracerProvider):
        return None
    if _cached[0] is not provider:
        _cached = (provider, provider.get_tracer(TRACER_NAME, _package_version()))
    return _cached[1]


def enabled() -> bool:
    """Whether spans go anywhere: the package is installed and a provider is set."""
    return _tracer() is not None


class Run:
    """What a run's span records of its outcome (nothing where nothing is traced)."""

    __slots__ = ("_span",)

    def __init__(self, span: Span | None) -> None:
        self._span = span

    def set(self, key: str, value: str | int | bool) -> None:
        if self._span is not None:
            self._span.set_attribute(key, value)

    def succeeded(self, outcome: str, status: int) -> None:
        """``outcome``: ``ok``, ``replayed`` or ``preview``; ``status``: the face's."""
        if self._span is not None:
            self._span.set_attribute("affordances.outcome", outcome)
            self._span.set_attribute("affordances.status", status)

    def failed(self, exc: BaseException) -> None:
        span = self._span
        if span is None:
            return
        # A Problem (the core's refusals) by its code; anything else by its class.
        code = getattr(exc, "code", None)
        status = getattr(exc, "status", None)
        if isinstance(code, str) and isinstance(status, int):
            span.set_attribute("affordances.outcome", str(code))
            span.set_attribute("affordances.problem.code", str(code))
            span.set_attribute("affordances.status", status)
            span.set_attribute("error.type", str(code))
            span.set_status(Status(StatusCode.ERROR, str(code)))
        else:
            span.record_exception(exc)
            span.set_attribute("affordances.outcome", "error")
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))


_NOTHING = Run(None)


@contextmanager
def run(name: str, attributes: Attributes) -> Iterator[Run]:
    """The span of one run of operation ``name`` (``affordances.run <name>``), a child
    of the current context; an exception out of the block marks it failed."""
    tracer: Tracer | None = _tracer()
    if tracer is None:
        yield _NOTHING
        return
    with tracer.start_as_current_span(
        f"affordances.run {name}",
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        recorder = Run(span)
        try:
            yield recorder
        except BaseException as exc:
            recorder.failed(exc)
            raise


@contextmanager
def evaluation(resource: str, attributes: Attributes) -> Iterator[None]:
    """The span of one evaluation of affordances for a read (one object, or a page)."""
    tracer: Tracer | None = _tracer()
    if tracer is None:
        yield
        return
    with tracer.start_as_current_span(f"affordances.evaluate {resource}", attributes=attributes):
        yield
