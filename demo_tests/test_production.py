"""Production hardening: `check --deploy`, rate limits on the ways in, security headers.

The deploy check runs in a fresh interpreter with the environment a server would have;
the rest runs against the test settings (DEBUG from the default environment).
"""

from __future__ import annotations

import json
import os
import secrets
import string
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client, override_settings
from rest_framework.test import APIClient

from demo_tests.conftest import DEMO_PASSWORD, Demo

PROJECT_DIR = Path(__file__).resolve().parent.parent

# Every variable the settings read; the subprocess sees exactly the ones a case sets.
SETTINGS_ENV = (
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "DATABASE_URL",
    "CONN_MAX_AGE",
    "STATIC_ROOT",
    "AUTH_THROTTLE_RATE",
    "NUM_PROXIES",
    "EVENTS_URL",
    "EVENTS_CHANNEL",
    "SECURE_SSL_REDIRECT",
    "SESSION_COOKIE_SECURE",
    "CSRF_COOKIE_SECURE",
    "SECURE_HSTS_SECONDS",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS",
    "SECURE_HSTS_PRELOAD",
    "SECURE_PROXY_SSL_HEADER",
    "CSRF_TRUSTED_ORIGINS",
    "CACHE_URL",
    "LOG_LEVEL",
)

# What a TLS deployment behind a reverse proxy sets (README, "Deploy").
TLS_ENV = {
    "SECURE_HSTS_SECONDS": "31536000",
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": "1",
    "SECURE_HSTS_PRELOAD": "1",
    "SECURE_PROXY_SSL_HEADER": "1",
}


def random_secret_key() -> str:
    alphabet = string.ascii_letters + string.digits + string.punctuation
    return "".join(secrets.choice(alphabet) for _ in range(50))


def production_env(**env: str) -> dict[str, str]:
    environment = {k: v for k, v in os.environ.items() if k not in SETTINGS_ENV}
    environment.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="0",
        SECRET_KEY=random_secret_key(),
        ALLOWED_HOSTS="example.com",
    )
    environment.update(env)
    return environment


