"""Arguments of an operation, checked against its input serializer and its constraints.

The serializer says what the operation takes; the constraints say what this object and
caller allow now. Both are checked here, once, for every face.

The serializer is built with a context (:func:`input_context`): the request, the acting
user, the object under its row lock and the operation, so ``CurrentUserDefault``,
``HiddenField`` and an object-aware ``validate()`` work as they do in a DRF view. A
related field (``PrimaryKeyRelatedField``, ``SlugRelatedField``, ``many=True``) finds
only the objects the caller may see when its model is registered, and is audited as
the key it was given.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from django.db import models
from rest_framework import serializers

from affordances.catalog import get_catalog
from affordances.operations import Operation
from affordances.problems import Problem
from affordances.reads import visible
from affordances.schemas import (
    DECIMAL_RULE,
    PLAIN_DECIMAL,
    SchemaValidator,
    argument_fields,
    related_queryset,
    takes_null,
)

__all__ = [
    "ActingRequest",
    "NoArguments",
    "SchemaValidator",
    "absent_nulls",
    "argument_fields",
    "flatten_errors",
    "input_context",
    "narrow_related",
    "schema_errors",
    "validate_arguments",
]


def absent_nulls(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments as an operation reads them: a ``null`` for an optional argument is
    left out, absent (docs/protocol.md#execution) — on every face, as each hands its
    arguments to the core through here.

    Why: OpenAI's strict mode makes every property of a tool required, so a model fills
    what it would leave out with ``null`` (the MCP tool list says so,
    :func:`~affordances.mcp.tool_schemas.tool_input_schema`); a form may send one for an empty
    field. Not touched: a required argument (its ``null`` is refused as any wrong
    value), an argument whose own schema takes ``null`` (there it is a value: "no
    assignee"), and names that are no argument (refused as unknown).
    """
    required = set(schema.get("required", ()))
    properties = schema.get("properties") or {}
    return {
        name: value
        for name, value in arguments.items()
        if value is not None
        or name in required
        or name not in properties
        or takes_null(properties[name])
    }


def schema_errors(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, list[str]]:
    """Arguments against an operation's input schema, as ``validation_error`` lists them."""
    errors: dict[str, list[str]] = {}
    for error in SchemaValidator(schema).iter_errors(dict(arguments)):
        instance = error.instance if isinstance(error.instance, dict) else {}
        if error.validator == "required":
            for name in error.validator_value:
                if name not in instance:
                    errors.setdefault(name, []).append("This field is required.")
        elif error.validator == "additionalProperties":
            known = set(error.schema.get("properties", {}))
            for name in instance:
                if name not in known:
                    errors.setdefault(str(name), []).append("Unknown argument.")
        else:
            name = str(error.absolute_path[0]) if error.absolute_path else "nonFieldErrors"
            errors.setdefault(name, []).append(_constraint_message(error))
    return errors


class NoArguments(serializers.Serializer):  # type: ignore[type-arg]
    """The input of an operation that takes no arguments besides the object it acts on."""


# The decimal rule (``affordances.schemas.PLAIN_DECIMAL``): Python's Decimal (and so DRF)
# would also take "1_0", "1e1", Arabic-Indic or full-width digits as 10.
_PLAIN_DECIMAL = re.compile(PLAIN_DECIMAL)


def _untrimmed_length_errors(
    fields: Mapping[str, Any], arguments: Mapping[str, Any]
) -> dict[str, list[str]]:
    """A text longer than its ``maxLength`` as sent. DRF measures a ``CharField`` after
    trimming its whitespace, so it would take 201 characters with a leading space where
    every schema says at most 200: the schemas' rule is the one every face keeps."""
    errors: dict[str, list[str]] = {}
    for name, field in fields.items():
        value = arguments.get(name)
        if (
            isinstance(field, serializers.CharField)
            and field.trim_whitespace
            and field.max_length is not None
            and isinstance(value, str)
            and len(value) > field.max_length
        ):
            message = field.error_messages["max_length"].format(max_length=field.max_length)
            errors[name] = [str(message)]
    return errors


def _decimal_spelling_errors(
    fields: Mapping[str, Any], arguments: Mapping[str, Any]
) -> dict[str, list[str]]:
    errors: dict[str, list[str]] = {}
    for name, field in fields.items():
        if not isinstance(field, serializers.DecimalField) or name not in arguments:
            continue
        value = arguments[name]
        spelled = isinstance(value, str) and _PLAIN_DECIMAL.fullmatch(value) is not None
        if isinstance(value, bool) or (isinstance(value, str) and not spelled):
            errors[name] = [DECIMAL_RULE]
    return errors


