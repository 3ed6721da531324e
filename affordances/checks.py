"""System checks: what the catalog cannot serve is reported at startup, not at request time."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from rest_framework import serializers

from affordances import routes
from affordances.compat.fsm import transition_meta
from affordances.conf import ANY_STATE, MODEL_DEFAULTS, SettingError, did_you_mean
from affordances.constraints import ConstraintNotShown, ConstraintWidens, assert_narrows
from affordances.patterns import backtracking_risk, patterns_in
from affordances.samples import declared_sample, sample_instance
from affordances.schemas import SchemaError, argument_fields, related_schema

# A description shorter than this cannot state a purpose and its consequences.
MIN_DESCRIPTION_LENGTH = 40


# One check id per setting (MODELS and the dict itself are E001's).
SETTING_CHECKS = {
    "NAMESPACE": "affordances.E019",
    "IDEMPOTENCY_TTL": "affordances.E020",
    "MCP_ALLOWED_ORIGINS": "affordances.E021",
    "MCP_AUTHENTICATION_CLASSES": "affordances.E022",
    "PAGE_SIZE": "affordances.E023",
    "MAX_PAGE_SIZE": "affordances.E024",
    "LOCK_TIMEOUT": "affordances.E018",
    "REQUEST_TIMEOUT": "affordances.E018",
    "OPENAPI_MEMO": "affordances.E025",
    # The MCP endpoint as an OAuth protected resource (affordances.mcp.authorization).
    "MCP_AUTHORIZATION_SERVERS": "affordances.E030",
    "MCP_READ_SCOPE": "affordances.E030",
    "MCP_WRITE_SCOPE": "affordances.E030",
    "MCP_REQUIRE_AUDIENCE": "affordances.E030",
    "OAUTH_THROTTLE_RATES": "affordances.E030",
    "OAUTH_REDIRECT_HOSTS": "affordances.E030",
    "OAUTH_UNUSED_CLIENT_TTL": "affordances.E030",
    "OAUTH_CREATE_USERS": "affordances.E030",
    "OAUTH_CIMD_ALLOW_PRIVATE": "affordances.E030",
    "CAPABILITIES_CACHE": "affordances.E031",
    "CONFIRMATION_TTL": "affordances.E033",
    "CONFIRMATIONS": "affordances.E033",
    "EVENTS_BROKER": "affordances.E034",
}


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Every ``AFFORDANCES`` setting, read through its typed property: a bad value is an
    error at start-up (with the setting's own id), not an exception at the first request."""
    from affordances.conf import settings

    messages: list[checks.CheckMessage] = []
    try:
        settings._raw()
    except ImproperlyConfigured:  # an unknown or malformed AFFORDANCES is E001's
        return messages
    for name, check_id in SETTING_CHECKS.items():
        try:
            getattr(settings, name)
        except ImproperlyConfigured as exc:
            messages.append(checks.Error(str(exc), obj=f"AFFORDANCES[{name!r}]", id=check_id))
    return messages


def _setting_error(exc: SettingError) -> checks.CheckMessage:
    """A mistake found by the rule that reads the setting, as that rule words it."""
    return checks.Error(exc.message, hint=exc.hint or None, obj=exc.obj, id=exc.check_id)


