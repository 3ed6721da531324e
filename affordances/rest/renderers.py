"""JSON written by orjson, HAL-FORMS (mamund's ``application/prs.hal-forms+json``) built
from the same evaluation, and plain HAL (``application/hal+json``) beside it.

The HAL-FORMS renderer rewrites what the DRF serializer produced: ``affordances`` become
``_templates`` (one per available operation, keyed by operation name), properties come
from the input serializer narrowed by the constraints (:mod:`affordances.inputs`), and
the version travels as a hidden ``expectedVersion``. Unavailable operations get no
template; operations the caller may not know get nothing at all.

Plain HAL has links and embedded resources but no forms: the same document without
``_templates``, the affordance lists kept as the properties they are in JSON (a HAL
client still learns what applies, and where to send it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import cached_property
from typing import Any

import orjson
from django.utils import timezone, translation
from rest_framework import renderers

from affordances import routes
from affordances.caches import Cache
from affordances.catalog import get_catalog
from affordances.encoding import fast_json
from affordances.entries import AFFORDANCE_LISTS, create_constraints
from affordances.evaluation import Constraints, spelling
from affordances.inputs import InputField, html_moment, input_fields
from affordances.names import HAL_FORMS_MEDIA_TYPE
from affordances.operations import Operation
from affordances.resources import Resource

__all__ = [
    "HAL_FORMS_MEDIA_TYPE",
    "HAL_MEDIA_TYPE",
    "HalFormsRenderer",
    "HalRenderer",
    "JSONRenderer",
    "hal_document",
]

HAL_MEDIA_TYPE = "application/hal+json"


def _number(value: Decimal | None) -> int | float | None:
    if value is None:
        return None
    return int(value) if value == value.to_integral_value() else float(value)


def hal_property(item: InputField) -> dict[str, Any]:
    """One HAL-FORMS property from one (narrowed) input field: the choices it offers as
    ``options.inline`` (``const``: one), its inclusive bounds as ``min``/``max`` on its
    ``step`` (a date's as ``YYYY-MM-DD``, a date-time's as its ``datetime-local`` value
    in the current time zone), its lengths, and its pattern (the input's own and the
    constraint's, one ``regex``); a decimal also its plain decimal strings as ``regex``."""
    prop: dict[str, Any] = {"name": item.name, "prompt": item.label}
    if item.required:
        prop["required"] = True
    if item.kind == "choice":
        prop["options"] = {
            "inline": [value for value, _ in item.choices],
            "minItems": 1 if item.required else 0,
            "maxItems": 1,
        }
    elif item.kind == "boolean":
        prop["options"] = {"inline": ["true", "false"], "minItems": 0, "maxItems": 1}
    elif item.kind in ("decimal", "integer"):
        prop["type"] = "number"
        for key, value in (("min", item.minimum), ("max", item.maximum)):
            if value is not None:
                prop[key] = _number(value)
        if item.kind == "decimal" and item.step is not None:
            prop["step"] = _number(item.step)
        if item.kind == "decimal" and item.pattern:
            # The decimal rule's other half: the plain decimal strings the input takes.
            prop["regex"] = item.pattern
    elif item.kind in ("date", "datetime"):
        prop["type"] = "date" if item.kind == "date" else "datetime-local"
        for key, bound in (("min", item.earliest), ("max", item.latest)):
            shown = html_moment(bound, item.kind)
            if shown is not None:
                prop[key] = shown
    else:
        prop["type"] = item.kind  # text | textarea
        if item.pattern:
            prop["regex"] = item.pattern
        if item.min_length is not None:
            prop["minLength"] = item.min_length
        if item.max_length is not None:
            prop["maxLength"] = item.max_length
    if item.default is not None:
        prop["value"] = str(item.default)
    return prop


def _template(
    operation: Operation, target: str | None, properties: list[dict[str, Any]]
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "title": operation.title,
        "method": operation.http_method,
        "contentType": "application/json",
        "properties": properties,
    }
    if target is not None:
        template["target"] = target
    return template


def _properties(operation: Operation, constraints: dict[str, Any]) -> list[dict[str, Any]]:
    return [hal_property(item) for item in input_fields(operation.input_serializer, constraints)]


def _version_property(version: Any) -> dict[str, Any]:
    """The hidden field a submission carries the version it expects in."""
    return {"name": "expectedVersion", "type": "hidden", "readOnly": True, "value": str(version)}


def _absolute(request: Any, path: str | None) -> str | None:
    if path is None:
        return None
    return request.build_absolute_uri(path) if request is not None else path


_NO_CONSTRAINTS: dict[str, Any] = {}  # read only


def _spelled(constraints: dict[str, Any]) -> bytes | str:
    """What tells constraints apart: the spelling a request keeps them by, or their own."""
    key = constraints.key if isinstance(constraints, Constraints) else None
    return spelling(constraints) if key is None else key


def _same(kept: dict[str, Any], constraints: dict[str, Any]) -> bool:
    return kept is constraints or kept == constraints


# Each operation's form without its version and target, per constraint (by its exact
# spelling: repr tells 1 and "1", 1.0 and 1, true and 1 apart) and language, for the
# process: built from affordances.inputs' fields, which are fixed as the catalog is, and
# read-only (a document that hands its forms out copies them). Forgotten with the
# catalog (affordances.registry); bound: 1,024 forms.
_FormKey = tuple[Operation, str, str | None]
_FORMS: Cache[_FormKey, dict[str, Any]] = Cache(
    "hal-forms forms", keys="operation, constraints' repr and time zone, language", max_entries=1024
)


class _Form:
    """A form the rows of a document share: the same operation, constraints and version,
    without its target. ``constraints`` is kept with it: a row shares it only with equal
    constraints (a spelling alone does not tell an enum member from its value)."""

    __slots__ = ("constraints", "form", "name", "opened")

    def __init__(self, constraints: dict[str, Any], form: dict[str, Any], name: str) -> None:
        self.constraints = constraints
        self.form = form
        self.name = name
        # Written once when a renderer writes the document: the form's JSON open before
        # its target (b"": orjson refused it).
        self.opened: bytes | None = None

    def with_target(self, target: Any, encode: Callable[[Any], bytes | None] | None) -> Any:
        """The form with ``target``. Given the renderer's ``encode``, written: its JSON,
        written once per document, around the row's target (an orjson fragment, which
        the page's encoding copies as it is); else, or when orjson refuses either, a
        copy of the form."""
        if encode is not None and self.opened is None:
            encoded = encode(self.form)
            self.opened = encoded[:-1] if encoded else b""
        if self.opened and type(target) is str:
            try:
                quoted = orjson.dumps(target)
            except orjson.JSONEncodeError:  # a lone surrogate: the page's own way
                pass
            else:
                separator = b',"target":' if len(self.opened) > 1 else b'"target":'
                return orjson.Fragment(self.opened + separator + quoted + b"}")
        template = dict(self.form)
        if target is not None:
            template["target"] = target
        return template


class _Document:
    """One response turned into HAL: what its items share is worked out once, not per item
    — the collection's link, and each form for the same operation and constraints (the
    rows of a page mostly share them; only the version and the target differ)."""

    def __init__(
        self,
        resource: Resource | None,
        request: Any,
        *,
        forms: bool,
        share: bool = False,
        encode: Callable[[Any], bytes | None] | None = None,
    ) -> None:
        self.resource = resource
        self.request = request
        self.forms = forms
        # The renderer's encoder: a form the rows share is written once, and each row's
        # is an orjson fragment of it around the row's target (no form object per row;
        # the page's encoding copies the fragments as they are).
        self.encode = encode
        # Rows' forms may share their property objects only when nobody but an encoder
        # reads the document (the renderer): fewer objects, less for the GC to walk.
        self.share = share
        self.catalog = get_catalog()
        self._forms: dict[_FormKey, dict[str, Any]] = {}
        # (operation name, its constraints' spelling, version) → the form rows share.
        self._versioned: dict[tuple[str, bytes | str, Any], _Form] = {}

    @cached_property
    def collection_url(self) -> str | None:
        if self.resource is None:
            return None
        return _absolute(self.request, routes.list_path(self.resource))

    @cached_property
    def _collection_link(self) -> dict[str, Any]:
        return {"href": self.collection_url}

    def template(
        self, operation: Operation, target: str | None, constraints: dict[str, Any], version: Any
    ) -> dict[str, Any]:
        if self.share:
            template = dict(self._shared(operation, constraints, version).form)
        else:  # copies per form: whoever gets the document may change it
            form = self._form(operation, constraints)
            properties = copy.deepcopy(form["properties"])
            if version is not None:
                properties.append(_version_property(version))
            template = {**form, "properties": properties}
        if target is not None:
            template["target"] = target
        return template

    def _shared(self, operation: Operation, constraints: dict[str, Any], version: Any) -> _Form:
        """The form of the rows with the same constraints (a request's lists share them)
        and version: the whole form but its target."""
        by_spelling = (operation.name, _spelled(constraints), version)
        known = self._versioned.get(by_spelling)
        if known is None or not _same(known.constraints, constraints):
            form = self._form(operation, constraints)
            properties = list(form["properties"])
            if version is not None:
                properties.append(_version_property(version))
            known = _Form(constraints, {**form, "properties": properties}, operation.name)
            self._versioned[by_spelling] = known
        return known

    def _form(self, operation: Operation, constraints: dict[str, Any]) -> dict[str, Any]:
        """The form without its version and target, shared by every row with the same
        constraints (rows of a page mostly have none), kept for the process
        (:data:`_FORMS`)."""
        # A date-time bound is shown in the current time zone: constrained forms by zone.
        spelled = f"{constraints!r} {timezone.get_current_timezone_name()}" if constraints else ""
        key = (operation, spelled, translation.get_language())
        form = self._forms.get(key)
        if form is None:
            form = _FORMS.get(
                key, lambda: _template(operation, None, _properties(operation, constraints))
            )
            self._forms[key] = form
        return form

    def item(self, data: dict[str, Any]) -> dict[str, Any]:
        document = dict(data)
        if self.forms:
            for key in AFFORDANCE_LISTS:
                document.pop(key, None)
        links: dict[str, Any] = {"self": {"href": data["url"]}} if data.get("url") else {}
        if self.collection_url:
            links["collection"] = (
                self._collection_link if self.share else {"href": self.collection_url}
            )
        document["_links"] = links
        if not self.forms:
            return document
        templates: dict[str, Any] = {}
        versioned = self._versioned
        for affordance in data.get("affordances", ()):
            constraints = affordance.get("constraints") or _NO_CONSTRAINTS
            version = affordance.get("validForVersion")
            target = affordance.get("target")
            if self.share:
                # The form of an earlier row, found without the catalog.
                known = versioned.get((affordance["name"], _spelled(constraints), version))
                if known is None or not _same(known.constraints, constraints):
                    operation = self.catalog.lookup(affordance["name"])
                    if operation is None:
                        continue
                    known = self._shared(operation, constraints, version)
                templates[known.name] = known.with_target(target, self.encode)
                continue
            operation = self.catalog.lookup(affordance["name"])
            if operation is not None:
                templates[operation.name] = self.template(operation, target, constraints, version)
        document["_templates"] = templates
        return document

    def _embedded(self, rows: list[dict[str, Any]]) -> list[Any]:
        return [self.item(row) for row in rows]

    def collection(self, data: dict[str, Any]) -> dict[str, Any]:
        request, resource = self.request, self.resource
        links: dict[str, Any] = {}
        if request is not None:
            links["self"] = {"href": request.build_absolute_uri()}
        for key, rel in (("next", "next"), ("previous", "prev")):
            if data.get(key):
                links[rel] = {"href": data[key]}
        embedded_name = resource.plural if resource is not None else "items"
        document: dict[str, Any] = {
            "count": data.get("count"),
            "_links": links,
            "_embedded": {embedded_name: self._embedded(data.get("results", []))},
        }
        if "count" not in data:
            del document["count"]  # a cursor's page: DRF counts nothing, nor does HAL
        if not self.forms:
            return document
        document["_templates"] = {}
        create = self.catalog.create_for(resource.model) if resource is not None else None
        user = getattr(request, "user", None)
        if create is not None and user is not None:
            constraints = create_constraints(create, user)
            if constraints is not None:
                document["_templates"][create.name] = self.template(
                    create, self.collection_url, constraints, None
                )
        return document


def hal_document(data: Any, *, request: Any = None, view: Any = None, forms: bool = True) -> Any:
    """The HAL-FORMS form of a DRF response body (item, paginated collection or links);
    with ``forms=False``, plain HAL (no ``_templates``). Its objects are its own."""
    return _hal(data, request=request, view=view, forms=forms, share=False)


def _hal(
    data: Any,
    *,
    request: Any,
    view: Any,
    forms: bool,
    share: bool,
    encode: Callable[[Any], bytes | None] | None = None,
) -> Any:
    if not isinstance(data, dict):
        return data
    model = getattr(view, "model", None)
    resource = get_catalog().resource_for(model) if model is not None else None

    def document() -> _Document:
        return _Document(resource, request, forms=forms, share=share, encode=encode)

    if data.get("preview") is True and isinstance(data.get("representation"), dict):
        # A preview (docs/protocol.md#previews): the would-be object embedded, without
        # forms — they would be for a version that does not exist.
        representation = data["representation"]
        plain = _Document(resource, request, forms=False, share=False, encode=None)
        preview = {key: value for key, value in data.items() if key != "representation"}
        href = representation.get("url")
        preview["_links"] = {"self": {"href": href}} if href else {}
        preview["_embedded"] = {"representation": plain.item(representation)}
        return {**preview, "_templates": {}} if forms else preview
    if isinstance(data.get("results"), list):
        return document().collection(data)
    if "_links" in data:
        return {**data, "_templates": data.get("_templates", {})} if forms else data
    return document().item(data)


class JSONRenderer(renderers.JSONRenderer):
    """DRF's ``JSONRenderer``, several times faster on large bodies: compact JSON is
    written by orjson (:func:`affordances.encoding.fast_json`: the same values, non-ASCII
    text as UTF-8). Indented output (``; indent=``), ``COMPACT_JSON = False`` and
    whatever orjson refuses are DRF's own rendering, with its settings."""

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        if self.compact and not self.get_indent(accepted_media_type or "", renderer_context or {}):
            encoded = fast_json(data)
            if encoded is not None:
                return encoded
        return super().render(data, accepted_media_type, renderer_context)


class _HalDocumentRenderer(JSONRenderer):
    forms: bool

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        context = renderer_context or {}
        response = context.get("response")
        if response is not None and response.status_code >= 400:
            # Problem documents stay problem documents.
            return super().render(data, accepted_media_type, renderer_context)
        request, view = context.get("request"), context.get("view")
        if self.compact and not self.get_indent(accepted_media_type or "", context):
            # Written by orjson, the rows' forms as fragments; what orjson refuses, the
            # standard way below.
            written = _hal(
                data, request=request, view=view, forms=self.forms, share=True, encode=fast_json
            )
            encoded = fast_json(written)
            if encoded is not None:
                return encoded
        # Encoded at once and dropped: the forms may share their objects.
        document = _hal(data, request=request, view=view, forms=self.forms, share=True)
        return super().render(document, accepted_media_type, renderer_context)


class HalFormsRenderer(_HalDocumentRenderer):
    """``application/prs.hal-forms+json``: links, embedded resources and a form for each
    available operation."""

    media_type = HAL_FORMS_MEDIA_TYPE
    format = "hal-forms"
    forms = True


class HalRenderer(_HalDocumentRenderer):
    """``application/hal+json``: links and embedded resources, no forms."""

    media_type = HAL_MEDIA_TYPE
    format = "hal"
    forms = False
