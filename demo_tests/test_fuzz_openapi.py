"""Schema-driven fuzzing of the REST face against its own OpenAPI document (``/api/schema/``).

schemathesis reads the drf-spectacular document the server serves, generates requests for
every operation in it — valid ones (positive) and ones that break the document (negative)
— and sends them in-process through the WSGI application, authenticated with a JWT as
the roles whose document leaves operations out. One test per operation and role checks
two properties on every answer:

- no input, however malformed, produces a 5xx (docs/protocol.md#execution);
- every answer is described by the document: a documented status code and media type,
  and a body and headers valid against the schema documented for them.

(Both on the same generated requests: the generation is derandomized, so a second test
for the first property alone would send exactly the same requests again.)

And a third, per role, against the document that role is served: **every** check
schemathesis has, request side included — what the document calls valid is accepted,
what it calls invalid is refused, no method it leaves out is served, credentials are
not ignored. A static document cannot know an object's state: a transition's
``expectedVersion`` must be the object's current version (412 otherwise), and the
affordance's ``constraints`` narrow the inputs per object and caller (400 otherwise).
Those refusals are accepted only when the object says so, read after the refusal (which
changed nothing, so it is the object the request met).

A third test sends what schemathesis cannot generate — JSON strings that are not Unicode
(lone surrogate escapes) — to every documented POST: no 5xx either.

The operations are read at collection time from the generator that serves the document,
so a new endpoint is fuzzed without touching this file. The budget is small and fixed
(derandomized, no shrinking) so a run is reproducible and fits CI; to explore deeper
locally, raise ``FUZZ_OPENAPI_EXAMPLES``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections, transaction
from drf_spectacular.generators import SchemaGenerator
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken
from schemathesis import GenerationMode
from schemathesis.checks import CHECKS, load_all_checks, not_a_server_error
from schemathesis.specs.openapi.checks import (
    RejectedPositiveData,
    content_type_conformance,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from affordances.arguments import SchemaValidator
from affordances.catalog import get_catalog
from demo_tests.conftest import Demo
from orders.rules import is_customer
from procurement.models import CostCenter, PurchaseRequest, Supplier

ROLES = ("admin", "support", "warehouse", "alice")
# The roles whose own document is not the whole API: their calls to what it leaves out
# (hidden operations, refused as missing) must be described by the whole document too.
# The admin is served the whole document, fuzzed with every check by the per-role test.
NARROWER_ROLES = ROLES[1:]
PURCHASE_REQUESTS = "/api/purchase-requests/"
MAX_EXAMPLES = int(os.environ.get("FUZZ_OPENAPI_EXAMPLES", "12"))

CONFORMANCE = [
    not_a_server_error,  # first: a 5xx is reported as such, not as a schema mismatch
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]

FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    # A failure is reported as found: shrinking would cost minutes of CI per failure.
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
    ],
)

_METHODS = {"get", "put", "post", "patch", "delete", "head", "options"}


def _documented_operations() -> list[Any]:
    """Every operation of the document, as the server generates it, named by operationId."""
    document = SchemaGenerator().get_schema(request=None, public=True)
    return [
        pytest.param(method.upper(), path, id=operation["operationId"])
        for path, item in document["paths"].items()
        for method, operation in item.items()
        if method in _METHODS
    ]


OPERATIONS = _documented_operations()


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    # The token endpoints count attempts per address in the cache: a fuzz run must not
    # start throttled, nor leave the next test throttled.
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(autouse=True)
def _with_procurement(request: pytest.FixtureRequest) -> None:
    # Wherever the orders' demo is, the purchase requests are too: their paths are fuzzed
    # on real requests as the orders' are on real orders.
    if "demo" in request.fixturenames:
        request.getfixturevalue("procurement")


@contextmanager
def _connections_kept() -> Iterator[None]:
    """Keep the test's database connection open across in-process WSGI requests.

    The WSGI handler closes "old" connections when a request starts and finishes; inside
    a test's transaction that closes the test's own connection (on PostgreSQL). Django's
    test client does the same around each of its requests.
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


_DOCUMENT: list[Any] = []


