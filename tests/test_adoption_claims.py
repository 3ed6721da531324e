"""Adoption by an insurance claims desk: e-mail login, object rules beside roles, a
versioned API of DRF's own.

The project is written from the code blocks of ``docs/howto/claims-desk.md`` (each names
its file): a user model whose login is the e-mail address (``USERNAME_FIELD = "email"``,
``AUTH_USER_MODEL``); django-rules object permissions beside role prerequisites
(``@operation(requires=...)``), so the intake clerk's catalog and ``tools/list`` differ
from the adjuster's and an adjuster's rule holds on their own claims only; DRF's
``HyperlinkedModelSerializer`` with its default view name (``claim-detail``) in a
versioned URL namespace (``NamespaceVersioning``, ``/api/v1/``); ``CursorPagination``
and a django-filter ``FilterSet``; a date input bounded per claim
(``formatMinimum``/``formatMaximum``); a condition that refuses with its reason; and
field edits through the rules (``EDITABLE_FIELDS``: ``PATCH`` with ``If-Match`` or
``expectedVersion``, the ``edit_claim`` tool). Every face is driven over HTTP against
``runserver`` on 127.0.0.1 — REST, HAL-FORMS, the catalog per role, MCP with the
official SDK client — and the admin in headless Chromium (skipped, said so, without
``/usr/bin/chromium``). The wheel, the virtualenv, the project and its server:
``tests/adoption_support.py``.

**Where it runs.** Only when this test process runs Django 6.1 or later: in the matrix
(``noxfile.py``), the Python 3.13 / Django 6.1 cell's SQLite run, where ``ADOPTION_TEST=1``.
The project's virtualenv gets the same Django major.minor as this process
(``adoption_support.this_django``), so there it is a Django 6.1 project. The two other
adoption tests build their projects on the LTS (and on PostgreSQL); a third project in
every cell would cost each of them another minute and a half. ``ADOPTION_CLAIMS=1`` runs
it on any Django (to work on it with the LTS, on SQLite or, with ``DATABASE_URL``, on
PostgreSQL); ``ADOPTION_TEST=0`` switches it off as it does the others.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import django
import httpx2
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from tests.adoption_support import ROOT, Project, adopted, run, this_django, wanted

PAGE = ROOT / "docs" / "howto" / "claims-desk.md"
PASSWORD = "adoption-password"
CHROMIUM = "/usr/bin/chromium"
HAL_FORMS = {"Accept": "application/prs.hal-forms+json"}
INES = "ines@claims.example"  # the intake desk
ADAM = "adam@claims.example"  # an adjuster
# An adjuster too, with an address as long as an EmailField allows past 150 characters.
ALEX = (
    "alexandra.oyelaran-whitfield@claims-adjusting-and-loss-assessment-department."
    "north-east-regional-office-of-the-mutual-insurance-company.example-group.example"
)
READS = {"list_claims", "get_claim"}

pytestmark = [
    wanted,
    pytest.mark.skipif(
        django.VERSION[:2] < (6, 1) and os.environ.get("ADOPTION_CLAIMS") != "1",
        reason="the claims desk's project is built on Django 6.1 or later only (the Python "
        f"3.13 / Django 6.1 cell); this is Django {django.get_version()}: ADOPTION_CLAIMS=1 "
        "builds it anyway",
    ),
]

SEED = """
import json
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import Group, Permission
from django.utils import timezone

from accounts.models import User
from claims.models import Claim

today = timezone.localdate()


def role(name, *codenames):
    group = Group.objects.create(name=name)
    group.permissions.set(
        Permission.objects.filter(content_type__app_label="claims", codename__in=codenames)
    )
    return group


intake = role("intake", "work_intake", "assign_claim", "view_claim")
adjusters = role("adjusters", "work_adjusting", "view_claim")
people = {{}}
for key, email, group in (
    ("ines", "{ines}", intake), ("adam", "{adam}", adjusters), ("alex", "{alex}", adjusters)
):
    people[key] = User.objects.create_user(email, password="{pw}", is_staff=True)
    people[key].groups.add(group)

numbers = iter(range(1001, 1100))


def claim(state="received", adjuster=None, amount="1200.00", **fields):
    fields.setdefault("incident_date", today - timedelta(days=9))
    return Claim.objects.create(
        number=f"CLM-{{next(numbers)}}",
        policy_number="POL-7781",
        claimant="Noor Haddad",
        amount=Decimal(amount),
        state=state,
        adjuster=people.get(adjuster),
        **fields,
    ).pk


