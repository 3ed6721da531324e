"""One constraint vocabulary, one decimal rule (issue 35 item 2).

Every keyword a constraint may use (``affordances.constraints.CONSTRAINT_KEYWORDS``) is
shown by every face and enforced by execution; a keyword some face cannot show is
refused when the catalog is built (``affordances.E026``) and, at request time, makes the
operation unavailable (``misconfigured``) rather than let a form offer what execution
refuses.

``tests/generic/parcels.py`` declares one constraint that uses every keyword, on two
operations with the same input: ``create_parcel`` (a collection operation, whose
constraints OpenAPI states) and ``dispatch_parcel`` (a transition, whose affordance
carries them). Each face is read as a client reads it — the affordance entry's
``constraints``, HAL-FORMS template properties, the OpenAPI request body, the admin's
form, the OPTIONS description and the browsable API's serializer — and turned into the
values it accepts among the same probes; every face must accept exactly what execution
accepts, over REST and over MCP ``tools/call``.

The decimal rule: a JSON number, or a plain ASCII decimal string. Every face that
describes a decimal input publishes the same ``anyOf`` of both, and MCP's pre-check and
REST accept the same values.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
import re
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.test import Client, override_settings
from jsonschema import Draft202012Validator
from rest_framework import serializers
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.checks import _check_constraints
from affordances.constraints import (
    CONSTRAINT_KEYWORDS,
    REFUSED_KEYWORDS,
    ConstraintNotShown,
    ConstraintWidens,
    assert_narrows,
    conjoined_pattern,
)
from affordances.evaluation import Available, Unavailable, evaluate
from affordances.fieldschema import _NOT_BLANK
from affordances.rest.offered_inputs import narrowed_input
from tests.generic import parcels_api
from tests.generic.parcels import CONSTRAINTS, Parcel, ParcelInput
from tests.hal_forms_spec import hal_forms_violations
from tests.mcp_wire import Wire
from tests.regex_steps import worst_growth

HAL_FORMS = "application/prs.hal-forms+json"
OPENAPI = "application/vnd.oai.openapi+json"
COLLECTION = "/api/parcels/"

# Values to try on each input, and those the constraint leaves (with the input's own rules).
PROBES: dict[str, list[Any]] = {
    "service": ["economy", "standard", "express", "overnight"],
    "carrier": ["ACME", "UPS"],
    "weight": [Decimal("0.49"), Decimal("0.50"), Decimal("29.99"), Decimal("30.00")],
    "pieces": [1, 2, 10, 11],
    "reference": ["REF-", "REF-12345678", "REF-123456789", "REF", "XREF-1", "ref-1"],
}
ALLOWED: dict[str, set[Any]] = {
    "service": {"standard", "express"},
    "carrier": {"ACME"},
    "weight": {Decimal("0.50"), Decimal("29.99")},
    "pieces": {2, 10},
    "reference": {"REF-", "REF-12345678"},
}
VALID: dict[str, Any] = {
    "service": "standard",
    "carrier": "ACME",
    "weight": "1.00",
    "pieces": 2,
    "reference": "REF-1",
}
Accepted = dict[str, set[Any]]


def test_the_parcels_constraint_uses_every_keyword_of_the_vocabulary():
    used = {key for narrowed in CONSTRAINTS["properties"].values() for key in narrowed}
    # The date bounds on every face: tests/test_date_constraints.py (a booking's window).
    assert used | {"formatMinimum", "formatMaximum"} == set(CONSTRAINT_KEYWORDS)
    assert CONSTRAINTS["required"]


# --- the parcel project ----------------------------------------------------------------


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": {"generic.Parcel": parcels_api.REGISTRATION},
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(parcels_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.parcels_api"):
            yield


@pytest.fixture
def root(project: None) -> Any:
    return get_user_model().objects.create_superuser("root", password="x")


@pytest.fixture
def api(root: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(root)
    return client


def _packed() -> Parcel:
    return Parcel.objects.create()


def _probes(name: str) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Each probe of ``name`` in otherwise valid arguments (decimals as strings here;
    :func:`_as_numbers` sends them as JSON numbers)."""
    for probe in PROBES[name]:
        sent = str(probe) if isinstance(probe, Decimal) else probe
        yield probe, {**VALID, name: sent}