@pytest.fixture
def openapi(demo: Demo) -> Any:
    """The document as the server serves it, ready to fuzz: fetched once per process
    (the same bytes for every test; the settings do not change between them).

    Fetched as the superuser: were the document ever narrowed to the caller's
    capabilities, this one still holds every operation.
    """
    if not _DOCUMENT:
        _DOCUMENT.append(_served(demo, "admin"))
    return _DOCUMENT[0]


def _path_parameters(demo: Demo, path: str) -> st.SearchStrategy[dict[str, Any] | None]:
    """Identifiers of real objects half the time, generated ones otherwise (None)."""
    if "{id}" in path and path.startswith(PURCHASE_REQUESTS):
        ids = sorted(PurchaseRequest.objects.values_list("pk", flat=True))
        return st.one_of(st.none(), st.sampled_from(ids).map(lambda pk: {"id": pk}))
    if "{id}" in path:
        ids = sorted(order.pk for order in demo.orders.values())
        return st.one_of(st.none(), st.sampled_from(ids).map(lambda pk: {"id": pk}))
    if "{ident}" in path:
        known = [op.name for op in get_catalog()] + [op.urn for op in get_catalog()]
        return st.one_of(st.none(), st.sampled_from(known).map(lambda ident: {"ident": ident}))
    return st.none()


def _fuzz(openapi: Any, demo: Demo, role: str, method: str, path: str, checks: list) -> None:
    operation = openapi[path][method]
    headers = {"Authorization": f"Bearer {AccessToken.for_user(demo.users[role])}"}

    def cases(mode: GenerationMode) -> st.SearchStrategy[Any]:
        return _path_parameters(demo, path).flatmap(
            lambda fixed: operation.as_strategy(generation_mode=mode, path_parameters=fixed)
        )

    @FUZZ_SETTINGS
    @given(case=st.one_of(cases(GenerationMode.POSITIVE), cases(GenerationMode.NEGATIVE)))
    def fuzz(case: Any) -> None:
        response = case.call(headers=headers)
        case.validate_response(response, checks=checks, headers=headers)

    with _connections_kept():
        fuzz()


def _served(demo: Demo, role: str) -> Any:
    """The document as ``role`` is served it (their operations only)."""
    token = AccessToken.for_user(demo.users[role])
    with _connections_kept():
        return schemathesis.openapi.from_wsgi(
            "/api/schema/",
            get_wsgi_application(),
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/vnd.oai.openapi+json",
            },
        )


def _all_checks() -> list[Any]:
    load_all_checks()
    return [check for check in CHECKS.get_all() if check is not positive_data_acceptance]


class _StateRefusals:
    """Which refusals of valid-looking data the object's state explains, read from the
    object itself (as the caller sees it).

    The object is read only when a refusal needs it (a request per generated case
    before): only a positive case's refusal is ever explained (schemathesis judges only
    those cases with positive_data_acceptance), and a 400 or a 412 changed nothing, so the
    object read after it is the one the request met. ``fuzz`` itself is as it was: its
    source seeds the derandomized examples."""

    def __init__(self, client: APIClient) -> None:
        self.client = client
        self.keys: set[str] = set()

    def before(self, case: Any) -> Callable[[], dict[str, Any] | None]:
        """The object the case names, read when called."""
        return lambda: self._read(case)

    def _read(self, case: Any) -> dict[str, Any] | None:
        pk = case.path_parameters.get("id") if case.path_parameters else None
        if pk is None:
            return None
        collection = (
            PURCHASE_REQUESTS if case.path.startswith(PURCHASE_REQUESTS) else "/api/orders/"
        )
        answer = self.client.get(f"{collection}{pk}/")
        # Django's test client reconnects close_old_connections when it is done; the
        # fuzz's WSGI requests must still keep the test's connection (_connections_kept).
        request_started.disconnect(close_old_connections)
        request_finished.disconnect(close_old_connections)
        return answer.json() if answer.status_code == 200 else None

    def explains(
        self, case: Any, response: Any, current: Callable[[], dict[str, Any] | None]
    ) -> bool:
        body = case.body if isinstance(case.body, dict) else {}
        headers = {k.lower(): v for k, v in (case.headers or {}).items()}
        key = headers.get("idempotency-key")
        reused = key is not None and key in self.keys
        if key is not None:
            self.keys.add(key)
        if response.status_code == 422:
            return reused  # idempotency_key_reused: this run sent the key before
        if response.status_code == 400 and _two_versions(body, headers):
            # If-Match and expectedVersion both given and different (docs/protocol.md
            # #execution): a rule across a header and the body no schema can state.
            return set(response.json().get("errors", {})) == {"expectedVersion"}
        if response.status_code == 400 and case.path == "/api/orders/":
            # A customer named by a username no customer has, as an id nothing has.
            errors = set(response.json().get("errors", {}))
            named = body.get("customer")
            return errors == {"customer"} and not _is_customer(named)
        if response.status_code == 400 and case.path == PURCHASE_REQUESTS:
            # A cost center or supplier named by a code or name nothing has.
            errors = set(response.json().get("errors", {}))
            unknown = {
                "costCenter": not CostCenter.objects.filter(code=body.get("costCenter")).exists(),
                "supplier": not Supplier.objects.filter(name=body.get("supplier")).exists(),
            }
            return bool(errors) and all(unknown.get(name, False) for name in errors)
        if response.status_code not in (400, 412) or not case.meta.generation.mode.is_positive:
            return False
        met = current()  # the object the request met
        if met is None:
            return False
        if response.status_code == 412:
            sent = body.get("expectedVersion", headers.get("if-match", "").strip('"'))
            return str(sent) != str(met["version"])
        # validation_error: only arguments the affordance's constraints refuse.
        operation = case.operation.definition.raw.get("operationId")
        affordance = next((a for a in met.get("affordances", []) if a["name"] == operation), None)
        errors = set(response.json().get("errors", {}))
        if affordance is None or not errors:
            return False
        constraints = affordance.get("constraints") or {}
        refused = {
            str(error.path[0]) if error.path else "nonFieldErrors"
            for error in SchemaValidator(constraints).iter_errors(_typed(body))
        }
        return errors <= refused