ids = {{
    "today": today.isoformat(),
    "users": {{key: user.pk for key, user in people.items()}},
    "new": claim(),
    "intake": claim(incident_date=today - timedelta(days=1)),
    "rest": claim("assigned", "adam"),
    "late": claim("assigned", "adam", received_on=today - timedelta(days=10)),
    "mcp": claim("assigned", "adam", amount="4300.00"),
    "edit": claim("assigned", "adam"),
    "big": claim("inspection", "adam", amount="25000.00"),
    "admin": claim("inspection", "adam", amount="800.00"),
    "alex": claim("assigned", "alex", amount="650.00"),
}}
print(json.dumps(ids))
"""


@pytest.fixture(scope="module")
def project(adoption_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    with adopted(
        tmp_path_factory.mktemp("adoption-claims"),
        wheel=adoption_wheel,
        requirements=[
            f"{adoption_wheel}[jwt]",
            this_django(),
            "django-filter>=24.1",
            "rules>=3.5,<4",
        ],
        page=PAGE,
        package="insurance",
        apps=["accounts", "claims"],
        seed=SEED.format(pw=PASSWORD, ines=INES, adam=ADAM, alex=ALEX),
    ) as made:
        yield made


_tokens: dict[tuple[str, str], str] = {}


def token(project: Project, email: str) -> str:
    """An access token from simplejwt's endpoint, which asks for the USERNAME_FIELD."""
    if (project.url, email) not in _tokens:
        response = httpx2.post(
            f"{project.url}/api/token/", json={"email": email, "password": PASSWORD}
        )
        assert response.status_code == 200, response.text
        _tokens[project.url, email] = response.json()["access"]
    return _tokens[project.url, email]


def client(project: Project, email: str) -> httpx2.Client:
    headers = {"Authorization": f"Bearer {token(project, email)}"}
    return httpx2.Client(base_url=f"{project.url}/api/v1", headers=headers, timeout=30)


def audit(project: Project, pk: Any) -> list[list[Any]]:
    """The claim's audit records: operation, face, arguments, user id, oldest first."""
    return project.shell(
        "import json; from affordances.models import AuditRecord; print(json.dumps(list("
        f"AuditRecord.objects.filter(object_id='{pk}').order_by('pk')"
        ".values_list('operation_name', 'via', 'arguments', 'user_id'))))"
    )


def names(entries: list[dict[str, Any]]) -> set[str]:
    return {entry["name"] for entry in entries}


def reasons(claim: dict[str, Any]) -> dict[str, str]:
    return {entry["name"]: entry["reason"] for entry in claim["unavailableAffordances"]}


def day(project: Project, days: int) -> str:
    return (date.fromisoformat(project.ids["today"]) + timedelta(days=days)).isoformat()


# --- the project ----------------------------------------------------------------------


def test_the_project_runs_this_django_and_the_checks_find_nothing(project: Project) -> None:
    version = "import django; print(django.VERSION[:2])"
    built = run(project.python, "-c", version, cwd=project.path).strip()
    assert built == str(django.VERSION[:2])
    assert "System check identified no issues (0 silenced)." in project.manage("check")


def test_staff_log_in_with_their_e_mail_address(project: Project) -> None:
    url = f"{project.url}/api/token/"
    assert httpx2.post(url, json={"email": INES, "password": PASSWORD}).status_code == 200
    wrong = httpx2.post(url, json={"email": INES, "password": "not-it"})
    assert wrong.status_code == 401
    by_username = httpx2.post(url, json={"username": INES, "password": PASSWORD})
    assert by_username.status_code == 400 and "email" in by_username.json()
    anonymous = httpx2.get(f"{project.url}/api/v1/claims/")
    assert anonymous.status_code == 401
    assert anonymous.headers["Content-Type"] == "application/problem+json"


# --- the catalog ----------------------------------------------------------------------


