"""The cheaper REST read path gives the same answers as before.

A list's ``url`` (``ResourceUrlField``) is reversed once per request around a
placeholder id, and affordance targets from a path kept per process; the refusals a
state decides are one entry shared by the rows in that state; the operations a caller
may not know about are dropped once per request; one object is read without an ORDER BY.
Each is checked here against what DRF and Django answer on their own.

This module is also a URLconf (``ROOT_URLCONF="tests.test_read_path"``): the ticket
app mounted where :func:`_mount` puts it, so a test can move the API and see the
targets follow.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import RequestFactory, override_settings
from django.test.utils import CaptureQueriesContext
from django.urls import clear_url_caches, get_script_prefix, include, path, set_script_prefix
from django.urls import reverse as django_reverse
from rest_framework.request import Request
from rest_framework.reverse import reverse as drf_reverse
from rest_framework.test import APIClient

from affordances import routes
from affordances.catalog import get_catalog
from affordances.entries import CATALOG_KEYS
from affordances.mcp import McpView
from affordances.rest import ResourceUrlField
from tests import mcp_wire
from tests.generic import api as ticket_app
from tests.generic import expenses as expense_app
from tests.generic import keys_api
from tests.generic.keys import Locker, Voucher
from tests.generic.models import Expense, Ticket

# --- this module as a URLconf ------------------------------------------------------------

urlpatterns: list[Any] = []
handler404 = "affordances.rest.not_found_view"


def _mount(prefix: str) -> None:
    """The ticket app's REST routes under ``prefix`` (and its MCP endpoint), in place: the
    URLconf module stays the same object, only a new resolver sees the change."""
    urlpatterns[:] = [
        path(f"{prefix}/", include(ticket_app.router.urls)),
        path("agents/mcp", McpView.as_view(), name="mcp"),
    ]


# --- projects ----------------------------------------------------------------------------

# Pages large enough for every row of a test; nothing hidden (no "secret" assignee).
TICKETS = {**ticket_app.REGISTRATION, "PAGE_SIZE": 20, "MAX_PAGE_SIZE": 50}


@pytest.fixture
def project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": TICKETS}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(ticket_app)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def ordered_project(db: None) -> Iterator[None]:
    """The registration orders by ``-pk``: a list has an ORDER BY, one object need not."""
    registration = {**TICKETS, "ORDERING": ["-pk"]}
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": registration}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(ticket_app)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def keys_project(db: None) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": keys_api.REGISTRATIONS}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(keys_api)
        with override_settings(ROOT_URLCONF="tests.generic.keys_api"):
            yield


@pytest.fixture
def expense_project(db: None) -> Iterator[None]:
    # Django's ModelBackend alone: a permission is held model-wide or not at all.
    models = {"generic.Expense": expense_app.REGISTRATION}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": models}):
        importlib.reload(expense_app)
        with override_settings(ROOT_URLCONF="tests.generic.expenses"):
            yield


def _user(username: str, *codenames: str, superuser: bool = False) -> Any:
    users = get_user_model().objects
    if superuser:
        return users.create_superuser(username, password="x")
    user = users.create_user(username, password="x")
    for codename in codenames:
        user.user_permissions.add(
            Permission.objects.get(content_type__app_label="generic", codename=codename)
        )
    return users.get(pk=user.pk)  # a fresh object: has_perm caches per instance


def _client(user: Any) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _ok(client: APIClient, url: str, *, script_name: str = "", **extra: Any) -> Any:
    """GET ``url``; with ``script_name``, as a WSGI server mounting the project there
    serves it (Django's test client sets no script prefix of its own)."""
    with _script_prefix(f"{script_name}/"):
        response = client.get(url, SCRIPT_NAME=script_name, **extra)
    assert response.status_code == 200, response.content[:500]
    return response.json()


def _tickets(*states: str) -> list[int]:
    """One ticket per state (assigned, so closing depends on the state alone)."""
    ids = []
    for state in states:
        ticket = Ticket.objects.create(assignee="ann")
        Ticket.objects.filter(pk=ticket.pk).update(state=state)
        ids.append(ticket.pk)
    return ids


# --- what DRF and Django answer on their own ---------------------------------------------


@contextmanager
def _script_prefix(prefix: str) -> Iterator[None]:
    before = get_script_prefix()
    set_script_prefix(prefix)
    try:
        yield
    finally:
        set_script_prefix(before)


def _request(url: str, *, script_name: str = "", host: str = "testserver") -> Request:
    return Request(RequestFactory().get(url, SCRIPT_NAME=script_name, HTTP_HOST=host))


def _drf_detail_url(
    model: type, pk: Any, request: Any, *, prefix: str = "/", fmt: Any = None
) -> str:
    """DRF's own URL of the object, reversed for ``request`` as HyperlinkedIdentityField
    reverses it (the ``format`` query parameter kept)."""
    basename = get_catalog().registered(model).basename
    with _script_prefix(prefix):
        return str(
            drf_reverse(
                routes.name(basename, "detail"), kwargs={"pk": pk}, request=request, format=fmt
            )
        )


def _target(model: type, method: str, pk: Any, request: Any, *, prefix: str = "/") -> str:
    """Django's path of the transition route of object ``pk``, absolute for ``request``."""
    basename = get_catalog().registered(model).basename
    with _script_prefix(prefix):
        return request.build_absolute_uri(
            django_reverse(routes.name(basename, method), kwargs={"pk": pk})
        )


def _assert_urls(
    rows: list[dict[str, Any]],
    model: type,
    key: str,
    request: Any,
    *,
    prefix: str = "/",
    fmt: Any = None,
) -> None:
    assert rows
    for row in rows:
        pk = row[key]
        assert row["url"] == _drf_detail_url(model, pk, request, prefix=prefix, fmt=fmt), row
        for entry in row["affordances"]:
            method = get_catalog().lookup(entry["name"]).method_name
            assert entry["target"] == _target(model, method, pk, request, prefix=prefix), entry


# --- urls and targets ------------------------------------------------------------------


def test_a_lists_urls_and_targets_are_drfs_for_integer_ids(project):
    root = _client(_user("root", superuser=True))
    ids = _tickets("open", "escalated", "closed", "open")
    body = _ok(root, "/v2/tickets/")
    assert [row["id"] for row in body["results"]] == ids
    _assert_urls(body["results"], Ticket, "id", _request("/v2/tickets/"))
    # Every row has targets: the template is really used on each of them.
    assert all(row["affordances"] for row in body["results"])
    # The detail agrees.
    for row in body["results"]:
        assert _ok(root, f"/v2/tickets/{row['id']}/")["url"] == row["url"]


def test_the_format_query_parameter_is_kept_as_drf_keeps_it(project):
    root = _client(_user("root", superuser=True))
    _tickets("open", "closed")
    body = _ok(root, "/v2/tickets/?format=json")
    request = _request("/v2/tickets/?format=json")
    _assert_urls(body["results"], Ticket, "id", request)
    assert all(row["url"].endswith("/?format=json") for row in body["results"])


def test_a_format_suffix_is_kept_as_drf_keeps_it(project):
    root = _client(_user("root", superuser=True))
    _tickets("open", "closed")
    body = _ok(root, "/v2/tickets.json")
    _assert_urls(body["results"], Ticket, "id", _request("/v2/tickets.json"), fmt="json")
    assert all(".json" in row["url"] for row in body["results"])


def test_a_script_prefix_is_never_served_from_another_prefixs_cache(project):
    root = _client(_user("root", superuser=True))
    _tickets("open", "escalated")
    plain = _request("/v2/tickets/")
    prefixed = _request("/v2/tickets/", script_name="/prefix")
    # Unprefixed first (the paths kept), then under a prefix, then unprefixed again.
    _assert_urls(_ok(root, "/v2/tickets/")["results"], Ticket, "id", plain)
    body = _ok(root, "/v2/tickets/", script_name="/prefix")
    _assert_urls(body["results"], Ticket, "id", prefixed, prefix="/prefix/")
    assert all(
        row["url"].startswith("http://testserver/prefix/v2/tickets/") for row in body["results"]
    )
    targets = [entry["target"] for row in body["results"] for entry in row["affordances"]]
    assert targets and all(t.startswith("http://testserver/prefix/v2/tickets/") for t in targets)
    _assert_urls(_ok(root, "/v2/tickets/")["results"], Ticket, "id", plain)


def test_force_script_name_moves_urls_and_targets(project):
    root = _client(_user("root", superuser=True))
    _tickets("open")
    _ok(root, "/v2/tickets/")  # the unprefixed paths kept first
    with override_settings(FORCE_SCRIPT_NAME="/forced/"):
        body = _ok(root, "/v2/tickets/", script_name="/forced")
        _assert_urls(body["results"], Ticket, "id", _request("/v2/tickets/"), prefix="/forced/")
    [row] = body["results"]
    assert row["url"] == f"http://testserver/forced/v2/tickets/{row['id']}/"
    assert {e["target"] for e in row["affordances"]} >= {
        f"http://testserver/forced/v2/tickets/{row['id']}/close/"
    }


def test_uuid_and_text_keys_are_drfs_own_urls(keys_project):
    root = _client(_user("root", superuser=True))
    vouchers = [Voucher.objects.create(), Voucher.objects.create()]
    lockers = [Locker.objects.create(code="B-17"), Locker.objects.create(code="17")]
    for collection, model, key, prefix in (
        ("vouchers", Voucher, "id", "/"),
        ("lockers", Locker, "code", "/"),
        ("lockers", Locker, "code", "/prefix/"),
    ):
        script = prefix.rstrip("/")
        for query in ("", "?format=json"):
            url = f"/api/{collection}/{query}"
            body = _ok(root, url, script_name=script)
            assert len(body["results"]) == 2
            _assert_urls(
                body["results"], model, key, _request(url, script_name=script), prefix=prefix
            )
    assert {str(v.pk) for v in vouchers} == {
        row["id"] for row in _ok(root, "/api/vouchers/")["results"]
    }
    # A text key that looks like a number is still the text key's URL.
    assert {row["url"] for row in _ok(root, "/api/lockers/")["results"]} == {
        f"http://testserver/api/lockers/{locker.pk}/" for locker in lockers
    }


# --- the URL field on its own: one context, several requests ----------------------------


def test_a_serializer_context_kept_past_its_request_hands_no_url_on(project):
    tickets = Ticket.objects.filter(pk__in=_tickets("open", "closed")).order_by("pk")
    context: dict[str, Any] = {"affordances": False}
    seen = []
    for host, script in (("testserver", ""), ("localhost", "/other"), ("testserver", "")):
        request = _request("/v2/tickets/", script_name=script, host=host)
        context["request"] = request
        with _script_prefix(f"{script}/"):
            data = ticket_app.TicketSerializer(tickets, many=True, context=context).data
        expected = [_drf_detail_url(Ticket, t.pk, request, prefix=f"{script}/") for t in tickets]
        assert [row["url"] for row in data] == expected
        seen.append(expected[0])
    assert seen[0] != seen[1] and seen[0] == seen[2]


def test_a_placeholder_repeated_in_the_url_falls_back_to_drf(project):
    # The format parameter DRF keeps in the query holds the placeholder itself: the id's
    # place is ambiguous, so DRF reverses each row.
    tickets = Ticket.objects.filter(pk__in=_tickets("open", "closed")).order_by("pk")
    request = _request(f"/v2/tickets/?format={routes.PK_PLACEHOLDER}")
    context = {"request": request, "affordances": False}
    data = ticket_app.TicketSerializer(tickets, many=True, context=context).data
    assert [row["url"] for row in data] == [_drf_detail_url(Ticket, t.pk, request) for t in tickets]
    assert all(str(t.pk) in row["url"] for t, row in zip(tickets, data, strict=True))
    # A script prefix holding it: the first placeholder is not the id's.
    prefix = f"/{routes.PK_PLACEHOLDER}/"
    request = _request("/v2/tickets/", script_name=prefix.rstrip("/"))
    context = {"request": request, "affordances": False}
    with _script_prefix(prefix):
        data = ticket_app.TicketSerializer(tickets, many=True, context=context).data
    expected = [_drf_detail_url(Ticket, t.pk, request, prefix=prefix) for t in tickets]
    assert [row["url"] for row in data] == expected
    assert expected[0] == f"http://testserver{prefix}v2/tickets/{tickets[0].pk}/"


def test_unsaved_objects_and_unknown_routes_are_drfs_answers(project):
    request = _request("/v2/tickets/")
    context = {"request": request, "affordances": False}
    assert ticket_app.TicketSerializer(Ticket(), context=context).data["url"] is None

    class Broken(ticket_app.TicketSerializer):
        url = ResourceUrlField(view_name="affordances:no-such-route")

    ticket = Ticket.objects.create()
    with pytest.raises(ImproperlyConfigured):
        Broken(ticket, context=context).data  # noqa: B018


def test_fields_naming_one_view_with_other_keywords_share_no_template(project):
    # One context, two fields of the same view: the second's keyword is not the route's,
    # so DRF refuses it — a template kept for the first must not answer for it.
    class TwoLinks(ticket_app.TicketSerializer):
        other = ResourceUrlField(lookup_url_kwarg="id")

        class Meta(ticket_app.TicketSerializer.Meta):
            fields = [*ticket_app.TicketSerializer.Meta.fields, "other"]

    ticket = Ticket.objects.create()
    context = {"request": _request("/v2/tickets/"), "affordances": False}
    with pytest.raises(ImproperlyConfigured):
        TwoLinks(ticket, context=context).data  # noqa: B018


# --- the kept paths follow the URLconf -----------------------------------------------------


def test_targets_follow_another_root_urlconf(project):
    root = _client(_user("root", superuser=True))
    _tickets("open", "escalated")
    _assert_urls(_ok(root, "/v2/tickets/")["results"], Ticket, "id", _request("/v2/tickets/"))
    _mount("elsewhere/v9")
    try:
        with override_settings(ROOT_URLCONF=__name__):
            body = _ok(root, "/elsewhere/v9/tickets/")
            _assert_urls(body["results"], Ticket, "id", _request("/elsewhere/v9/tickets/"))
        targets = [e["target"] for row in body["results"] for e in row["affordances"]]
        assert targets and all(
            t.startswith("http://testserver/elsewhere/v9/tickets/") for t in targets
        )
        # And back.
        _assert_urls(_ok(root, "/v2/tickets/")["results"], Ticket, "id", _request("/v2/tickets/"))
    finally:
        urlpatterns.clear()


def test_targets_follow_the_urlconf_after_clear_url_caches(project):
    """No setting changes here: only the URL resolver is new."""
    root = _client(_user("root", superuser=True))
    _tickets("open", "closed")
    _mount("first")
    try:
        with override_settings(ROOT_URLCONF=__name__):
            body = _ok(root, "/first/tickets/")
            _assert_urls(body["results"], Ticket, "id", _request("/first/tickets/"))
            _mount("second")  # the same module, its patterns changed
            clear_url_caches()
            assert root.get("/first/tickets/").status_code == 404
            body = _ok(root, "/second/tickets/")
            _assert_urls(body["results"], Ticket, "id", _request("/second/tickets/"))
            targets = [e["target"] for row in body["results"] for e in row["affordances"]]
            assert targets and all(t.startswith("http://testserver/second/") for t in targets)
    finally:
        urlpatterns.clear()
        clear_url_caches()


# --- refusals the state decides ----------------------------------------------------------


def _lists(row: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    return row["affordances"], row["unavailableAffordances"]


def test_rows_in_one_state_have_equal_refusals_and_the_list_agrees_with_each_detail(project):
    client = _client(_user("esc", "escalate_ticket"))
    ids = _tickets("closed", "open", "closed", "escalated", "escalated", "open")
    page = _ok(client, "/v2/tickets/")["results"]
    assert [row["id"] for row in page] == ids
    by_state: dict[str, list[dict[str, Any]]] = {}
    for row in page:
        by_state.setdefault(row["state"], []).append(row)
    for state, rows in by_state.items():
        first, second = rows
        assert first["unavailableAffordances"] == second["unavailableAffordances"], state
    # The state alone refuses closing and escalating a closed ticket.
    closed = by_state["closed"][0]["unavailableAffordances"]
    assert {entry["name"] for entry in closed} == {"close_ticket", "escalate_ticket"}
    for entry in closed:
        assert set(entry) == {"operation", "name", "reason"}
    # Each row of the page is exactly what the detail answers.
    for row in page:
        assert _ok(client, f"/v2/tickets/{row['id']}/") == row


def _compact(entry: dict[str, Any]) -> dict[str, Any]:
    return {
        key: value
        for key, value in entry.items()
        if key not in CATALOG_KEYS and not (key == "constraints" and value == {})
    }


def test_the_compact_page_is_the_full_page_compacted_row_by_row(project):
    client = _client(_user("esc", "escalate_ticket"))
    _tickets("closed", "open", "closed", "escalated", "open", "closed")
    full = _ok(client, "/v2/tickets/")["results"]
    compact = _ok(client, "/v2/tickets/?affordances=compact")["results"]
    again = _ok(client, "/v2/tickets/")["results"]
    assert again == full  # the compact request changed nothing a later request reads
    assert len(compact) == len(full)
    for full_row, compact_row in zip(full, compact, strict=True):
        for key in ("affordances", "unavailableAffordances"):
            assert compact_row[key] == [_compact(entry) for entry in full_row[key]], key
            for entry in compact_row[key]:
                assert not set(CATALOG_KEYS) & set(entry), entry
        assert {
            k: v
            for k, v in compact_row.items()
            if k not in ("affordances", "unavailableAffordances")
        } == {
            k: v for k, v in full_row.items() if k not in ("affordances", "unavailableAffordances")
        }
    # Full refusals keep the catalog's keys on every row, compact ones on none.
    assert all("operation" in e for row in full for e in row["unavailableAffordances"])
    # Compact detail rows agree with the compact page.
    for row in compact:
        assert _ok(client, f"/v2/tickets/{row['id']}/?affordances=compact") == row


def test_a_shared_refusal_is_one_requests_and_never_the_next_ones(project):
    """The entries shared between rows are read-only (a change is refused), and shared
    within a request only: nothing another request answers depends on them."""
    user = _user("esc", "escalate_ticket")
    tickets = list(Ticket.objects.filter(pk__in=_tickets("closed", "closed")).order_by("pk"))

    def rows() -> list[dict[str, Any]]:
        context = {"request": _request("/v2/tickets/"), "affordances": None}
        context["request"].user = user
        return list(ticket_app.TicketSerializer(tickets, many=True, context=context).data)

    first = rows()
    refusals = [row["unavailableAffordances"] for row in first]
    assert refusals[0] == refusals[1] and refusals[0]
    pristine = [dict(entry) for entry in refusals[0]]
    with pytest.raises(TypeError, match="shared between rows"):
        refusals[0][0]["reason"] = "changed by a careless reader"
    second = rows()
    for row in second:
        assert row["unavailableAffordances"] == pristine


# --- operations the caller may not know about ------------------------------------------


def _names(row: dict[str, Any]) -> set[str]:
    return {entry["name"] for entry in row["affordances"] + row["unavailableAffordances"]}


def test_an_operation_the_caller_holds_no_permission_of_is_on_no_row(project):
    _tickets("open", "escalated", "closed", "open")
    alice = _client(_user("alice"))
    esc = _client(_user("esc", "escalate_ticket"))
    for row in _ok(alice, "/v2/tickets/")["results"]:
        assert "escalate_ticket" not in _names(row), row
        assert _names(row) == {"close_ticket", "explode_ticket"}
    rows = _ok(esc, "/v2/tickets/")["results"]
    for row in rows:
        assert "escalate_ticket" in _names(row), row
    available = {row["state"]: [e["name"] for e in row["affordances"]] for row in rows}
    assert "escalate_ticket" in available["open"]
    assert "escalate_ticket" not in available["closed"]
    # The detail drops it alike.
    some = rows[0]["id"]
    assert "escalate_ticket" not in _names(_ok(alice, f"/v2/tickets/{some}/"))


@pytest.mark.parametrize(
    ("codenames", "expected"),
    [
        ((), set()),
        (("submit_expense",), {"submit_expense", "reopen_expense"}),
        (("review_expense",), {"approve_expense", "reopen_expense"}),
        (
            ("submit_expense", "review_expense"),
            {"submit_expense", "approve_expense", "reopen_expense"},
        ),
    ],
)
def test_operations_sharing_permissions_are_shown_by_each_ones_own(
    expense_project, codenames, expected
):
    # reopen_expense takes either permission; submit and approve one each: the answers
    # asked once per request must still be each operation's own.
    user = _user("someone", *codenames)
    for state in ("draft", "submitted", "approved"):
        expense = Expense.objects.create(owner="someone")
        Expense.objects.filter(pk=expense.pk).update(state=state)
    rows = _ok(_client(user), "/api/expenses/")["results"]
    assert len(rows) == 3
    independent = {op.name for op in get_catalog().transitions_for(Expense) if op.permits(user)}
    assert independent == expected
    for row in rows:
        assert _names(row) == expected, row


# --- one object without ORDER BY ---------------------------------------------------------


def _ticket_selects(captured: CaptureQueriesContext) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if 'FROM "generic_ticket"' in q["sql"]]


def test_the_rest_detail_reads_its_object_in_one_query_without_order_by(ordered_project):
    root = _client(_user("root", superuser=True))
    first, second = _tickets("open", "closed")
    with CaptureQueriesContext(connection) as listed:
        list_page = _ok(root, "/v2/tickets/")
    assert [row["id"] for row in list_page["results"]] == [second, first]  # -pk
    assert any("ORDER BY" in sql for sql in _ticket_selects(listed))  # the list keeps it
    with CaptureQueriesContext(connection) as captured:
        body = _ok(root, f"/v2/tickets/{first}/")
    assert body["id"] == first
    [select] = _ticket_selects(captured)
    assert "ORDER BY" not in select, select
    assert "LIMIT 1" in select, select
    # A superuser's detail (force-authenticated): the object's query, and no other.
    assert len(captured.captured_queries) == 1, captured.captured_queries
    # A missing or hidden object is still not_found.
    assert root.get(f"/v2/tickets/{second + 100}/").status_code == 404


def test_the_mcp_read_reads_its_object_without_order_by(ordered_project):
    root = _client(_user("root", superuser=True))
    _, second = _tickets("open", "closed")
    for method, params in (
        ("tools/call", {"name": "get_ticket", "arguments": {"ticketId": second}}),
        ("resources/read", {"uri": f"http://testserver/v2/tickets/{second}/"}),
    ):
        with CaptureQueriesContext(connection) as captured:
            result = mcp_wire.result(root, "/agents/mcp", method, params)
        assert result.get("isError") is not True, result
        assert str(second) in str(result)
        selects = _ticket_selects(captured)
        assert len(selects) == 1, (method, selects)
        assert "ORDER BY" not in selects[0], selects[0]
    missing = mcp_wire.result(
        root, "/agents/mcp", "tools/call", {"name": "get_ticket", "arguments": {"ticketId": 10**6}}
    )
    assert missing["isError"] is True