def _as_numbers(arguments: dict[str, Any]) -> dict[str, Any]:
    return {**arguments, "weight": float(arguments["weight"])}


def _accepted_by(run: Callable[[dict[str, Any]], bool]) -> Accepted:
    return {
        name: {probe for probe, arguments in _probes(name) if run(arguments)} for name in PROBES
    }


# --- execution, over REST and MCP --------------------------------------------------------


def _rest_runs(api: APIClient, operation: str) -> Callable[[dict[str, Any]], bool]:
    def run(arguments: dict[str, Any]) -> bool:
        if operation == "create_parcel":
            response = api.post(COLLECTION, arguments, format="json")
            return response.status_code == 201
        target = f"{COLLECTION}{_packed().pk}/dispatch/"
        response = api.post(target, arguments, format="json")
        assert response.status_code in (200, 400), response.content
        return response.status_code == 200

    return run


def _mcp_runs(root: Any, operation: str) -> Callable[[dict[str, Any]], bool]:
    wire = Wire(str(AccessToken.for_user(root)))

    def run(arguments: dict[str, Any]) -> bool:
        if operation == "dispatch_parcel":
            arguments = {"parcelId": _packed().pk, **arguments}
        result = wire.tool(operation, arguments)
        if result["isError"]:
            assert result["structuredContent"]["code"] == "validation_error", result
        return not result["isError"]

    return run


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_execution_accepts_exactly_the_narrowing_over_rest(api, operation):
    assert _accepted_by(_rest_runs(api, operation)) == ALLOWED
    numbers = _rest_runs(api, operation)
    assert [numbers(_as_numbers(args)) for _, args in _probes("weight")] == [
        False,
        True,
        True,
        False,
    ]


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_execution_accepts_exactly_the_narrowing_over_mcp_tools_call(root, operation):
    runs = _mcp_runs(root, operation)
    assert _accepted_by(runs) == ALLOWED
    assert [runs(_as_numbers(args)) for _, args in _probes("weight")] == [
        False,
        True,
        True,
        False,
    ]


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_the_required_input_is_required_by_execution(api, root, operation):
    without = {key: value for key, value in VALID.items() if key != "reference"}
    assert not _rest_runs(api, operation)(without)
    assert not _mcp_runs(root, operation)(without)
    assert _rest_runs(api, operation)(VALID)


# --- the faces, read as their clients read them --------------------------------------


def _in_step(value: Decimal, step: Any) -> bool:
    return step is None or value % Decimal(str(step)) == 0


def _accepted_by_hal_forms(properties: list[dict[str, Any]]) -> tuple[Accepted, set[str]]:
    by_name = {prop["name"]: prop for prop in properties}
    accepted: Accepted = {}
    for name, probes in PROBES.items():
        prop = by_name[name]
        found = set()
        for probe in probes:
            if "options" in prop:
                ok = str(probe) in prop["options"]["inline"]
            elif prop.get("type") == "number":
                value = Decimal(str(probe))
                ok = (
                    Decimal(str(prop.get("min", value))) <= value
                    and value <= Decimal(str(prop.get("max", value)))
                    and _in_step(value, prop.get("step"))
                )
            else:
                ok = (
                    prop.get("minLength", 0) <= len(probe) <= prop.get("maxLength", len(probe))
                    and re.search(prop.get("regex", ""), probe) is not None
                )
            if ok:
                found.add(probe)
        accepted[name] = found
    return accepted, {prop["name"] for prop in properties if prop.get("required")}


def _hal_template(api: APIClient, operation: str) -> dict[str, Any]:
    if operation == "create_parcel":
        document = api.get(COLLECTION, HTTP_ACCEPT=HAL_FORMS).json()
    else:
        document = api.get(f"{COLLECTION}{_packed().pk}/", HTTP_ACCEPT=HAL_FORMS).json()
    assert hal_forms_violations(document) == []
    return document["_templates"][operation]


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_hal_forms_template_properties_show_the_narrowing(api, operation):
    template = _hal_template(api, operation)
    properties = {p["name"]: p for p in template["properties"] if p["name"] in PROBES}

    assert properties["service"]["options"]["inline"] == ["standard", "express"]
    assert properties["carrier"]["options"] == {"inline": ["ACME"], "minItems": 1, "maxItems": 1}
    weight = properties["weight"]
    # exclusiveMaximum 30 on a step of 0.01: at most 29.99, exactly.
    assert (weight["min"], weight["max"], weight["step"]) == (0.5, 29.99, 0.01)
    assert (properties["pieces"]["min"], properties["pieces"]["max"]) == (2, 10)
    reference = properties["reference"]
    assert (reference["minLength"], reference["maxLength"], reference["required"]) == (4, 12, True)

    accepted, required = _accepted_by_hal_forms(template["properties"])
    assert accepted == ALLOWED
    assert required == set(PROBES)