def _json_value(value: Any) -> Any:
    """A validated value as JSON, for the constraints and the audit record: a related
    object as its key (a UUID as its text), dates as ISO 8601."""
    if isinstance(value, models.Model):
        return _json_value(value.pk)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, dict):
        return {key: _json_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_value(item) for item in value]
    return value


def _as_named(field: Any, value: Any) -> Any:
    """A validated value as the client named it, where that is not the related object's
    key: a ``SlugRelatedField``'s object (each of a ``many=True`` one's) as its slug —
    the schema offers slugs, so a constraint narrows slugs."""
    if isinstance(field, serializers.ManyRelatedField):
        child = field.child_relation
        if isinstance(child, serializers.SlugRelatedField):
            return [child.to_representation(item) for item in value]
    elif isinstance(field, serializers.SlugRelatedField) and value is not None:
        return field.to_representation(value)
    return value


def flatten_errors(detail: Any) -> dict[str, list[str]]:
    if isinstance(detail, Mapping):
        errors: dict[str, list[str]] = {}
        for key, value in detail.items():
            name = "nonFieldErrors" if key == "non_field_errors" else str(key)
            errors[name] = (
                [str(item) for item in value] if isinstance(value, list) else [str(value)]
            )
        return errors
    return {"nonFieldErrors": [str(item) for item in detail]}


# jsonschema's own messages repeat the value ("'aaaa…' is too long"): a refused
# 300 kB string would come back 300 kB long. These say what is expected instead.
_EXPECTED = {
    "maxLength": "Must be at most {} characters.",
    "minLength": "Must be at least {} characters.",
    "maxItems": "Must have at most {} items.",
    "minItems": "Must have at least {} items.",
    "pattern": "Must match the pattern {}.",
    "type": "Must be of type {}.",
    "exclusiveMaximum": "Must be less than {}.",
    "exclusiveMinimum": "Must be greater than {}.",
    "multipleOf": "Must be a multiple of {}.",
    "format": "Must be a valid {}.",
    "formatMinimum": "Must be on or after {}.",
    "formatMaximum": "Must be on or before {}.",
}


def _constraint_message(error: Any) -> str:
    if error.validator == "anyOf":
        return _any_of_message(error)
    if error.validator in _EXPECTED:
        return _EXPECTED[error.validator].format(error.validator_value)
    if error.validator == "enum":
        return "Must be one of: " + ", ".join(str(v) for v in error.validator_value) + "."
    if error.validator == "maximum":
        return f"Must be at most {error.validator_value}."
    if error.validator == "minimum":
        return f"Must be at least {error.validator_value}."
    if error.validator == "required":
        return "This field is required."
    if error.validator == "const":
        return f"Must be {error.validator_value}."
    return str(error.message)


def _any_of_message(error: Any) -> str:
    """A value none of an input's branches takes (a decimal, a nullable input): what the
    branch of the value's own type says; for a decimal's string, the decimal rule.
    Never jsonschema's own message, which repeats the value."""
    branches = [branch for branch in error.validator_value if isinstance(branch, dict)]
    types = [branch.get("type") for branch in branches]
    decimal = "number" in types and "string" in types
    if decimal and isinstance(error.instance, str):
        if _PLAIN_DECIMAL.fullmatch(error.instance):
            # Spelled right, out of the field's digits or bounds: as for the number.
            number = branches[types.index("number")]
            for sub in SchemaValidator(number).iter_errors(Decimal(error.instance)):
                return _constraint_message(sub)
        return DECIMAL_RULE
    fitting = [sub for sub in error.context if sub.validator != "type"]
    if fitting:
        return _constraint_message(fitting[0])
    if decimal:
        return DECIMAL_RULE
    return "Must be of type " + " or ".join(str(t) for t in types if t) + "."


class ActingRequest:
    """``context["request"]`` of an input serializer: the face's request as the acting
    user makes it (``.user`` is always that user; every other attribute is the face's
    request's), or, for a run from code without a request, just the user. A face's
    request may carry another user (MCP's Django request before DRF authentication)."""

    def __init__(self, request: Any, user: Any) -> None:
        self._request = request
        self.user = user

    @property
    def face_request(self) -> Any:
        """The face's own request, or None for a run from code: what the registration's
        ``QUERYSET`` is given."""
        return self._request

    def __getattr__(self, name: str) -> Any:
        if self._request is None:
            raise AttributeError(f"{name}: this run has no request (perform() from code)")
        return getattr(self._request, name)


