"""DRF's pagination classes and filter backends on the REST list (issue 36, finding 5).

A resource view's ``pagination_class`` — DRF's ``DEFAULT_PAGINATION_CLASS`` unless the
view sets its own — pages the REST list and shapes its answer; without one the list is
the app's own page (``page``, ``page_size``). Either way the objects are the one read
path's: what the caller may see, in the registration's ``ORDERING``, narrowed by its
``FILTERSET``, then by the view's ``SearchFilter`` and ``OrderingFilter``. MCP's list
tools keep ``page``/``pageSize``. What the list cannot honour is a system check.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import django_filters
import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from django_filters.rest_framework import DjangoFilterBackend
from rest_framework.filters import BaseFilterBackend, OrderingFilter, SearchFilter
from rest_framework.pagination import (
    CursorPagination,
    LimitOffsetPagination,
    PageNumberPagination,
)
from rest_framework.test import APIClient

from affordances.problems import PROBLEM_CONTENT_TYPE
from affordances.rest.checks import check_rest_face
from tests.generic import api as generic_api
from tests.generic import lending_api
from tests.generic.lending import Book, Loan
from tests.generic.models import Ticket

ROOT = Path(__file__).resolve().parent.parent
OPENAPI_JSON = "application/vnd.oai.openapi+json"
MCP_VERSION = "2025-11-25"
TICKETS = "/v2/tickets/"
LOANS = "/api/loans/"


# --- the ticket project: PAGE_SIZE 2, MAX_PAGE_SIZE 3, "secret" tickets hidden --------


def _ticket_project(registration: dict[str, Any]) -> Iterator[None]:
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": registration}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(generic_api)  # routes made anew from this catalog
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


@pytest.fixture
def project(db: None) -> Iterator[None]:
    yield from _ticket_project(generic_api.REGISTRATION)


@pytest.fixture
def newest_first(db: None) -> Iterator[None]:
    """The registration orders by ``-pk``: a tiebreak that differs from the table's order."""
    yield from _ticket_project({**generic_api.REGISTRATION, "ORDERING": ["-pk"]})


@pytest.fixture
def view(project: None) -> type:
    return generic_api.TicketViewSet


# Assignees in creation order; the "secret" ones only a superuser sees.
ASSIGNEES = ["ann", "bo", "secret", "ann", "cy", "bo", "ann", "secret", "dee"]


def _tickets() -> list[int]:
    return [Ticket.objects.create(assignee=name).pk for name in ASSIGNEES]


@pytest.fixture
def ids(project: None) -> list[int]:
    """Every ticket's id, in the registration's order (pk)."""
    return _tickets()


@pytest.fixture
def seen(ids: list[int]) -> list[int]:
    """The ids a caller who is not a superuser may see, in order."""
    return [pk for pk, name in zip(ids, ASSIGNEES, strict=True) if name != generic_api.SECRET]


