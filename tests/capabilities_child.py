"""A separate process for tests/test_capabilities.py — a worker of its own: ``AUTH_USER_MODEL``
of its own (``tests.custom_user.Member``), a file SQLite database shared with the other
processes, ``CachedModelBackend`` and the cache that ``CAPABILITIES_CACHE_URL`` names:
``locmem://`` (kept per process), ``file:///DIR`` (shared by the processes of this host)
or ``redis://…`` (shared).

``python -m tests.capabilities_child STEP...`` runs the steps in order and prints one JSON
line per ``check`` (whether the member holds ``auth.view_group`` and how many permission
queries answering that took, as a fresh request's user object) and ``{"waiting": true}``
at each ``wait``, where it reads a line from stdin before going on: the test changes a
permission in another process meanwhile, this one staying alive with what it kept.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

DATABASE = os.environ["CAPABILITIES_DATABASE"]
CACHE_URL = os.environ.get("CAPABILITIES_CACHE_URL", "locmem://")


def _cache(url: str) -> dict[str, str]:
    if url.startswith("redis://"):
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if url.startswith("file://"):
        return {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": url.removeprefix("file://"),
        }
    return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}


SETTINGS = {
    "SECRET_KEY": "capabilities-child",
    "INSTALLED_APPS": [
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "rest_framework",
        "affordances",
        "tests.custom_user",
    ],
    "AUTH_USER_MODEL": "custom_user.Member",
    "AUTHENTICATION_BACKENDS": ["affordances.capabilities.CachedModelBackend"],
    "DATABASES": {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": DATABASE,
            "OPTIONS": {"timeout": 20},
        }
    },
    "CACHES": {"default": _cache(CACHE_URL)},
    "DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField",
    "USE_TZ": True,
}
EMAIL = "ann@example.com"
PERMISSION = "auth.view_group"
GROUP = "viewers"


def main(steps: list[str]) -> None:
    import django
    from django.conf import settings

    settings.configure(**SETTINGS)
    django.setup()

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    member_model = get_user_model()

    def member() -> Any:
        return member_model.objects.get(email=EMAIL)

    for step in steps:
        if step == "setup":
            call_command("migrate", run_syncdb=True, verbosity=0)
            member_model.objects.create_user(EMAIL)  # type: ignore[attr-defined]
            group = Group.objects.create(name=GROUP)
            group.permissions.add(Permission.objects.get(codename="view_group"))
        elif step == "grant":
            member().user_permissions.add(Permission.objects.get(codename="view_group"))
        elif step == "revoke":
            member().user_permissions.remove(Permission.objects.get(codename="view_group"))
        elif step == "join":
            member().groups.add(Group.objects.get(name=GROUP))
        elif step == "leave":
            member().groups.remove(Group.objects.get(name=GROUP))
        elif step == "check":
            fresh = member()
            with CaptureQueriesContext(connection) as captured:
                held = fresh.has_perm(PERMISSION)
            queries = sum('"auth_permission"' in q["sql"] for q in captured.captured_queries)
            print(json.dumps({"held": held, "queries": queries}), flush=True)
        elif step == "wait":
            print(json.dumps({"waiting": True}), flush=True)
            sys.stdin.readline()
        else:
            raise SystemExit(f"unknown step {step!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
