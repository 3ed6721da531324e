"""Attacks on the production posture (DEBUG=0, gunicorn): one regression test per finding.

1. a rotating X-Forwarded-For escaped the login limits (NUM_PROXIES=0 became None);
2. a refresh token of a deleted user was a 500 (simplejwt #860);
3. a signed access token whose user id is no id was a 500 (or, as ``true``, user 1);
4. token answers had no ``Cache-Control: no-store``;
5. ``/api/docs/`` sent ``Cross-Origin-Opener-Policy: unsafe-none``;
6. with DEBUG=0 a 500's traceback was logged nowhere;
7. gunicorn took ``X-Forwarded-Proto: https`` from 127.0.0.1 as the truth;
8. the limits counted per worker; with ``CACHE_URL=redis://…`` they hold across workers.

The in-process tests use the test settings; the rest run the project in a subprocess, or
a real gunicorn on a free port of 127.0.0.1, with the environment a server would have.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from rest_framework.test import APIClient
from rest_framework_simplejwt.tokens import AccessToken, RefreshToken

from affordances.problems import ProblemCode, problem_type, title_of
from demo_tests.conftest import DEMO_PASSWORD, Demo
from demo_tests.test_production import PROJECT_DIR, manage, production_env, run_python

BIN = Path(sys.executable).parent
WRONG = {"username": "support", "password": "not-the-password"}
PROBLEM_KEYS = {"type", "title", "status", "code", "detail"}
# Read by gunicorn (or by config/gunicorn.py): a case sets them or they are absent.
GUNICORN_ENV = (
    "FORWARDED_ALLOW_IPS",
    "GUNICORN_BIND",
    "GUNICORN_WORKERS",
    "GUNICORN_THREADS",
    "GUNICORN_CMD_ARGS",
    "WEB_CONCURRENCY",
    "PORT",
    "LOG_LEVEL",
)


def rest_framework(**changes: Any) -> override_settings:
    return override_settings(REST_FRAMEWORK={**settings.REST_FRAMEWORK, **changes})


def auth_rate(rate: str, **changes: Any) -> override_settings:
    return rest_framework(DEFAULT_THROTTLE_RATES={"auth": rate}, **changes)


def assert_problem(response: Any, status: int, code: ProblemCode, detail: str) -> None:
    assert response.status_code == status
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert set(body) == PROBLEM_KEYS
    assert body == {
        "type": problem_type(code),
        "title": title_of(code),
        "status": status,
        "code": code.value,
        "detail": detail,
    }


def assert_throttled(response: Any) -> None:
    assert response.status_code == 429
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert set(body) == PROBLEM_KEYS
    assert body["code"] == "throttled"
    assert body["status"] == 429
    assert int(response["Retry-After"]) > 0


# --- 1. the client address is REMOTE_ADDR unless proxies are configured ----------------


def _attempt(client: Any, path: str, forwarded_for: str) -> Any:
    if path in ("/api/token/", "/api/token/refresh/"):
        body = WRONG if path == "/api/token/" else {"refresh": "not-a-token"}
        return client.post(path, body, format="json", HTTP_X_FORWARDED_FOR=forwarded_for)
    return client.post(path, WRONG, HTTP_X_FORWARDED_FOR=forwarded_for)


@pytest.mark.parametrize(
    "path", ["/api/token/", "/api/token/refresh/", "/admin/login/", "/api-auth/login/"]
)
def test_a_rotating_x_forwarded_for_does_not_escape_the_login_limit(demo: Demo, path: str) -> None:
    client = APIClient() if path.startswith("/api/token/") else Client()
    with auth_rate("2/min"):
        attempts = [_attempt(client, path, f"198.51.100.{n}") for n in (1, 2)]
        refused = _attempt(client, path, "198.51.100.3")

    if path.startswith("/api/token/"):
        detail = (
            "No active account found with the given credentials"
            if path == "/api/token/"
            else "Token is invalid"
        )
        for response in attempts:
            assert_problem(response, 401, ProblemCode.NOT_AUTHENTICATED, detail)
        assert_throttled(refused)
    else:
        assert [r.status_code for r in attempts] == [200, 200]  # the form, with an error
        assert refused.status_code == 429
        assert refused["Content-Type"] == "text/plain; charset=utf-8"
        assert refused.content == b"Too many login attempts. Try again later.\n"
        assert int(refused["Retry-After"]) > 0


def num_proxies_setting(**env: str) -> object:
    """``REST_FRAMEWORK["NUM_PROXIES"]`` as a server started with this environment has it."""
    result = run_python(
        "-c",
        "import json, django; from django.conf import settings; django.setup(); "
        "print(json.dumps(settings.REST_FRAMEWORK['NUM_PROXIES']))",
        env=production_env(**env),
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_behind_one_proxy_the_last_forwarded_address_is_the_client(demo: Demo) -> None:
    # 0 (DRF: REMOTE_ADDR), never None (DRF: the whole X-Forwarded-For).
    assert num_proxies_setting() == 0
    assert num_proxies_setting(NUM_PROXIES="0") == 0
    assert num_proxies_setting(NUM_PROXIES="1") == 1

    # The proxy (REMOTE_ADDR) appends the address it saw; what comes before it is the
    # client's own writing and must not matter.
    proxy = APIClient(REMOTE_ADDR="10.0.0.1")
    with auth_rate("1/min", NUM_PROXIES=1):
        first = proxy.post(
            "/api/token/", WRONG, format="json", HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.5"
        )
        spoofed = proxy.post(
            "/api/token/", WRONG, format="json", HTTP_X_FORWARDED_FOR="192.0.2.99, 203.0.113.5"
        )
        other = proxy.post("/api/token/", WRONG, format="json", HTTP_X_FORWARDED_FOR="203.0.113.6")

    detail = "No active account found with the given credentials"
    assert_problem(first, 401, ProblemCode.NOT_AUTHENTICATED, detail)
    assert_throttled(spoofed)  # same last entry: the same client
    assert_problem(other, 401, ProblemCode.NOT_AUTHENTICATED, detail)


# --- 2. a refresh token whose user is gone -------------------------------------------


def leaver(username: str = "leaver") -> Any:
    """A user with no orders, who can be deleted."""
    return get_user_model().objects.create_user(username, password=DEMO_PASSWORD)


def _refresh_token(case: str) -> str:
    user = leaver()
    token = RefreshToken.for_user(user)
    if case == "deleted":
        user.delete()
    elif case == "inactive":
        get_user_model().objects.filter(pk=user.pk).update(is_active=False)
    elif case == "malformed id":
        token["user_id"] = "abc"
    return str(token)


@pytest.mark.parametrize("case", ["deleted", "inactive", "malformed id"])
def test_a_refresh_token_of_a_deleted_or_inactive_user_is_a_401_problem(
    demo: Demo, case: str
) -> None:
    refresh = _refresh_token(case)

    response = APIClient().post("/api/token/refresh/", {"refresh": refresh}, format="json")

    # One answer whichever it is: which accounts exist is not said.
    assert_problem(
        response,
        401,
        ProblemCode.NOT_AUTHENTICATED,
        "No active account found for the given token.",
    )
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'
    assert response["Cache-Control"] == "no-store"


def test_a_refresh_token_of_an_active_user_still_refreshes(demo: Demo) -> None:
    user = leaver()
    refresh = str(RefreshToken.for_user(user))

    response = APIClient().post("/api/token/refresh/", {"refresh": refresh}, format="json")

    assert response.status_code == 200
    # A new refresh token too: the one sent is used up (tests/security/test_credentials.py).
    assert set(response.json()) == {"access", "refresh"}
    access = AccessToken(response.json()["access"])
    assert access["user_id"] == str(user.pk)


# --- 3. an access token whose user id is no id -----------------------------------------

# What a validly signed token may carry that names no user: each was a 500, and `true`
# and `1.5` were read as the user with pk 1.
MALFORMED_IDS = ["abc", ["1"], {"id": 1}, True, 1.5, "1\x00"]


def _access_token(user_id: object) -> str:
    token = AccessToken()
    token["user_id"] = user_id
    return str(token)


@pytest.mark.parametrize("user_id", MALFORMED_IDS, ids=repr)
def test_an_access_token_with_a_malformed_user_id_is_a_401_problem(
    demo: Demo, user_id: object
) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {_access_token(user_id)}")

    response = client.get("/api/orders/")

    assert_problem(
        response, 401, ProblemCode.NOT_AUTHENTICATED, "The credentials are invalid or expired."
    )
    assert response["WWW-Authenticate"] == 'Bearer realm="api"'


def test_mcp_answers_one_401_for_deleted_inactive_and_malformed_tokens(demo: Demo) -> None:
    inactive = leaver("inactive")
    inactive_token = str(AccessToken.for_user(inactive))
    get_user_model().objects.filter(pk=inactive.pk).update(is_active=False)
    deleted = leaver("deleted")
    deleted_token = str(AccessToken.for_user(deleted))
    deleted.delete()
    tokens = {
        "inactive": inactive_token,
        "deleted": deleted_token,
        **{f"user_id={value!r}": _access_token(value) for value in MALFORMED_IDS},
        "not a token": "not-a-token",
    }
    call = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})

    answers = {}
    for case, token in tokens.items():
        response = Client().post(
            "/mcp",
            call,
            content_type="application/json",
            HTTP_ACCEPT="application/json, text/event-stream",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
        assert response.status_code == 401, case
        assert response["Content-Type"] == "application/json", case
        # The challenge of the first authentication class, as on REST (issue 36, finding 9),
        # pointing at the endpoint's OAuth metadata (issue 39).
        assert response["WWW-Authenticate"] == (
            'Bearer realm="api", '
            'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp", '
            'scope="mcp:read mcp:write", error="invalid_token"'
        ), case
        answers[case] = response.json()

    assert answers["deleted"] == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Unauthorized: the access token is invalid or expired.",
        },
    }
    # Which of them it was is not said.
    assert all(answer == answers["deleted"] for answer in answers.values()), answers


# --- 4. token answers are never stored ------------------------------------------------


def test_token_answers_carry_cache_control_no_store(demo: Demo) -> None:
    client = APIClient()
    credentials = {"username": "support", "password": DEMO_PASSWORD}
    with auth_rate("5/min"):
        obtained = client.post("/api/token/", credentials, format="json")
        refused = client.post("/api/token/", WRONG, format="json")
        invalid = client.post("/api/token/", {}, format="json")
        refreshed = client.post(
            "/api/token/refresh/", {"refresh": obtained.json()["refresh"]}, format="json"
        )
        bad_refresh = client.post("/api/token/refresh/", {"refresh": "x"}, format="json")
        throttled = client.post("/api/token/", credentials, format="json")

    assert obtained.status_code == 200
    assert set(obtained.json()) == {"access", "refresh"}
    assert_problem(
        refused,
        401,
        ProblemCode.NOT_AUTHENTICATED,
        "No active account found with the given credentials",
    )
    assert invalid.status_code == 400
    assert invalid.json()["code"] == "validation_error"
    assert refreshed.status_code == 200
    assert set(refreshed.json()) == {"access", "refresh"}
    assert_problem(bad_refresh, 401, ProblemCode.NOT_AUTHENTICATED, "Token is invalid")
    assert_throttled(throttled)
    for response in (obtained, refused, invalid, refreshed, bad_refresh, throttled):
        assert response["Cache-Control"] == "no-store"
        assert response["Pragma"] == "no-cache"


# --- 5. the Swagger UI under the project's opener policy -------------------------------


def test_swagger_ui_is_served_with_cross_origin_opener_policy_same_origin(demo: Demo) -> None:
    client = Client()

    # Without credentials the page says to log in (the document it would show is private).
    anonymous = client.get("/api/docs/")
    assert anonymous.status_code == 200
    assert anonymous["Cross-Origin-Opener-Policy"] == "same-origin"
    assert "log in" in anonymous.content.decode().lower()
    assert '"/api/schema/"' not in anonymous.content.decode()

    client.force_login(demo.users["support"])
    page = client.get("/api/docs/")
    client.logout()

    assert page.status_code == 200
    assert page["Content-Type"] == "text/html; charset=utf-8"
    assert page["Cross-Origin-Opener-Policy"] == "same-origin"
    assert page["X-Frame-Options"] == "DENY"
    html = page.content.decode()
    assert '"/api/schema/"' in html
    # Everything the page loads comes from the sidecar, on this origin, and is served.
    assets = re.findall(r'(?:src|href)="(/static/drf_spectacular_sidecar/[^"]+)"', html)
    assert {Path(asset).name for asset in assets} >= {
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "swagger-ui-standalone-preset.js",
    }
    # The document it shows is private, as every app URL: 401 without credentials
    # (SchemaView.as_view(public=True) would serve it to anyone; issue 36, finding 8).
    assert client.get("/api/schema/").status_code == 401
    client.force_login(demo.users["support"])
    assert client.get("/api/schema/").status_code == 200
    # Last: closing a streamed response ends the "request", which closes the test's
    # database connection (request_finished) — nothing may use the database after it.
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        response.close()


# --- 6. a 500 is logged, with its traceback, on stderr ---------------------------------

RAISE_IN_A_VIEW = """
import logging
import sys
import types