@pytest.fixture
def root(db: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
    return client


@pytest.fixture
def alice(db: None) -> APIClient:
    client = APIClient()
    client.force_authenticate(get_user_model().objects.create_user("alice", password="x"))
    return client


def _ok(client: APIClient, url: str) -> dict[str, Any]:
    response = client.get(url)
    assert response.status_code == 200, response.content
    body: dict[str, Any] = response.json()
    return body


def _ids(body: dict[str, Any]) -> list[int]:
    return [item["id"] for item in body["results"]]


def _query(url: str | None) -> dict[str, list[str]]:
    assert url is not None
    return parse_qs(urlsplit(url).query)


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    assert response["Content-Type"] == PROBLEM_CONTENT_TYPE
    body: dict[str, Any] = response.json()
    assert body["code"] == code, body
    return body


# --- no pagination class: the app's own page, as before ----------------------------


def test_without_a_pagination_class_the_list_is_the_apps_own_page(view, ids, alice, seen):
    assert view.pagination_class is None  # DRF's default: DEFAULT_PAGINATION_CLASS unset
    body = _ok(alice, f"{TICKETS}?page=2")
    assert list(body) == ["count", "next", "previous", "results"]
    assert body["count"] == len(seen)
    assert _ids(body) == seen[2:4]  # the registration's PAGE_SIZE 2
    # limit and offset are no paging arguments of the app's page (unknown filters).
    assert _ids(_ok(alice, f"{TICKETS}?limit=2&offset=1")) == seen[:2]
    _problem(alice.get(f"{TICKETS}?page_size=4"), 400, "validation_error")  # MAX 3


# --- LimitOffsetPagination ------------------------------------------------------------


def test_limit_and_offset_page_the_list(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    body = _ok(root, f"{TICKETS}?limit=2&offset=1")  # the exact request
    assert list(body) == ["count", "next", "previous", "results"]
    assert body["count"] == len(ids)
    assert _ids(body) == ids[1:3]
    assert _query(body["next"]) == {"limit": ["2"], "offset": ["3"]}
    assert _query(body["previous"]) == {"limit": ["2"]}


def test_limit_and_offset_page_only_what_the_caller_may_see(view, monkeypatch, seen, alice):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    body = _ok(alice, f"{TICKETS}?limit=3&offset=2")
    assert body["count"] == len(seen)
    assert _ids(body) == seen[2:5]


def test_the_registration_bounds_a_limit_the_class_leaves_open(view, monkeypatch, ids, root):
    # DRF's PAGE_SIZE is unset: the registration's PAGE_SIZE (2) and MAX_PAGE_SIZE (3)
    # stand in, so no list is ever every row.
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    assert _ids(_ok(root, TICKETS)) == ids[:2]
    assert _ids(_ok(root, f"{TICKETS}?limit=1000000000000000000000000")) == ids[:3]
    # DRF reads what is no number as absent, and an offset past the end as empty.
    assert _ids(_ok(root, f"{TICKETS}?limit=two&offset=-1")) == ids[:2]
    assert _ok(root, f"{TICKETS}?offset=1000000000000000000000000")["results"] == []


def test_a_class_page_size_wins_over_the_registration(view, monkeypatch, ids, root):
    class Fives(LimitOffsetPagination):
        default_limit = 5
        max_limit = 6

    monkeypatch.setattr(view, "pagination_class", Fives)
    assert _ids(_ok(root, TICKETS)) == ids[:5]
    assert _ids(_ok(root, f"{TICKETS}?limit=9")) == ids[:6]


# --- PageNumberPagination -------------------------------------------------------------


class SizedPages(PageNumberPagination):
    page_size = 4
    page_size_query_param = "size"
    max_page_size = 5


def test_page_numbers_page_the_list(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", SizedPages)
    body = _ok(root, f"{TICKETS}?page=2")
    assert body["count"] == len(ids)
    assert _ids(body) == ids[4:8]
    assert _query(body["next"]) == {"page": ["3"]}
    assert _ids(_ok(root, f"{TICKETS}?page=last")) == ids[8:]
    assert _ids(_ok(root, f"{TICKETS}?size=3&page=2")) == ids[3:6]
    assert _ids(_ok(root, f"{TICKETS}?size=50")) == ids[:5]  # max_page_size


@pytest.mark.parametrize(
    "page", ["0", "-1", "abc", "1.5", "4", "99999999999999999999999", "%00", "2%00"]
)
def test_a_page_that_is_not_there_is_not_found(view, monkeypatch, ids, root, page):
    monkeypatch.setattr(view, "pagination_class", SizedPages)
    body = _problem(root.get(f"{TICKETS}?page={page}"), 404, "not_found")
    assert body["detail"] == "Not found."  # the one wording of every not_found


def test_page_numbers_default_to_the_registrations_page_size(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", PageNumberPagination)  # PAGE_SIZE unset
    assert _ids(_ok(root, f"{TICKETS}?page=3")) == ids[4:6]


# --- CursorPagination -----------------------------------------------------------------


def _walk(client: APIClient, url: str) -> tuple[list[int], list[dict[str, Any]]]:
    seen_ids: list[int] = []
    pages: list[dict[str, Any]] = []
    next_url: str | None = url
    while next_url is not None:
        body = _ok(client, next_url)
        assert list(body) == ["next", "previous", "results"]  # a cursor counts nothing
        pages.append(body)
        seen_ids += _ids(body)
        next_url = body["next"]
    return seen_ids, pages


def test_a_cursor_follows_the_registrations_ordering(view, monkeypatch, seen, alice):
    monkeypatch.setattr(view, "pagination_class", CursorPagination)  # its own: -created
    walked, pages = _walk(alice, TICKETS)
    assert walked == seen  # pk order, each once, the secret ones never
    assert [len(_ids(page)) for page in pages] == [2, 2, 2, 1]  # PAGE_SIZE 2
    back = _ok(alice, pages[-1]["previous"])
    assert _ids(back) == seen[4:6]


def test_a_cursor_class_with_its_own_ordering_keeps_it(view, monkeypatch, seen, alice):
    class NewestFirst(CursorPagination):
        ordering = "-id"
        page_size = 3

    monkeypatch.setattr(view, "pagination_class", NewestFirst)
    assert _walk(alice, TICKETS)[0] == seen[::-1]


def _cursor(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(
    "cursor",
    [
        "not a cursor",
        _cursor("o=x"),
        _cursor("p=abc"),  # no id
        _cursor("p=99999999999999999999999999"),
        _cursor("p=1%00"),
        _cursor("r=1&p=%00"),
        "%00",
    ],
)
def test_a_cursor_that_is_not_one_is_not_found(view, monkeypatch, ids, root, cursor):
    monkeypatch.setattr(view, "pagination_class", CursorPagination)
    response = root.get(TICKETS, {"cursor": cursor})
    if response.status_code == 200:
        # A position past every id: an empty page, never an error.
        assert response.json()["results"] == []
        return
    _problem(response, 404, "not_found")


@pytest.mark.parametrize("position", ["ann%00", "%00"])
def test_a_cursor_position_with_nul_is_not_found(view, monkeypatch, ids, root, position):
    # A text ordering: PostgreSQL refuses NUL in text, so it must not reach the query.
    class ByAssignee(CursorPagination):
        ordering = "assignee"

    monkeypatch.setattr(view, "pagination_class", ByAssignee)
    _problem(root.get(TICKETS, {"cursor": _cursor(f"p={position}")}), 404, "not_found")


def test_a_cursor_over_a_caller_ordering_keeps_a_stable_order(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", CursorPagination)
    monkeypatch.setattr(view, "filter_backends", [OrderingFilter])
    walked, _ = _walk(root, f"{TICKETS}?ordering=assignee")
    expected = sorted(ids, key=lambda pk: (ASSIGNEES[ids.index(pk)], pk))
    assert walked == expected


# --- SearchFilter and OrderingFilter --------------------------------------------------


def test_search_narrows_what_the_caller_may_see(view, monkeypatch, seen, alice):
    monkeypatch.setattr(view, "filter_backends", [SearchFilter])
    monkeypatch.setattr(view, "search_fields", ["assignee"], raising=False)
    body = _ok(alice, f"{TICKETS}?search=bo")
    bo = [pk for pk in seen if Ticket.objects.get(pk=pk).assignee == "bo"]
    assert body["count"] == len(bo)  # the app's own page: page 1 of the narrowed list
    assert _ids(body) == bo
    # Hidden tickets stay hidden, whatever is searched for.
    assert _ok(alice, f"{TICKETS}?search=secret")["count"] == 0


def test_search_and_limit_offset_together(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    monkeypatch.setattr(view, "filter_backends", [SearchFilter])
    monkeypatch.setattr(view, "search_fields", ["assignee"], raising=False)
    ann = [pk for pk, name in zip(ids, ASSIGNEES, strict=True) if name == "ann"]
    body = _ok(root, f"{TICKETS}?search=ann&limit=1&offset=1")
    assert body["count"] == len(ann)
    assert _ids(body) == ann[1:2]
    assert _query(body["next"]) == {"search": ["ann"], "limit": ["1"], "offset": ["2"]}


@pytest.mark.parametrize("pattern", ["(", "[", "a{99999999}", "(a%2B)%2B$"])
def test_regex_search_fields_are_left_out_and_warned_about(view, monkeypatch, ids, root, pattern):
    monkeypatch.setattr(view, "filter_backends", [SearchFilter])
    monkeypatch.setattr(view, "search_fields", ["$assignee", "state"], raising=False)
    # The caller's pattern never reaches the database as one: "(" is no error there.
    body = _ok(root, f"{TICKETS}?search={pattern}")
    assert body["count"] == 0  # searched in state, by words
    assert _ok(root, f"{TICKETS}?search=open")["count"] > 0
    assert "affordances.W012" in _ids_of_checks()


@pytest.mark.parametrize(
    "search",
    ["%00", "a%00b", "+".join(["w"] * 1000), "x" * 100_000],
)
def test_a_hostile_search_is_a_validation_error(view, monkeypatch, ids, root, search):
    monkeypatch.setattr(view, "filter_backends", [SearchFilter])
    monkeypatch.setattr(view, "search_fields", ["assignee", "state"], raising=False)
    body = _problem(root.get(f"{TICKETS}?search={search}"), 400, "validation_error")
    assert list(body["errors"]) == ["search"]


def test_ordering_orders_with_the_registrations_ordering_as_tiebreak(
    monkeypatch, newest_first, root
):
    ids = _tickets()
    view = generic_api.TicketViewSet
    monkeypatch.setattr(view, "filter_backends", [OrderingFilter])
    # Tickets sharing an assignee keep the registration's order (-pk) among them.
    expected = sorted(ids, key=lambda pk: (ASSIGNEES[ids.index(pk)], -pk))
    body = _ok(root, f"{TICKETS}?ordering=assignee&page_size=3")
    assert _ids(body) == expected[:3]
    with CaptureQueriesContext(connection) as queries:
        _ok(root, f"{TICKETS}?ordering=-assignee&page_size=3&page=2")
    listing = next(q["sql"] for q in queries if "ORDER BY" in q["sql"])
    assert listing.rstrip().split("ORDER BY")[1].count(",") == 1, listing  # assignee, id
    reverse = sorted(ids, key=lambda pk: (ASSIGNEES[ids.index(pk)], pk), reverse=True)
    assert _ids(_ok(root, f"{TICKETS}?ordering=-assignee&page_size=3&page=2")) == reverse[3:6]


@pytest.mark.parametrize("ordering", ["nope", "url", "-url,", "%00", "__class__", "," * 5000])
def test_an_ordering_the_list_cannot_follow_is_ignored(view, monkeypatch, ids, root, ordering):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    monkeypatch.setattr(view, "filter_backends", [OrderingFilter])
    assert _ids(_ok(root, f"{TICKETS}?ordering={ordering}&limit=3")) == ids[:3]


def test_an_ordering_field_that_is_no_column_is_ignored(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "filter_backends", [OrderingFilter])
    monkeypatch.setattr(view, "ordering_fields", ["assignee", "nickname"], raising=False)
    assert _ids(_ok(root, f"{TICKETS}?ordering=nickname")) == ids[:2]


# --- the loans: a FILTERSET, and django-filter's backend ------------------------------


@pytest.fixture
def loans_project(db: None) -> Iterator[None]:
    affordances = {
        **django_settings.AFFORDANCES,
        "MODELS": lending_api.REGISTRATIONS,
        "OPENAPI_MEMO": False,  # each test changes the view under the same caller
    }
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(lending_api)
        with override_settings(ROOT_URLCONF="tests.generic.lending_api"):
            yield


@pytest.fixture
def loans(loans_project: None) -> dict[str, list[int]]:
    import datetime

    day = datetime.date(2026, 1, 2)
    books = {title: Book.objects.create(title=title) for title in ("Dune", "Emma", "Dracula")}
    made: dict[str, list[int]] = {"short": [], "long": []}
    for index, (title, kind) in enumerate(
        [("Dune", "short"), ("Emma", "long"), ("Dracula", "long"), ("Dune", "long")]
    ):
        loan = Loan.objects.create(book=books[title], due=day, kind=kind, fine=index)
        made[kind].append(loan.pk)
    return made


def test_search_applies_after_the_filterset(monkeypatch, loans, root):
    view = lending_api.LoanViewSet
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    monkeypatch.setattr(view, "filter_backends", [SearchFilter])
    monkeypatch.setattr(view, "search_fields", ["book__title"], raising=False)
    body = _ok(root, f"{LOANS}?kind=long&search=D")  # Dracula and Dune; long only
    assert _ids(body) == [loans["long"][1], loans["long"][2]]
    assert body["count"] == 2
    # A FILTERSET value it refuses is the same validation_error with a paginator.
    _problem(root.get(f"{LOANS}?kind=medium&limit=1"), 400, "validation_error")


def test_a_cursor_ignores_a_caller_ordering_across_a_relation(monkeypatch, loans, root):
    # A cursor's position is an attribute of the object: book__title is none.
    view = lending_api.LoanViewSet
    monkeypatch.setattr(view, "pagination_class", CursorPagination)
    monkeypatch.setattr(view, "filter_backends", [OrderingFilter])
    monkeypatch.setattr(view, "ordering_fields", ["book__title", "fine"], raising=False)
    walked, _ = _walk(root, f"{LOANS}?ordering=book__title")
    assert walked == sorted(loans["short"] + loans["long"])  # the registration's: pk
    walked, _ = _walk(root, f"{LOANS}?ordering=-fine")
    assert walked == sorted(loans["short"] + loans["long"], reverse=True)


class FineFrom(django_filters.FilterSet):
    # Named as LimitOffsetPagination's parameter: paging, not this filter, reads it.
    offset = django_filters.NumberFilter(field_name="fine", lookup_expr="gte")

    class Meta:
        model = Loan
        fields: list[str] = []


def test_a_paginators_parameters_are_not_filters(loans, root, monkeypatch):
    registration = {**lending_api.REGISTRATIONS["generic.Loan"]}
    registration["FILTERSET"] = "tests.test_drf_pagination.FineFrom"
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Loan": registration}}
    with override_settings(AFFORDANCES=affordances):
        view = lending_api.LoanViewSet
        monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
        every = sorted(loans["short"] + loans["long"])
        assert _ids(_ok(root, f"{LOANS}?offset=3")) == every[3:]
        monkeypatch.setattr(view, "pagination_class", None)
        assert _ids(_ok(root, f"{LOANS}?offset=3")) == every[3:]  # fine 3 and up


class ShortOnly(django_filters.FilterSet):
    kind = django_filters.ChoiceFilter(choices=[("short", "Short")])

    class Meta:
        model = Loan
        fields: list[str] = []


def test_django_filter_backend_does_not_filter_twice(monkeypatch, loans, root):
    view = lending_api.LoanViewSet
    monkeypatch.setattr(view, "filter_backends", [DjangoFilterBackend, OrderingFilter])
    # The view's own FilterSet would refuse kind=long: the registration's is the one.
    monkeypatch.setattr(view, "filterset_class", ShortOnly, raising=False)
    body = _ok(root, f"{LOANS}?kind=long&ordering=-fine")
    assert _ids(body) == loans["long"][::-1]
    messages = [m for m in check_rest_face() if m.id == "affordances.W011"]
    assert len(messages) == 1 and "filterset_class" in messages[0].msg


# --- the OpenAPI document -------------------------------------------------------------


def _list_operation(client: APIClient) -> tuple[dict[str, Any], dict[str, Any]]:
    document = client.get("/api/schema/", HTTP_ACCEPT=OPENAPI_JSON).json()
    operation = document["paths"]["/api/loans/"]["get"]
    return operation, document["components"]["schemas"]


def _parameters(operation: dict[str, Any]) -> set[str]:
    # Every view's format, every resource view's affordances (the lists' shape).
    return {p["name"] for p in operation["parameters"]} - {"format", "affordances"}


def _page_schema(operation: dict[str, Any], schemas: dict[str, Any]) -> dict[str, Any]:
    ref = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
    schema: dict[str, Any] = schemas[ref.rsplit("/", 1)[-1]]
    return schema


FILTERS = {"book", "due", "fine_above", "renewed", "kind", "book_id"}


def test_the_document_states_the_apps_own_page_without_a_paginator(loans_project, root):
    operation, schemas = _list_operation(root)
    assert _parameters(operation) == {"page", "page_size", *FILTERS}
    page = _page_schema(operation, schemas)
    assert set(page["properties"]) == {"count", "next", "previous", "results"}


@pytest.mark.parametrize(
    ("pagination_class", "paging", "keys"),
    [
        (LimitOffsetPagination, {"limit", "offset"}, {"count", "next", "previous", "results"}),
        (SizedPages, {"page", "size"}, {"count", "next", "previous", "results"}),
        (CursorPagination, {"cursor"}, {"next", "previous", "results"}),
    ],
)
def test_the_document_states_the_paginators_parameters_and_page(
    monkeypatch, loans_project, root, pagination_class, paging, keys
):
    view = lending_api.LoanViewSet
    monkeypatch.setattr(view, "pagination_class", pagination_class)
    monkeypatch.setattr(view, "filter_backends", [SearchFilter, OrderingFilter])
    operation, schemas = _list_operation(root)
    assert _parameters(operation) == {*paging, "search", "ordering", *FILTERS}
    page = _page_schema(operation, schemas)
    assert set(page["properties"]) == keys
    assert page["properties"]["results"]["items"] == {"$ref": "#/components/schemas/Loan"}


def test_the_document_leaves_out_backends_the_list_does_not_apply(monkeypatch, loans_project, root):
    class Anything(BaseFilterBackend):
        def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
            return [{"name": "anything", "in": "query", "schema": {"type": "string"}}]

    monkeypatch.setattr(lending_api.LoanViewSet, "filter_backends", [Anything])
    operation, _ = _list_operation(root)
    assert _parameters(operation) == {"page", "page_size", *FILTERS}


# --- HAL and MCP ----------------------------------------------------------------------


def test_hal_renders_a_cursor_page_without_a_count(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", CursorPagination)
    response = root.get(TICKETS, HTTP_ACCEPT="application/hal+json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "count" not in body
    assert "next" in body["_links"]
    assert [item["id"] for item in body["_embedded"]["tickets"]] == ids[:2]


def test_the_browsable_api_shows_the_paginators_controls_and_the_filters(
    view, monkeypatch, ids, root
):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    monkeypatch.setattr(view, "filter_backends", [SearchFilter, OrderingFilter])
    monkeypatch.setattr(view, "search_fields", ["assignee"], raising=False)
    response = root.get(f"{TICKETS}?limit=2&offset=1&search=ann", HTTP_ACCEPT="text/html")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<ul class="pagination">' in html
    assert 'name="search" value="ann"' in html


def test_the_mcp_list_tool_keeps_page_and_page_size(view, monkeypatch, ids, root):
    monkeypatch.setattr(view, "pagination_class", LimitOffsetPagination)
    response = root.post(
        "/agents/mcp",
        data=json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "list_tickets", "arguments": {"page": 2, "pageSize": 3}},
            }
        ),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": MCP_VERSION},
    )
    result = response.json()["result"]
    assert result["isError"] is False, result
    page = result["structuredContent"]
    assert _ids(page) == ids[3:6]
    # Its links are the REST list's own, in the list's paging: they reach the same pages.
    assert _query(page["next"]) == {"limit": ["3"], "offset": ["6"]}
    assert _query(page["previous"]) == {"limit": ["3"]}
    assert _ids(_ok(root, page["next"])) == ids[6:9]
    assert _ids(_ok(root, page["previous"])) == ids[0:3]


@pytest.mark.parametrize(
    ("pagination_class", "following"),
    [
        (None, {"page_size": ["3"], "page": ["3"]}),
        (SizedPages, {"page": ["3"], "size": ["3"]}),
        (CursorPagination, None),  # no link can say "page 3": the tool's page argument can
    ],
)
def test_the_mcp_list_tool_links_in_the_lists_own_paging(
    view, monkeypatch, ids, root, pagination_class, following
):
    monkeypatch.setattr(view, "pagination_class", pagination_class)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "list_tickets", "arguments": {"page": 2, "pageSize": 3}},
    }
    response = root.post(
        "/agents/mcp",
        data=json.dumps(body),
        content_type="application/json",
        headers={"Accept": "application/json", "MCP-Protocol-Version": MCP_VERSION},
    )
    page = response.json()["result"]["structuredContent"]
    if following is None:
        assert page["next"] is None and page["previous"] is None
        return
    assert _query(page["next"]) == following
    assert _ids(_ok(root, page["next"])) == ids[6:9]


# --- system checks --------------------------------------------------------------------


def _ids_of_checks() -> list[str]:
    return sorted(str(message.id) for message in check_rest_face())


def test_the_defaults_raise_no_warning(project):
    assert _ids_of_checks() == []


def test_a_pagination_class_that_is_no_paginator_is_a_warning(view, monkeypatch, ids, root):
    class Pages:
        page_size = 3

    monkeypatch.setattr(view, "pagination_class", Pages)
    assert _ids_of_checks() == ["affordances.W009"]
    # The app's own page answers.
    assert list(_ok(root, f"{TICKETS}?page=2")) == ["count", "next", "previous", "results"]


def test_a_cursor_over_a_non_unique_first_field_is_a_warning(db, monkeypatch):
    for ordering, expected in [(["pk"], []), (["-id"], []), (["assignee", "pk"], ["W010"])]:
        registration = {**generic_api.REGISTRATION, "ORDERING": ordering}
        for _ in _ticket_project(registration):
            monkeypatch.setattr(generic_api.TicketViewSet, "pagination_class", CursorPagination)
            found = [i.removeprefix("affordances.") for i in _ids_of_checks()]
            assert found == expected, ordering

    class ByState(CursorPagination):
        ordering = "state"

    for _ in _ticket_project(generic_api.REGISTRATION):
        monkeypatch.setattr(generic_api.TicketViewSet, "pagination_class", ByState)
        assert _ids_of_checks() == ["affordances.W010"]


def test_a_filter_backend_the_list_does_not_apply_is_a_warning(view, monkeypatch, ids, root):
    class OnlyAnn(BaseFilterBackend):
        def filter_queryset(self, request: Any, queryset: Any, view: Any) -> Any:
            return queryset.filter(assignee="ann")

    monkeypatch.setattr(view, "filter_backends", [OnlyAnn, SearchFilter, DjangoFilterBackend])
    assert _ids_of_checks() == ["affordances.W011"]
    assert _ok(root, TICKETS)["count"] == len(ids)  # not applied: W011 says so


# --- DRF's DEFAULT_PAGINATION_CLASS, set as a project sets it -------------------------


PROJECT_SETTINGS = """
from tests.settings import *  # noqa: F403

REST_FRAMEWORK = {
    **REST_FRAMEWORK,  # noqa: F405
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 4,
}
AFFORDANCES = {"NAMESPACE": "example", "MODELS": {"generic.Ticket": %r}}
ROOT_URLCONF = "tests.generic.api"
"""

PROJECT_SCRIPT = """
import json

import django

django.setup()

from django.contrib.auth import get_user_model
from django.core.management import call_command
from rest_framework.test import APIClient

from tests.generic.models import Ticket

call_command("migrate", run_syncdb=True, verbosity=0)
ids = [Ticket.objects.create(assignee=str(n)).pk for n in range(6)]
client = APIClient()
client.force_authenticate(get_user_model().objects.create_superuser("root", password="x"))
pages = [client.get(url).json() for url in ("/v2/tickets/?limit=2&offset=1", "/v2/tickets/")]
print(json.dumps({"ids": ids, "pages": pages}))
"""


def test_drf_default_pagination_class_pages_the_list(tmp_path):
    """The issue's case end to end: DRF reads DEFAULT_PAGINATION_CLASS when its views are
    defined, so a project's settings (a process of their own) are the only honest test."""
    settings_module = tmp_path / "drf_paging_settings.py"
    settings_module.write_text(PROJECT_SETTINGS % (generic_api.REGISTRATION,))
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)]),
        "DJANGO_SETTINGS_MODULE": "drf_paging_settings",
        "DATABASE_URL": "sqlite:///",  # a database of its own, in memory
    }
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(PROJECT_SCRIPT)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    ids, (window, first) = out["ids"], out["pages"]
    assert window["count"] == 6
    assert [item["id"] for item in window["results"]] == ids[1:3]
    assert _query(window["next"]) == {"limit": ["2"], "offset": ["3"]}
    assert [item["id"] for item in first["results"]] == ids[:4]  # DRF's PAGE_SIZE 4
