"""Adoption, as a new user does it: the wheel, a fresh virtualenv, the tutorial, nothing else.

The wheel is built from this tree and installed (with its ``jwt`` extra) into a new
virtualenv; ``django-admin startproject`` makes a project in an empty directory, so
nothing of this repository is importable there. The project's files are exactly the
code blocks of the tutorial, ``docs/tutorial.md`` (each names its file), so the
tutorial cannot drift from what works. Then every face is driven over HTTP against
``runserver`` on 127.0.0.1: checks, the catalog, REST, HAL-FORMS, MCP with the official
SDK client, the admin. On PostgreSQL (``DATABASE_URL``) the project gets a database of
its own. What this test shares with ``tests/test_adoption_existing.py`` (the wheel,
built once per session; the virtualenv, the project, its database and its server) is
``tests/adoption_support.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from mcp import Client as McpClient
from mcp.client.streamable_http import streamable_http_client

from tests.adoption_support import (
    ROOT,
    Project,
    adopted,
    driver_packages,
    installed,
    run,
    wanted,
)

TUTORIAL = ROOT / "docs" / "tutorial.md"
# The demo's and the tools' dependencies: none may come with the library.
NOT_REQUIRED = {
    "gunicorn",
    "whitenoise",
    "psycopg",
    "dj-database-url",
    "drf-spectacular-sidecar",
    "matplotlib",
    "tiktoken",
    "playwright",
    "django-filter",
    "djangorestframework-simplejwt",
}
PASSWORD = "adoption-password"

pytestmark = wanted


SEED = """
import json
from django.contrib.auth.models import Permission, User
from helpdesk.models import Ticket

def perms(*names):
    return Permission.objects.filter(content_type__app_label="helpdesk", codename__in=names)