def _exact(schema: Any) -> Any:
    return json.loads(json.dumps(schema), parse_float=Decimal)


def _json_schema_2020(node: Any) -> Any:
    """OpenAPI 3.0's dialect read as JSON Schema 2020-12 (written here, not imported)."""
    if isinstance(node, list):
        return [_json_schema_2020(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: _json_schema_2020(value) for key, value in node.items()}
    for exclusive, bound in (("exclusiveMaximum", "maximum"), ("exclusiveMinimum", "minimum")):
        if out.get(exclusive) is True:
            out[exclusive] = out.pop(bound)
        elif out.get(exclusive) is False:
            del out[exclusive]
    if out.pop("nullable", False):
        out = {"anyOf": [out, {"type": "null"}]}
    return out


def _request_schema(document: dict[str, Any]) -> dict[str, Any]:
    body = document["paths"][COLLECTION]["post"]["requestBody"]["content"]["application/json"]
    ref = body["schema"]["$ref"].rsplit("/", 1)[-1]
    return document["components"]["schemas"][ref]


def test_openapi_states_the_narrowing_of_the_collection_operation(api):
    document = json.loads(api.get("/api/schema/", HTTP_ACCEPT=OPENAPI).content)
    schema = _request_schema(document)
    properties = schema["properties"]

    assert properties["service"]["enum"] == ["standard", "express"]
    assert properties["carrier"]["enum"] == ["ACME"]
    (number,) = [b for b in properties["weight"]["anyOf"] if b["type"] == "number"]
    assert (number["minimum"], number["maximum"], number["exclusiveMaximum"]) == (0.5, 30, True)
    assert properties["pieces"]["exclusiveMinimum"] is True
    assert (properties["pieces"]["minimum"], properties["pieces"]["maximum"]) == (1, 10)
    assert properties["reference"]["allOf"] == [{"pattern": "^REF-"}]
    assert "reference" in schema["required"]

    validator = Draft202012Validator(_exact(_json_schema_2020(schema)))
    accepted = {
        name: {
            probe
            for probe, arguments in _probes(name)
            # Decimals as JSON numbers: the string branch states the spelling, not bounds.
            if validator.is_valid(_exact(_as_numbers(arguments)))
        }
        for name in PROBES
    }
    assert accepted == ALLOWED
    assert not validator.is_valid(_exact(_as_numbers({**VALID, "reference": None})))


def _accepted_by_django_form(form: Any) -> tuple[Accepted, set[str]]:
    accepted: Accepted = {}
    for name, probes in PROBES.items():
        field = form.fields[name]
        found = set()
        for probe in probes:
            try:
                field.clean(str(probe))
            except DjangoValidationError:
                continue
            found.add(probe)
        accepted[name] = found
    required = {name for name, field in form.fields.items() if field.required}
    return accepted, required


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_the_admin_operation_form_shows_the_narrowing(root, operation):
    client = Client()
    client.force_login(root)
    if operation == "create_parcel":
        url = "/parcels-admin/generic/parcel/add/"
    else:
        url = f"/parcels-admin/generic/parcel/{_packed().pk}/operation/{operation}/"
    response = client.get(url)
    assert response.status_code == 200
    form = response.context["form"]

    accepted, required = _accepted_by_django_form(form)
    assert accepted == ALLOWED
    assert required & set(PROBES) == set(PROBES)
    html = response.content.decode()
    assert 'max="29.99"' in html and 'min="0.50"' in html and 'step="0.01"' in html
    assert 'maxlength="12"' in html and 'minlength="4"' in html


def _accepted_by_options(fields: dict[str, Any]) -> tuple[Accepted, set[str]]:
    accepted: Accepted = {}
    for name, probes in PROBES.items():
        info = fields[name]
        found = set()
        for probe in probes:
            if "choices" in info:
                ok = str(probe) in [choice["value"] for choice in info["choices"]]
            elif info["type"] in ("decimal", "integer"):
                value = Decimal(str(probe))
                low, high = info.get("min_value"), info.get("max_value")
                ok = (low is None or Decimal(str(low)) <= value) and (
                    high is None or value <= Decimal(str(high))
                )
            else:
                ok = (
                    info.get("min_length", 0) <= len(probe) <= info.get("max_length", len(probe))
                    and re.search(info.get("pattern", ""), probe) is not None
                )
            if ok:
                found.add(probe)
        accepted[name] = found
    return accepted, {name for name, info in fields.items() if info.get("required")}


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_options_describes_the_narrowing(api, operation):
    url = COLLECTION if operation == "create_parcel" else f"{COLLECTION}{_packed().pk}/dispatch/"
    fields = api.options(url).json()["actions"]["POST"]

    assert (fields["weight"]["min_value"], fields["weight"]["max_value"]) == (0.5, 29.99)
    assert fields["reference"]["pattern"] == "^REF-"
    accepted, required = _accepted_by_options(fields)
    assert accepted == ALLOWED
    assert required == set(PROBES)


def _accepted_by_serializer(serializer: serializers.Serializer[Any]) -> tuple[Accepted, set[str]]:
    accepted: Accepted = {}
    for name, probes in PROBES.items():
        field = serializer.fields[name]
        found = set()
        for probe in probes:
            try:
                field.run_validation(str(probe) if isinstance(probe, Decimal) else probe)
            except serializers.ValidationError:
                continue
            found.add(probe)
        accepted[name] = found
    return accepted, {name for name, field in serializer.fields.items() if field.required}


def test_the_affordance_entry_carries_the_constraint_the_browsable_form_narrows_by(api):
    body = api.get(f"{COLLECTION}{_packed().pk}/").json()
    (entry,) = body["affordances"]

    assert entry["name"] == "dispatch_parcel"
    assert entry["constraints"] == json.loads(json.dumps(CONSTRAINTS, default=float))
    # The browsable API's form for that affordance (AffordancesBrowsableAPIRenderer).
    # ParcelInput has no related field: no caller's visibility to narrow it by.
    serializer = narrowed_input(ParcelInput, entry["constraints"], user=None, request=None)
    accepted, required = _accepted_by_serializer(serializer)
    assert accepted == ALLOWED
    assert required == set(PROBES)


def test_the_browsable_api_shows_a_form_per_affordance(api):
    parcel = _packed()
    response = api.get(f"{COLLECTION}{parcel.pk}/", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    (form,) = response.context["affordance_forms"]
    assert form["name"] == "dispatch_parcel"
    html = str(form["form"])
    assert 'value="standard"' in html and 'value="economy"' not in html
    assert 'value="ACME"' in html


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_the_inputs_pattern_and_the_constraints_are_one_linear_hal_forms_regex(api, operation):
    published = {
        prop["name"]: prop["regex"]
        for prop in _hal_template(api, operation)["properties"]
        if "regex" in prop
    }
    # The field's own text rule (not blank, no NUL) and the constraint's, both.
    assert published["reference"] == conjoined_pattern([_NOT_BLANK, "^REF-"])
    assert re.search(published["reference"], "REF-1")
    assert not re.search(published["reference"], "REF-\x00")
    assert not re.search(published["reference"], " \t")
    assert not re.search(published["reference"], "XREF-1")
    for pattern in published.values():
        growth, shape = worst_growth(pattern)
        assert growth <= 6.0, (pattern, growth, shape)


# --- keywords some face cannot show ---------------------------------------------------

BASE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "service": {"type": "string", "enum": ["economy", "standard"]},
        "weight": {
            "anyOf": [
                {"type": "number", "multipleOf": 0.01, "minimum": 0.01},
                {"type": "string", "pattern": "^[0-9]+(?:\\.[0-9]{1,2})?$"},
            ]
        },
        "pieces": {"type": "integer", "minimum": 1, "maximum": 100},
        "ratio": {"type": "number"},
        "reference": {"type": "string", "maxLength": 20},
        "shipped": {"type": "string", "format": "date"},
    },
}


