"""Mistakes a new project makes in its settings are system check errors, not tracebacks.

Each case is a settings module of its own (``tests.settings`` and one mistake) given to
``python -m django check`` in a subprocess — the way a developer meets it, with the
URLconf imported by the checks themselves — expecting exactly one error id of the app,
its "did you mean", and no traceback. The subprocesses run concurrently, all started by
one module-scoped fixture. The database-tagged check (E048) and what a request answers
when the app is misconfigured anyway run in-process, on the suite's database (SQLite or
PostgreSQL).
"""

from __future__ import annotations

import importlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser
from django.core import checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connection
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client, override_settings
from rest_framework_simplejwt.tokens import AccessToken

from affordances import operation
from affordances.checks import check_catalog, check_migrations
from affordances.conf import SettingError
from affordances.declarations import misplaced
from affordances.models import AuditRecord
from affordances.resources import registered_resources
from tests.generic import api as generic_api
from tests.generic.models import Ticket

ROOT = Path(__file__).resolve().parent.parent
TICKET = {
    "SERIALIZER": "tests.generic.api.TicketSerializer",
    "QUERYSET": "tests.generic.api.visible_tickets",
}

# A model whose @operation is below its @transition (the lower decorator runs first).
MISPLACED_MODELS = '''
from django.db import models
from django_fsm import FSMField, transition

from affordances import operation


class Job(models.Model):
    state = FSMField(default="new")
    version = models.PositiveIntegerField(default=1)

    @transition(field=state, source="new", target="started")
    @operation(title="Start job")
    def start(self) -> None:
        """Start a new job: it is then worked on until it is done or dropped."""
'''


@dataclass(frozen=True)
class Case:
    # The settings module's body after `from tests.settings import *`.
    settings: str
    # The one error of the app `check` reports, on what, and words its hint must have.
    error: str | None
    obj: str = ""
    says: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    # Nothing of it happens at import: `call_command("check")` here, under
    # override_settings(AFFORDANCES=...), the body's AFFORDANCES.
    in_process: bool = False


CASES: dict[str, Case] = {
    "well configured": Case(
        f'ROOT_URLCONF = "tests.generic.api"\n'
        f'AFFORDANCES = {{"MODELS": {{"generic.Ticket": {TICKET!r}}}}}',
        error=None,
    ),
    "a mistyped setting": Case(
        f'ROOT_URLCONF = "tests.generic.api"\n'
        f'AFFORDANCES = {{"MODLES": {{"generic.Ticket": {TICKET!r}}}}}',
        error="affordances.E044",
        obj="AFFORDANCES",
        says=("'MODLES'", "Did you mean 'MODELS'?"),
    ),
    "a mistyped model option": Case(
        'ROOT_URLCONF = "tests.generic.api"\n'
        'AFFORDANCES = {"MODELS": {"generic.Ticket": '
        '{"SERIALISER": "tests.generic.api.TicketSerializer"}}}',
        error="affordances.E045",
        obj="AFFORDANCES['MODELS']['generic.Ticket']",
        says=("'SERIALISER'", "Did you mean 'SERIALIZER'?", "QUERYSET, BASENAME"),
    ),
    "a wrong SERIALIZER path": Case(
        'ROOT_URLCONF = "tests.generic.api"\n'
        'AFFORDANCES = {"MODELS": {"generic.Ticket": '
        '{"SERIALIZER": "tests.generic.api.TicketSerialiser"}}}',
        error="affordances.E046",
        obj="generic.Ticket",
        says=("['SERIALIZER']", "Did you mean 'tests.generic.api.TicketSerializer'?"),
    ),
    "a SERIALIZER in a module that does not exist": Case(
        'AFFORDANCES = {"MODELS": {"generic.Ticket": '
        '{"SERIALIZER": "tests.generic.apis.TicketSerializer"}}}',
        error="affordances.E046",
        obj="generic.Ticket",
        says=("no module 'tests.generic.apis'", "'tests.generic.api.TicketSerializer'?"),
        in_process=True,
    ),
    "a wrong QUERYSET path": Case(
        'AFFORDANCES = {"MODELS": {"generic.Ticket": {'
        '"SERIALIZER": "tests.generic.api.TicketSerializer", '
        '"QUERYSET": "tests.generic.api.visible_ticket"}}}',
        error="affordances.E046",
        obj="generic.Ticket",
        says=("['QUERYSET']", "Did you mean 'tests.generic.api.visible_tickets'?"),
        in_process=True,
    ),
    "a mistyped model label": Case(
        'ROOT_URLCONF = "tests.generic.api"\n'
        'AFFORDANCES = {"MODELS": {"generic.Tiket": '
        '{"SERIALIZER": "tests.generic.api.TicketSerializer"}}}',
        error="affordances.E001",
        obj="AFFORDANCES['MODELS']['generic.Tiket']",
        says=("Did you mean 'generic.Ticket'?",),
    ),
    "a mistyped VERSION_FIELD": Case(
        'AFFORDANCES = {"MODELS": {"generic.Ticket": '
        '{"SERIALIZER": "tests.generic.api.TicketSerializer", "VERSION_FIELD": "verison"}}}',
        error="affordances.E003",
        obj="generic.Ticket",
        says=("AFFORDANCES['MODELS']['generic.Ticket']['VERSION_FIELD']", "'version'?"),
        in_process=True,
    ),
    "@operation below @transition": Case(
        'INSTALLED_APPS = [*INSTALLED_APPS, "misplaced"]\n'
        'AFFORDANCES = {"MODELS": {"misplaced.Job": {}}}',
        error="affordances.E047",
        obj="misplaced.Job",
        says=("@operation must be above @transition: Job.start",),
    ),
    "migrations not run": Case(
        'DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", '
        '"NAME": str(__import__("pathlib").Path(__file__).with_name("empty.sqlite3"))}}',
        error="affordances.E048",
        obj="affordances",
        says=("0001_initial", "manage.py migrate"),
        args=("--database", "default"),
    ),
}