def input_context(
    operation: Operation, *, user: Any, instance: models.Model | None, request: Any = None
) -> dict[str, Any]:
    """What an input serializer's ``self.context`` holds on every face: ``request``
    (:class:`ActingRequest`), ``user``, ``instance`` (the object under its row lock;
    ``None`` for a create) and ``operation``."""
    return {
        "request": ActingRequest(request, user),
        "user": user,
        "instance": instance,
        "operation": operation,
    }


def _related_fields(serializer: serializers.Serializer[Any]) -> Iterator[Any]:
    """The writable related fields, a ``many=True`` field as the one it repeats."""
    for field in serializer.fields.values():
        child = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field
        if isinstance(child, serializers.RelatedField) and not child.read_only:
            yield child


def narrow_related(serializer: serializers.Serializer[Any], user: Any, request: Any) -> None:
    """Each related field of a registered model finds only what ``user`` may see (the
    registration's ``QUERYSET``, given the face's ``request``): an object hidden from the
    caller is refused exactly as a missing one. The fields are the serializer instance's
    own copies (an input's form, in the browsable API, offers no other object either)."""
    catalog = get_catalog()
    for field in _related_fields(serializer):
        # Through the field's own get_queryset(), with this serializer's context, as DRF
        # looks a value up; the narrowed one then stands for it, override or not.
        queryset = related_queryset(field)
        if queryset is None:
            continue
        resource = catalog.resource_for(queryset.model)
        if resource is not None:
            seen = visible(resource, user, request=request)
            narrowed = queryset.filter(pk__in=seen.values("pk"))
            field.queryset = narrowed
            field.get_queryset = narrowed.all


def _unsearchable_related(
    serializer: serializers.Serializer[Any], arguments: Mapping[str, Any]
) -> dict[str, list[str]]:
    """Related values no database should be asked about: text with NUL (PostgreSQL
    refuses it with an error, not an empty result) or longer than any key."""
    errors: dict[str, list[str]] = {}
    for name, field in serializer.fields.items():
        if name not in arguments:
            continue
        related = field.child_relation if isinstance(field, serializers.ManyRelatedField) else field
        if not isinstance(related, serializers.RelatedField):
            continue
        value = arguments[name]
        values = value if isinstance(value, list) else [value]
        if any(isinstance(item, str) and ("\x00" in item or len(item) > 255) for item in values):
            errors[name] = ["No such object."]
    return errors


def validate_arguments(
    operation: Operation,
    arguments: Mapping[str, Any],
    constraints: Mapping[str, Any],
    *,
    context: Mapping[str, Any],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Check arguments against the input serializer, then the constraints.

    ``context`` is the serializer's (:func:`input_context`). Returns the keyword
    arguments of the transition method and the arguments as the API names them, related
    objects as their keys (for the audit record). The constraints are checked against the
    values as the client names them (a slug as its slug). Raises ``validation_error``.
    """
    input_class = operation.input_serializer or NoArguments
    serializer = input_class(data=dict(arguments), context=dict(context))
    fields = argument_fields(serializer)
    errors = {name: ["Unknown argument."] for name in arguments if name not in fields}
    errors.update(_decimal_spelling_errors(fields, arguments))
    errors.update(_untrimmed_length_errors(fields, arguments))
    unsearchable = _unsearchable_related(serializer, arguments)
    if unsearchable:  # validated without them: their own message, and no lookup
        data = {name: value for name, value in arguments.items() if name not in unsearchable}
        serializer = input_class(data=data, context=dict(context))
    acting = context.get("request")
    request = acting.face_request if isinstance(acting, ActingRequest) else acting
    narrow_related(serializer, context.get("user"), request)
    if not serializer.is_valid():
        errors.update(flatten_errors(serializer.errors))
    errors.update(unsearchable)
    if errors:
        raise Problem.validation(errors)
    validated = dict(serializer.validated_data)
    typed: dict[str, Any] = {}
    # What the constraints are checked against: each value as the client names it — a
    # slug as its slug, where the audit record keeps the related object's key.
    named: dict[str, Any] = {}
    for name, field in fields.items():
        if name in arguments and field.source in validated:
            value = validated[field.source]
            typed[name] = _json_value(value)
            named[name] = _json_value(_as_named(field, value))
    if constraints:
        constraint_errors: dict[str, list[str]] = {}
        for error in SchemaValidator(constraints).iter_errors(named):
            if error.validator == "required":
                name = str(error.message).split("'")[1]
            else:
                name = str(error.path[0]) if error.path else "nonFieldErrors"
            constraint_errors.setdefault(name, []).append(_constraint_message(error))
        if constraint_errors:
            raise Problem.validation(constraint_errors)
    return validated, typed
