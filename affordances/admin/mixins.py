"""``AffordanceAdminMixin``: the Django admin as a face of the catalog and execution path.

It knows no model in particular: the Actions panel, the argument forms, the history,
the change-list column and the bulk actions all come from the catalog, ``evaluate`` and
``perform(via="admin")``. Nothing here decides whether an operation may run.

The change form is no way around the operations: the FSM fields and the version field
are never editable, and the other fields only in the states the project names
(``editable_fields``, else the registration's ``EDITABLE_FIELDS``; none by default),
checked again under the object's row lock when the edit is saved, through the one edit
path REST's ``PATCH`` and MCP's ``edit_{resource}`` take (``perform_edit``). Objects are
deleted only in the states it names (``deletable_states``; none by default), and "save
as new" never bypasses the model's create operation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.contrib import admin, messages
from django.core import checks
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Model, QuerySet
from django.db.models.fields import AutoFieldMixin
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse

from affordances import changelog, reads
from affordances.admin.changelist import (
    ChangeListAffordancesMixin,
    admin_represent,
    run_in_admin,
)
from affordances.admin.confirmations import confirmation_page, confirmed, preview_in_admin
from affordances.admin.forms import (
    admin_form,
    operation_form_class,
    posted_arguments,
    show_problem,
)
from affordances.admin.live import notice_context, version_response
from affordances.admin.prose import history_rows, operator_description
from affordances.admin.refusals import MalformedRequestRefusalMixin
from affordances.catalog import get_catalog
from affordances.conf import ANY_STATE  # "*": every state, as in EDITABLE_FIELDS
from affordances.edits import editable_now
from affordances.entries import Shape, create_constraints, lists_for, operation_of
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.execution import (
    may_create,
    perform_create,
    perform_edit,
    visible_locked,
)
from affordances.history import history
from affordances.models import Interface
from affordances.operations import Operation
from affordances.problems import Problem, ProblemCode
from affordances.resources import Resource
from affordances.visibility import refused_narrowing

__all__ = ["ANY_STATE", "AffordanceAdminMixin", "human_reason"]


def human_reason(reason: str) -> str:
    """``payment_not_authorized`` → ``payment not authorized``."""
    return reason.replace("_", " ")


class AffordanceAdminMixin(ChangeListAffordancesMixin, MalformedRequestRefusalMixin):
    """Mix into the ``ModelAdmin`` of a model registered in ``AFFORDANCES['MODELS']``."""

    #: The fields the change form may edit, by state of the model's (first) FSM field;
    #: ``"*"`` (``ANY_STATE``) applies in every state:
    #: ``{"draft": ["title", "quantity"], "*": ["note"]}``. Every other field is shown
    #: read-only, and an edit of it is refused under the object's row lock. Name only
    #: fields no rule, guard, constraint or invariant depends on in that state. Nothing
    #: is editable unless declared; the FSM fields and the version field never are.
    #: Empty (the default): the registration's ``EDITABLE_FIELDS``, which REST's PATCH
    #: and MCP's ``edit_{resource}`` take too. Override ``get_editable_fields`` for more
    #: than the state to decide.
    editable_fields: Mapping[str, Sequence[str]] = {}
    #: The states of the (first) FSM field in which the admin may delete an object, when
    #: the user has Django's delete permission; none unless declared.
    deletable_states: Sequence[str] = ()

    change_form_template = "affordances/admin/change_form.html"
    operation_form_template = "affordances/admin/operation_form.html"

    model: type[Model]
    admin_site: admin.AdminSite

    # -- helpers -------------------------------------------------------------------

    def _operation(self, request: HttpRequest, name: str) -> Operation:
        operation = get_catalog().resolve(name, request.user, model=self.model, transition=True)
        if operation is None:
            raise Http404("No such operation.")
        return operation

    def _url(self, name: str, *args: Any) -> str:
        opts = self.model._meta
        return reverse(
            f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_{name}", args=args
        )

    @property
    def _resource(self) -> Resource:
        return get_catalog().registered(self.model)

    def _version(self, obj: Model) -> int:
        return int(getattr(obj, self._resource.version_field))

    def _state(self, obj: Model) -> str:
        fields = self._resource.fsm_fields
        return str(fields[0].get_state(obj)) if fields else ""

    def _never_editable(self) -> list[str]:
        """States change through operations, the version through the execution path."""
        resource = self._resource
        return [*(field.name for field in resource.fsm_fields), resource.version_field]

    # -- what the change form may edit -----------------------------------------------

    def get_editable_fields(self, request: HttpRequest, obj: Model) -> set[str]:
        """The fields the change form may edit on ``obj`` as it is now.

        From ``editable_fields`` by the object's state, else the registration's edit —
        the fields every face offers this caller on this object now, the one answer of
        :func:`affordances.edits.editable_now` (none to a caller lacking its role
        prerequisite or the change permission there); a project may override it. The
        FSM fields and the version field are removed from whatever it returns.
        """
        declared = self.editable_fields
        if not declared:
            operation = get_catalog().edit_for(self.model)
            if operation is None:
                return set()
            return set(editable_now(operation, obj, request.user) or ())
        return {*declared.get(ANY_STATE, ()), *declared.get(self._state(obj), ())}

    def _editable(self, request: HttpRequest, obj: Model) -> set[str]:
        return self.get_editable_fields(request, obj) - set(self._never_editable())

    def get_readonly_fields(self, request: HttpRequest, obj: Model | None = None) -> Any:
        readonly = [
            *self._never_editable(),
            *super().get_readonly_fields(request, obj),  # type: ignore[misc]
        ]
        if obj is not None:
            editable = self._editable(request, obj)
            hidden = set(self.get_exclude(request, obj) or ())  # type: ignore[attr-defined]
            readonly += [
                name
                for name in _form_field_names(self.model)
                if name not in editable and name not in hidden
            ]
        return list(dict.fromkeys(readonly))

    def _refused_edit(self, request: HttpRequest, problem: Problem) -> HttpResponse:
        """An edit refused at save time: nothing was saved, and the page says why."""
        if problem.code is ProblemCode.NOT_FOUND:
            raise Http404("No such object.")
        details = "; ".join(
            f"{name}: {' '.join(errors)}" for name, errors in (problem.errors or {}).items()
        )
        self.message_user(  # type: ignore[attr-defined]
            request, f"Nothing was saved. {details or problem.detail}", messages.ERROR
        )
        return HttpResponseRedirect(request.get_full_path())

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        """Django's checks of the admin, and E032: an admin narrowing ``get_queryset()``
        on its own is refused (affordances.visibility)."""
        messages: list[checks.CheckMessage] = list(super().check(**kwargs))  # type: ignore[misc]
        messages.extend(refused_narrowing(type(self), ("get_queryset",), face="model admin"))
        return messages

    def get_queryset(self, request: HttpRequest) -> QuerySet[Any]:
        """The objects this user may see — the one read path every face shares: the
        registration's ``QUERYSET``, given the user and this request. Not to be overridden
        (``affordances.E032``): narrow in the registration's function, so the admin, REST
        and MCP hide the same objects."""
        queryset = reads.visible(self._resource, request.user, request=request)
        ordering = self.get_ordering(request)  # type: ignore[attr-defined]
        return queryset.order_by(*ordering) if ordering else queryset

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        visible = self._related_visible(db_field, request)
        if visible is not None and "queryset" not in kwargs:
            kwargs["queryset"] = visible
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        visible = self._related_visible(db_field, request)
        if visible is not None and "queryset" not in kwargs:
            kwargs["queryset"] = visible
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]

    def _related_visible(self, db_field: Any, request: HttpRequest) -> QuerySet[Any] | None:
        """An editable relation to a registered model offers, and accepts, only the objects
        the user may see (the registration's ``QUERYSET``), as every related input does;
        None: not a registered model, Django's own choice."""
        resource = get_catalog().resource_for(db_field.remote_field.model)
        if resource is None:
            return None
        return reads.visible(resource, request.user, request=request)

    # -- URLs ----------------------------------------------------------------------

    def get_urls(self) -> list[Any]:
        opts = self.model._meta
        info = f"{opts.app_label}_{opts.model_name}"
        wrap = self.admin_site.admin_view
        return [
            path("catalog/", wrap(self.catalog_view), name=f"{info}_catalog"),
            # Polled by an open page (affordances.admin.live): not wrapped in admin_view,
            # whose login redirect a script has no use for; it checks the same itself.
            path("<path:object_id>/version/", self.version_view, name=f"{info}_version"),
            path(
                "<path:object_id>/operation/<str:name>/",
                wrap(self.operation_view),
                name=f"{info}_operation",
            ),
            *super().get_urls(),  # type: ignore[misc]
        ]

    def version_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """``{"version": N}`` for an open page's change notice (affordances.admin.live)."""
        return version_response(self, request, object_id)

    # -- change page ---------------------------------------------------------------

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = dict(extra_context or {})
        obj = self.get_object(request, object_id)  # type: ignore[attr-defined]
        if obj is not None:
            extra_context.update(self._panel_context(request, obj))
        return super().change_view(request, object_id, form_url, extra_context)  # type: ignore[misc, no-any-return]

    def _panel_context(self, request: HttpRequest, obj: Model) -> dict[str, Any]:
        # The object's entries, as every face has them (affordances.entries); the edit's
        # is this page's own form.
        lists = lists_for({}, request, request.user, type(obj), Shape.FULL)
        available_entries, unavailable_entries = lists(obj) if lists is not None else ([], [])
        entries = (
            [entry for entry in available_entries if not operation_of(entry).is_edit],
            [entry for entry in unavailable_entries if not operation_of(entry).is_edit],
        )
        available = [
            {
                "operation": operation,
                "has_inputs": operation.input_serializer is not None,
                "url": self._url("operation", obj.pk, operation.name),
            }
            for operation in map(operation_of, entries[0])
        ]
        unavailable = [
            {
                "operation": operation_of(entry),
                "reason": entry["reason"],
                "sentence": human_reason(entry["reason"]),
            }
            for entry in entries[1]
        ]
        return {
            "affordances_available": available,
            "affordances_unavailable": unavailable,
            "affordances_version": self._version(obj),
            "affordances_history": history_rows(
                self._resource, history(self._resource, obj, request.user)
            ),
            "affordances_catalog_url": self._url("catalog"),
            **notice_context(self, request, obj, self._version(obj), form=False),
        }

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Django's History page, with the runs the library logged there
        (affordances.changelog): a run of an operation this viewer may not know says only
        its change of state, as the audit trail does."""
        response = super().history_view(request, object_id, extra_context)  # type: ignore[misc]
        actions = getattr(response, "context_data", None) or {}
        if "action_list" in actions:
            known = {op.name for op in get_catalog().for_user(request.user)}
            hidden = {
                op.title for op in get_catalog().for_model(self.model) if op.name not in known
            }
            for action in actions["action_list"]:
                said = changelog.redacted(str(action.change_message), hidden)
                if said is not None:
                    action.change_message = said
        return response  # type: ignore[no-any-return]

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # "Save as new" creates a copy outside the create operation (Django honours
        # "_saveasnew" even without save_as): only without one, and only if asked for.
        copy = request.method == "POST" and "_saveasnew" in request.POST
        allowed = self._create_operation() is None and self.save_as  # type: ignore[attr-defined]
        if copy and not allowed:
            raise PermissionDenied
        try:
            return super().changeform_view(  # type: ignore[misc, no-any-return]
                request, object_id, form_url, extra_context
            )
        except Problem as problem:  # from save_model, after the transaction rolled back
            return self._refused_edit(request, problem)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return super().changelist_view(request, extra_context)
        except Problem as problem:  # a list_editable save refused: none of the rows saved
            return self._refused_edit(request, problem)

    def save_model(self, request: HttpRequest, obj: Model, form: Any, change: bool) -> None:
        if not change:
            super().save_model(request, obj, form, change)  # type: ignore[misc]
            return
        # An edit is a change too: through the execution path, with the row locked, the
        # version bumped (forms opened before become stale) and one audit record. The
        # form was built for the object as it was read; what it may change is decided
        # again under the lock, for the object as it is (an operation may have run).
        concrete = {field.name for field in self.model._meta.concrete_fields}
        changes = {name: getattr(obj, name) for name in form.changed_data if name in concrete}
        perform_edit(
            resource=self._resource,
            pk=obj.pk,
            user=request.user,
            changes=changes,
            via=Interface.ADMIN,
            editable=lambda current: self._editable(request, current),
            request=request,
        )

    # -- deleting: only in the states the project names ---------------------------------

    def has_delete_permission(self, request: HttpRequest, obj: Model | None = None) -> bool:
        if not self.deletable_states:
            return False
        if not super().has_delete_permission(request, obj):  # type: ignore[misc]
            return False
        return obj is None or self._state(obj) in self.deletable_states

    def delete_model(self, request: HttpRequest, obj: Model) -> None:
        with transaction.atomic():
            self._lock_deletable(request, [obj.pk])
            super().delete_model(request, obj)  # type: ignore[misc]

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Any]) -> None:
        with transaction.atomic():
            pks = [obj.pk for obj in self._lock_deletable(request, queryset.values("pk"))]
            super().delete_queryset(  # type: ignore[misc]
                request, self.model._default_manager.filter(pk__in=pks)
            )

    def _lock_deletable(self, request: HttpRequest, pks: Any) -> list[Model]:
        """The objects, their rows locked; refused unless each is in a deletable state now
        (an operation may have run since the confirmation page was shown)."""
        objects = visible_locked(self._resource, request.user, pks, request=request)
        if any(self._state(obj) not in self.deletable_states for obj in objects):
            raise PermissionDenied
        return objects

    def render_change_form(
        self,
        request: HttpRequest,
        context: dict[str, Any],
        add: bool = False,
        change: bool = False,
        form_url: str = "",
        obj: Model | None = None,
    ) -> HttpResponse:
        inlines = context.get("inline_admin_formsets")
        if obj is not None and change and not inlines and not self._editable(request, obj):
            # Nothing to save in this state: no save buttons (the operations remain).
            context.update(
                show_save=False, show_save_and_continue=False, show_save_and_add_another=False
            )
        return super().render_change_form(  # type: ignore[misc, no-any-return]
            request, context, add, change, form_url, obj
        )

    # -- add page: the model's create operation ----------------------------------------

    def _create_operation(self) -> Operation | None:
        return get_catalog().create_for(self.model)

    def has_add_permission(self, request: HttpRequest) -> bool:
        operation = self._create_operation()
        if operation is None:
            return bool(super().has_add_permission(request))  # type: ignore[misc]
        return operation.permits(request.user)

    def add_view(
        self, request: HttpRequest, form_url: str = "", extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        operation = self._create_operation()
        if operation is None:
            return super().add_view(request, form_url, extra_context)  # type: ignore[misc, no-any-return]
        try:
            may_create(operation, request.user)
        except Problem:
            # The core refuses; the admin says it as it does for every model's add page
            # the user may not use (403), so this one cannot be told apart.
            raise PermissionDenied from None
        constraints = create_constraints(operation, request.user) or {}
        form_class = operation_form_class(operation.input_serializer, constraints, versioned=False)
        form = form_class(request.POST if request.method == "POST" else None)
        if request.method == "POST":
            arguments = posted_arguments(request.POST, form_class)
            try:
                outcome = perform_create(
                    operation=operation,
                    user=request.user,
                    arguments=arguments,
                    via=Interface.ADMIN,
                    represent=admin_represent,
                    request=request,
                )
            except Problem as problem:
                show_problem(form, problem)
            else:
                obj = reads.find(self._resource, request.user, outcome.body["id"], request=request)
                self.message_user(  # type: ignore[attr-defined]
                    request, f"{operation.title}: done. {obj} was created.", messages.SUCCESS
                )
                return HttpResponseRedirect(self._url("change", obj.pk))
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "operation": operation,
            "description": operator_description(operation),
            "form": form,
            "adminform": admin_form(form),
            "title": operation.title,
            "change_url": self._url("changelist"),
        }
        return TemplateResponse(
            request,
            self.operation_form_template,
            context,
            status=400 if request.method == "POST" else 200,
        )

    # -- one operation on one object -----------------------------------------------

    def operation_view(self, request: HttpRequest, object_id: str, name: str) -> HttpResponse:
        obj = self.get_object(request, object_id)  # type: ignore[attr-defined]
        if obj is None or not self.has_view_or_change_permission(request, obj):  # type: ignore[attr-defined]
            raise Http404("No such object.")
        operation = self._operation(request, name)
        change_url = self._url("change", obj.pk)
        result = evaluate(operation, obj, request.user)
        if result is None:
            raise Http404("No such operation.")
        constraints = result.constraints if isinstance(result, Available) else {}
        form_class = operation_form_class(operation.input_serializer, constraints)

        if request.method == "POST":
            form = form_class(request.POST)
            arguments = posted_arguments(request.POST, form_class)
            # The version the form was rendered for travels as expectedVersion: the
            # execution path refuses the run if the object changed meanwhile.
            try:
                if operation.confirmation_required and not confirmed(request):
                    # The second step (affordances.admin.confirmations): nothing runs yet.
                    preview = preview_in_admin(request, operation, obj, arguments)
                    return confirmation_page(
                        self, request, obj, operation, arguments, preview, change_url
                    )
                obj = run_in_admin(request, operation, obj, arguments)
            except Problem as problem:
                if problem.code is ProblemCode.VALIDATION_ERROR:
                    show_problem(form, problem)
                    return self._render_operation_form(request, obj, operation, form, status=400)
                self._message_refusal(request, operation, obj, problem)
                return HttpResponseRedirect(change_url)
            state = operation.facts.field.get_state(obj)
            self.message_user(  # type: ignore[attr-defined]
                request,
                f"{operation.title}: done. The {self.model._meta.verbose_name} is now {state} "
                f"(version {self._version(obj)}).",
                messages.SUCCESS,
            )
            return HttpResponseRedirect(change_url)

        if isinstance(result, Unavailable):
            self._message_refusal(
                request,
                operation,
                obj,
                Problem.not_available(operation=operation.name, reason=result.reason),
            )
            return HttpResponseRedirect(change_url)
        form = form_class(initial={"expectedVersion": self._version(obj)})
        return self._render_operation_form(request, obj, operation, form)

    def _render_operation_form(
        self, request: HttpRequest, obj: Model, operation: Operation, form: Any, status: int = 200
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "original": obj,
            "operation": operation,
            "description": operator_description(operation),
            "form": form,
            "adminform": admin_form(form),
            "title": f"{operation.title}: {obj}",
            "change_url": self._url("change", obj.pk),
            # The version this form would submit (a re-rendered form keeps the posted one).
            **notice_context(self, request, obj, _field_value(form, "expectedVersion"), form=True),
        }
        return TemplateResponse(request, self.operation_form_template, context, status=status)

    def _message_refusal(
        self, request: HttpRequest, operation: Operation, obj: Model, problem: Problem
    ) -> None:
        if problem.code is ProblemCode.NOT_FOUND:
            raise Http404("No such object.")
        visible = reads.visible(self._resource, request.user, request=request)
        fresh = visible.filter(pk=obj.pk).first()
        state = operation.facts.field.get_state(fresh) if fresh is not None else ""
        if problem.code is ProblemCode.STALE_VERSION:
            text = (
                f"This {self.model._meta.verbose_name} changed since you opened it; nothing was "
                f"done. It is now {state} (version {self._version(fresh) if fresh else '?'}). "
                "Check it and try again."
            )
        elif problem.code is ProblemCode.OPERATION_NOT_AVAILABLE:
            text = f"{operation.title} is no longer available: {problem.reason}"
        else:
            text = f"{operation.title} failed: {problem.detail}"
        self.message_user(request, text, messages.ERROR)  # type: ignore[attr-defined]


def _form_field_names(model: type[Model]) -> list[str]:
    """The fields a ``ModelForm`` of the model would offer, in the model's order."""
    opts = model._meta
    return [
        field.name
        for field in (*opts.concrete_fields, *opts.many_to_many)
        if field.editable and not field.auto_created and not isinstance(field, AutoFieldMixin)
    ]


def _field_value(form: Any, name: str) -> Any:
    return form[name].value() if name in form.fields else None