lead = User.objects.create_user("lead", password="{pw}", is_staff=True)
lead.user_permissions.set(perms("work_ticket", "resolve_any_ticket", "close_ticket"))
agent = User.objects.create_user("agent", password="{pw}", is_staff=True)
agent.user_permissions.set(perms("work_ticket"))
rita = User.objects.create_user("rita", password="{pw}")
sam = User.objects.create_user("sam", password="{pw}")
User.objects.create_superuser("root", password="{pw}")
ids = {{
    "assigned": Ticket.objects.create(title="Printer", reporter=rita, assignee=agent).pk,
    "unassigned": Ticket.objects.create(title="Wi-Fi", reporter=sam).pk,
    "urgent": Ticket.objects.create(
        title="Outage", reporter=rita, assignee=agent, priority="urgent", status="in_progress"
    ).pk,
    "resolved": Ticket.objects.create(
        title="Mouse", reporter=sam, assignee=agent, status="resolved", resolution="fixed"
    ).pk,
    "hal": Ticket.objects.create(
        title="Screen", reporter=sam, assignee=agent, status="resolved", resolution="fixed"
    ).pk,
}}
print(json.dumps(ids))
"""


@pytest.fixture(scope="module")
def project(adoption_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    with adopted(
        tmp_path_factory.mktemp("adoption"),
        wheel=adoption_wheel,
        requirements=[f"{adoption_wheel}[jwt]"],
        page=TUTORIAL,
        package="desk",
        apps=["helpdesk"],
        seed=SEED.format(pw=PASSWORD),
    ) as made:
        yield made


# --- the wheel ------------------------------------------------------------------------


def test_the_wheel_is_the_library_alone(project: Project) -> None:
    with zipfile.ZipFile(project.wheel) as wheel:
        names = wheel.namelist()
        metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
        meta = wheel.read(metadata).decode()
    tops = {name.split("/")[0] for name in names if not name.split("/")[0].endswith(".dist-info")}
    assert tops == {"affordances"}
    assert "affordances/py.typed" in names
    assert any(n.startswith("affordances/templates/affordances/admin/") for n in names)
    assert "affordances/static/affordances/admin/changed.js" in names  # the change notice
    assert "affordances/migrations/0001_initial.py" in names
    assert "License-Expression: MIT" in meta
    assert "Classifier: Framework :: Django :: 5.2" in meta
    required = {
        re.split(r"[ ;<>=!\[]", line.removeprefix("Requires-Dist: "))[0].lower()
        for line in meta.splitlines()
        if line.startswith("Requires-Dist: ") and "extra ==" not in line
    }
    assert required == {
        "asgiref",
        "django",
        "djangorestframework",
        "django-fsm-2",
        "drf-spectacular",
        "jsonschema",
        "orjson",
    }
    assert not required & NOT_REQUIRED
    packages = installed(project) - driver_packages()
    assert len(packages) <= 22, sorted(packages)


def test_nothing_of_this_repository_is_importable_there(project: Project) -> None:
    code = (
        "import importlib.util as u; "
        "print([u.find_spec(m) is None for m in ('orders', 'config', 'tests')])"
    )
    assert (
        run(project.python, "-c", code, cwd=project.path, env=project.env).strip()
        == "[True, True, True]"
    )
    where = run(
        project.python, "-c", "import affordances; print(affordances.__file__)", cwd=project.path
    )
    assert "site-packages" in where


def test_the_system_checks_find_nothing(project: Project) -> None:
    assert "System check identified no issues (0 silenced)." in project.manage("check")


# --- the faces ------------------------------------------------------------------------


def token(project: Project, username: str) -> str:
    response = httpx2.post(
        f"{project.url}/api/token/", json={"username": username, "password": PASSWORD}
    )
    assert response.status_code == 200, response.text
    assert response.json()["access"]
    return str(response.json()["access"])


def client(project: Project, username: str) -> httpx2.Client:
    headers = {"Authorization": f"Bearer {token(project, username)}"}
    return httpx2.Client(base_url=project.url, headers=headers, timeout=30)


def test_each_role_has_its_catalog_and_it_is_cacheable(project: Project) -> None:
    names = {}
    for role in ("lead", "agent", "rita"):
        with client(project, role) as http:
            response = http.get("/api/operations/")
            assert response.status_code == 200
            names[role] = {op["name"] for op in response.json()["operations"]}
            etag = response.headers["ETag"]
            again = http.get("/api/operations/", headers={"If-None-Match": etag})
            assert again.status_code == 304
    reads = {"get_ticket", "list_tickets"}
    assert names["rita"] == reads
    assert names["agent"] == reads | {"start_ticket", "resolve_ticket"}
    assert names["lead"] == reads | {"start_ticket", "resolve_ticket", "close_ticket"}


def test_lists_and_details_carry_affordances_and_hide_what_is_not_yours(project: Project) -> None:
    ids = project.ids
    with client(project, "rita") as rita:
        listed = rita.get("/api/tickets/").json()["results"]
        assert [t["id"] for t in listed] == [ids["assigned"], ids["urgent"]]
        assert all("affordances" in t and "unavailableAffordances" in t for t in listed)
        hidden = rita.get(f"/api/tickets/{ids['unassigned']}/")
        missing = rita.get("/api/tickets/987654/")
        assert hidden.status_code == missing.status_code == 404
        assert hidden.content == missing.content
        assert hidden.headers["Content-Type"] == "application/problem+json"
        hal = {"Accept": "application/prs.hal-forms+json"}
        assert rita.get(f"/api/tickets/{ids['unassigned']}/", headers=hal).status_code == 404
    with client(project, "agent") as agent:
        urgent = agent.get(f"/api/tickets/{ids['urgent']}/").json()
        (resolve,) = [a for a in urgent["affordances"] if a["name"] == "resolve_ticket"]
        # The constraint narrowed the input for this ticket.
        assert resolve["constraints"]["properties"]["resolution"]["enum"] == ["fixed"]
        unassigned = agent.get(f"/api/tickets/{ids['unassigned']}/").json()
        reasons = {u["name"]: u["reason"] for u in unassigned["unavailableAffordances"]}
        assert reasons["start_ticket"] == "no_assignee"


def test_a_refusal_is_a_409_problem_with_its_reason(project: Project) -> None:
    with client(project, "agent") as agent:
        response = agent.post(f"/api/tickets/{project.ids['unassigned']}/start/", json={})
    assert response.status_code == 409
    assert response.headers["Content-Type"] == "application/problem+json"
    body = response.json()
    assert (body["code"], body["reason"]) == ("operation_not_available", "no_assignee")
    assert body["current"]["status"] == "open"


# --- the tutorial's shown answers -------------------------------------------------------

# The tutorial's own host and its first ticket's id, as its answers show them.
SHOWN_HOST = "http://127.0.0.1:8000"
SHOWN_ID = re.compile(r'("(?:id|ticketId)": )1\b')


def tutorial_exchanges(text: str) -> list[tuple[str, str, Any, Any]]:
    """(method, path, body, shown answer) of each ``curl`` the tutorial follows with its
    answer; the answer's ``…`` marks where a value is shortened."""
    found = re.findall(
        r'```sh\n(curl .*?)```\n\n```json title="the answer[^"]*"\n(.*?)```', text, re.S
    )
    exchanges = []
    for command, answer in found:
        words = shlex.split(command.replace("\\\n", " "))
        method = words[words.index("-X") + 1] if "-X" in words else "GET"
        url = next(word for word in words if word.startswith(SHOWN_HOST))
        body = json.loads(words[words.index("-d") + 1]) if "-d" in words else None
        exchanges.append((method, urlsplit(url).path, body, answer))
    return exchanges