@pytest.mark.parametrize(
    "narrowed",
    [
        {"pieces": {"multipleOf": 2}},
        {"pieces": {"minItems": 1}},
        {"reference": {"maxItems": 2}},
        {"pieces": {"maxLength": 2}},
        {"reference": {"maximum": 3}},
        {"service": {"pattern": "^e"}},
        {"ratio": {"maximum": 1}},
        {"ratio": {"exclusiveMinimum": 0}},
        {"shipped": {"minLength": 10}},
        {"weight": {"pattern": "^1"}},
    ],
    ids=lambda narrowed: "-".join(f"{k}.{next(iter(v))}" for k, v in narrowed.items()),
)
def test_a_keyword_no_form_can_show_for_its_input_is_refused(narrowed):
    with pytest.raises(ConstraintNotShown):
        assert_narrows(BASE, {"properties": narrowed})


@pytest.mark.parametrize(
    "narrowed",
    [
        {"pieces": {"type": "string"}},
        {"pieces": {"maximum": 101}},
        {"pieces": {"exclusiveMaximum": 100.5}},
        {"pieces": {"minimum": "2"}},
        {"weight": {"minimum": 0}},
        {"weight": {"minimum": True}},
        {"reference": {"maxLength": 21}},
        {"reference": {"minLength": -1}},
        {"service": {"enum": ["overnight"]}},
        {"service": {"const": "overnight"}},
        {"pieces": {"enum": ["2"]}},
        {"service": {"enum": "economy"}},
    ],
    ids=str,
)
def test_what_widens_or_is_no_narrowing_is_refused(narrowed):
    with pytest.raises(ConstraintWidens) as raised:
        assert_narrows(BASE, {"properties": narrowed})
    assert not isinstance(raised.value, ConstraintNotShown)


