"""Adoption into an existing project: the wheel, a fresh virtualenv, the project's own ways.

The project is written from the code blocks of ``docs/howto/existing-project.md`` (each
names its file), a lending library's loans desk whose choices the library must fit
rather than make: a custom user model (``members.Member``), a model keyed by a UUID with
two state machines named ``status`` and ``fine_status``, DRF's
``LimitOffsetPagination``, DRF's ``TokenAuthentication`` (on MCP too), a django-filter
``FilterSet`` with a number, a date and a boolean filter, an input serializer with a
related field and a ``HiddenField(default=CurrentUserDefault())``, and transitions that
take who acted as ``by=`` (django-fsm-log's convention). Every face is driven over HTTP
against ``runserver`` on 127.0.0.1 — REST, HAL-FORMS, MCP with the official SDK client —
and the admin in headless Chromium (skipped, said so, without ``/usr/bin/chromium``). On
PostgreSQL (``DATABASE_URL``) the project gets a database of its own. The wheel, the
virtualenv, the project and its server: ``tests/adoption_support.py``.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.adoption_support import ROOT, Project, adopted, wanted

PAGE = ROOT / "docs" / "howto" / "existing-project.md"
PASSWORD = "adoption-password"
CHROMIUM = "/usr/bin/chromium"
HAL_FORMS = {"Accept": "application/prs.hal-forms+json"}
MALFORMED = ["not-a-uuid", "12", "0000000-0000-0000-0000-000000000000"]

pytestmark = wanted

SEED = """
import json
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from books.models import Book
from loans.models import Loan

Member = get_user_model()
today = timezone.localdate()


def perms(*names):
    return Permission.objects.filter(content_type__app_label="loans", codename__in=names)


members = {{}}
for name in ("mia", "max", "ada"):
    members[name] = Member.objects.create_user(name, password="{pw}")
    members[name].user_permissions.set(perms("add_loan", "renew_loan", "pay_fine"))
lib = members["lib"] = Member.objects.create_user("lib", password="{pw}", is_staff=True)
lib.user_permissions.set(
    perms("view_loan", "change_loan", "check_in_loan", "assess_fine", "renew_loan")
)
titles = [
    "Dune", "Emma", "Walden", "Ulysses", "Beloved", "Ivanhoe", "Kim", "Middlemarch",
    "Persuasion", "Rebecca",
]
books = {{title: Book.objects.create(title=title) for title in titles}}
withdrawn = Book.objects.create(title="Old atlas", withdrawn=True)


def lend(member, title, days=7, **fields):
    due = today + timedelta(days=days)
    return str(Loan.objects.create(member=members[member], book=books[title], due=due, **fields).pk)


