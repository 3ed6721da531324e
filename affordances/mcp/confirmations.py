"""Asking the person before a tool runs: MCP 2026-07-28's ``InputRequiredResult``
(docs/protocol.md#confirmations).

A ``tools/call`` of an operation that requires confirmation, or that lacks a required
input, is answered — when the client declares form elicitation — with one form-mode
elicitation and a sealed ``requestState``. The client shows the form to the person and
calls the same tool again with ``inputResponses`` and the state as it got it. The state
is the server's only memory between the two calls; it is signed
(:mod:`affordances.sealing`), expires after ``CONFIRMATION_TTL`` and binds caller,
endpoint, operation, object, arguments and the object's version (``validForVersion``):

- ``accept`` runs the operation once, at that version (a changed object is
  ``stale_version`` with its current representation; the idempotency rules apply);
- ``decline``/``cancel`` runs nothing and says so (``confirmation_declined``);
- a state altered, expired, or echoed with another tool, object, caller or arguments is
  refused (``confirmation_required``) and runs nothing.

A client that cannot be asked (an earlier revision, or no form elicitation) is refused
with ``confirmation_required``, the consequence and the preview: no flag an agent could
set by itself stands in for the person's answer.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from affordances import execution
from affordances.arguments import schema_errors
from affordances.conf import settings
from affordances.confirmation import consequence_text, state_change_text
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.mcp.transport.protocol import CLIENT_CAPABILITIES_KEY
from affordances.models import Interface
from affordances.operations import Operation
from affordances.problems import Problem, ProblemCode
from affordances.sealing import Unsealed, seal, unseal

if TYPE_CHECKING:
    from affordances.mcp.context import Context

__all__ = [
    "CONFIRM_FIELD",
    "ELICITATION_ID",
    "Refused",
    "answered",
    "can_elicit",
    "confirm",
    "missing_inputs",
    "resume",
]

PURPOSE = "mcp-confirmation"
# The key of the one input request, and of the confirmation's boolean in its form.
ELICITATION_ID = "confirmation"
CONFIRM_FIELD = "confirm"

_STRING_FORMATS = frozenset({"date", "date-time", "email", "uri"})


def can_elicit(ctx: Context, meta: dict[str, Any]) -> bool:
    """Whether this call may be answered with a form: 2026-07-28, and the client declares
    form elicitation (``elicitation: {}`` means form, as the revision says)."""
    if not ctx.revision.modern:
        return False
    capabilities = meta.get(CLIENT_CAPABILITIES_KEY)
    elicitation = capabilities.get("elicitation") if isinstance(capabilities, dict) else None
    return isinstance(elicitation, dict) and ("form" in elicitation or not elicitation)


def missing_inputs(operation: Operation, arguments: dict[str, Any]) -> list[str]:
    """The required inputs the call left out (never the object's id: without it there is
    nothing to ask about)."""
    required = operation.input_schema.get("required", ())
    id_argument = operation.resource.id_argument
    return [name for name in required if name != id_argument and name not in arguments]


# -- asking -------------------------------------------------------------------------------


def confirm(
    ctx: Context,
    operation: Operation,
    arguments: dict[str, Any],
    missing: list[str],
    *,
    elicit: bool,
) -> dict[str, Any]:
    """The answer to a call that needs the person: an ``InputRequiredResult`` when the
    client can ask (``elicit``), else a ``confirmation_required`` refusal. Either way
    every check runs first (the preview, when the inputs are all there): an operation
    that would be refused is refused now, not after the person said yes."""
    resource = operation.resource
    pk = arguments[resource.id_argument]
    instance = ctx.find(resource, pk)
    if missing:
        # Without the inputs no preview can run; the state's checks still do.
        version = _checked_version(operation, instance, ctx.user, arguments)
        state = operation.facts.field.get_state(instance)
        transition = operation.facts.transition_for(state)
        change = {
            "field": operation.facts.field.name,
            "from": str(state),
            "to": str(transition.target if transition is not None else state),
        }
        preview: dict[str, Any] | None = None
    else:
        preview = execution.perform(
            operation=operation,
            pk=pk,
            user=ctx.user,
            arguments=dict(arguments),
            via=Interface.MCP,
            represent=ctx.represent_full,
            request=ctx.request,
            preview=True,
        ).body
        change = preview["stateChange"]
        version = preview["validForVersion"]
    consequence = consequence_text(operation, instance) if operation.confirmation_required else ""
    if not elicit:
        return _cannot_ask(operation, missing, consequence, change, preview)
    payload = {
        "c": _caller(ctx),
        "e": ctx.request.path,
        "o": operation.urn,
        "k": str(instance.pk),
        "a": _fingerprint(arguments),
        "v": version,
        "f": missing,
        "x": operation.confirmation_required,
    }
    return {
        "resultType": "input_required",
        "inputRequests": {
            ELICITATION_ID: {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": _message(operation, instance, consequence, change, missing),
                    "requestedSchema": _form(operation, instance, ctx.user, missing),
                },
            }
        },
        "requestState": seal(payload, purpose=PURPOSE),
    }


def _checked_version(
    operation: Operation, instance: Any, user: Any, arguments: dict[str, Any]
) -> int:
    """The object's version, after the checks a run would make before its arguments:
    a version the caller named must be the current one, the operation must apply."""
    current: int = getattr(instance, operation.resource.version_field)
    expected = execution.parse_version(arguments.get("expectedVersion"))
    if expected is not None and expected != current:
        raise Problem.stale_version(expected=expected, actual=current)
    verdict = evaluate(operation, instance, user)
    if isinstance(verdict, Unavailable):
        raise Problem.not_available(operation=operation.name, reason=verdict.reason)
    if not isinstance(verdict, Available):
        raise Problem.not_found()
    return current


def _message(
    operation: Operation,
    instance: Any,
    consequence: str,
    change: dict[str, Any],
    missing: list[str],
) -> str:
    lines = [consequence] if consequence else []
    if missing:
        verbose = operation.resource.model._meta.verbose_name
        lines.append(f"{operation.title} ({verbose} {instance.pk}) needs: {', '.join(missing)}.")
    lines.append(f"Change: {state_change_text(change)}.")
    return "\n".join(lines)


def _form(operation: Operation, instance: Any, user: Any, missing: list[str]) -> dict[str, Any]:
    """A flat form: each missing input as a primitive the revision allows, narrowed by
    this object's constraints for this caller, and the confirmation's boolean."""
    verdict = evaluate(operation, instance, user)
    constraints = verdict.constraints if isinstance(verdict, Available) else {}
    narrowed = constraints.get("properties", {}) if isinstance(constraints, dict) else {}
    properties: dict[str, Any] = {}
    for name in missing:
        declared = operation.input_schema.get("properties", {}).get(name, {})
        properties[name] = _primitive(name, declared, narrowed.get(name, {}))
    required = list(missing)
    if operation.confirmation_required:
        properties[CONFIRM_FIELD] = {
            "type": "boolean",
            "title": f"Yes, {operation.title.lower()}",
            "description": "Check to confirm; this cannot be undone.",
        }
        required.append(CONFIRM_FIELD)
    return {"type": "object", "properties": properties, "required": required}


def _primitive(name: str, declared: dict[str, Any], narrowed: dict[str, Any]) -> dict[str, Any]:
    """One input as a form-mode primitive schema (no nesting, no pattern: the run checks
    the value against the catalog's own schema anyway)."""
    branches = [declared, *declared.get("anyOf", ())]
    description = declared.get("description")
    base: dict[str, Any] = {"title": name}
    if isinstance(description, str):
        base["description"] = description
    enum = narrowed.get("enum", declared.get("enum"))
    if isinstance(enum, list) and enum and all(isinstance(value, str) for value in enum):
        return {"type": "string", **base, "enum": list(enum)}
    for branch in branches:
        kind = branch.get("type")
        if kind in ("number", "integer"):
            schema = {"type": kind, **base}
            for bound in ("minimum", "maximum"):
                value = narrowed.get(bound, branch.get(bound))
                if value is not None:
                    schema[bound] = _number(value)
            return schema
        if kind == "boolean":
            return {"type": "boolean", **base}
    for branch in branches:
        if branch.get("type") == "string":
            schema = {"type": "string", **base}
            for key in ("minLength", "maxLength"):
                if key in branch:
                    schema[key] = branch[key]
            if branch.get("format") in _STRING_FORMATS:
                schema["format"] = branch["format"]
            return schema
    return {"type": "string", **base}


def _number(value: Any) -> int | float:
    number = float(value)
    return int(number) if number.is_integer() else number


def _cannot_ask(
    operation: Operation,
    missing: list[str],
    consequence: str,
    change: dict[str, Any],
    preview: dict[str, Any] | None,
) -> dict[str, Any]:
    if missing and not operation.confirmation_required:
        # Nothing to confirm: the call simply lacks inputs, as it always was.
        raise Problem.validation({name: ["This field is required."] for name in missing})
    problem = Problem(
        status=428,
        code=ProblemCode.CONFIRMATION_REQUIRED,
        detail=(
            f"{consequence} ({state_change_text(change)}). {operation.name} asks the person "
            "before it runs, and this client cannot ask: it speaks an MCP revision before "
            "2026-07-28 or declares no form elicitation. Nothing ran. Tell the person what "
            "would happen; they can do it in a client that asks them, or in the admin."
        ),
    )
    body = problem.as_dict()
    body["consequence"] = consequence
    if preview is not None:
        body["preview"] = {key: value for key, value in preview.items() if key != "representation"}
    raise Refused(body)


class Refused(Exception):
    """A problem document with members of its own (the preview), answered as it is."""

    def __init__(self, body: dict[str, Any]) -> None:
        super().__init__(body["detail"])
        self.body = body


# -- the answer ---------------------------------------------------------------------------


def resume(
    ctx: Context,
    operation: Operation,
    arguments: dict[str, Any],
    key: str | None,
    state: Any,
    responses: Any,
) -> execution.Outcome:
    """The retry: the state checked and bound to this very call, then the person's answer
    (:func:`answered`), then the run at the version the person saw."""
    completed, version = answered(ctx, operation, arguments, state, responses)
    return execution.perform(
        operation=operation,
        pk=arguments[operation.resource.id_argument],
        user=ctx.user,
        arguments=completed,
        via=Interface.MCP,
        represent=ctx.represent_full,
        expected_version=version,
        idempotency_key=key,
        request=ctx.request,
    )


def answered(
    ctx: Context,
    operation: Operation,
    arguments: dict[str, Any],
    state: Any,
    responses: Any,
) -> tuple[dict[str, Any], int]:
    """The arguments completed with the person's answers, and the version they saw —
    when ``state`` is one this server sealed for this very call and the answer accepts.
    Raises a :class:`Problem` for anything else; runs nothing (each face runs it its way:
    the catalog's tools with :func:`resume`, the forms profile through its REST call)."""
    try:
        payload = unseal(state, purpose=PURPOSE, max_age=settings.CONFIRMATION_TTL)
    except Unsealed:
        raise _invalid() from None
    resource = operation.resource
    pk = arguments.get(resource.id_argument)
    bound = (
        payload.get("c") == _caller(ctx)
        and payload.get("e") == ctx.request.path
        and payload.get("o") == operation.urn
        and payload.get("k") == str(pk)
        and payload.get("a") == _fingerprint(arguments)
        and isinstance(payload.get("v"), int)
        and isinstance(payload.get("f"), list)
    )
    if not bound:
        raise _invalid()
    answer = responses.get(ELICITATION_ID) if isinstance(responses, dict) else None
    action = answer.get("action") if isinstance(answer, dict) else None
    if action in ("decline", "cancel"):
        raise Problem(
            status=409,
            code=ProblemCode.CONFIRMATION_DECLINED,
            detail=(
                f"The person {'declined' if action == 'decline' else 'dismissed the form'}: "
                f"{operation.name} did not run and nothing changed."
            ),
        )
    if action != "accept":
        raise Problem.malformed(
            f'inputResponses["{ELICITATION_ID}"] must be the answer to the form '
            "(action accept, decline or cancel)."
        )
    content = answer.get("content") if isinstance(answer, dict) else None
    content = content if isinstance(content, dict) else {}
    asked = [str(name) for name in payload["f"]]
    unknown = sorted(set(content) - {*asked, CONFIRM_FIELD})
    if unknown:
        raise Problem.validation({name: ["Not asked for."] for name in unknown})
    if payload.get("x") and content.get(CONFIRM_FIELD) is not True:
        raise Problem(
            status=409,
            code=ProblemCode.CONFIRMATION_DECLINED,
            detail=f"The form came back unconfirmed: {operation.name} did not run.",
        )
    completed = {**arguments, **{name: content[name] for name in asked if name in content}}
    errors = schema_errors(operation.input_schema, completed)
    if errors:
        raise Problem.validation(errors)
    version: int = payload["v"]
    return completed, version


def _invalid() -> Problem:
    # One answer for altered, expired and rebound states: which one it was helps no one.
    return Problem(
        status=428,
        code=ProblemCode.CONFIRMATION_REQUIRED,
        detail=(
            "The requestState is not one this server gave for this call, or it expired. "
            "Nothing ran. Call the tool again without it to be asked anew."
        ),
    )


def _caller(ctx: Context) -> str:
    user = ctx.user
    return f"{user._meta.label_lower}:{user.pk}" if getattr(user, "pk", None) else "anonymous"


def _fingerprint(arguments: dict[str, Any]) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()