# Without the app in INSTALLED_APPS no check of the app is registered: importing the
# URLconf (by Django's own URL checks) stops at the app's models, saying what to do.
NOT_INSTALLED = (
    'ROOT_URLCONF = "tests.generic.api"\n'
    'INSTALLED_APPS = [app for app in INSTALLED_APPS if app != "affordances"]'
)


def _start(tmp: Path, name: str, body: str, args: tuple[str, ...]) -> subprocess.Popen[str]:
    module = f"case_{len(list(tmp.glob('case_*.py')))}"
    (tmp / f"{module}.py").write_text(f"from tests.settings import *  # noqa\n{body}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp), str(ROOT)])}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.Popen(
        [sys.executable, "-m", "django", "check", "--settings", module, *args],
        cwd=tmp,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, str]]:
    """Every case's `check`, run concurrently: (exit status, stdout and stderr)."""
    tmp = tmp_path_factory.mktemp("configuration_checks")
    (tmp / "misplaced").mkdir()
    (tmp / "misplaced" / "__init__.py").write_text("")
    (tmp / "misplaced" / "models.py").write_text(MISPLACED_MODELS)
    running = {
        name: _start(tmp, name, case.settings, case.args)
        for name, case in CASES.items()
        if not case.in_process
    }
    running["not installed"] = _start(tmp, "not installed", NOT_INSTALLED, ())
    done = {}
    for name, process in running.items():
        out, err = process.communicate(timeout=120)
        done[name] = (process.returncode, out + err)
    return done


def _errors(output: str) -> list[tuple[str, str]]:
    """The (object, id) of each error of the app in `check`'s output."""
    return re.findall(r"^(.*?): \((affordances\.E\d{3})\)", output, re.M)


def _check_here(case: Case) -> tuple[int, str]:
    """`check` in this process, with the case's AFFORDANCES."""
    namespace: dict[str, Any] = {}
    exec(case.settings, namespace)  # the case's assignments only: AFFORDANCES
    out, err = io.StringIO(), io.StringIO()
    with override_settings(AFFORDANCES=namespace["AFFORDANCES"]):
        try:
            call_command("check", stdout=out, stderr=err)
        except SystemCheckError as exc:
            return 1, f"{out.getvalue()}{err.getvalue()}{exc}"
    return 0, out.getvalue() + err.getvalue()


