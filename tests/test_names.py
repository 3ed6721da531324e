"""Names that mean one thing: plurals and prose from the model's verbose names, overridable
in the registration; URNs spelled one way; every name the README shows exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.db import models

from affordances.catalog import get_catalog
from affordances.conf import DEFAULTS, MODEL_DEFAULTS, ModelOptions, settings
from affordances.execution import perform
from affordances.resources import Resource

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


# Never queried: only their verbose names are read.
class Company(models.Model):
    class Meta:
        app_label = "generic"
        managed = False
        verbose_name_plural = "companies"

    def __str__(self) -> str:
        return f"Company {self.pk}"


class Person(models.Model):
    class Meta:
        app_label = "generic"
        managed = False
        verbose_name = "person"
        verbose_name_plural = "people"

    def __str__(self) -> str:
        return f"Person {self.pk}"


def _resource(model: type[models.Model], **options: object) -> Resource:
    fields = {"serializer": None, "queryset": None, "basename": None, "filterset": None}
    defaults = {"resource": None, "version_field": "version", **fields}
    return Resource(model=model, options=ModelOptions(label="generic.x", **{**defaults, **options}))


def test_the_plural_comes_from_the_verbose_name_plural():
    assert _resource(Company).plural == "companies"  # not "companys"
    assert _resource(Person).plural == "people"


def test_a_resource_name_the_verbose_name_does_not_spell_keeps_name_plus_s():
    # RESOURCE "firm" is not what "company" spells: "companies" would not go with it.
    assert _resource(Company, resource="firm").plural == "firms"


def test_the_registration_overrides_plural_and_prose():
    resource = _resource(Company, plural="firms", verbose_name="firm", verbose_name_plural="firms")
    assert (resource.plural, resource.verbose_name, resource.verbose_name_plural) == (
        "firms",
        "firm",
        "firms",
    )


@pytest.mark.parametrize("plural", ["Companies", "comp anies", "", "1st", "x" * 41, 3])
def test_a_malformed_plural_is_refused_at_configuration(settings_override, plural):
    settings_override({"generic.Thing": {"PLURAL": plural}})
    with pytest.raises(ImproperlyConfigured, match="PLURAL"):
        settings.models  # noqa: B018


@pytest.fixture
def settings_override(settings):
    def apply(models_option: dict) -> None:
        settings.AFFORDANCES = {"NAMESPACE": "example", "MODELS": models_option}

    return apply


def test_the_demo_keeps_its_tool_names(db):
    names = {operation.name for operation in get_catalog()}
    assert {"list_orders", "get_order", "list_purchase_requests"} <= names


def test_no_identifier_in_the_prose_people_and_models_read(db):
    for operation in get_catalog():
        assert "_" not in operation.title, operation.title
        # Backticks quote code (permission names, arguments); the rest is prose.
        prose = re.sub(r"`[^`]*`", "", operation.description)
        assert "purchase_request" not in prose, (operation.name, prose)
        for schema in operation.input_schema.get("properties", {}).values():
            assert "purchase_request" not in schema.get("description", ""), operation.name


def test_the_edit_urn_is_spelled_like_operation_urns(db):
    for resource in get_catalog().resources:
        slug = resource.edit_name.replace("_", "-")
        assert resource.edit_urn == f"urn:example:operation:{slug}:v1"


def test_perform_takes_a_faces_own_short_name_and_refuses_malformed_ones(demo):
    operation = get_catalog().lookup("confirm_order")
    order = demo.orders["demo-01"]
    user = demo.users["support"]
    run = {"operation": operation, "pk": order.pk, "user": user, "arguments": {}}
    represent = lambda instance: {"id": instance.pk}  # noqa: E731
    outcome = perform(**run, via="graphql", represent=represent)
    assert outcome.status == 200
    from affordances.models import AuditRecord

    assert AuditRecord.objects.filter(via="graphql").count() == 1
    for via in ("GraphQL", "a face name too long", "", None, "x\x00"):
        with pytest.raises(ValueError, match="via must be"):
            perform(**run, via=via, represent=represent)


# --- every name the README shows exists ----------------------------------------------


def _readme_dotted_names() -> list[str]:
    found = set(re.findall(r"`(affordances(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`", README))
    # System check ids (affordances.E001) are names of messages, not of code: tested
    # against the checks themselves in tests/test_checks.py.
    return sorted(name for name in found if not re.fullmatch(r"affordances\.[EW]\d{3}", name))


def _resolve(dotted: str) -> object:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            target = getattr(target, name)
        return target
    raise ImportError(dotted)


@pytest.mark.parametrize("dotted", _readme_dotted_names())
def test_every_dotted_name_the_readme_shows_imports(dotted):
    assert _resolve(dotted) is not None


def test_the_readme_names_many_dotted_names():
    assert len(_readme_dotted_names()) >= 10


def test_every_setting_the_readme_names_exists():
    named = set(re.findall(r'AFFORDANCES\["([A-Z_]+)"\]', README))
    named |= set(re.findall(r"^#### `([A-Z_]+)`", README, flags=re.MULTILINE))
    assert named, "the README names settings"
    assert named <= set(DEFAULTS), named - set(DEFAULTS)


def test_every_model_option_the_readme_names_exists():
    section = README[README.index("#### `MODELS`") :]
    section = section[: section.index("\n####")]
    named = set(re.findall(r"^- `([A-Z_]+)`", section, flags=re.MULTILINE))
    assert named and named <= set(MODEL_DEFAULTS), named - set(MODEL_DEFAULTS)


# --- typed settings, one check each ---------------------------------------------------

BAD_VALUES = {
    "NAMESPACE": ["", "has space", "a:b", 3, "x" * 40],
    "IDEMPOTENCY_TTL": [0, -1, "86400", 1.5, True],
    "MCP_ALLOWED_ORIGINS": ["https://a.example", ["a.example"], [3], ["https://a/b"]],
    "MCP_AUTHENTICATION_CLASSES": ["x.Y", [""], [3]],
    "PAGE_SIZE": ["fifty", 0, None, 2.5],
    "MAX_PAGE_SIZE": ["200", -5],
    "LOCK_TIMEOUT": [0, "5", float("inf"), float("nan"), 10**9],
    "REQUEST_TIMEOUT": [-1, "30", True],
    "OPENAPI_MEMO": ["yes", 1, None],
}


@pytest.mark.parametrize(
    ("name", "value"), [(name, value) for name, values in BAD_VALUES.items() for value in values]
)
def test_a_bad_setting_is_its_own_check_error(settings, name, value):
    from django.conf import settings as django_settings

    from affordances.checks import SETTING_CHECKS, check_settings

    settings.AFFORDANCES = {**django_settings.AFFORDANCES, name: value}
    messages = check_settings()
    assert [message.id for message in messages] == [SETTING_CHECKS[name]], messages
    assert name in messages[0].msg


def test_every_setting_has_a_check_and_a_typed_property():
    from affordances.checks import SETTING_CHECKS
    from affordances.conf import AffordancesSettings

    assert set(SETTING_CHECKS) == set(DEFAULTS) - {"MODELS"}
    for name in SETTING_CHECKS:
        assert isinstance(getattr(AffordancesSettings, name), property), name


def test_the_demo_settings_pass_every_check():
    from affordances.checks import check_settings

    assert check_settings() == []