def test_each_role_has_its_catalog(project: Project) -> None:
    catalogs = {}
    for email in (INES, ADAM):
        with client(project, email) as http:
            response = http.get("/operations/")
        assert response.status_code == 200, response.text
        catalogs[email] = {op["name"]: op for op in response.json()["operations"]}
    # Without requires=, the object backend would put every transition in both.
    assert set(catalogs[INES]) == READS | {"assign_claim", "edit_claim"}
    assert set(catalogs[ADAM]) == READS | {"schedule_inspection", "approve_claim", "edit_claim"}

    assign = catalogs[INES]["assign_claim"]["inputSchema"]
    assert assign["properties"]["adjuster"]["type"] == "string"  # an e-mail address
    assert assign["required"] == ["claimId", "adjuster"]
    inspection = catalogs[ADAM]["schedule_inspection"]["inputSchema"]["properties"]
    assert inspection["inspection_date"] == {
        "type": "string",
        "format": "date",
        "description": "The day the adjuster visits.",
    }
    assert inspection["claimId"]["type"] == "integer"
    edit = catalogs[ADAM]["edit_claim"]["inputSchema"]["properties"]
    assert {"policy_number", "incident_date", "note"} <= set(edit)
    listing = catalogs[ADAM]["list_claims"]["inputSchema"]["properties"]
    assert listing["state"]["enum"] == ["received", "assigned", "inspection", "approved"]
    assert (listing["incident_after"]["type"], listing["incident_after"]["format"]) == (
        "string",
        "date",
    )
    assert listing["amount_over"]["type"] == "number"


# --- REST -----------------------------------------------------------------------------


def test_the_list_pages_by_cursor_in_its_version_and_filters(project: Project) -> None:
    ids, base = project.ids, f"{project.url}/api/v1/claims/"
    seen, pages = [], 0
    with client(project, ADAM) as adam:
        page: dict[str, Any] = adam.get("/claims/").json()
        assert set(page) == {"next", "previous", "results"} and page["previous"] is None
        while True:
            pages += 1
            assert all(row["url"].startswith(base) for row in page["results"])
            assert all("affordances" in row for row in page["results"])
            seen += [row["number"] for row in page["results"]]
            if page["next"] is None:
                break
            assert page["next"].startswith(f"{base}?cursor=")
            page = adam.get(page["next"]).json()
        big = adam.get("/claims/", params={"amount_over": 20000})
        both = adam.get("/claims/", params={"state": "inspection", "amount_over": 500})
        alex = adam.get("/claims/", params={"adjuster": ALEX})
        recent = adam.get("/claims/", params={"incident_after": day(project, -2)})
        bad_cursor = adam.get("/claims/", params={"cursor": "not-a-cursor"})
        bad_state = adam.get("/claims/", params={"state": "paid"})
    assert pages == 2 and seen == sorted(seen) and len(seen) == len(set(seen)) == 9
    assert [row["id"] for row in big.json()["results"]] == [ids["big"]]
    assert {row["id"] for row in both.json()["results"]} == {ids["big"], ids["admin"]}
    assert [row["id"] for row in alex.json()["results"]] == [ids["alex"]]
    assert [row["id"] for row in recent.json()["results"]] == [ids["intake"]]
    assert bad_cursor.status_code == 404 and bad_cursor.json()["code"] == "not_found"
    assert bad_state.status_code == 400 and "state" in bad_state.json()["errors"]


def test_the_rules_decide_per_claim_and_every_link_is_in_the_version(project: Project) -> None:
    ids = project.ids
    pk = ids["rest"]
    own = f"{project.url}/api/v1/claims/{pk}/"
    views = {}
    for email in (ADAM, ALEX, INES):
        with client(project, email) as http:
            views[email] = http.get(f"/claims/{pk}/").json()
    with client(project, ADAM) as http:
        big = http.get(f"/claims/{ids['big']}/").json()
        late = http.get(f"/claims/{ids['late']}/").json()
    adam, alex, ines = views[ADAM], views[ALEX], views[INES]
    assert adam["url"] == own and adam["adjuster"] == ADAM
    assert names(adam["affordances"]) == {"schedule_inspection", "edit_claim"}
    assert all(entry["target"].startswith(own) for entry in adam["affordances"])
    assert reasons(adam) == {"approve_claim": "not_inspected"}
    # A colleague's claim: the adjuster's operations are not there at all, not refused.
    assert names(alex["affordances"]) == set() and reasons(alex) == {}
    # The intake desk: its own operation is refused for the state, the adjuster's unknown.
    assert names(ines["affordances"]) == {"edit_claim"}
    assert reasons(ines) == {"assign_claim": "already_assigned"}

    assert reasons(big) == {
        "approve_claim": "over_authority",
        "schedule_inspection": "already_scheduled",
    }
    # The date bounds, narrowed per claim: the deadline is 21 days after it came in.
    windows = {}
    for claim in (adam, late):
        (entry,) = [a for a in claim["affordances"] if a["name"] == "schedule_inspection"]
        bound = entry["constraints"]["properties"]["inspection_date"]
        windows[claim["id"]] = (bound["formatMinimum"], bound["formatMaximum"])
    assert windows == {
        pk: (day(project, 1), day(project, 21)),
        ids["late"]: (day(project, 1), day(project, 11)),
    }


