"""The one execution path. Every face — REST, MCP, admin — runs operations through here.

Inside one transaction, with the row locked, it re-checks everything an affordance
promised: visibility and capability (404), version (412), state, conditions and guards
(409), arguments against the input serializer and the constraints (400). Then it runs
the django-fsm transition, bumps the version, saves and writes one audit record. An edit
(``edit_{resource}``, :mod:`affordances.edits`) runs the same checks, then writes the
fields its state leaves editable, after the model's own validation (:func:`_edit`, the
admin's change form's path too). Any failure leaves state, version, audit log and
idempotency records as they were.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, connection, models, transaction
from django_fsm import TransitionNotAllowed

from affordances import changelog, edits, events, idempotency, installation, reads, tracing
from affordances.arguments import (
    absent_nulls,
    flatten_errors,
    input_context,
    validate_arguments,
)
from affordances.conf import settings
from affordances.declarations import DEFAULT_STATE_REASON
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.models import AuditRecord, Interface
from affordances.operations import Operation
from affordances.preview import document as preview_document
from affordances.problems import Problem
from affordances.resources import Resource
from affordances.vocabulary import VERSION_STRING, parse_version

__all__ = [
    "VERSION_STRING",
    "Outcome",
    "Represent",
    "may_create",
    "parse_version",
    "perform",
    "perform_create",
    "perform_edit",
    "visible_locked",
]

logger = logging.getLogger(__name__)
# The audit record's copy of who acted (AuditRecord.username's column).
_USERNAME_LENGTH: int = AuditRecord._meta.get_field("username").max_length or 150

Represent = Callable[[models.Model], dict[str, Any]]


@dataclass(frozen=True)
class Outcome:
    status: int
    body: dict[str, Any]
    replayed: bool = False


def _locked(queryset: models.QuerySet[Any]) -> models.QuerySet[Any]:
    if connection.features.has_select_for_update_of:
        return queryset.select_for_update(of=("self",))
    return queryset.select_for_update()


def perform(
    *,
    operation: Operation,
    pk: Any,
    user: Any,
    arguments: Any,
    via: str,
    represent: Represent,
    expected_version: int | None = None,
    idempotency_key: str | None = None,
    request: Any = None,
    preview: bool = False,
) -> Outcome:
    """Run ``operation`` on object ``pk`` for ``user``; raise :class:`Problem` if refused.

    ``operation`` is a transition, or an edit (``edit_{resource}``), whose arguments are
    the fields to change (docs/protocol.md#edits).

    ``preview``: every check and the transition run, in a transaction that is then rolled
    back; the answer is :func:`affordances.preview.document` — nothing is kept (no
    audit record, no idempotency claim; docs/protocol.md#previews).

    ``request`` (the face's, if it has one) reaches the registration's ``QUERYSET`` (a
    function of the user and the request) and the input serializer's context.
    A transition method with a ``by`` parameter receives ``user`` as ``by=``.

    With OpenTelemetry configured, the run is one span, ``affordances.run <operation>``,
    in the trace the face continued (:mod:`affordances.tracing`).
    """
    with tracing.run(operation.name, _traced(operation, via, pk=pk, preview=preview)) as traced:
        outcome = _perform(
            operation=operation,
            pk=pk,
            user=user,
            arguments=arguments,
            via=via,
            represent=represent,
            expected_version=expected_version,
            idempotency_key=idempotency_key,
            request=request,
            preview=preview,
        )
        traced.succeeded(_outcome_word(outcome, preview=preview), outcome.status)
    return outcome


def _traced(
    operation: Operation, via: Any, *, pk: Any = None, preview: bool = False
) -> dict[str, str | int | bool]:
    """A run span's attributes: what runs, on what, from which face."""
    attributes: dict[str, str | int | bool] = {
        "affordances.operation.name": operation.name,
        "affordances.operation.urn": operation.urn,
        "affordances.model": operation.resource.model._meta.label,
        "affordances.face": str(via),
    }
    if pk is not None:
        attributes["affordances.object.id"] = str(pk)
    if preview:
        attributes["affordances.preview"] = True
    return attributes


def _outcome_word(outcome: Outcome, *, preview: bool = False) -> str:
    if preview:
        return "preview"
    return "replayed" if outcome.replayed else "ok"


def _perform(
    *,
    operation: Operation,
    pk: Any,
    user: Any,
    arguments: Any,
    via: str,
    represent: Represent,
    expected_version: int | None,
    idempotency_key: str | None,
    request: Any,
    preview: bool,
) -> Outcome:
    if not (operation.is_transition or operation.is_edit):
        raise Problem.not_found()
    _check_via(via)
    resource = operation.resource
    if not isinstance(arguments, Mapping):
        raise Problem.malformed("The arguments must be a JSON object.")
    # null for an optional argument is absent, before it is fingerprinted or checked.
    arguments = absent_nulls(operation.input_schema, arguments)
    idempotency_key = idempotency.parse_key(idempotency_key)  # before it meets the database

    # 1. Visibility and capability: a hidden operation or object is simply not there.
    # Without a key, the object is first looked for under its row lock, the first thing
    # the transaction does; a key is claimed only for an object the caller may see.
    pk = resource.parse_pk(pk)
    if not operation.permits(user):
        raise Problem.not_found()
    if (
        idempotency_key is not None
        and not reads.visible(resource, user, request=request).filter(pk=pk).exists()
    ):
        raise Problem.not_found()

    bound_id = arguments.pop(resource.id_argument, None)
    body_version = arguments.pop("expectedVersion", None)

    # 2. Idempotency: replay or refuse before any other check. A preview claims nothing.
    if preview:
        idempotency_key = None
    claimed = _claim(
        user=user,
        key=idempotency_key,
        operation=operation,
        pk=pk,
        arguments={**arguments, "expectedVersion": body_version, "ifMatch": expected_version},
    )
    if claimed is not None and claimed.replay:
        return _replay(claimed)

    try:
        with _released_on_failure(claimed), _run_transaction():
            outcome = _run(
                operation=operation,
                pk=pk,
                user=user,
                arguments=arguments,
                bound_id=bound_id,
                header_version=expected_version,
                body_version=body_version,
                via=via,
                represent=represent,
                claimed=claimed,
                request=request,
                preview=preview,
            )
    except Problem as problem:
        if problem.wants_current:
            # Rendered after the rollback: the object as it really is now.
            current = reads.one(reads.visible(resource, user, request=request), pk)
            problem.current = represent(current) if current is not None else None
        raise
    return outcome


def _run(
    *,
    operation: Operation,
    pk: Any,
    user: Any,
    arguments: dict[str, Any],
    bound_id: Any,
    header_version: int | None,
    body_version: Any,
    via: str,
    represent: Represent,
    claimed: idempotency.Claim | None,
    request: Any,
    preview: bool = False,
) -> Outcome:
    resource = operation.resource
    instance = reads.one(_locked(reads.visible(resource, user, request=request)), pk)
    if instance is None:
        raise Problem.not_found()

    # 3. Version.
    expected = parse_version(body_version)
    if header_version is not None and expected is not None and header_version != expected:
        raise Problem.validation(
            {"expectedVersion": ["Differs from the If-Match header; send one version."]}
        )
    expected = expected if expected is not None else header_version
    current_version = getattr(instance, resource.version_field)
    if expected is not None and expected != current_version:
        raise Problem.stale_version(expected=expected, actual=current_version)

    # 4. State, conditions, guards (an edit: its permission on this object, its state).
    evaluation = evaluate(operation, instance, user)
    if evaluation is None:
        raise Problem.not_found()
    if isinstance(evaluation, Unavailable):
        raise Problem.not_available(operation=operation.name, reason=evaluation.reason)
    assert isinstance(evaluation, Available)

    # 5. Arguments, against the serializer and this object's constraints.
    if bound_id is not None and str(bound_id) != str(pk):
        raise Problem.validation(
            {resource.id_argument: ["Differs from the object addressed by the request."]}
        )
    editable = None
    if operation.is_edit:
        editable = _editable(resource, instance, arguments, evaluation.constraints)
    context = input_context(operation, user=user, instance=instance, request=request)
    with _model_code(operation.name, wants_current=True):
        # A serializer's own validate() is the model's code too: it may raise anything.
        kwargs, audit_arguments = validate_arguments(
            operation, arguments, evaluation.constraints, context=context
        )
    if editable is not None:
        return _run_edit(
            operation,
            instance,
            kwargs,
            allowed=editable,
            user=user,
            via=via,
            represent=represent,
            claimed=claimed,
            preview=preview,
        )
    if operation.actor_parameter is not None:
        kwargs[operation.actor_parameter] = user  # django-fsm-log's by= convention

    # 6. Run the transition; any failure inside rolls the whole transaction back.
    assert operation.method_name is not None
    source = operation.facts.field.get_state(instance)
    with _model_code(operation.name, wants_current=True):
        getattr(instance, operation.method_name)(**kwargs)
        setattr(instance, resource.version_field, current_version + 1)
        instance.save()

    if preview:
        # The would-be outcome, then the run's transaction (or savepoint) is rolled back:
        # on_commit callbacks never fire, no audit record is written.
        body = preview_document(
            operation,
            represent(instance),
            source=source,
            target=operation.facts.field.get_state(instance),
            version=current_version,
        )
        transaction.set_rollback(True)
        return Outcome(status=200, body=body)

    _audit(operation, instance, source=source, arguments=audit_arguments, user=user, via=via)
    body = represent(instance)
    if claimed is not None:
        idempotency.complete(claimed.record, status_code=200, body=body)
    return Outcome(status=200, body=body)


def may_create(operation: Operation | None, user: Any) -> None:
    """Refuse a caller who may not run this collection operation (or there is none).

    The first check of :func:`perform_create`; faces call it before reading a body, so
    a malformed body tells a caller without the capability nothing either.
    """
    if operation is None or not operation.is_create or not operation.permits(user):
        raise Problem.may_not_create()


def perform_create(
    *,
    operation: Operation,
    user: Any,
    arguments: Any,
    via: str,
    represent: Represent,
    idempotency_key: str | None = None,
    request: Any = None,
) -> Outcome:
    """Run a collection operation (``kind: create``): the same checks, minus object and state.

    Capability (404), idempotency, arguments against the input serializer and the
    caller's constraints (400); then the model's creator runs, and one audit record
    with an empty source state is written, all in one transaction.
    """
    may_create(operation, user)  # the faces asked already; code that calls this may not
    with tracing.run(operation.name, _traced(operation, via)) as traced:
        outcome = _perform_create(
            operation=operation,
            user=user,
            arguments=arguments,
            via=via,
            represent=represent,
            idempotency_key=idempotency_key,
            request=request,
        )
        traced.succeeded(_outcome_word(outcome), outcome.status)
    return outcome


def _perform_create(
    *,
    operation: Operation,
    user: Any,
    arguments: Any,
    via: str,
    represent: Represent,
    idempotency_key: str | None,
    request: Any,
) -> Outcome:
    _check_via(via)
    if not isinstance(arguments, Mapping):
        raise Problem.malformed("The arguments must be a JSON object.")
    # null for an optional argument is absent, before it is fingerprinted or checked.
    arguments = absent_nulls(operation.input_schema, arguments)
    idempotency_key = idempotency.parse_key(idempotency_key)
    resource = operation.resource

    claimed = _claim(
        user=user, key=idempotency_key, operation=operation, pk="", arguments=arguments
    )
    if claimed is not None and claimed.replay:
        return _replay(claimed)
    with _released_on_failure(claimed), _run_transaction():
        evaluation = evaluate(operation, None, user)
        assert isinstance(evaluation, Available)
        context = input_context(operation, user=user, instance=None, request=request)
        with _model_code(operation.name, wants_current=False):
            kwargs, audit_arguments = validate_arguments(
                operation, arguments, evaluation.constraints, context=context
            )
        assert operation.method_name is not None
        with _model_code(operation.name, wants_current=False):
            instance = getattr(resource.model, operation.method_name)(user=user, **kwargs)
        _audit(operation, instance, source="", arguments=audit_arguments, user=user, via=via)
        body = represent(instance)
        if claimed is not None:
            idempotency.complete(claimed.record, status_code=201, body=body)
    return Outcome(status=201, body=body)


def _claim(
    *, user: Any, key: str | None, operation: Operation, pk: Any, arguments: dict[str, Any]
) -> idempotency.Claim | None:
    if key is None:
        return None
    print_ = idempotency.fingerprint(operation=operation.urn, pk=pk, arguments=arguments)
    with _lock_timeouts():  # the claim is a write of its own (SQLite: a database lock)
        return idempotency.claim(user=user, key=key, print_=print_)


def _replay(claimed: idempotency.Claim) -> Outcome:
    return Outcome(
        status=claimed.record.status_code or 200,
        body=idempotency.stored_body(claimed.record),
        replayed=True,
    )


@contextmanager
def _released_on_failure(claimed: idempotency.Claim | None) -> Iterator[None]:
    """A refusal or a crash is not stored: the key may be used again
    (docs/protocol.md#execution)."""
    try:
        yield
    except BaseException:
        if claimed is not None:
            idempotency.release(claimed.record)
        raise


def _is_lock_timeout(exc: DatabaseError) -> bool:
    """PostgreSQL's lock_not_available (lock_timeout) or SQLite's busy timeout."""
    cause = exc.__cause__
    if getattr(cause, "sqlstate", None) == "55P03":
        return True
    return connection.vendor == "sqlite" and "database is locked" in str(exc)


@contextmanager
def _run_transaction() -> Iterator[None]:
    """The one transaction of a run, its lock waits bounded by ``LOCK_TIMEOUT``.

    A lock that cannot be had in time is ``lock_timeout`` (503, retryable): the run was
    rolled back before it began, which is not a failed transition.
    """
    with _lock_timeouts(), transaction.atomic():
        timeout = settings.lock_timeout_ms
        if timeout is not None and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                # SET LOCAL: ends with this transaction, whatever the connection does next.
                cursor.execute("SELECT set_config('lock_timeout', %s, true)", [f"{timeout}ms"])
        yield


@contextmanager
def _lock_timeouts() -> Iterator[None]:
    try:
        yield
    except DatabaseError as exc:
        if _is_lock_timeout(exc):
            raise Problem.lock_timeout() from None
        # The app's tables missing (migrations not run: affordances.E048) is the server's
        # set-up, not a failed run. Asked only where the connection can still be read.
        why = None if connection.needs_rollback else installation.not_migrated(connection)
        if why is not None:
            logger.error("%s Run `manage.py migrate`.", why)
            raise Problem.misconfigured() from None
        raise


@contextmanager
def _model_code(name: str, *, wants_current: bool) -> Iterator[None]:
    """Run the model's own code; whatever it raises becomes a problem, never a 500.

    It runs inside the run's transaction (:func:`_run_transaction`), which the problem
    propagating out of it rolls back whole — the model's partial work included — so it
    needs no savepoint of its own.
    """
    try:
        yield
    except Problem:
        # The model refused on its own, e.g. a rule it re-checked under a lock it took
        # (``Problem.not_available(operation=..., reason=...)``): answered as raised.
        raise
    except TransitionNotAllowed:
        raise Problem.not_available(operation=name, reason=DEFAULT_STATE_REASON) from None
    except DjangoValidationError as exc:
        raise Problem.validation(
            flatten_errors(getattr(exc, "message_dict", exc.messages))
        ) from None
    except DatabaseError as exc:
        if _is_lock_timeout(exc):
            raise Problem.lock_timeout() from None
        logger.exception("%s failed; rolled back", name)
        raise Problem.transition_failed(operation=name, wants_current=wants_current) from None
    except Exception:
        logger.exception("%s failed; rolled back", name)
        raise Problem.transition_failed(operation=name, wants_current=wants_current) from None


def _audit(
    operation: Operation,
    instance: models.Model,
    *,
    source: Any,
    arguments: dict[str, Any],
    user: Any,
    via: str,
) -> None:
    """The one audit record of a success, written in its transaction."""
    _record(
        operation.resource,
        instance,
        urn=operation.urn,
        name=operation.name,
        fsm_field=operation.transition.field if operation.transition else None,
        source=source,
        arguments=arguments,
        user=user,
        via=via,
    )


def _record(
    resource: Resource,
    instance: models.Model,
    *,
    urn: str,
    name: str,
    fsm_field: Any,
    source: Any,
    arguments: dict[str, Any],
    user: Any,
    via: str,
) -> None:
    fsm_field = fsm_field or (resource.fsm_fields[0] if resource.fsm_fields else None)
    target = str(fsm_field.get_state(instance)) if fsm_field else ""
    AuditRecord.objects.create(
        operation=urn,
        operation_name=name,
        content_type=ContentType.objects.get_for_model(resource.model),
        object_id=str(instance.pk),
        source_state=str(source),
        target_state=target,
        arguments=arguments,
        user=user if getattr(user, "is_authenticated", False) else None,
        # Cut to the column: a USERNAME_FIELD may be longer (an e-mail address takes 254
        # characters), and a longer value would fail every run on PostgreSQL.
        username=str(getattr(user, "get_username", lambda: "")())[:_USERNAME_LENGTH],
        via=via,
        version=getattr(instance, resource.version_field),
    )
    # And its summary in Django's admin log, for Django's History page (affordances.changelog).
    changelog.log_run(
        resource,
        instance,
        urn=urn,
        name=name,
        source=str(source),
        target=target,
        arguments=arguments,
        user=user,
        via=via,
    )
    # Every success writes this one record: "this object changed" is published from
    # here, once the transaction commits (nothing if it rolls back, as a preview does).
    events.object_changed(resource.name, instance, getattr(instance, resource.version_field))


# The face a run comes from, as its audit record says it: the library's own ("api", "mcp",
# "admin") or a project's own face's short name (a lower-case identifier, at most the
# 8 characters of ``AuditRecord.via``).
_VIA = re.compile(r"[a-z][a-z0-9_-]{0,7}")


def _check_via(via: Any) -> None:
    if not isinstance(via, str) or _VIA.fullmatch(via) is None:
        raise ValueError(
            f"via must be {', '.join(Interface.values)} or a face's own short name "
            "(a lower-case identifier of at most 8 characters)."
        )


def visible_locked(
    resource: Resource, user: Any, pks: Iterable[Any], *, request: Any = None
) -> list[models.Model]:
    """The objects among ``pks`` that ``user`` may see (``request``: the face's, for the
    registration's ``QUERYSET``), their rows locked until the surrounding transaction ends
    (a face's own write, such as the admin's delete, decides on the objects as they are
    now, not as they were read)."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("visible_locked() must run inside a transaction.")
    return list(_locked(reads.visible(resource, user, request=request)).filter(pk__in=pks))


def _run_edit(
    operation: Operation,
    instance: models.Model,
    changes: dict[str, Any],
    *,
    allowed: frozenset[str],
    user: Any,
    via: str,
    represent: Represent,
    claimed: idempotency.Claim | None,
    preview: bool,
) -> Outcome:
    """Step 6 of an edit (``edit_{resource}``): the validated ``changes`` written to the
    locked ``instance`` as the admin's edits are (:func:`_edit`); ``allowed``: the fields
    the caller may change there now (:func:`affordances.edits.editable_now`)."""
    resource = operation.resource
    version = getattr(instance, resource.version_field)
    state = _state_of(resource, instance)
    _edit(resource, instance, changes, allowed=allowed, user=user, via=via)
    if preview:
        body = preview_document(
            operation, represent(instance), source=state, target=state, version=version
        )
        transaction.set_rollback(True)  # the audit record and the event go with it
        return Outcome(status=200, body=body)
    body = represent(instance)
    if claimed is not None:
        idempotency.complete(claimed.record, status_code=200, body=body)
    return Outcome(status=200, body=body)


def _editable(
    resource: Resource,
    instance: models.Model,
    arguments: Mapping[str, Any],
    constraints: Mapping[str, Any],
) -> frozenset[str]:
    """The fields an edit may change on ``instance`` now: the declared ones its
    constraints do not rule out (``false``, :func:`affordances.edits.narrowing`). A ruled
    out one sent anyway — even with the value it holds — is a ``validation_error``
    naming it and saying why, before anything else is validated."""
    ruled_out = {
        name for name, schema in constraints.get("properties", {}).items() if schema is False
    }
    sent = sorted(ruled_out & set(arguments))
    if sent:
        sentence = edits.not_editable(resource, _state_of(resource, instance))
        raise Problem.validation({name: [sentence] for name in sent})
    return frozenset(resource.edit_fields) - ruled_out


def _state_of(resource: Resource, instance: models.Model) -> str:
    return str(resource.fsm_fields[0].get_state(instance)) if resource.fsm_fields else ""


def _audited(field: models.Field[Any, Any], instance: models.Model) -> Any:
    """A field's value as the audit record keeps it: a related object as its key."""
    value = field.value_from_object(instance)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime | date | time):
        return value.isoformat()
    return value


def _edit(
    resource: Resource,
    instance: models.Model,
    changes: Mapping[str, Any],
    *,
    allowed: Collection[str],
    user: Any,
    via: str,
) -> list[str]:
    """The one edit of plain fields, under the row lock of the caller's transaction:
    ``changes`` (field name → value, validated already) set on the locked ``instance``,
    each changed field refused unless ``allowed`` (what its state leaves editable), the
    model's own validation (``full_clean`` of the changed fields), the version bumped,
    one audit record — the changed fields, their values before and after — and "this
    object changed" published on commit. Returns the names of the fields that changed
    (none: nothing was written)."""
    fields = {name: _concrete(resource, name) for name in changes}
    changed = sorted(
        name
        for name, value in changes.items()
        if fields[name].value_from_object(instance) != _stored(fields[name], value)
    )
    refused = [name for name in changed if name not in allowed]
    if refused:
        sentence = edits.not_editable(resource, _state_of(resource, instance))
        raise Problem.validation({name: [sentence] for name in refused})
    if not changed:
        return []
    before = {name: _audited(fields[name], instance) for name in changed}
    for name in changed:
        setattr(instance, name, changes[name])
    unchanged = [field.name for field in resource.model._meta.fields if field.name not in changed]
    with _model_code(resource.edit_name, wants_current=False):
        # The model's own rules for what changed (clean() too), as a ModelForm has them.
        instance.full_clean(exclude=unchanged)
    setattr(instance, resource.version_field, getattr(instance, resource.version_field) + 1)
    with _model_code(resource.edit_name, wants_current=False):
        instance.save()
    state = _state_of(resource, instance)
    _record(
        resource,
        instance,
        urn=resource.edit_urn,
        name=resource.edit_name,
        fsm_field=None,
        source=state,
        arguments={
            "changed": changed,
            "from": before,
            "to": {name: _audited(fields[name], instance) for name in changed},
        },
        user=user,
        via=via,
    )
    return changed


def _concrete(resource: Resource, name: str) -> models.Field[Any, Any]:
    field = resource.model._meta.get_field(name)
    if not isinstance(field, models.Field) or not field.concrete:
        raise Problem.validation({name: ["Not a field of its own that an edit may change."]})
    return field


def _stored(field: Any, value: Any) -> Any:
    """``value`` as ``field.value_from_object`` reads it back: a related object's key."""
    if getattr(field, "is_relation", False) and isinstance(value, models.Model):
        return value.pk
    return value


def perform_edit(
    *,
    resource: Resource,
    pk: Any,
    user: Any,
    changes: Mapping[str, Any],
    via: str,
    editable: Callable[[models.Model], Collection[str]] | None = None,
    request: Any = None,
) -> models.Model:
    """Change plain fields of one object: the row locked, the version bumped, one audit record.

    The edit path of the admin's change form, and of ``edit_{resource}`` (which runs
    through :func:`perform`, with the version, the idempotency key and the catalog's
    checks besides). ``changes`` are values validated already (the form's). FSM fields
    and the version field are refused — states change only through operations.
    ``editable(instance)`` names the fields that may change for the object as it is
    under the lock (a rule may depend on a field only in some states); a change to any
    other is refused. The model's own validation runs on what changed (``full_clean``).
    With nothing really changed, nothing is written. ``request``: the face's, for the
    registration's ``QUERYSET``. Returns the saved object.
    """
    _check_via(via)
    forbidden = {resource.version_field, *(field.name for field in resource.fsm_fields)}
    if forbidden & set(changes):
        raise Problem.validation(
            {
                name: ["Changes only through an operation."]
                for name in sorted(forbidden & set(changes))
            }
        )
    pk = resource.parse_pk(pk)
    with _run_transaction():
        instance: models.Model | None = reads.one(
            _locked(reads.visible(resource, user, request=request)), pk
        )
        if instance is None:
            raise Problem.not_found()
        allowed = set(editable(instance) if editable is not None else changes)
        _edit(resource, instance, changes, allowed=allowed, user=user, via=via)
    return instance