@checks.register()
def check_capabilities_cache(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """W013: ``AUTHENTICATION_BACKENDS`` asks for the capabilities cache
    (``CachedModelBackend``) but ``CAPABILITIES_CACHE`` names a cache that is not shared
    by every process. A revocation is announced in the cache, so one kept per process
    could not reach the others: the backend caches nothing there. A plain ``check``
    (not only ``--deploy``): a development server is one process, but the setting is
    the one production reads."""
    from affordances import capabilities

    try:
        setup = capabilities.setup()
    except ImproperlyConfigured:
        return []  # E031's
    alias = setup.alias
    if not setup.asked or setup.shared or alias is None:
        return []
    from django.core.cache import caches

    kind = type(caches[alias]).__name__
    return [
        checks.Warning(
            f"AFFORDANCES['CAPABILITIES_CACHE'] is {alias!r}, a {kind} that is not "
            "shared by every process: a permission revoked in one process would not reach "
            "the others, so CachedModelBackend keeps nothing and loads each request's "
            "permissions from the database.",
            hint="Name a cache shared by every process (Redis, Memcached, the database), "
            "or use django.contrib.auth.backends.ModelBackend.",
            obj="AFFORDANCES['CAPABILITIES_CACHE']",
            id="affordances.W013",
        )
    ]


@checks.register(checks.Tags.security, deploy=True)
def check_cimd_private(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """W015 (``check --deploy``): ``OAUTH_CIMD_ALLOW_PRIVATE`` is on. The authorization
    server then fetches Client ID Metadata Documents from loopback and private
    addresses — whatever a client names as its ``client_id`` — which is for development
    and tests only."""
    from affordances.conf import settings

    try:
        allowed = settings.OAUTH_CIMD_ALLOW_PRIVATE
    except ImproperlyConfigured:
        return []  # E030's
    if not allowed:
        return []
    return [
        checks.Warning(
            "AFFORDANCES['OAUTH_CIMD_ALLOW_PRIVATE'] is on: a client's metadata document is "
            "fetched from loopback and private addresses too, so any client can make this "
            "server send requests into its own networks.",
            hint="Leave it False (the default) outside development and tests.",
            obj="AFFORDANCES['OAUTH_CIMD_ALLOW_PRIVATE']",
            id="affordances.W015",
        )
    ]


@checks.register(checks.Tags.database)
def check_migrations(
    app_configs: Any = None, databases: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """E048: the app's migrations are not applied on a database, so the first run of an
    operation would fail (its audit record has no table). Tagged ``database``, as
    Django's own database checks are: ``check --database default`` runs it (a plain
    ``check`` reads no database). ``migrate`` runs the checks before it applies anything:
    there, reporting what it is about to apply would refuse the cure."""
    from django.db import connections

    from affordances.installation import not_migrated, running_migrate

    if not databases or running_migrate():
        return []
    messages: list[checks.CheckMessage] = []
    for alias in databases:
        why = not_migrated(connections[alias])
        if why is not None:
            messages.append(
                checks.Error(
                    why,
                    hint=f"Run `manage.py migrate --database {alias}`.",
                    obj="affordances",
                    id="affordances.E048",
                )
            )
    return messages


@checks.register()
def check_catalog(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    from affordances.catalog import build_catalog
    from affordances.resources import registered_resources

    messages: list[checks.CheckMessage] = []
    try:
        resources = registered_resources()
    except SettingError as exc:
        return [_setting_error(exc)]
    except ImproperlyConfigured as exc:
        return [checks.Error(str(exc), obj="AFFORDANCES", id="affordances.E001")]
    for resource in resources:
        if not resource.fsm_fields:
            messages.append(
                checks.Error(
                    f"{resource.options.label} is registered but has no FSMField.",
                    obj=resource.model,
                    id="affordances.E002",
                )
            )
        messages.extend(_check_version_field(resource))
        messages.extend(_setting_error(exc) for exc in resource.setting_errors())
        messages.extend(_check_misplaced(resource))
    messages.extend(_check_on_error(resources))
    messages.extend(_check_editable_fields(resources))
    if messages:
        return messages
    try:
        catalog = build_catalog()
    except SettingError as exc:
        return [_setting_error(exc)]
    except SchemaError as exc:
        return [
            checks.Error(
                f"An input serializer cannot be rendered as JSON Schema: {exc}",
                id="affordances.E004",
            )
        ]
    for name, count in Counter(op.name for op in catalog).items():
        if count > 1:
            messages.append(
                checks.Error(
                    f"{count} operations are named {name!r}; names must be unique.",
                    hint="Give one of them @operation(name=...).",
                    obj=next(op.resource.model for op in catalog if op.name == name),
                    id="affordances.E005",
                )
            )
    messages.extend(_check_constraints(catalog))
    messages.extend(_check_patterns(catalog))
    messages.extend(_check_serializers(catalog))
    messages.extend(_check_inputs(catalog))
    messages.extend(_check_callables(catalog))
    for op in catalog:
        if not op.is_transition:
            continue
        where = f"{op.resource.model.__name__}.{op.method_name}"
        if not op.description:
            messages.append(
                checks.Error(
                    f"Transition {where} has no docstring; it is the operation's description.",
                    obj=op.resource.model,
                    id="affordances.E006",
                )
            )
        elif len(op.description) < MIN_DESCRIPTION_LENGTH:
            messages.append(
                checks.Warning(
                    f"The docstring of {where} is too thin to state a purpose.",
                    hint="Say what it does, its consequences, arguments and conditions.",
                    obj=op.resource.model,
                    id="affordances.W001",
                )
            )
        if op.spec is None or op.spec.title == "":
            messages.append(
                checks.Warning(
                    f"Transition {where} has no @operation(title=...).",
                    obj=op.resource.model,
                    id="affordances.W002",
                )
            )
    return messages


def _check_version_field(resource: Any) -> list[checks.CheckMessage]:
    """E003: the registration's ``VERSION_FIELD`` (its default ``"version"``) names no
    field of the model."""
    name = resource.version_field
    fields = [field.name for field in resource.model._meta.fields]
    if name in fields:
        return []
    label = resource.options.label
    default = " (its default)" if name == MODEL_DEFAULTS["VERSION_FIELD"] else ""
    return [
        checks.Error(
            f"{label} has no field {name!r}, which AFFORDANCES['MODELS'][{label!r}]"
            f"['VERSION_FIELD']{default} names as its version field.",
            hint=f"{did_you_mean([name], fields)}Give the model an integer field "
            f"{name!r} (models.PositiveIntegerField(default=1)), or set the registration's "
            "VERSION_FIELD to the one it has.",
            obj=resource.model,
            id="affordances.E003",
        )
    ]


def _check_misplaced(resource: Any) -> list[checks.CheckMessage]:
    """E047: an ``@operation`` that declared nothing — below ``@transition`` (which must
    come first, the lower decorator), or on a method that is no transition. It is not
    raised while the models are imported, where no check could report it."""
    from affordances.declarations import misplaced

    messages: list[checks.CheckMessage] = []
    seen: set[str] = set()
    for cls in resource.model.__mro__:
        for name, value in vars(cls).items():
            why = misplaced(value)
            if why is None or name in seen:
                continue
            seen.add(name)
            where = f"{resource.model.__name__}.{name}"
            above = why.endswith("above @transition")
            messages.append(
                checks.Error(
                    f"{why}: {where} has "
                    + ("@operation below @transition" if above else "no @transition")
                    + ", so its operation's declaration (title, input, guards…) is not applied.",
                    hint="Write @operation(...) on the line above @transition(...)."
                    if above
                    else "Declare the transition with django-fsm's @transition(...) below "
                    "@operation(...), or remove @operation.",
                    obj=resource.model,
                    id="affordances.E047",
                )
            )
    return messages


def _check_on_error(resources: Any) -> list[checks.CheckMessage]:
    """E027: a transition declared with django-fsm's ``on_error=``.

    Every face runs a transition in one transaction and rolls all of it back when the
    body raises — the state, the version and the audit record alike — so the
    ``on_error`` state django-fsm sets would never be kept, silently. Refused rather
    than half honoured (docs/reference/checks.md)."""
    messages: list[checks.CheckMessage] = []
    for resource in resources:
        for fsm_field in resource.fsm_fields:
            for method_name, wrapper in fsm_field.transitions.get(resource.model, {}).items():
                meta = transition_meta(wrapper)
                found = [t for t in getattr(meta, "transitions", {}).values() if t.on_error]
                if found:
                    messages.append(
                        checks.Error(
                            f"Transition {resource.model.__name__}.{method_name} declares "
                            f"on_error={found[0].on_error!r}: a transition whose body raises "
                            "is rolled back whole, so that state would never be kept.",
                            hint="Drop on_error=; model the failure as a transition of its "
                            "own (or return its target: RETURN_VALUE), run after the error.",
                            obj=resource.model,
                            id="affordances.E027",
                        )
                    )
    return messages


def _check_editable_fields(resources: Any) -> list[checks.CheckMessage]:
    """E043: an ``EDITABLE_FIELDS`` name that ``edit_{resource}`` cannot take — not a
    field of the model, its primary key, an FSM field (states change through operations),
    the version field (every run bumps it), a relation's reverse or many-to-many field,
    a field that is not editable — or a state its FSM field does not have."""
    from affordances.edits import field_problem

    messages: list[checks.CheckMessage] = []
    for resource in resources:
        declared = resource.editable_fields
        label = resource.options.label
        for name in resource.edit_fields:
            problem = field_problem(resource, name)
            if problem is not None:
                messages.append(
                    checks.Error(
                        f"AFFORDANCES['MODELS'][{label!r}]['EDITABLE_FIELDS']: {problem}.",
                        hint="Name plain, editable fields of the model; its state changes "
                        "through operations, its version and primary key never change.",
                        id="affordances.E043",
                    )
                )
        states = [state for state in declared if state != ANY_STATE]
        field = resource.fsm_fields[0] if resource.fsm_fields else None
        known = {str(value) for value, _ in field.flatchoices} if field is not None else set()
        for state in states:
            if field is not None and known and state not in known:
                messages.append(
                    checks.Error(
                        f"AFFORDANCES['MODELS'][{label!r}]['EDITABLE_FIELDS'] names the "
                        f"state {state!r}, which {resource.model.__name__}.{field.name} "
                        "does not have.",
                        hint=f"Use the states of its choices, or {ANY_STATE!r} for every state.",
                        id="affordances.E043",
                    )
                )
    return messages


def _check_constraints(catalog: Any) -> list[checks.CheckMessage]:
    """Probe each constraint with an object and an anonymous caller (E007, E026, W014).

    A constraint is code, so this cannot prove it always narrows; it catches the
    constraints that widen whatever they are given (a typo'd argument name, an enum
    value the serializer does not offer) and those using a keyword some face could not
    show for the input (E026: ``multipleOf``, ``minItems``, a length on a number, a
    ``minimum`` on a date). The probe is a fresh object; when the function cannot read
    it (a field it reads is empty), a sample (:func:`affordances.samples.sample_instance`:
    the model's ``affordances_sample()``, else its required fields filled). One it still
    cannot evaluate, or that widens only on a generated sample (its values may be no real
    object's), is a warning (W014) — the request-time check refuses the operation rather
    than widen it, and :func:`affordances.testing.assert_constraints` checks it on the
    project's own objects.
    """
    messages: list[checks.CheckMessage] = []
    for op in catalog:
        spec = op.spec
        if spec is None or spec.constraints is None:
            continue
        probed = _probe_constraints(op, spec.constraints)
        if probed is None:
            continue
        constraints, trusted, unchecked = probed
        if unchecked is not None:
            messages.append(_unchecked(op, unchecked))
            continue
        try:
            assert_narrows(op.input_schema, constraints)
        except ConstraintNotShown as exc:
            messages.append(
                checks.Error(
                    f"The constraints of {op.name} use a keyword not every face can show: {exc}.",
                    hint="Every face renders enum and const on any input; minimum, maximum, "
                    "exclusiveMinimum, exclusiveMaximum on integers and decimals; minLength, "
                    "maxLength, pattern on text; formatMinimum, formatMaximum on dates and "
                    "date-times; and required.",
                    obj=op.resource.model,
                    id="affordances.E026",
                )
            )
        except ConstraintWidens as exc:
            if not trusted:
                messages.append(_unchecked(op, f"on a generated sample they widen: {exc}"))
                continue
            messages.append(
                checks.Error(
                    f"The constraints of {op.name} widen its input schema: {exc}.",
                    hint="A constraint may only narrow: an enum subset, tighter bounds, "
                    "more required arguments, of the operation's own inputs.",
                    obj=op.resource.model,
                    id="affordances.E007",
                )
            )
    return messages


def _probe_constraints(op: Any, rule: Any) -> tuple[Any, bool, str | None] | None:
    """``rule`` evaluated for the check: (constraints, whether the object was a real
    probe — a fresh one or the project's own sample — and not a generated one, why it
    could not be evaluated). None: nothing to check (made of empty optional fields)."""
    if op.is_create:
        probes: list[tuple[Any, bool]] = [(None, True)]
    else:
        model = op.resource.model
        probes = [(model, True), (model, declared_sample(model))]
    failure = None
    for index, (probe, trusted) in enumerate(probes):
        try:
            if op.is_create:
                instance = None
            elif index == 0:
                instance = probe()
            else:
                instance = sample_instance(probe)
            constraints = rule(instance, AnonymousUser()) or {}
        except Exception as exc:  # not a real object: try the next probe
            if op.is_create:
                on = "without an object"
            else:
                on = f"on a {'sample' if index else 'fresh'} {op.resource.model.__name__}"
            failure = f"{on} they raised {type(exc).__name__}: {exc}"
            continue
        if _holds_none(constraints):
            if index + 1 < len(probes):
                continue  # made of the fresh object's empty fields: try the sample
            return None  # made of fields empty even on the sample: left to request time
        return constraints, trusted, None
    return None, False, failure


def _unchecked(op: Any, why: str | None) -> checks.CheckMessage:
    return checks.Warning(
        f"The constraints of {op.name} could not be checked: {why}.",
        hint="Give the model a classmethod affordances_sample() returning an unsaved instance "
        "they can read, and assert them on your own objects in your tests with "
        "affordances.testing.assert_constraints(). At request time a widening constraint "
        "makes the operation unavailable (misconfigured).",
        obj=op.resource.model,
        id="affordances.W014",
    )


def _check_callables(catalog: Any) -> list[checks.CheckMessage]:
    """E042: a condition, guard or constraints function that is not callable — most often
    a function named like a model field, which the field shadows in the class body, so
    the transition holds the field: every evaluation of the operation would raise."""
    messages: list[checks.CheckMessage] = []
    for op in catalog:
        found: list[tuple[str, Any]] = []
        if op.is_transition:
            for fsm_transition in op.facts.meta.transitions.values():
                found += [("condition", check) for check in fsm_transition.conditions]
        if op.spec is not None:
            found += [("guard", rule) for rule in op.spec.guards]
            if op.spec.constraints is not None:
                found.append(("constraints function", op.spec.constraints))
        seen: set[int] = set()  # one message per value (one condition on every source)
        for kind, value in found:
            if callable(value) or id(value) in seen:
                continue
            seen.add(id(value))
            messages.append(
                checks.Error(
                    f"{op.name}: the {kind} {value!r} is not callable.",
                    hint="A name in the model's class body (a field, an attribute) shadows "
                    "the function it was meant to be: rename the function, or the field.",
                    obj=op.resource.model,
                    id="affordances.E042",
                )
            )
    return messages


def _holds_none(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_none(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(_holds_none(item) for item in value)
    return value is None


def _check_patterns(catalog: Any) -> list[checks.CheckMessage]:
    """E017: an input pattern a backtracking engine may take super-linear time on.

    The server runs it on every request (one request could hold a worker for seconds)
    and publishes it to clients that run it too (see :mod:`affordances.patterns`).
    """
    messages: list[checks.CheckMessage] = []
    for op in catalog:
        for pattern in dict.fromkeys(patterns_in(op.input_schema)):
            risk = backtracking_risk(pattern)
            if risk:
                messages.append(
                    checks.Error(
                        f"The input schema of {op.name} has the pattern {pattern!r}: {risk}.",
                        hint="Anchor it with ^, keep the classes of adjacent repeats "
                        "disjoint and repeats out of repeats; check lengths with max_length.",
                        obj=op.resource.model,
                        id="affordances.E017",
                    )
                )
    return messages


def _check_inputs(catalog: Any) -> list[checks.CheckMessage]:
    """E028: an input that clashes with the acting user's ``by=``; E029: a related
    field the app cannot describe or look up for a caller (docs/reference/checks.md)."""
    messages: list[checks.CheckMessage] = []
    for op in catalog:
        if op.input_serializer is None:
            continue
        fields = argument_fields(op.input_serializer())
        sources = {field.source for field in fields.values()}
        if op.actor_parameter is not None and op.actor_parameter in sources:
            messages.append(
                checks.Error(
                    f"{op.name}: the input {op.input_serializer.__name__} fills the "
                    f"keyword {op.actor_parameter!r}, which the transition method takes "
                    "for the acting user.",
                    hint="Rename the argument (source=...): by= is always the caller.",
                    obj=op.resource.model,
                    id="affordances.E028",
                )
            )
        for name, field in fields.items():
            many = isinstance(field, serializers.ManyRelatedField)
            related = field.child_relation if many else field
            if isinstance(related, serializers.RelatedField) and related_schema(field) is None:
                keyed = (serializers.PrimaryKeyRelatedField, serializers.SlugRelatedField)
                what = (
                    "whose queryset (its queryset= or its get_queryset(), asked without a "
                    "request) is no model's"
                    if isinstance(related, keyed)
                    else "which takes neither a key nor a slug"
                )
                messages.append(
                    checks.Error(
                        f"{op.name}: the argument {name!r} is a {type(related).__name__}, {what}.",
                        hint="Use PrimaryKeyRelatedField or SlugRelatedField (many=True "
                        "for several) with a queryset of a model: queryset=, or a "
                        "get_queryset() that answers without a request (one that needs "
                        "it: declare queryset= too, for the model).",
                        obj=op.resource.model,
                        id="affordances.E029",
                    )
                )
    return messages


def _check_serializers(catalog: Any) -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for resource in catalog.resources:
        serializer_class = resource.serializer_class
        if serializer_class is None:
            continue
        if "url" not in serializer_class().fields:
            messages.append(
                checks.Warning(
                    f"{serializer_class.__name__} (the SERIALIZER of {resource.options.label}) "
                    "has no `url` field: HAL `_links.self`, MCP resource links and resource "
                    "URIs need it.",
                    hint="Add url = affordances.rest.ResourceUrlField() (the route "
                    f'"{routes.name(resource.basename, "detail")}").',
                    obj=resource.model,
                    id="affordances.W003",
                )
            )
    return messages
