"""DRF's browsable API, plus a form per offered affordance on a single resource.

The forms DRF itself shows (HTML and raw data) describe what the view offers this caller
on this route (``offered_input``, as OPTIONS does): the create input on a collection
only to a caller who may create, a transition route's own input only while the
operation is available to them; nothing otherwise.

The action panel also lists the operations that do not apply now, with their reasons:
the representation's own ``unavailableAffordances``, so never one the caller may not
know about. The catalog's page reads as titles and descriptions by resource, its JSON
folded below. Form controls are labelled (:class:`LabelledFormRenderer`), and the page
is the library's copy of DRF's base (``affordances/rest/base.html``, with ``lang``).

An object's page hears when the object changes, as the admin's pages do
(``affordances.admin.live``, the same script): while it is visible it asks the object's
version every 700 ms — a GET of the object itself, as JSON without affordances, the
caller's own read — and says "This order changed since you opened it — reload" once it
differs from the version the page was rendered for, so that a person does not submit a
stale form.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from rest_framework import serializers
from rest_framework.renderers import BrowsableAPIRenderer, HTMLFormRenderer
from rest_framework.request import override_method
from rest_framework.settings import api_settings
from rest_framework.utils.field_mapping import ClassLookupDict
from rest_framework.utils.urls import remove_query_param, replace_query_param

from affordances.catalog import get_catalog
from affordances.events import POLL_MILLISECONDS
from affordances.rest.offered_inputs import narrowed_input

__all__ = ["AffordancesBrowsableAPIRenderer", "LabelledFormRenderer"]


# The templates of DRF's horizontal pack that hold one control, written with the control's
# id and a label that names it (affordances/rest/fields/): DRF's own labels have no
# ``for``, so a screen reader announces the control unnamed.
_LABELLED = frozenset(
    {"input.html", "select.html", "select_multiple.html", "textarea.html", "checkbox.html"}
)


class LabelledFormRenderer(HTMLFormRenderer):
    """DRF's form renderer whose controls are labelled (``<label for>`` and ``id``): the
    ids start with ``prefix``, one per form, as a page holds several forms with the same
    field names."""

    default_style = ClassLookupDict(
        {
            kind: (
                {**style, "template": f"affordances/rest/fields/{style['base_template']}"}
                if style.get("base_template") in _LABELLED
                else style
            )
            for kind, style in HTMLFormRenderer.default_style.mapping.items()
        }
    )

    def __init__(self, prefix: str) -> None:
        self.id_prefix = prefix


def _paragraphs(text: str) -> SafeString:
    """A description as paragraphs, its `code` spans as <code> (escaped first)."""
    blocks = [block.strip() for block in str(text).split("\n\n") if block.strip()]
    # Safe: every block is escaped before <code> and <p> are added around its pieces.
    return mark_safe(
        "".join(
            "<p>" + _CODE.sub(r"<code>\1</code>", str(escape(block))) + "</p>" for block in blocks
        )
    )


_CODE = re.compile(r"`([^`]+)`")


def _catalog(data: Any) -> list[dict[str, Any]]:
    """The catalog (``{"operations": [...]}``) for people: by resource, each operation's
    title, description and states first; the page folds the JSON below. [] elsewhere."""
    operations = data.get("operations") if isinstance(data, dict) else None
    if not isinstance(operations, list) or not all(
        isinstance(entry, dict) and "title" in entry and "name" in entry for entry in operations
    ):
        return []
    groups: dict[str, list[dict[str, Any]]] = {}
    for entry in operations:
        transition = entry.get("transition") or {}
        states = ""
        if transition.get("source") and transition.get("target"):
            states = f"{', '.join(transition['source'])} → {', '.join(transition['target'])}"
        groups.setdefault(str(entry.get("resource", "")), []).append(
            {
                "name": entry["name"],
                "title": entry["title"],
                "kind": entry.get("kind", ""),
                "method": entry.get("method", ""),
                "states": states,
                "description": _paragraphs(entry.get("description") or ""),
            }
        )
    return [{"resource": name, "operations": found} for name, found in groups.items()]


class AffordancesBrowsableAPIRenderer(BrowsableAPIRenderer):
    """Shows the affordances of a resource as forms built from their input serializers.

    The forms post to each affordance's target with the version they were rendered
    for; the execution path re-checks everything, as for any other client.
    """

    template = "affordances/api.html"
    accepted_media_type: str  # set by DRF's render(), before any form is rendered
    _forms_rendered = 0

    def render_form_for_serializer(self, serializer: Any) -> Any:
        # DRF's, with labelled controls, each form's ids its own.
        if isinstance(serializer, serializers.ListSerializer):
            return None
        if hasattr(serializer, "initial_data"):
            serializer.is_valid()
        self._forms_rendered += 1
        return LabelledFormRenderer(f"form{self._forms_rendered}-").render(
            serializer.data,
            self.accepted_media_type,
            {"style": {"template_pack": "rest_framework/horizontal"}},
        )

    def show_form_for_method(self, view: Any, method: str, request: Any, obj: Any) -> bool:
        if not super().show_form_for_method(view, method, request, obj):
            return False
        offered = getattr(view, "offered_input", None)
        if offered is None or method in ("DELETE", "OPTIONS"):
            return True
        return offered(method) is not None

    def get_rendered_html_form(self, data: Any, view: Any, method: str, request: Any) -> Any:
        offered = getattr(view, "offered_input", None)
        if offered is None or method in ("DELETE", "OPTIONS"):
            return super().get_rendered_html_form(data, view, method, request)
        with override_method(view, request, method) as overridden:
            if not super().show_form_for_method(view, method, overridden, None):
                return None
            serializer = offered(method)
            return None if serializer is None else self.render_form_for_serializer(serializer)

    def get_context(
        self, data: Any, accepted_media_type: str | None, renderer_context: Mapping[str, Any]
    ) -> dict[str, Any]:
        context = super().get_context(data, accepted_media_type, renderer_context)
        request = renderer_context.get("request")
        context["affordance_forms"] = self._affordance_forms(data, request)
        context["affordances_unavailable"] = self._unavailable(data)
        context["affordances_catalog"] = _catalog(data)
        context["affordances_live"] = self._change_notice(
            data, renderer_context, forms=bool(context["affordance_forms"])
        )
        return context

    def _change_notice(
        self, data: Any, renderer_context: Mapping[str, Any], *, forms: bool
    ) -> dict[str, Any] | None:
        """What ``affordances/rest/changed_notice.html`` needs, on an object's page (a
        successful GET of one object with a version); None elsewhere."""
        request = renderer_context.get("request")
        view = renderer_context.get("view")
        response = renderer_context.get("response")
        version = data.get("version") if isinstance(data, dict) else None
        if (
            request is None
            or request.method != "GET"
            or getattr(view, "action", None) != "retrieve"
            or getattr(response, "status_code", None) != 200
            or not isinstance(version, int)
            or isinstance(version, bool)
        ):
            return None
        page = request.get_full_path()
        # The object as JSON (the script asks for it), plain: a version needs no affordances.
        url = page
        if api_settings.URL_FORMAT_OVERRIDE:
            url = remove_query_param(url, api_settings.URL_FORMAT_OVERRIDE)
        url = replace_query_param(url, "affordances", "none")
        model = getattr(view, "model", None)
        noun = model._meta.verbose_name if model is not None else "object"
        return {
            "url": url,
            "version": version,
            "every": POLL_MILLISECONDS,
            "reload": page,
            "noun": noun,
            "form": forms,
        }

    def _unavailable(self, data: Any) -> list[dict[str, str]]:
        """The operations the representation says do not apply now, with their reasons:
        its own ``unavailableAffordances`` (only those the caller may know about), and
        none when the shape asked for has no such list (``?affordances=none``)."""
        entries = data.get("unavailableAffordances") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            return []
        catalog = get_catalog()
        shown = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("reason"), str):
                continue
            operation = catalog.lookup(entry.get("name", ""))
            if operation is None:
                continue
            shown.append(
                {
                    "name": operation.name,
                    "title": str(operation.title),
                    "reason": entry["reason"],
                    # ``payment_not_authorized`` → "payment not authorized", as the admin says it.
                    "sentence": entry["reason"].replace("_", " "),
                }
            )
        return shown

    def _affordance_forms(self, data: Any, request: Any) -> list[dict[str, Any]]:
        if not isinstance(data, dict) or not isinstance(data.get("affordances"), list):
            return []
        catalog = get_catalog()
        forms = []
        for affordance in data["affordances"]:
            operation = catalog.lookup(affordance.get("name", ""))
            if operation is None or affordance.get("target") is None:
                continue
            serializer = narrowed_input(
                operation.input_serializer,
                affordance.get("constraints") or {},
                user=getattr(request, "user", None),
                request=request,
            )
            forms.append(
                {
                    "name": operation.name,
                    "title": operation.title,
                    # POST, or PATCH for the edit (sent by DRF's ajax-form.js).
                    "method": operation.http_method,
                    "target": affordance["target"],
                    "version": affordance.get("validForVersion"),
                    "form": self.render_form_for_serializer(serializer),
                }
            )
        return forms