def test_the_intake_desk_assigns_a_claim_by_the_adjusters_e_mail(project: Project) -> None:
    ids, pk = project.ids, project.ids["new"]
    with client(project, INES) as ines:
        detail = ines.get(f"/claims/{pk}/").json()
        (assign,) = [a for a in detail["affordances"] if a["name"] == "assign_claim"]
        assert assign["target"] == f"{project.url}/api/v1/claims/{pk}/assign/"
        not_an_adjuster = ines.post(assign["target"], json={"adjuster": INES})
        done = ines.post(assign["target"], json={"adjuster": ADAM}, headers={"If-Match": '"1"'})
    assert not_an_adjuster.status_code == 400
    assert list(not_an_adjuster.json()["errors"]) == ["adjuster"]
    assert done.status_code == 200, done.text
    claim = done.json()
    assert (claim["state"], claim["adjuster"], claim["version"]) == ("assigned", ADAM, 2)
    assert claim["url"] == f"{project.url}/api/v1/claims/{pk}/"
    assert done.headers["ETag"] == '"2"'
    # An adjuster lacks the intake role: the operation is missing, not refused.
    with client(project, ADAM) as adam:
        missing = adam.post(f"/claims/{ids['intake']}/assign/", json={"adjuster": ADAM})
    assert missing.status_code == 404 and missing.json()["code"] == "not_found"
    # The related object is audited as its key (the adjuster's id), not the object.
    users = ids["users"]
    assert audit(project, pk) == [
        ["assign_claim", "api", {"adjuster": users["adam"]}, users["ines"]]
    ]


def test_an_inspection_is_booked_within_its_dates(project: Project) -> None:
    ids, pk = project.ids, project.ids["rest"]
    target = f"/claims/{pk}/schedule_inspection/"
    with client(project, ADAM) as adam:
        today = adam.post(target, json={"inspection_date": day(project, 0)})
        late = adam.post(target, json={"inspection_date": day(project, 22)})
        done = adam.post(target, json={"inspection_date": day(project, 21), "expectedVersion": 1})
    assert today.status_code == late.status_code == 400
    assert today.json()["errors"] == {
        "inspection_date": [f"Must be on or after {day(project, 1)}."]
    }
    assert late.json()["errors"] == {
        "inspection_date": [f"Must be on or before {day(project, 21)}."]
    }
    assert done.status_code == 200, done.text
    claim = done.json()
    assert (claim["state"], claim["inspection_date"], claim["version"]) == (
        "inspection",
        day(project, 21),
        2,
    )
    # An address longer than the audit record's copy of it (150 characters): the run is
    # recorded all the same, with the user.
    with client(project, ALEX) as alex:
        own = alex.post(
            f"/claims/{ids['alex']}/schedule_inspection/", json={"inspection_date": day(project, 2)}
        )
    assert own.status_code == 200, own.text
    assert audit(project, ids["alex"]) == [
        ["schedule_inspection", "api", {"inspection_date": day(project, 2)}, ids["users"]["alex"]]
    ]


def test_a_condition_refuses_with_its_reason(project: Project) -> None:
    pk = project.ids["big"]
    with client(project, ADAM) as adam:
        refused = adam.post(f"/claims/{pk}/approve/", json={}, headers={"If-Match": '"1"'})
    assert refused.status_code == 409
    assert refused.headers["Content-Type"] == "application/problem+json"
    problem = refused.json()
    assert (problem["code"], problem["reason"]) == ("operation_not_available", "over_authority")
    assert problem["current"]["state"] == "inspection"
    assert audit(project, pk) == []