def manage(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return run_python("manage.py", *args, env=env)


def run_python(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the project's directory with exactly ``env``."""
    return subprocess.run(
        [sys.executable, *args],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


# --- check --deploy ------------------------------------------------------------------


def test_check_deploy_passes_without_warnings_with_the_tls_environment() -> None:
    result = manage("check", "--deploy", "--fail-level", "WARNING", env=production_env(**TLS_ENV))

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout
    assert not settings.SILENCED_SYSTEM_CHECKS  # nothing is hidden to get there


def test_check_deploy_without_hsts_asks_for_it_and_nothing_else() -> None:
    # HSTS is the one opt-in: everything else is on as soon as DEBUG is off.
    result = manage("check", "--deploy", env=production_env())

    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "security.W004" in output
    assert "identified 1 issue" in output, output


def test_check_deploy_reports_debug_left_on() -> None:
    result = manage("check", "--deploy", env=production_env(DEBUG="1", **TLS_ENV))

    output = result.stdout + result.stderr
    assert "security.W018" in output


PROBE = """
import json
import django
from django.conf import settings
django.setup()
print(json.dumps({
    "SECURE_SSL_REDIRECT": settings.SECURE_SSL_REDIRECT,
    "SESSION_COOKIE_SECURE": settings.SESSION_COOKIE_SECURE,
    "CSRF_COOKIE_SECURE": settings.CSRF_COOKIE_SECURE,
    "SECURE_HSTS_SECONDS": settings.SECURE_HSTS_SECONDS,
    "SECURE_PROXY_SSL_HEADER": getattr(settings, "SECURE_PROXY_SSL_HEADER", None),
    "STATICFILES": settings.STORAGES["staticfiles"]["BACKEND"],
    "AUTH_RATE": settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth"],
    "CACHE": settings.CACHES["default"]["BACKEND"],
}))
"""


def probe(env: dict[str, str]) -> dict[str, object]:
    result = run_python("-c", PROBE, env=env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_production_defaults_are_secure_and_each_can_be_switched_by_the_environment() -> None:
    values = probe(production_env())
    assert values["SECURE_SSL_REDIRECT"] is True
    assert values["SESSION_COOKIE_SECURE"] is True
    assert values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_HSTS_SECONDS"] == 0
    assert values["SECURE_PROXY_SSL_HEADER"] is None
    assert values["STATICFILES"] == "whitenoise.storage.CompressedManifestStaticFilesStorage"
    assert values["AUTH_RATE"] == "20/min"
    assert values["CACHE"] == "django.core.cache.backends.locmem.LocMemCache"

    values = probe(
        production_env(
            SECURE_SSL_REDIRECT="0",
            SECURE_PROXY_SSL_HEADER="1",
            SECURE_HSTS_SECONDS="600",
            AUTH_THROTTLE_RATE="5/second",
            CACHE_URL="db://rate_limits",
        )
    )
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]
    assert values["SECURE_HSTS_SECONDS"] == 600
    assert values["AUTH_RATE"] == "5/second"
    assert values["CACHE"] == "django.core.cache.backends.db.DatabaseCache"


def test_development_defaults_stay_on_plain_http() -> None:
    env = production_env()
    for key in ("DEBUG", "SECRET_KEY", "ALLOWED_HOSTS"):
        env.pop(key)
    values = probe(env)
    assert values["SECURE_SSL_REDIRECT"] is False
    assert values["SESSION_COOKIE_SECURE"] is False
    assert values["STATICFILES"] == "django.contrib.staticfiles.storage.StaticFilesStorage"


@pytest.mark.parametrize("raw", ["-1", "a year"])
def test_a_malformed_hsts_value_refuses_to_start(raw: str) -> None:
    result = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT_DIR,
        env=production_env(SECURE_HSTS_SECONDS=raw),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "SECURE_HSTS_SECONDS" in result.stderr


# --- the test settings: plain HTTP, no redirect -----------------------------------------


def test_the_suite_is_not_redirected_to_https(demo: Demo) -> None:
    assert settings.SECURE_SSL_REDIRECT is False
    response = APIClient().get("/api/orders/")
    assert response.status_code == 401


# --- rate limits ----------------------------------------------------------------------


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    # The counters live in the cache: start from zero and leave none for other tests.
    cache.clear()
    yield
    cache.clear()


def auth_rate(rate: str) -> override_settings:
    return override_settings(
        REST_FRAMEWORK={**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"auth": rate}}
    )


def test_token_endpoint_answers_429_after_the_limit(demo: Demo, fresh_cache: None) -> None:
    client = APIClient()
    credentials = {"username": "support", "password": DEMO_PASSWORD}
    with auth_rate("3/min"):
        statuses = [
            client.post("/api/token/", credentials, format="json").status_code for _ in range(3)
        ]
        refused = client.post("/api/token/", credentials, format="json")

    assert statuses == [200, 200, 200]
    assert refused.status_code == 429
    assert refused["Content-Type"].startswith("application/problem+json")
    assert refused.json()["code"] == "throttled"
    assert int(refused["Retry-After"]) > 0


def test_failed_attempts_count_too(demo: Demo, fresh_cache: None) -> None:
    client = APIClient()
    wrong = {"username": "support", "password": "not-the-password"}
    with auth_rate("2/min"):
        first = [client.post("/api/token/", wrong, format="json").status_code for _ in range(2)]
        third = client.post(
            "/api/token/", {"username": "support", "password": DEMO_PASSWORD}, format="json"
        )

    assert first == [401, 401]
    assert third.status_code == 429


def test_refresh_endpoint_is_limited_too(demo: Demo, fresh_cache: None) -> None:
    client = APIClient()
    tokens = client.post(
        "/api/token/", {"username": "support", "password": DEMO_PASSWORD}, format="json"
    ).json()
    cache.clear()
    statuses = []
    with auth_rate("2/min"):
        for _ in range(3):
            response = client.post(
                "/api/token/refresh/", {"refresh": tokens["refresh"]}, format="json"
            )
            statuses.append(response.status_code)
            # Each refresh token is used once: the next attempt sends the new one.
            tokens = response.json() if response.status_code == 200 else tokens

    assert statuses == [200, 200, 429]


def test_the_limit_is_per_client_address(demo: Demo, fresh_cache: None) -> None:
    credentials = {"username": "support", "password": DEMO_PASSWORD}
    with auth_rate("1/min"):
        one = APIClient(REMOTE_ADDR="192.0.2.1")
        other = APIClient(REMOTE_ADDR="192.0.2.2")
        assert one.post("/api/token/", credentials, format="json").status_code == 200
        assert one.post("/api/token/", credentials, format="json").status_code == 429
        assert other.post("/api/token/", credentials, format="json").status_code == 200


def test_default_rate_leaves_normal_use_alone(demo: Demo, fresh_cache: None) -> None:
    client = APIClient()
    credentials = {"username": "support", "password": DEMO_PASSWORD}
    for _ in range(5):
        assert client.post("/api/token/", credentials, format="json").status_code == 200


@pytest.mark.parametrize("path", ["/admin/login/", "/api-auth/login/"])
def test_session_logins_answer_429_after_the_limit(
    demo: Demo, fresh_cache: None, path: str
) -> None:
    client = Client()
    wrong = {"username": "admin", "password": "not-the-password"}
    with auth_rate("2/min"):
        assert client.get(path).status_code == 200  # showing the form is not an attempt
        attempts = [client.post(path, wrong).status_code for _ in range(2)]
        refused = client.post(path, {"username": "admin", "password": DEMO_PASSWORD})

    assert attempts == [200, 200]  # the form again, with an error
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session


def test_admin_login_still_logs_in(demo: Demo, fresh_cache: None) -> None:
    client = Client()
    response = client.post(
        "/admin/login/?next=/admin/", {"username": "admin", "password": DEMO_PASSWORD}
    )
    assert response.status_code == 302
    assert response["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


# --- security headers -----------------------------------------------------------------


@pytest.mark.parametrize("path", ["/api/orders/", "/admin/login/", "/api/token/"])
def test_security_headers_are_set(demo: Demo, path: str) -> None:
    response = Client().get(path)

    assert response["X-Frame-Options"] == "DENY"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["Cross-Origin-Opener-Policy"] == "same-origin"


def test_hsts_is_sent_over_https_when_configured(demo: Demo) -> None:
    with override_settings(SECURE_HSTS_SECONDS=3600, SECURE_HSTS_INCLUDE_SUBDOMAINS=True):
        response = Client().get("/api/orders/", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=3600; includeSubDomains"


def test_static_files_are_served_by_whitenoise(demo: Demo) -> None:
    assert "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE
    response = Client().get("/static/admin/css/base.css")
    assert response.status_code == 200
    assert b"".join(response.streaming_content if response.streaming else [response.content])