ids = {{
    "today": today.isoformat(),
    "members": {{name: member.pk for name, member in members.items()}},
    "books": {{title: book.pk for title, book in books.items()}},
    "withdrawn": withdrawn.pk,
    "renew": lend("mia", "Dune"),
    "limit": lend("mia", "Emma", renewals=2),
    "owed": lend("mia", "Walden", days=-20, status="returned", fine_status="owed", fine="2.00"),
    "mcp": lend("max", "Ulysses"),
    "overdue": lend("ada", "Beloved", days=-3),
    "bulk1": lend("ada", "Ivanhoe"),
    "bulk2": lend("ada", "Kim"),
    "edit": lend("ada", "Middlemarch"),
}}
print(json.dumps(ids))
"""


@pytest.fixture(scope="module")
def project(adoption_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    with adopted(
        tmp_path_factory.mktemp("adoption-existing"),
        wheel=adoption_wheel,
        requirements=[str(adoption_wheel), "django-filter>=24.1"],
        page=PAGE,
        package="library",
        apps=["members", "books", "loans"],
        seed=SEED.format(pw=PASSWORD),
    ) as made:
        yield made


_tokens: dict[tuple[str, str], str] = {}


def token(project: Project, username: str) -> str:
    """The user's key from the project's own endpoint (DRF's obtain_auth_token)."""
    if (project.url, username) not in _tokens:
        response = httpx2.post(
            f"{project.url}/api/token/", json={"username": username, "password": PASSWORD}
        )
        assert response.status_code == 200, response.text
        _tokens[project.url, username] = response.json()["token"]
    return _tokens[project.url, username]


def client(project: Project, username: str) -> httpx2.Client:
    headers = {"Authorization": f"Token {token(project, username)}"}
    return httpx2.Client(base_url=project.url, headers=headers, timeout=30)


def audit(project: Project, pk: Any) -> list[list[Any]]:
    """The object's audit records: operation, face, arguments, user id, oldest first."""
    return project.shell(
        "import json; from affordances.models import AuditRecord; print(json.dumps(list("
        f"AuditRecord.objects.filter(object_id='{pk}').order_by('pk')"
        ".values_list('operation_name', 'via', 'arguments', 'user_id'))))"
    )


def names(entries: list[dict[str, Any]]) -> set[str]:
    return {entry["name"] for entry in entries}


def reasons(loan: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["reason"] for entry in loan["unavailableAffordances"]}


# --- the project ----------------------------------------------------------------------


def test_the_system_checks_find_nothing(project: Project) -> None:
    assert "System check identified no issues (0 silenced)." in project.manage("check")


def test_token_authentication_guards_rest_and_mcp_alike(project: Project) -> None:
    listing = f"{project.url}/api/loans/"
    tools = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    mcp_headers = {"Accept": "application/json, text/event-stream"}
    for headers in ({}, {"Authorization": "Token 0123456789abcdef"}):
        rest = httpx2.get(listing, headers=headers)
        assert rest.status_code == 401, rest.text
        assert rest.headers["WWW-Authenticate"] == "Token"
        assert rest.headers["Content-Type"] == "application/problem+json"
        mcp = httpx2.post(f"{project.url}/mcp", json=tools, headers={**mcp_headers, **headers})
        assert mcp.status_code == 401, mcp.text
        assert mcp.headers["WWW-Authenticate"].startswith("Token")
    with client(project, "mia") as mia:
        assert mia.get("/api/loans/").status_code == 200


# --- the catalog ----------------------------------------------------------------------


def test_the_catalog_types_the_uuid_key_the_filters_and_the_inputs(project: Project) -> None:
    with client(project, "mia") as mia:
        operations = {op["name"]: op for op in mia.get("/api/operations/").json()["operations"]}
    with client(project, "lib") as lib:
        librarian = {op["name"] for op in lib.get("/api/operations/").json()["operations"]}
    reads = {"list_loans", "get_loan"}
    assert set(operations) == reads | {"create_loan", "renew_loan", "pay_fine"}
    assert librarian == reads | {"renew_loan", "check_in_loan", "assess_fine"}

    # The related field is the book's key; the hidden field is no argument.
    borrow = operations["create_loan"]["inputSchema"]
    assert set(borrow["properties"]) == {"book"}
    assert borrow["properties"]["book"]["type"] == "integer"
    assert borrow["required"] == ["book"]
    assert borrow["additionalProperties"] is False

    # The UUID key, and no `by`: the library passes the caller.
    renew = operations["renew_loan"]["inputSchema"]["properties"]
    assert (renew["loanId"]["type"], renew["loanId"]["format"]) == ("string", "uuid")
    assert "by" not in renew

    listing = operations["list_loans"]["inputSchema"]["properties"]
    assert listing["book"]["type"] == "integer"
    assert (listing["due"]["type"], listing["due"]["format"]) == ("string", "date")
    assert listing["renewed"]["type"] == "boolean"


# --- REST -----------------------------------------------------------------------------


def test_the_list_pages_with_limit_and_offset_and_filters(project: Project) -> None:
    with client(project, "lib") as lib:
        everything = lib.get("/api/loans/", params={"limit": 100}).json()
        response = lib.get("/api/loans/", params={"limit": 2, "offset": 1})
        by_book = lib.get("/api/loans/", params={"book": project.ids["books"]["Ulysses"]})
        by_due = lib.get("/api/loans/", params={"due": project.ids["today"]})
        not_a_number = lib.get("/api/loans/", params={"book": "Dune"})
    assert response.status_code == 200, response.text
    page = response.json()
    assert set(page) == {"count", "next", "previous", "results"}
    assert page["count"] == everything["count"] >= 8
    assert [loan["id"] for loan in page["results"]] == [
        loan["id"] for loan in everything["results"][1:3]
    ]
    assert "limit=2" in page["next"] and "offset=3" in page["next"]
    assert "limit=2" in page["previous"] and "offset=1" not in page["previous"]
    assert all("affordances" in loan for loan in page["results"])

    assert [loan["id"] for loan in by_book.json()["results"]] == [project.ids["mcp"]]
    due = {loan["id"] for loan in by_due.json()["results"]}
    assert due == {project.ids["overdue"], project.ids["owed"]}
    assert not_a_number.status_code == 400
    assert not_a_number.json()["code"] == "validation_error"
    assert "book" in not_a_number.json()["errors"]


def test_each_loan_says_what_applies_with_the_reasons_of_its_own_field(project: Project) -> None:
    ids = project.ids
    with client(project, "mia") as mia:
        active = mia.get(f"/api/loans/{ids['limit']}/").json()
        returned = mia.get(f"/api/loans/{ids['owed']}/").json()
    # `status` is active: pay_fine is refused for the state of `fine_status` (none).
    assert names(active["affordances"]) == set()
    assert reasons(active) == {"renew_loan": "renewal_limit", "pay_fine": "no_fine"}
    # `status` is returned and `fine_status` owed: each operation reads its own field.
    assert names(returned["affordances"]) == {"pay_fine"}
    assert reasons(returned) == {"renew_loan": "already_returned"}


def test_a_malformed_or_hidden_id_is_a_missing_loan(project: Project) -> None:
    with client(project, "mia") as mia:
        missing = mia.get(f"/api/loans/{uuid.uuid4()}/")
        assert missing.status_code == 404
        assert missing.headers["Content-Type"] == "application/problem+json"
        assert missing.json()["code"] == "not_found"
        hidden = mia.get(f"/api/loans/{project.ids['mcp']}/")  # max's
        assert (hidden.status_code, hidden.content) == (404, missing.content)
        for key in MALFORMED:
            for response in (
                mia.get(f"/api/loans/{key}/"),
                mia.get(f"/api/loans/{key}/", headers=HAL_FORMS),
                mia.post(f"/api/loans/{key}/renew/", json={}),
            ):
                assert response.status_code == 404, (key, response.text)
                assert response.json()["code"] == "not_found"


def test_renewing_over_rest_with_if_match_records_who_acted(project: Project) -> None:
    pk, mia_id = project.ids["renew"], project.ids["members"]["mia"]
    with client(project, "mia") as mia:
        before = mia.get(f"/api/loans/{pk}/").json()
        (renew,) = [a for a in before["affordances"] if a["name"] == "renew_loan"]
        assert renew["target"] == f"{project.url}/api/loans/{pk}/renew/"
        assert renew["arguments"] == {"loanId": pk}
        assert renew["validForVersion"] == 1
        done = mia.post(renew["target"], json={}, headers={"If-Match": '"1"'})
        assert done.status_code == 200, done.text
        stale = mia.post(renew["target"], json={}, headers={"If-Match": '"1"'})
        unknown = mia.post(renew["target"], json={"by": mia_id}, headers={"If-Match": '"2"'})
    loan = done.json()
    assert done.headers["ETag"] == '"2"'
    assert (loan["version"], loan["renewals"], loan["renewed_by"]) == (2, 1, mia_id)
    assert date.fromisoformat(loan["due"]) == date.fromisoformat(before["due"]) + timedelta(14)
    assert stale.status_code == 412 and stale.json()["code"] == "stale_version"
    # `by` is no argument: a caller cannot name someone else.
    assert unknown.status_code == 400 and "by" in unknown.json()["errors"]
    assert audit(project, pk) == [["renew_loan", "api", {}, mia_id]]


def test_borrowing_takes_a_book_by_id_and_the_member_from_the_caller(project: Project) -> None:
    ids = project.ids
    books, members = ids["books"], ids["members"]
    with client(project, "mia") as mia:
        lent = mia.post("/api/loans/", json={"book": books["Persuasion"]})
        named = mia.post("/api/loans/", json={"book": books["Rebecca"], "member": members["max"]})
        withdrawn = mia.post("/api/loans/", json={"book": ids["withdrawn"]})
        nowhere = mia.post("/api/loans/", json={"book": 987654})
        out = mia.post("/api/loans/", json={"book": books["Dune"]})
        text = mia.post("/api/loans/", json={"book": "Dune"})
    assert lent.status_code == 201, lent.text
    loan = lent.json()
    assert (loan["book"], loan["member"]) == (books["Persuasion"], members["mia"])
    assert (loan["status"], loan["fine_status"], loan["version"]) == ("active", "none", 1)
    # The audit record holds the book's id, not the object.
    assert audit(project, loan["id"]) == [
        ["create_loan", "api", {"book": books["Persuasion"]}, members["mia"]]
    ]

    assert named.status_code == 400 and named.json()["errors"] == {"member": ["Unknown argument."]}
    # A withdrawn book and a missing one are refused alike.
    assert withdrawn.status_code == nowhere.status_code == 400
    refusals = [
        response.json()["errors"]["book"][0].replace(str(book), "ID")
        for response, book in ((withdrawn, ids["withdrawn"]), (nowhere, 987654))
    ]
    assert refusals[0] == refusals[1]
    assert out.status_code == 400
    assert out.json()["errors"]["book"] == ["This book is out on loan."]
    assert text.status_code == 400 and "book" in text.json()["errors"]


# --- HAL-FORMS ------------------------------------------------------------------------


def test_hal_forms_offers_the_transitions_and_the_borrow_form(project: Project) -> None:
    pk = project.ids["edit"]
    with client(project, "lib") as lib:
        item = lib.get(f"/api/loans/{pk}/", headers=HAL_FORMS)
    assert item.status_code == 200, item.text
    assert item.headers["Content-Type"].startswith("application/prs.hal-forms+json")
    document = item.json()
    assert document["_links"]["self"]["href"] == f"{project.url}/api/loans/{pk}/"
    templates = document["_templates"]
    assert {"renew_loan", "check_in_loan"} <= set(templates)
    assert templates["check_in_loan"]["target"] == f"{project.url}/api/loans/{pk}/check_in/"
    assert "assess_fine" not in templates  # not overdue

    with client(project, "mia") as mia:
        collection = mia.get("/api/loans/", headers=HAL_FORMS, params={"limit": 2})
    assert collection.status_code == 200, collection.text
    borrow = collection.json()["_templates"]["create_loan"]
    assert [prop["name"] for prop in borrow["properties"]] == ["book"]
    # The book's integer key, as the operation's inputSchema says.
    assert borrow["properties"][0]["type"] == "number"


# --- MCP ------------------------------------------------------------------------------


def test_mcp_with_the_official_sdk_client(project: Project) -> None:
    ids = project.ids
    pk, max_id = ids["mcp"], ids["members"]["max"]

    async def call(mcp: McpClient, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            result = await mcp.call_tool(tool, arguments)
        except MCPError as error:  # a JSON-RPC error instead of a tool result
            return ("rpc", {"code": error.code, "message": error.message})
        return (result.is_error, result.structured_content)

    async def scenario() -> dict[str, Any]:
        headers = {"Authorization": f"Token {token(project, 'max')}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            McpClient(
                streamable_http_client(f"{project.url}/mcp", http_client=http), mode="legacy"
            ) as mcp,
        ):
            seen: dict[str, Any] = {"tools": {tool.name for tool in (await mcp.list_tools()).tools}}
            steps = {
                "by book": ("list_loans", {"book": ids["books"]["Ulysses"]}),
                "by due": ("list_loans", {"due": "2000-01-01"}),
                "not renewed": ("list_loans", {"renewed": False}),
                "get": ("get_loan", {"loanId": pk}),
                "renew": ("renew_loan", {"loanId": pk, "expectedVersion": 1}),
                "borrow": ("create_loan", {"book": ids["books"]["Rebecca"]}),
                "named": ("create_loan", {"book": ids["books"]["Kim"], "member": max_id}),
                "hidden": ("get_loan", {"loanId": ids["renew"]}),
            }
            for label, (tool, arguments) in steps.items():
                seen[label] = await call(mcp, tool, arguments)
            seen["malformed"] = [
                await call(mcp, tool, {"loanId": key})
                for key in MALFORMED
                for tool in ("get_loan", "renew_loan")
            ]
            return seen

    seen = asyncio.run(scenario())
    assert seen["tools"] == {"list_loans", "get_loan", "create_loan", "renew_loan", "pay_fine"}

    error, body = seen["by book"]
    assert error is False and [loan["id"] for loan in body["results"]] == [pk]
    error, body = seen["by due"]
    assert error is False and body["count"] == 0
    error, body = seen["not renewed"]
    assert error is False and pk in [loan["id"] for loan in body["results"]]
    error, body = seen["get"]
    assert error is False and "renew_loan" in names(body["affordances"])

    error, body = seen["renew"]
    assert error is False, body
    assert (body["version"], body["renewals"], body["renewed_by"]) == (2, 1, max_id)
    assert audit(project, pk) == [["renew_loan", "mcp", {}, max_id]]

    error, body = seen["borrow"]
    assert error is False, body
    assert (body["book"], body["member"]) == (ids["books"]["Rebecca"], max_id)
    error, body = seen["named"]
    assert error is True and body["code"] == "validation_error"
    assert body["errors"] == {"member": ["Unknown argument."]}

    error, body = seen["hidden"]
    assert error is True and body["code"] == "not_found"
    # A malformed UUID is a missing loan, on the read tool and the transition tool alike.
    for error, body in seen["malformed"]:
        assert error is True and body["code"] == "not_found", body


# --- the admin, in a browser ----------------------------------------------------------


@pytest.fixture
def page(project: Project) -> Iterator[Any]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed (apt-get install chromium)")
    playwright_api = pytest.importorskip("playwright.sync_api")
    with playwright_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync"],
        )
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 900})
            tab = context.new_page()
            tab.set_default_timeout(15_000)
            tab.goto(f"{project.url}/admin/login/")
            tab.fill("#id_username", "lib")
            tab.fill("#id_password", PASSWORD)
            tab.click("input[type=submit]")
            playwright_api.expect(tab.locator("#user-tools")).to_contain_text("lib")
            yield tab
            context.close()
        finally:
            browser.close()