def _two_versions(body: dict[str, Any], headers: dict[str, str]) -> bool:
    """If-Match names one version and expectedVersion another."""
    quoted = headers.get("if-match", "").strip()
    sent = body.get("expectedVersion")
    if not quoted.startswith('"') or sent is None or isinstance(sent, bool):
        return False
    try:
        return int(quoted.strip('"')) != int(sent)
    except (TypeError, ValueError):  # not a version at all: another refusal
        return False


def _is_customer(username: Any) -> bool:
    user = get_user_model().objects.filter(username=str(username)).first()
    return user is not None and is_customer(user)


def _summary(exc: BaseExceptionGroup) -> str:
    """The failures schemathesis found, without its reproduction blocks."""
    found = "; ".join(
        f"{type(f).__name__}: {(str(getattr(f, 'message', f)).splitlines() or [''])[0]}"
        for f in exc.exceptions
    )
    return " ".join([found, *getattr(exc, "__notes__", [])])


def _typed(body: dict[str, Any]) -> dict[str, Any]:
    """Decimal strings as the numbers the constraints compare (the server does the same)."""
    typed = {}
    for name, value in body.items():
        try:
            typed[name] = float(value) if isinstance(value, str) and name == "amount" else value
        except ValueError:
            typed[name] = value
    return typed


