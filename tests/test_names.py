"""Names that mean one thing: plurals and prose from the model's verbose names, overridable
in the registration; URNs spelled one way; every name the README and the documentation
site (docs/) show exists."""

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

ROOT = Path(__file__).resolve().parent.parent
# What a reader is shown: the README and every page of the documentation site (the
# experiment's generated reports aside).
README = "\n".join(
    path.read_text()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    if "experiment" not in path.relative_to(ROOT).parts[1:-1]
)
SETTINGS_PAGE = (ROOT / "docs" / "reference" / "settings.md").read_text()


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


@pytest.fixture
def tickets_registered(settings):
    settings.AFFORDANCES = {"NAMESPACE": "example", "MODELS": {"generic.Ticket": {}}}


def test_no_identifier_in_the_prose_people_and_models_read(tickets_registered):
    # The demo's two-word resource (purchase_request) is checked in demo_tests/test_names.py.
    for operation in get_catalog():
        assert "_" not in operation.title, operation.title


def test_the_edit_urn_is_spelled_like_operation_urns(tickets_registered):
    resources = get_catalog().resources
    assert resources
    for resource in resources:
        slug = resource.edit_name.replace("_", "-")
        assert resource.edit_urn == f"urn:example:operation:{slug}:v1"


@pytest.mark.django_db
def test_perform_takes_a_faces_own_short_name_and_refuses_malformed_ones(tickets_registered):
    from django.contrib.auth import get_user_model

    from affordances.models import AuditRecord
    from tests.generic.models import Ticket

    operation = get_catalog().lookup("close_ticket")
    ticket = Ticket.objects.create(assignee="ann")
    user = get_user_model().objects.create_superuser("root", password="x")
    run = {"operation": operation, "pk": ticket.pk, "user": user, "arguments": {}}
    represent = lambda instance: {"id": instance.pk}  # noqa: E731
    outcome = perform(**run, via="graphql", represent=represent)
    assert outcome.status == 200
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
    named |= set(re.findall(r"^## `([A-Z_]+)`", SETTINGS_PAGE, flags=re.MULTILINE))
    assert named, "the documentation names settings"
    assert named <= set(DEFAULTS), named - set(DEFAULTS)


def test_every_model_option_the_readme_names_exists():
    section = SETTINGS_PAGE[SETTINGS_PAGE.index("## `MODELS`") :]
    section = section[: section.index("\n## ")]
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
    "CONFIRMATION_TTL": [0, -1, "600", True],
    "CONFIRMATIONS": ["yes", "False", 1, 0, None],
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


@pytest.mark.parametrize("value", ["no", 0, None])
def test_confirmations_that_is_not_a_boolean_is_e033(settings, value):
    from django.conf import settings as django_settings

    from affordances.checks import check_settings

    settings.AFFORDANCES = {**django_settings.AFFORDANCES, "CONFIRMATIONS": value}
    assert [message.id for message in check_settings()] == ["affordances.E033"]


def test_every_setting_has_a_check_and_a_typed_property():
    from affordances.checks import SETTING_CHECKS
    from affordances.conf import AffordancesSettings

    assert set(SETTING_CHECKS) == set(DEFAULTS) - {"MODELS"}
    for name in SETTING_CHECKS:
        assert isinstance(getattr(AffordancesSettings, name), property), name


def test_the_demo_settings_pass_every_check():
    from affordances.checks import check_settings

    assert check_settings() == []