def test_patch_edits_through_the_rules_with_the_version(project: Project) -> None:
    ids, pk = project.ids, project.ids["edit"]
    with client(project, ADAM) as adam:
        done = adam.patch(
            f"/claims/{pk}/", json={"note": "Photos received"}, headers={"If-Match": '"1"'}
        )
        stale = adam.patch(f"/claims/{pk}/", json={"note": "Again"}, headers={"If-Match": '"1"'})
        body_version = adam.patch(
            f"/claims/{pk}/", json={"note": "Roof only", "expectedVersion": 2}
        )
        # Assigned: the claim's details are no longer editable, the note still is.
        details = adam.patch(f"/claims/{pk}/", json={"policy_number": "POL-1"})
        state = adam.patch(f"/claims/{pk}/", json={"state": "approved"})
    assert done.status_code == 200, done.text
    assert done.headers["ETag"] == '"2"'
    assert (done.json()["note"], done.json()["version"]) == ("Photos received", 2)
    assert stale.status_code == 412 and stale.json()["code"] == "stale_version"
    assert stale.json()["current"]["version"] == 2
    assert body_version.status_code == 200 and body_version.json()["version"] == 3
    for refused, field in ((details, "policy_number"), (state, "state")):
        assert refused.status_code == 400, refused.text
        assert list(refused.json()["errors"]) == [field]

    # Not his claim: the rule says no, answered as a missing claim is.
    with client(project, ALEX) as alex:
        theirs = alex.patch(f"/claims/{pk}/", json={"note": "Mine now"})
        missing = alex.patch("/claims/987654/", json={"note": "Mine now"})
    assert theirs.status_code == missing.status_code == 404
    assert theirs.content == missing.content
    # The intake desk edits a received claim's details.
    with client(project, INES) as ines:
        fixed = ines.patch(f"/claims/{ids['intake']}/", json={"policy_number": "POL-7782"})
    assert fixed.status_code == 200, fixed.text
    assert fixed.json()["policy_number"] == "POL-7782"

    adam_id = ids["users"]["adam"]
    assert audit(project, pk) == [
        [
            "edit_claim",
            "api",
            {"changed": ["note"], "from": {"note": ""}, "to": {"note": "Photos received"}},
            adam_id,
        ],
        [
            "edit_claim",
            "api",
            {"changed": ["note"], "from": {"note": "Photos received"}, "to": {"note": "Roof only"}},
            adam_id,
        ],
    ]


# --- HAL-FORMS ------------------------------------------------------------------------


def test_hal_forms_offers_the_bounded_date_and_the_edit(project: Project) -> None:
    pk = project.ids["late"]
    own = f"{project.url}/api/v1/claims/{pk}/"
    with client(project, ADAM) as adam:
        response = adam.get(f"/claims/{pk}/", headers=HAL_FORMS)
    assert response.status_code == 200, response.text
    assert response.headers["Content-Type"].startswith("application/prs.hal-forms+json")
    document = response.json()
    assert document["_links"]["self"]["href"] == own
    templates = document["_templates"]
    assert set(templates) == {"schedule_inspection", "edit_claim"}
    schedule = templates["schedule_inspection"]
    assert (schedule["method"], schedule["target"]) == ("POST", f"{own}schedule_inspection/")
    properties = {p["name"]: p for p in schedule["properties"]}
    when = properties["inspection_date"]
    assert (when["type"], when["min"], when["max"]) == ("date", day(project, 1), day(project, 11))
    edit = templates["edit_claim"]
    assert (edit["method"], edit["target"]) == ("PATCH", own)
    assert {"note", "expectedVersion"} <= {p["name"] for p in edit["properties"]}


# --- MCP ------------------------------------------------------------------------------


