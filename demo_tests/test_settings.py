"""Settings come from the environment (docs/demo.md#configuration): SECRET_KEY, DEBUG,
ALLOWED_HOSTS, DATABASE_URL.

The project settings are imported in a fresh interpreter per case, so each environment is
read exactly as a server would read it at start-up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.settings import env_bool, env_list

PROJECT_DIR = Path(__file__).resolve().parent.parent

# Read every setting we check and print them as JSON on the last line of stdout.
PROBE = """
import json
import django
from django.conf import settings
django.setup()
db = settings.DATABASES["default"]
print(json.dumps({
    "DEBUG": settings.DEBUG,
    "SECRET_KEY": settings.SECRET_KEY,
    "ALLOWED_HOSTS": settings.ALLOWED_HOSTS,
    "ENGINE": db["ENGINE"],
    "NAME": str(db["NAME"]),
    "HOST": db.get("HOST", ""),
    "PORT": db.get("PORT", ""),
    "USER": db.get("USER", ""),
}))
"""

ENV_KEYS = ("SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DATABASE_URL")


def run_settings(**env: str) -> subprocess.CompletedProcess[str]:
    """Import config.settings in a subprocess with exactly these settings variables."""
    environment = dict(os.environ)
    for key in ENV_KEYS:
        environment.pop(key, None)
    environment.update(env)
    environment["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=PROJECT_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def loaded(**env: str) -> dict[str, Any]:
    result = run_settings(**env)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


# --- start-up ------------------------------------------------------------------------


def test_defaults_start_in_debug_with_local_hosts_and_sqlite() -> None:
    values = loaded()
    assert values["DEBUG"] is True
    assert values["SECRET_KEY"]  # a local development key
    assert "localhost" in values["ALLOWED_HOSTS"]
    assert "127.0.0.1" in values["ALLOWED_HOSTS"]
    assert "*" not in values["ALLOWED_HOSTS"]
    assert values["ENGINE"] == "django.db.backends.sqlite3"
    assert values["NAME"] == str(PROJECT_DIR / "db.sqlite3")


def test_debug_off_without_secret_key_refuses_to_start() -> None:
    result = run_settings(DEBUG="0")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "SECRET_KEY" in result.stderr


def test_debug_false_with_empty_secret_key_refuses_to_start() -> None:
    result = run_settings(DEBUG="false", SECRET_KEY="")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr


def test_debug_off_with_secret_key_starts() -> None:
    values = loaded(DEBUG="0", SECRET_KEY="a-real-secret-from-the-environment")
    assert values["DEBUG"] is False
    assert values["SECRET_KEY"] == "a-real-secret-from-the-environment"


@pytest.mark.parametrize(("raw", "expected"), [("1", True), ("true", True), ("false", False)])
def test_debug_accepts_documented_spellings(raw: str, expected: bool) -> None:
    values = loaded(DEBUG=raw, SECRET_KEY="another-secret")
    assert values["DEBUG"] is expected


def test_unrecognised_debug_value_is_refused() -> None:
    result = run_settings(DEBUG="maybe", SECRET_KEY="another-secret")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert "DEBUG" in result.stderr


def test_allowed_hosts_is_a_comma_separated_list() -> None:
    values = loaded(ALLOWED_HOSTS="shop.example.com, api.example.com,,.example.org ")
    assert values["ALLOWED_HOSTS"] == ["shop.example.com", "api.example.com", ".example.org"]


def test_database_url_selects_a_sqlite_file() -> None:
    values = loaded(DATABASE_URL="sqlite:////tmp/x.sqlite3")
    assert values["ENGINE"] == "django.db.backends.sqlite3"
    assert values["NAME"] == "/tmp/x.sqlite3"


def test_database_url_selects_postgresql() -> None:
    values = loaded(DATABASE_URL="postgres://shopuser:s3cret@db.example.com:5433/shop")
    assert values["ENGINE"] == "django.db.backends.postgresql"
    assert values["NAME"] == "shop"
    assert values["HOST"] == "db.example.com"
    assert int(values["PORT"]) == 5433
    assert values["USER"] == "shopuser"


# --- the helpers ---------------------------------------------------------------------


def test_env_bool_returns_default_when_unset_or_blank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AFF_TEST_FLAG", raising=False)
    assert env_bool("AFF_TEST_FLAG", True) is True
    assert env_bool("AFF_TEST_FLAG", False) is False
    monkeypatch.setenv("AFF_TEST_FLAG", "   ")
    assert env_bool("AFF_TEST_FLAG", True) is True
    assert env_bool("AFF_TEST_FLAG", False) is False


@pytest.mark.parametrize("raw", ["1", "true", "True", " TRUE ", "yes", "on"])
def test_env_bool_reads_true(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("AFF_TEST_FLAG", raw)
    assert env_bool("AFF_TEST_FLAG", False) is True


@pytest.mark.parametrize("raw", ["0", "false", "FALSE", " False ", "no", "off"])
def test_env_bool_reads_false(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("AFF_TEST_FLAG", raw)
    assert env_bool("AFF_TEST_FLAG", True) is False


@pytest.mark.parametrize("raw", ["maybe", "2", "truthy", "-1"])
def test_env_bool_refuses_anything_else(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("AFF_TEST_FLAG", raw)
    with pytest.raises(ImproperlyConfigured, match="AFF_TEST_FLAG"):
        env_bool("AFF_TEST_FLAG", True)


def test_env_list_returns_default_when_unset_or_blank(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AFF_TEST_LIST", raising=False)
    assert env_list("AFF_TEST_LIST", ["fallback"]) == ["fallback"]
    monkeypatch.setenv("AFF_TEST_LIST", "")
    assert env_list("AFF_TEST_LIST", ["fallback"]) == ["fallback"]


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AFF_TEST_LIST", " a.example.com ,b.example.com,, ,c ")
    assert env_list("AFF_TEST_LIST", ["fallback"]) == ["a.example.com", "b.example.com", "c"]


def test_env_list_single_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AFF_TEST_LIST", "only.example.com")
    assert env_list("AFF_TEST_LIST", []) == ["only.example.com"]