def shows(shown: Any, real: Any) -> bool:
    """Whether ``real`` says what ``shown`` says: every key shown, every list whole, and
    every value equal (a value ending in ``…`` is a prefix)."""
    if isinstance(shown, dict):
        return isinstance(real, dict) and all(
            key in real and shows(value, real[key]) for key, value in shown.items()
        )
    if isinstance(shown, list):
        return (
            isinstance(real, list)
            and len(shown) == len(real)
            and all(shows(a, b) for a, b in zip(shown, real, strict=True))
        )
    if isinstance(shown, str) and shown.endswith("…"):
        return isinstance(real, str) and real.startswith(shown[:-1])
    return bool(shown == real)


def test_the_tutorial_shows_what_the_project_answers(project: Project) -> None:
    """Steps 8 to 11 of the tutorial: its user and ticket made by its own code, then each
    of its ``curl`` requests, whose answer must say what the tutorial shows."""
    text = TUTORIAL.read_text()
    setup = re.search(r"```python\n# python manage.py shell\n(.*?)```", text, re.S)
    assert setup is not None
    pk = project.shell(
        setup[1] + "\nimport json; print(json.dumps(Ticket.objects.latest('pk').pk))"
    )
    exchanges = tutorial_exchanges(text)
    assert [(method, path) for method, path, _, _ in exchanges] == [
        ("POST", "/api/token/"),
        ("GET", "/api/tickets/1/"),
        ("POST", "/api/tickets/1/start/"),
        ("POST", "/api/tickets/1/start/"),
    ]
    headers: dict[str, str] = {}
    for method, path, body, answer in exchanges:
        path = path.replace("/tickets/1/", f"/tickets/{pk}/")
        response = httpx2.request(
            method, f"{project.url}{path}", json=body, headers=headers, timeout=30
        )
        real = response.json()
        shown = json.loads(
            SHOWN_ID.sub(rf"\g<1>{pk}", answer)
            .replace(SHOWN_HOST, project.url)
            .replace("/tickets/1/", f"/tickets/{pk}/")
        )
        assert shows(shown, real), (method, path, real)
        if path == "/api/token/":
            headers = {"Authorization": f"Bearer {real['access']}"}


def test_a_transition_with_if_match_and_an_idempotency_key_replays(project: Project) -> None:
    pk = project.ids["assigned"]
    headers = {"If-Match": '"1"', "Idempotency-Key": "adoption-1"}
    with client(project, "agent") as agent:
        first = agent.post(f"/api/tickets/{pk}/start/", json={}, headers=headers)
        assert first.status_code == 200, first.text
        assert (first.json()["status"], first.json()["version"]) == ("in_progress", 2)
        assert first.headers["ETag"] == '"2"'
        replay = agent.post(f"/api/tickets/{pk}/start/", json={}, headers=headers)
    assert replay.status_code == 200
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json() == first.json()
    runs = project.shell(
        "import json; from affordances.models import AuditRecord; print(json.dumps("
        f"list(AuditRecord.objects.filter(object_id='{pk}').values_list('operation_name', 'via'))))"
    )
    assert runs == [["start_ticket", "api"]]


