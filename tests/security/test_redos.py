"""F4 of the second attack: no pattern the app runs or publishes backtracks super-linearly
(published: by the shop of ``tests.generic.shop``).

The finding: the demo's ``create_order`` with ``description = "a" * N + "\\0"`` took time
quadratic in N — the not-blank pattern ``^[^\\0]*[^\\s\\0][^\\0]*$`` was searched by jsonschema
before any length check — and one request of 290 kB killed a gunicorn worker. The same
pattern was published to every client (OpenAPI, tool ``inputSchema``, HAL-FORMS).

Growth is measured in steps of a backtracking matcher (:mod:`tests.regex_steps`),
never in seconds: a linear pattern takes about 4 times the steps on an input 4 times longer, a
quadratic one 16 times.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import re
import signal
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import pytest
from django.test import Client
from rest_framework_simplejwt.tokens import AccessToken

from affordances import arguments, fieldschema
from affordances.constraints import ConstraintWidens, assert_narrows
from tests.generic.shop import Purchase
from tests.mcp_wire import Wire
from tests.regex_steps import worst_growth
from tests.shop_data import Shop

HAL_FORMS = "application/prs.hal-forms+json"
# steps(256) / steps(64): ~4 for linear work, ~16 for quadratic.
LINEAR = 6.0

# The quadratic not-blank pattern as it was published before the fix.
OLD_NOT_BLANK = rf"^[^\u0000]*[^{fieldschema._WHITESPACE}\u0000][^\u0000]*$"


def _compiled_patterns() -> dict[str, str]:
    """Every regular expression compiled at module level anywhere in ``affordances`` (money,
    versions, page sizes, If-Match, idempotency keys, MCP's header sentinel, …)."""
    import affordances

    found: dict[str, str] = {}
    for info in pkgutil.walk_packages(affordances.__path__, "affordances."):
        if ".migrations" in info.name or ".management" in info.name:
            continue
        # The walk imports every module on purpose, the deprecated import paths (which
        # warn when imported) included.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                found[f"{info.name}.{name}"] = value.pattern
    return found


INTERNAL = _compiled_patterns()


def _bearer(user: Any) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Bearer {AccessToken.for_user(user)}")


def _values(document: Any, key: str) -> Iterator[str]:
    """Every string under ``key`` in a JSON document (``pattern``; HAL-FORMS' ``regex``)."""
    if isinstance(document, dict):
        for name, value in document.items():
            if name == key and isinstance(value, str):
                yield value
            else:
                yield from _values(value, key)
    elif isinstance(document, list):
        for item in document:
            yield from _values(item, key)


def backtracking_risk(pattern: str) -> str | None:
    # Imported here: the module is the fix, and the end-to-end tests above it must run
    # (and fail) without it.
    from affordances.patterns import backtracking_risk

    return backtracking_risk(pattern)


def published_patterns(shop: Shop) -> dict[str, str]:
    """Every pattern the shop publishes, on every face, as the superuser sees them (the
    superuser sees every operation), with where it was found."""
    admin = _bearer(shop.users["admin"])
    found: dict[str, str] = {}

    def add(where: str, patterns: Iterator[str]) -> None:
        for pattern in patterns:
            found.setdefault(pattern, where)

    catalog = admin.get("/api/operations/")
    assert catalog.status_code == 200
    add("catalog", _values(catalog.json(), "pattern"))
    openapi = admin.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert openapi.status_code == 200
    add("OpenAPI", _values(json.loads(openapi.content), "pattern"))
    wire = Wire(str(AccessToken.for_user(shop.users["admin"])))
    add("MCP tools/list", _values(wire.tools(), "pattern"))
    for url in ("/api/", "/api/purchases/"):
        response = admin.get(url, HTTP_ACCEPT=HAL_FORMS)
        assert response.status_code == 200, url
        add(f"HAL-FORMS {url}", _values(response.json(), "regex"))
    for purchase in Purchase.objects.all():
        response = admin.get(f"/api/purchases/{purchase.pk}/", HTTP_ACCEPT=HAL_FORMS)
        add("HAL-FORMS purchase", _values(response.json(), "regex"))
    return found


def test_every_published_pattern_matches_in_linear_steps(shop):
    found = published_patterns(shop)
    # The shop publishes text rules, tracking numbers and versions.
    assert len(found) >= 4, found
    assert fieldschema._NOT_BLANK in found and OLD_NOT_BLANK not in found
    slow = {}
    for pattern, where in found.items():
        growth, shape = worst_growth(pattern)
        if growth > LINEAR:
            slow[pattern] = (where, round(growth, 1), shape)
    assert slow == {}


def test_the_app_compiles_the_patterns_it_parses_input_with():
    names = {name.rsplit(".", 1)[0] for name in INTERNAL}
    assert {"affordances.arguments", "affordances.execution"} <= names


@pytest.mark.parametrize("name", sorted(INTERNAL))
def test_every_pattern_the_app_runs_on_input_matches_in_linear_steps(name):
    # Run with fullmatch or search: both anchored and not must be linear; fullmatch
    # patterns are measured as fullmatch runs them.
    pattern = INTERNAL[name]
    anchored = pattern if pattern.startswith("^") else rf"^(?:{pattern})\Z"
    growth, shape = worst_growth(anchored)
    assert growth <= LINEAR, (name, growth, shape)


@pytest.mark.parametrize(
    "pattern",
    [
        OLD_NOT_BLANK,
        r"^(a+)+$",
        r"^(\w+\s?)*$",
        r"^\d+\d*$",
        r"^.*x.*$",
        r"^[a-z]+[a-z0-9]*$",
        r"^(a{1,3})+$",
        r"a+b",
    ],
)
def test_the_check_refuses_what_the_step_count_finds_super_linear(pattern):
    growth, _shape = worst_growth(pattern)
    assert growth > LINEAR  # the oracle sees it ...
    assert backtracking_risk(pattern) is not None  # ... and so does the system check


@pytest.mark.parametrize(
    "pattern",
    [
        fieldschema._NOT_BLANK,
        fieldschema._NO_NUL,
        r"^Q-[0-9]{3,12}$",
        r"^[A-Z0-9]{8,20}$",
        r"^\d{1,3}(,\d{3})*$",
        r"^(\.[0-9]+)*$",
    ],
)
def test_the_check_accepts_linear_patterns(pattern):
    assert worst_growth(pattern)[0] <= LINEAR
    assert backtracking_risk(pattern) is None


def test_a_declared_backtracking_pattern_is_a_system_check_error():
    from affordances.checks import _check_patterns

    operation = SimpleNamespace(
        name="tag_purchase",
        input_schema={"properties": {"tag": {"type": "string", "pattern": r"^(\w+\s?)*$"}}},
        resource=SimpleNamespace(model=Purchase),
    )
    (message,) = _check_patterns([operation])
    assert message.id == "affordances.E017"
    assert message.obj is Purchase  # reported on the model, not on "?"
    assert "tag_purchase" in message.msg and "repeat inside a repeat" in message.msg


def test_the_shop_declares_no_backtracking_pattern(shop_registered, db):
    from affordances.catalog import get_catalog
    from affordances.checks import _check_patterns

    assert _check_patterns(get_catalog()) == []


def test_a_constraint_with_a_backtracking_pattern_does_not_narrow():
    base = {"properties": {"trackingNumber": {"type": "string", "maxLength": 20}}}
    assert_narrows(base, {"properties": {"trackingNumber": {"pattern": "^TRK[0-9]+$"}}})
    with pytest.raises(ConstraintWidens, match="pattern"):
        assert_narrows(base, {"properties": {"trackingNumber": {"pattern": r"^(\d+)+$"}}})


@contextmanager
def hang_guard(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: before the fix this request took minutes (quadratic).
    Not a timing assertion — a ceiling two purchases of magnitude above the expected."""

    def expired(*_: Any) -> None:
        raise AssertionError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


ATTACK = "a" * 300_000 + "\u0000"


def test_mcp_create_with_a_huge_nul_terminated_description_is_refused_on_its_length(shop):
    wire = Wire(str(AccessToken.for_user(shop.users["alice"])))
    before = Purchase.objects.count()
    with hang_guard(30):
        result = wire.tool("create_purchase", {"description": ATTACK, "total": 10})
    assert result["isError"] is True
    problem = result["structuredContent"]
    assert problem["code"] == "validation_error"
    # The length refuses it (the pattern never searched the 300,000 characters), and
    # the answer does not repeat them.
    assert problem["errors"] == {"description": ["Must be at most 200 characters."]}
    assert len(json.dumps(result)) < 10_000
    assert Purchase.objects.count() == before


def test_rest_create_with_a_huge_nul_terminated_description_is_refused(shop):
    client = _bearer(shop.users["alice"])
    before = Purchase.objects.count()
    with hang_guard(30):
        response = client.post(
            "/api/purchases/",
            data=json.dumps({"description": ATTACK, "total": "10.00"}),
            content_type="application/json",
        )
    assert response.status_code == 400
    assert response.json()["code"] == "validation_error"
    assert "description" in response.json()["errors"]
    assert Purchase.objects.count() == before


def test_the_length_is_checked_before_the_pattern():
    schema = {
        "type": "object",
        "properties": {"text": {"type": "string", "maxLength": 5, "pattern": "^[a-z]*$"}},
    }
    errors = arguments.schema_errors(schema, {"text": "ABCDEFGH"})
    assert errors == {"text": ["Must be at most 5 characters."]}
    # Within the length, the pattern still applies.
    assert arguments.schema_errors(schema, {"text": "ABC"})["text"]