@pytest.mark.django_db
@pytest.mark.parametrize("role", ROLES)
def test_every_check_passes_on_the_document_each_role_is_served(demo: Demo, role: str) -> None:
    served = _served(demo, role)
    # A stale expectedVersion is refused (412) before the arguments are read
    # (docs/protocol.md#execution:
    # version, then state, then arguments): invalid data refused all the same.
    rejection = served.config.checks.negative_data_rejection
    rejection.expected_statuses = [*rejection.expected_statuses, "412"]
    headers = {"Authorization": f"Bearer {AccessToken.for_user(demo.users[role])}"}
    reader = APIClient()
    reader.force_authenticate(demo.users[role])
    state = _StateRefusals(reader)
    checks = _all_checks()
    failures: list[str] = []
    for result in served.get_all_operations():
        operation = result.ok()
        path = operation.path

        def cases(mode: GenerationMode, path: str = path, operation: Any = operation) -> Any:
            return _path_parameters(demo, path).flatmap(
                lambda fixed: operation.as_strategy(generation_mode=mode, path_parameters=fixed)
            )

        @FUZZ_SETTINGS
        @given(case=st.one_of(cases(GenerationMode.POSITIVE), cases(GenerationMode.NEGATIVE)))
        def fuzz(case: Any) -> None:
            current = state.before(case)
            response = case.call(headers=headers)
            # The request and answer, for the report (schemathesis's own is a page long).
            sent = f"{case.method} {case.formatted_path} {case.query} {case.body!r}"
            seen = f"{response.status_code} {response.text[:300]}"
            try:
                case.validate_response(response, checks=checks, headers=headers)
            except BaseExceptionGroup as exc:
                exc.add_note(f"{sent} -> {seen}")
                raise
            try:
                case.validate_response(response, checks=[positive_data_acceptance], headers=headers)
            except BaseExceptionGroup as exc:  # schemathesis's FailureGroup
                rejected = all(isinstance(f, RejectedPositiveData) for f in exc.exceptions)
                if not (rejected and state.explains(case, response, current)):
                    exc.add_note(f"{sent} -> {seen}")
                    raise
            else:
                state.explains(case, response, current)  # remembers the idempotency key

        with _connections_kept():
            try:
                fuzz()
            except BaseExceptionGroup as exc:  # every operation runs; all are reported
                failures.append(f"{operation.label}: {_summary(exc)}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.django_db
@pytest.mark.parametrize("role", NARROWER_ROLES)
@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_every_answer_is_described_by_the_openapi_document(
    openapi: Any, demo: Demo, role: str, method: str, path: str
) -> None:
    _fuzz(openapi, demo, role, method, path, CONFORMANCE)


def test_every_operation_of_the_document_is_fuzzed() -> None:
    # The parametrization comes from the generator; make sure it saw the whole API.
    ids = {param.id for param in OPERATIONS}
    assert {"orders_list", "orders_retrieve", "create_order", "operations_list"} <= ids
    assert {"confirm_order", "ship_order", "deliver_order", "cancel_order", "refund_order"} <= ids


# --- what schemathesis cannot send: JSON strings that are not Unicode -------------------

# A JSON body may escape a lone UTF-16 surrogate ("\ud800"); schemathesis generates only
# Unicode text, so these bodies are generated here, for every documented POST.
POSTS = [param for param in OPERATIONS if param.values[0] == "POST"]
AVAILABLE_ON = {
    "/api/orders/{id}/confirm/": "demo-01",  # pending, payment authorized
    "/api/orders/{id}/ship/": "demo-05",  # confirmed
    "/api/orders/{id}/deliver/": "demo-06",  # shipped
    "/api/orders/{id}/cancel/": "demo-01",  # pending, 250
    "/api/orders/{id}/refund/": "demo-07",  # delivered 3 days ago
}
ARGUMENTS = ["reason", "note", "trackingNumber", "amount", "expectedVersion", "orderId"]
ARGUMENTS += ["description", "total", "customer", "username", "password", "refresh"]
unicode_or_not = st.one_of(
    st.text(max_size=8),
    st.lists(st.characters() | st.characters(categories=["Cs"]), min_size=1, max_size=4).map(
        "".join
    ),
)
bodies = st.dictionaries(
    st.one_of(st.sampled_from(ARGUMENTS), unicode_or_not),
    st.one_of(unicode_or_not, st.sampled_from(["customer_request", "TRK12345678", "10", 10])),
    max_size=4,
)


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path"), POSTS)
def test_json_strings_that_are_not_unicode_never_produce_a_server_error(
    demo: Demo, method: str, path: str
) -> None:
    client = APIClient()
    client.force_authenticate(demo.users["admin"])
    # An order the operation applies to (docs/demo.md#orders, docs/demo.md#demo-data), so the
    # arguments get validated.
    target = path.replace("{id}", str(demo.order(AVAILABLE_ON.get(path, "demo-01")).pk))

    @settings(FUZZ_SETTINGS, max_examples=40)
    @given(body=bodies)
    def fuzz(body: dict[str, Any]) -> None:
        data = json.dumps(body)  # escapes the surrogates: valid JSON
        with transaction.atomic():  # every example starts from the same order
            try:
                response = client.post(target, data=data, content_type="application/json")
            except Exception as exc:  # the test client re-raises what the view raised
                exc.add_note(f"POST {target}: {data}")
                raise
            transaction.set_rollback(True)
        assert response.status_code < 500, (data, response.content)

    fuzz()