@pytest.mark.parametrize("name", list(CASES))
def test_a_settings_mistake_is_one_check_error_without_a_traceback(
    outputs: dict[str, tuple[int, str]], name: str
) -> None:
    case = CASES[name]
    status, output = _check_here(case) if case.in_process else outputs[name]

    assert "Traceback" not in output, output
    if case.error is None:
        assert status == 0 and _errors(output) == [], output
        return
    assert status == 1, output
    assert _errors(output) == [(case.obj, case.error)], output
    for words in case.says:
        assert words in output, (words, output)


def test_without_the_app_installed_importing_its_faces_says_to_install_it(
    outputs: dict[str, tuple[int, str]],
) -> None:
    status, output = outputs["not installed"]

    assert status == 1
    last = output.strip().splitlines()[-1]
    assert last.startswith("django.core.exceptions.ImproperlyConfigured: 'affordances' is not")
    assert "INSTALLED_APPS" in last
    assert "RuntimeError" not in output


# --- the database: E048, and what a request answers -----------------------------------


def _forget_the_apps_migrations() -> None:
    """As on a database `migrate` never ran the app's migrations on (rolled back with
    the test's transaction)."""
    MigrationRecorder(connection).migration_qs.filter(app="affordances").delete()


@pytest.mark.django_db
def test_the_migrations_check_runs_with_the_database_checks_only() -> None:
    assert check_migrations(databases=["default"]) == []
    _forget_the_apps_migrations()

    messages = checks.run_checks(tags=[checks.Tags.database], databases=["default"])
    assert [m.id for m in messages if (m.id or "").startswith("affordances.")] == [
        "affordances.E048"
    ]
    assert "0001_initial" in messages[-1].msg
    # A plain `check` reads no database.
    assert check_migrations(databases=None) == []


@pytest.fixture
def project(db: None) -> Iterator[None]:
    """Only Ticket registered, served by the URLconf of tests.generic.api."""
    affordances = {**django_settings.AFFORDANCES, "MODELS": {"generic.Ticket": TICKET}}
    with override_settings(AFFORDANCES=affordances):
        importlib.reload(generic_api)
        with override_settings(ROOT_URLCONF="tests.generic.api"):
            yield


def _bearer() -> dict[str, Any]:
    user = get_user_model().objects.create_superuser("root", password="x")
    return {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(user)}"}


def test_a_run_without_the_apps_tables_answers_a_problem(project: None) -> None:
    ticket = Ticket.objects.create(assignee="ann")
    headers = _bearer()
    _forget_the_apps_migrations()
    with connection.cursor() as cursor:
        cursor.execute(f"DROP TABLE {AuditRecord._meta.db_table}")

    response = Client().post(f"/v2/tickets/{ticket.pk}/close/", **headers)

    assert response.status_code == 503, response.content
    assert response["Content-Type"] == "application/problem+json"
    assert response.json()["code"] == "error"
    assert "nothing ran" in response.json()["detail"]
    assert Ticket.objects.get(pk=ticket.pk).state == "open"


def test_a_request_to_a_misconfigured_app_answers_a_problem(project: None) -> None:
    Ticket.objects.create(assignee="ann")
    broken = {"generic.Ticket": {**TICKET, "QUERYSET": "tests.generic.api.visible_ticket"}}
    headers = _bearer()
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": broken}):
        response = Client().get("/v2/tickets/", **headers)

    assert response.status_code == 503, response.content
    assert response.json()["code"] == "error"
    assert "Traceback" not in response.content.decode()


def test_a_request_raises_what_the_check_reports() -> None:
    # One rule for both: the words of E046 are those a request meets.
    broken = {"generic.Ticket": {**TICKET, "QUERYSET": "tests.generic.api.visible_ticket"}}
    with override_settings(AFFORDANCES={**django_settings.AFFORDANCES, "MODELS": broken}):
        [message] = check_catalog()
        [resource] = registered_resources()
        with pytest.raises(SettingError) as raised:
            resource.scoped(AnonymousUser())

    assert (message.id, message.obj) == ("affordances.E046", Ticket)
    assert str(raised.value) == f"{message.msg} {message.hint}"


def test_operation_on_a_method_that_is_no_transition_declares_nothing() -> None:
    # Not raised while the models are imported: marked, for the check (E047).
    @operation(title="Archive")
    def archive(self: Any) -> None:
        """Archive it."""

    assert misplaced(archive) == "@operation must decorate a django-fsm @transition"
    assert misplaced(Ticket.close) is None