def test_the_admin_in_a_browser(project: Project, page: Any) -> None:
    from playwright.sync_api import expect

    ids, base = project.ids, f"{project.url}/admin/loans/loan"
    lib_id = ids["members"]["lib"]

    # An operation form: assess a fine on the overdue loan, in its own field's machine.
    overdue = ids["overdue"]
    page.goto(f"{base}/{overdue}/change/")
    expect(page.locator(".field-status .readonly")).to_have_text("active")
    expect(page.locator(".field-fine_status .readonly")).to_have_text("none")
    page.locator(".affordance-button[data-operation=assess_fine]").click()
    page.wait_for_url(f"**/{overdue}/operation/assess_fine/")
    page.fill("input[name=amount]", "1.50")
    page.click("form[data-operation=assess_fine] input[type=submit]")
    page.wait_for_url(f"**/{overdue}/change/")
    expect(page.locator(".messagelist .success")).to_contain_text("Assess fine: done")
    expect(page.locator(".field-fine_status .readonly")).to_have_text("owed")
    expect(page.locator(".field-status .readonly")).to_have_text("active")

    # A change-form save: the due date and the note; never a state or the version.
    edit = ids["edit"]
    page.goto(f"{base}/{edit}/change/")
    for readonly in ("status", "fine_status", "version"):
        expect(page.locator(f"#loan_form [name={readonly}]")).to_have_count(0)
    new_due = (date.fromisoformat(ids["today"]) + timedelta(days=21)).isoformat()
    page.fill("input[name=due]", new_due)
    page.fill("textarea[name=note]", "Spine repaired")
    page.click("input[name=_save]")
    expect(page.locator(".messagelist .success")).to_be_visible()

    # A bulk action on the change list: check two loans in, each by this librarian.
    page.goto(f"{base}/")
    for pk in (ids["bulk1"], ids["bulk2"]):
        page.check(f"input[name=_selected_action][value='{pk}']")
    page.select_option("select[name=action]", "operation_check_in_loan")
    page.locator("#changelist-form .actions button[type=submit]").first.click()
    expect(page.locator(".messagelist .success")).to_have_count(2)

    shown = [overdue, edit, ids["bulk1"], ids["bulk2"]]
    # A malformed id in an admin URL: refused or "not found", never an error page.
    for key in MALFORMED:
        for url in (f"{base}/{key}/change/", f"{base}/{key}/operation/renew_loan/"):
            answer = page.request.get(url, max_redirects=0)
            assert answer.status in {302, 400, 404}, (url, answer.status)

    state = project.shell(
        "import json; from loans.models import Loan; print(json.dumps({str(l.pk): "
        "[l.status, l.fine_status, str(l.fine), l.received_by_id, l.due.isoformat(), l.note, "
        f"l.version] for l in Loan.objects.filter(pk__in={shown!r})}}))"
    )
    assert state[overdue][:3] == ["active", "owed", "1.50"]
    assert state[edit][4:] == [new_due, "Spine repaired", 2]
    for pk in (ids["bulk1"], ids["bulk2"]):
        assert state[pk][0] == "returned" and state[pk][3] == lib_id
        assert audit(project, pk) == [["check_in_loan", "admin", {}, lib_id]]
    assert audit(project, overdue) == [["assess_fine", "admin", {"amount": "1.50"}, lib_id]]
    assert [record[:2] for record in audit(project, edit)] == [["edit_loan", "admin"]]