@pytest.mark.parametrize(
    "narrowed",
    [
        {"service": {"const": "standard"}},
        {"weight": {"exclusiveMaximum": 30, "minimum": 0.5}},
        {"weight": {"const": 10}},
        {"pieces": {"exclusiveMinimum": 1, "maximum": 100}},
        {"reference": {"minLength": 4, "maxLength": 20, "pattern": "^REF-"}},
        {"shipped": {"enum": ["2030-01-02"]}},
        {"ratio": {"enum": [0.5]}},
    ],
    ids=str,
)
def test_every_keyword_of_the_vocabulary_narrows_its_kind_of_input(narrowed):
    assert_narrows(BASE, {"properties": narrowed})


def test_the_refused_keywords_say_why():
    assert set(REFUSED_KEYWORDS) == {"multipleOf", "minItems", "maxItems"}
    assert all(reason for reason in REFUSED_KEYWORDS.values())
    assert not set(REFUSED_KEYWORDS) & set(CONSTRAINT_KEYWORDS)


def _with_constraint(operation: Any, constraint: dict[str, Any]) -> Any:
    spec = dataclasses.replace(operation.spec, constraints=lambda obj, user: constraint)
    return dataclasses.replace(operation, spec=spec)


@pytest.mark.parametrize("operation", ["create_parcel", "dispatch_parcel"])
def test_the_system_check_refuses_a_keyword_a_face_cannot_show_e026(project, operation):
    found = get_catalog().lookup(operation)
    unshown = _with_constraint(found, {"properties": {"pieces": {"multipleOf": 2}}})
    widening = _with_constraint(found, {"properties": {"pieces": {"maximum": 1000}}})

    (message,) = _check_constraints([unshown])
    assert message.id == "affordances.E026"
    assert operation in message.msg and "multipleOf" in message.msg
    (message,) = _check_constraints([widening])
    assert message.id == "affordances.E007"
    assert _check_constraints([found]) == []


def test_at_request_time_such_a_constraint_makes_the_operation_unavailable(root):
    found = get_catalog().lookup("dispatch_parcel")
    unshown = _with_constraint(found, {"properties": {"reference": {"minItems": 1}}})

    assert isinstance(evaluate(found, _packed(), root), Available)
    refused = evaluate(unshown, _packed(), root)
    assert isinstance(refused, Unavailable) and refused.reason == "misconfigured"


def test_the_decimal_pattern_is_linear():
    growth, shape = worst_growth(r"^(?!0*(?:\.0*)?$)0*[0-9]{1,10}(?:\.[0-9]{1,2})?$")
    assert growth <= 6.0, shape