def test_mcp_with_the_official_sdk_client(project: Project) -> None:
    pk, hidden = project.ids["urgent"], project.ids["unassigned"]

    async def scenario() -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for role in ("lead", "rita"):
            headers = {"Authorization": f"Bearer {token(project, role)}"}
            async with (
                httpx2.AsyncClient(headers=headers, timeout=30) as http,
                McpClient(
                    streamable_http_client(f"{project.url}/mcp", http_client=http), mode="legacy"
                ) as mcp,
            ):
                seen[role, "tools"] = {tool.name for tool in (await mcp.list_tools()).tools}
                if role == "lead":
                    result = await mcp.call_tool(
                        "resolve_ticket", {"ticketId": pk, "resolution": "fixed"}
                    )
                else:
                    result = await mcp.call_tool("get_ticket", {"ticketId": hidden})
                seen[role, "call"] = (result.is_error, result.structured_content)
        return seen

    seen = asyncio.run(scenario())
    assert seen["lead", "tools"] == {
        "get_ticket",
        "list_tickets",
        "start_ticket",
        "resolve_ticket",
        "close_ticket",
    }
    assert seen["rita", "tools"] == {"get_ticket", "list_tickets"}
    error, body = seen["lead", "call"]
    assert error is False
    assert (body["status"], body["resolution"]) == ("resolved", "fixed")
    error, body = seen["rita", "call"]
    assert error is True and body["code"] == "not_found"


def test_a_hal_forms_document_offers_what_applies(project: Project) -> None:
    pk = project.ids["hal"]
    hal = {"Accept": "application/prs.hal-forms+json"}
    documents = {}
    for role in ("lead", "agent"):
        with client(project, role) as http:
            response = http.get(f"/api/tickets/{pk}/", headers=hal)
        assert response.status_code == 200
        assert response.headers["Content-Type"].startswith("application/prs.hal-forms+json")
        documents[role] = response.json()
    lead, agent = documents["lead"], documents["agent"]
    assert lead["_links"]["self"]["href"] == f"{project.url}/api/tickets/{pk}/"
    template = lead["_templates"]["close_ticket"]
    assert template["method"] == "POST"
    assert template["target"] == f"{project.url}/api/tickets/{pk}/close/"
    # The agent lacks helpdesk.close_ticket: no template, and no trace of it.
    assert "close_ticket" not in json.dumps(agent)


def test_the_admin_shows_actions_and_runs_one_with_its_audit_record(project: Project) -> None:
    pk = project.ids["resolved"]
    with httpx2.Client(base_url=project.url, timeout=30, follow_redirects=False) as browser:
        assert browser.get("/admin/login/").status_code == 200
        csrf = browser.cookies["csrftoken"]
        done = browser.post(
            "/admin/login/?next=/admin/",
            data={"username": "root", "password": PASSWORD, "csrfmiddlewaretoken": csrf},
        )
        assert done.status_code == 302, done.text
        page = browser.get(f"/admin/helpdesk/ticket/{pk}/change/")
        assert page.status_code == 200
        html = page.text
        assert 'id="affordances-panel"' in html
        assert 'data-operation="close_ticket"' in html
        action = re.search(r'<form method="post" action="([^"]+)" class="affordance-form"', html)
        version = re.search(r'name="expectedVersion" value="(\d+)"', html)
        assert action is not None and version is not None
        csrf = browser.cookies["csrftoken"]
        ran = browser.post(
            action[1], data={"csrfmiddlewaretoken": csrf, "expectedVersion": version[1]}
        )
    assert ran.status_code == 302, ran.text
    assert ran.headers["Location"].endswith(f"/admin/helpdesk/ticket/{pk}/change/")
    runs = project.shell(
        "import json; from affordances.models import AuditRecord; print(json.dumps(list("
        f"AuditRecord.objects.filter(object_id='{pk}').values_list('operation_name', 'via'))))"
    )
    assert runs == [["close_ticket", "admin"]]