def test_mcp_with_the_official_sdk_client(project: Project) -> None:
    ids = project.ids
    pk = ids["mcp"]

    async def call(mcp: McpClient, tool: str, arguments: dict[str, Any]) -> Any:
        try:
            result = await mcp.call_tool(tool, arguments)
        except MCPError as error:  # a JSON-RPC error instead of a tool result
            return ("rpc", error.code)
        return (result.is_error, result.structured_content)

    async def session(email: str, steps: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        headers = {"Authorization": f"Bearer {token(project, email)}"}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as http,
            McpClient(
                streamable_http_client(f"{project.url}/mcp", http_client=http), mode="legacy"
            ) as mcp,
        ):
            seen: dict[str, Any] = {"tools": {tool.name for tool in (await mcp.list_tools()).tools}}
            for label, (tool, arguments) in steps.items():
                seen[label] = await call(mcp, tool, arguments)
            return seen

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        adam = await session(
            ADAM,
            {
                "list": ("list_claims", {"amount_over": 20000, "pageSize": 5}),
                "get": ("get_claim", {"claimId": pk}),
                "early": (
                    "schedule_inspection",
                    {"claimId": pk, "inspection_date": day(project, 0)},
                ),
                "schedule": (
                    "schedule_inspection",
                    {"claimId": pk, "inspection_date": day(project, 3), "expectedVersion": 1},
                ),
                "over": ("approve_claim", {"claimId": ids["big"]}),
                "edit": (
                    "edit_claim",
                    {"claimId": pk, "note": "Booked by phone", "expectedVersion": 2},
                ),
            },
        )
        ines = await session(INES, {"approve": ("approve_claim", {"claimId": ids["admin"]})})
        return adam, ines

    adam, ines = asyncio.run(scenario())
    assert adam["tools"] == READS | {"schedule_inspection", "approve_claim", "edit_claim"}
    assert ines["tools"] == READS | {"assign_claim", "edit_claim"}

    error, body = adam["list"]
    assert error is False and [row["id"] for row in body["results"]] == [ids["big"]]
    error, body = adam["get"]
    own = f"{project.url}/api/v1/claims/{pk}/"  # DEFAULT_VERSION's place
    assert error is False and body["url"] == own
    assert all(entry["target"].startswith(own) for entry in body["affordances"])

    error, body = adam["early"]
    assert error is True and body["code"] == "validation_error"
    assert body["errors"] == {"inspection_date": [f"Must be on or after {day(project, 1)}."]}
    error, body = adam["schedule"]
    assert error is False, body
    assert (body["state"], body["inspection_date"], body["version"]) == (
        "inspection",
        day(project, 3),
        2,
    )
    error, body = adam["over"]
    assert error is True
    assert (body["code"], body["reason"]) == ("operation_not_available", "over_authority")
    error, body = adam["edit"]
    assert error is False, body
    assert (body["note"], body["version"]) == ("Booked by phone", 3)
    assert [row[:2] for row in audit(project, pk)] == [
        ["schedule_inspection", "mcp"],
        ["edit_claim", "mcp"],
    ]
    # The intake desk lacks the adjusters' role: an unknown tool, as any other name.
    assert ines["approve"] == ("rpc", -32602)


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
            yield tab
            context.close()
        finally:
            browser.close()


def test_the_admin_in_a_browser(project: Project, page: Any) -> None:
    from playwright.sync_api import expect

    ids, base = project.ids, f"{project.url}/admin/claims/claim"

    # The login form asks for the e-mail address (Django's form, USERNAME_FIELD's label).
    page.goto(f"{project.url}/admin/login/")
    expect(page.locator("label[for=id_username]")).to_contain_text("E-mail address")
    page.fill("#id_username", ADAM)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#user-tools")).to_contain_text(ADAM)

    # An operation without input, from the change page.
    approve = ids["admin"]
    page.goto(f"{base}/{approve}/change/")
    page.locator(".affordance-button[data-operation=approve_claim]").click()
    expect(page.locator(".messagelist .success")).to_contain_text("Approve claim: done")
    expect(page.locator(".field-state .readonly")).to_have_text("Approved")
    # Django's ModelAdmin asks for the change permission without the claim: the
    # adjuster's rule needs one, so the form is read-only for him (PATCH is not).
    expect(page.locator(".field-note .readonly")).to_have_count(1)
    expect(page.locator("#claim_form textarea[name=note]")).to_have_count(0)

    # The date form, bounded by the claim's window.
    late = ids["late"]
    page.goto(f"{base}/{late}/change/")
    page.locator(".affordance-button[data-operation=schedule_inspection]").click()
    page.wait_for_url(f"**/{late}/operation/schedule_inspection/")
    field = page.locator("input[name=inspection_date]")
    expect(field).to_have_attribute("min", day(project, 1))
    expect(field).to_have_attribute("max", day(project, 11))
    field.fill(day(project, 5))
    page.click("form[data-operation=schedule_inspection] input[type=submit]")
    page.wait_for_url(f"**/{late}/change/")
    expect(page.locator(".messagelist .success")).to_contain_text("Schedule inspection: done")

    adam_id = ids["users"]["adam"]
    assert audit(project, approve) == [["approve_claim", "admin", {}, adam_id]]
    assert audit(project, late) == [
        ["schedule_inspection", "admin", {"inspection_date": day(project, 5)}, adam_id]
    ]