import django
from django.urls import path

django.setup()
from django.test import Client, override_settings


def boom(request):
    raise RuntimeError("boom-7f3a: an unhandled error")


urls = types.ModuleType("boom_urls")
urls.urlpatterns = [path("boom/", boom)]
sys.modules["boom_urls"] = urls
logging.getLogger("orders.services").warning("orders-warning-7f3a")
with override_settings(ROOT_URLCONF="boom_urls"):
    response = Client(raise_request_exception=False).get(
        "/boom/", HTTP_HOST="example.com", secure=True
    )
print(response.status_code, response["Content-Type"], response.content.decode())
"""


def run_raising_view(**env: str) -> subprocess.CompletedProcess[str]:
    return run_python("-c", RAISE_IN_A_VIEW, env=production_env(**env))


def test_with_debug_off_an_unhandled_error_reaches_stderr_with_its_traceback() -> None:
    result = run_raising_view()

    assert result.returncode == 0, result.stderr
    # The client sees Django's bare 500 page, nothing of the error.
    assert result.stdout.startswith("500 text/html; charset=utf-8 ")
    assert "<title>Server Error (500)</title>" in result.stdout
    assert "boom-7f3a" not in result.stdout
    assert re.search(
        r" ERROR django\.request \[\d+\] Internal Server Error: /boom/\n", result.stderr
    )
    assert "Traceback (most recent call last):" in result.stderr
    assert "RuntimeError: boom-7f3a: an unhandled error" in result.stderr
    # The project's loggers reach stderr too, WARNING being the default level.
    assert re.search(r" WARNING orders\.services \[\d+\] orders-warning-7f3a\n", result.stderr)


def test_log_level_sets_the_threshold_and_a_typo_refuses_to_start() -> None:
    quiet = run_raising_view(LOG_LEVEL="error")
    assert quiet.returncode == 0, quiet.stderr
    assert "RuntimeError: boom-7f3a: an unhandled error" in quiet.stderr
    assert "orders-warning-7f3a" not in quiet.stderr

    typo = run_raising_view(LOG_LEVEL="verbose")
    assert typo.returncode != 0
    assert "LOG_LEVEL must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL, not 'verbose'." in (
        typo.stderr
    )


# --- gunicorn, for real --------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: Path) -> None:
        super().__init__("localhost", timeout=30)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(str(self.path))


@dataclass
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes


@dataclass
class Gunicorn:
    bind: str
    log: Path

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """One request on a connection of its own (so requests spread across workers)."""
        if self.bind.startswith("unix:"):
            connection: http.client.HTTPConnection = UnixHTTPConnection(Path(self.bind[5:]))
        else:
            host, port = self.bind.rsplit(":", 1)
            connection = http.client.HTTPConnection(host, int(port), timeout=30)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return Answer(response.status, response.headers, response.read())
        finally:
            connection.close()

    def pids(self, request_line: str) -> set[str]:
        """The workers that answered these requests so far, from the access log."""
        pattern = rf"^access pid=<(\d+)> \d+ {re.escape(request_line)}$"
        return set(re.findall(pattern, self.log.read_text(), re.MULTILINE))


def server_env(tmp: Path, **env: str) -> dict[str, str]:
    environment = production_env(
        ALLOWED_HOSTS="127.0.0.1,localhost",
        DATABASE_URL=f"sqlite:///{tmp / 'unused.sqlite3'}",
        SECURE_SSL_REDIRECT="0",
        # This worktree's modules, whatever is installed in the virtualenv.
        PYTHONPATH=str(PROJECT_DIR),
        PYTHONUNBUFFERED="1",
        # gunicorn (25.1+) puts its control socket there: one per test, not one per user.
        XDG_RUNTIME_DIR=str(tmp),
    )
    for key in GUNICORN_ENV:
        environment.pop(key, None)
    environment.update(env)
    return environment


def stop(process: subprocess.Popen[bytes]) -> None:
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        if process.poll() is not None:
            return
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue


@contextmanager
def gunicorn(tmp: Path, env: dict[str, str], *, bind: str, workers: int = 1) -> Iterator[Gunicorn]:
    """``gunicorn -c config/gunicorn.py`` as the README says, bound and sized by env."""
    log = tmp / f"gunicorn-{time.monotonic_ns()}.log"
    server = Gunicorn(bind=bind, log=log)
    command = [
        str(BIN / "gunicorn"),
        "-c",
        "config/gunicorn.py",
        "config.wsgi:application",
        "--access-logfile",
        "-",
        "--access-logformat",
        "access pid=%(p)s %(s)s %(r)s",
    ]
    env = {**env, "GUNICORN_BIND": bind, "GUNICORN_WORKERS": str(workers)}
    with log.open("wb") as output:
        process = subprocess.Popen(
            command,
            cwd=PROJECT_DIR,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: stopped with its workers
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"gunicorn exited with {process.returncode}:\n{log.read_text()}")
            try:
                server.request("GET", "/api/")
                break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"gunicorn did not answer within 60 s:\n{log.read_text()}")
                time.sleep(0.2)
        yield server
    finally:
        stop(process)


# --- 7. gunicorn decides no scheme ----------------------------------------------------


@pytest.mark.parametrize("socket_kind", ["tcp", "unix"])
def test_gunicorn_does_not_trust_x_forwarded_proto_from_localhost(
    tmp_path: Path, socket_kind: str
) -> None:
    env = server_env(tmp_path, SECURE_SSL_REDIRECT="1")
    bind = f"127.0.0.1:{free_port()}" if socket_kind == "tcp" else f"unix:{tmp_path}/g.sock"
    host = "127.0.0.1" if socket_kind == "tcp" else "localhost"
    with gunicorn(tmp_path, env, bind=bind) as server:
        plain = server.request("GET", "/api/orders/?page=2", headers={"Host": host})
        spoofed = server.request(
            "GET", "/api/orders/?page=2", headers={"Host": host, "X-Forwarded-Proto": "https"}
        )

    # SECURE_PROXY_SSL_HEADER is off: the header is the client's word, the request HTTP.
    for response in (plain, spoofed):
        assert response.status == 301
        assert response.headers["Location"] == f"https://{host}/api/orders/?page=2"
        assert response.body == b""


def test_gunicorn_trusts_the_proxies_forwarded_allow_ips_names(tmp_path: Path) -> None:
    env = server_env(tmp_path, SECURE_SSL_REDIRECT="1", FORWARDED_ALLOW_IPS="127.0.0.1")
    with gunicorn(tmp_path, env, bind=f"127.0.0.1:{free_port()}") as server:
        forwarded = server.request("GET", "/api/orders/", headers={"X-Forwarded-Proto": "https"})
        plain = server.request("GET", "/api/orders/")

    assert forwarded.status == 401  # taken as HTTPS: no redirect, the API's own answer
    assert forwarded.headers["Content-Type"] == "application/problem+json"
    assert plain.status == 301


# --- 8. one limit across workers --------------------------------------------------------

REDIS_DB = 15  # the test's own: flushed before and after


@pytest.fixture(scope="module")
def migrated_database(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('deploy') / 'db.sqlite3'}"
    result = manage("migrate", "--noinput", env=production_env(DATABASE_URL=url))
    assert result.returncode == 0, result.stdout + result.stderr
    return url


@pytest.fixture
def redis_db() -> Iterator[str]:
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB, socket_timeout=2)
    try:
        client.ping()
    except redis.exceptions.ConnectionError as error:
        pytest.skip(f"no Redis answers on 127.0.0.1:6379 ({error}); .ci/run starts one")
    client.flushdb()
    try:
        yield f"redis://127.0.0.1:6379/{REDIS_DB}"
    finally:
        client.flushdb()
        client.close()


def wrong_passwords(servers: list[Gunicorn], count: int) -> list[Answer]:
    """``count`` failed logins, sent in turn to each server."""
    body = json.dumps(WRONG).encode()
    return [
        servers[index % len(servers)].request(
            "POST", "/api/token/", body, {"Content-Type": "application/json"}
        )
        for index in range(count)
    ]


def test_with_redis_the_login_limit_holds_across_gunicorn_processes(
    tmp_path: Path, migrated_database: str, redis_db: str
) -> None:
    # Two gunicorn servers, each with its own worker, share one Redis: the requests
    # alternate between them, so each process sees only half of them. (One server with
    # several workers would not prove it: sequential requests often all land on the
    # worker that answered the previous one.) A per-process cache would allow 40.
    env = server_env(
        tmp_path, DATABASE_URL=migrated_database, CACHE_URL=redis_db, AUTH_THROTTLE_RATE="20/min"
    )
    with (
        gunicorn(tmp_path, env, bind=f"127.0.0.1:{free_port()}") as first,
        gunicorn(tmp_path, env, bind=f"127.0.0.1:{free_port()}") as second,
    ):
        answers = wrong_passwords([first, second], 40)
        workers = [server.pids("POST /api/token/ HTTP/1.1") for server in (first, second)]

    statuses = [answer.status for answer in answers]
    allowed = statuses.count(401)
    assert 19 <= allowed <= 21, statuses
    assert statuses == [401] * allowed + [429] * (40 - allowed)
    assert len(workers[0]) == len(workers[1]) == 1 and workers[0] != workers[1], workers
    for answer in answers[allowed:]:
        assert answer.headers["Content-Type"] == "application/problem+json"
        assert json.loads(answer.body)["code"] == "throttled"
        assert int(answer.headers["Retry-After"]) > 0


def test_without_cache_url_the_local_memory_cache_still_throttles(
    tmp_path: Path, migrated_database: str
) -> None:
    env = server_env(tmp_path, DATABASE_URL=migrated_database, AUTH_THROTTLE_RATE="3/min")
    assert "CACHE_URL" not in env
    with gunicorn(tmp_path, env, bind=f"127.0.0.1:{free_port()}") as server:
        answers = wrong_passwords([server], 5)

    assert [answer.status for answer in answers] == [401, 401, 401, 429, 429]
    assert json.loads(answers[0].body)["code"] == "not_authenticated"
    assert json.loads(answers[-1].body)["code"] == "throttled"
    assert answers[-1].headers["Cache-Control"] == "no-store"
