"""An operation's input schema as model providers' function calling takes it.

The catalog's input schema is JSON Schema 2020-12 as the server enforces it; the MCP tool
list states it in the subset every provider reads (docs/protocol.md#mcp): Gemini's
function declarations refuse some keywords, OpenAI's strict mode sends ``null`` for an
omitted property. Shaped for providers, so it lives with the MCP face, not the core.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from affordances.constraints import inclusive_bounds
from affordances.fieldschema import nullable
from affordances.schemas import takes_null

__all__ = ["tool_input_schema"]

# What the MCP tool list leaves out of an input schema, each stated in the property's
# description instead: Gemini's function declarations (google-genai's ``Schema``, an
# OpenAPI 3.0 subset, also behind pydantic-ai's Google transformer) refuse the whole tool
# for any of them ("Extra inputs are not permitted"). None is needed for correctness:
# tools/call checks every argument against the catalog's own schema, which keeps them.
_STEP = "multipleOf"
_EXCLUSIVE = {"exclusiveMinimum": "greater than", "exclusiveMaximum": "less than"}


def tool_input_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """An operation's input schema as the MCP tool list states it, for the function
    calling of model providers (docs/protocol.md#mcp). The catalog's schema, with:

    - no ``$schema``: every MCP revision reads a tool schema as JSON Schema 2020-12, and
      Gemini refuses the keyword;
    - every optional input that does not itself take ``null`` made nullable
      (:func:`nullable`): OpenAI's strict mode (langchain-core's and openai-agents'
      conversions) makes every property required, so a model sends ``null`` for what
      it would leave out — which the server takes as absent (:func:`absent_nulls
      <affordances.arguments.absent_nulls>`);
    - no ``multipleOf`` nor exclusive bound (:data:`_EXCLUSIVE`): on a number with a
      step (an integer, a decimal's ``multipleOf``) an exclusive bound becomes the
      inclusive one on that step (:func:`~affordances.constraints.inclusive_bounds`:
      below 1e10 in cents, at most 9999999999.99); the step, and an exclusive bound
      without one, are said in the property's description, as the server words them;
    - ``const`` as an ``enum`` of one (the same values; Gemini knows no ``const``).

    It only widens: every value the catalog's schema takes, it takes. A copy.
    """
    out = {key: value for key, value in schema.items() if key != "$schema"}
    required = set(out.get("required", ()))
    properties: dict[str, Any] = {}
    for name, prop in dict(out.get("properties") or {}).items():
        notes: list[str] = []
        provided = _provider_node(prop, notes)
        if notes:
            said = str(provided.get("description", "")).rstrip()
            provided["description"] = " ".join([*([said] if said else []), *notes])
        if name not in required and not takes_null(provided):
            provided = nullable(provided)
        properties[name] = provided
    out["properties"] = properties
    return out


def _provider_node(node: Any, notes: list[str]) -> Any:
    """One schema node (and the nodes under it) without the keywords providers refuse;
    what a dropped keyword said goes to ``notes``."""
    if not isinstance(node, Mapping):
        return node
    out = dict(node)
    if "const" in out:
        out["enum"] = [out.pop("const")]
    step = out.pop(_STEP, None)
    grid = _decimal_value(step) if step is not None else None
    if grid is None and out.get("type") == "integer":
        grid = Decimal(1)
    if grid is not None and any(key in out for key in _EXCLUSIVE):
        low, high = inclusive_bounds([out], grid)
        for key in ("minimum", "maximum", *_EXCLUSIVE):
            out.pop(key, None)
        if low is not None:
            out["minimum"] = low
        if high is not None:
            out["maximum"] = high
    for key, words in _EXCLUSIVE.items():
        if key in out:  # a number without a step: no inclusive bound says it exactly
            notes.append(f"Must be {words} {_plain(out.pop(key))}.")
    if step is not None:
        notes.append(f"Must be a multiple of {_plain(step)}.")
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [_provider_node(branch, notes) for branch in out[key]]
    if isinstance(out.get("items"), Mapping):
        out["items"] = _provider_node(out["items"], notes)
    return out


def _decimal_value(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    return value if isinstance(value, Decimal) else Decimal(str(value))


def _plain(value: Any) -> str:
    """A bound as a person writes it: 0.01, 10000000000 (not 1E+10)."""
    number = _decimal_value(value)
    return str(value) if number is None else format(number.normalize(), "f")
