"""A separate process for tests/test_capabilities.py: ``AUTH_USER_MODEL`` of its own
(``tests.custom_user.Member``), a file SQLite database and the cache that
``CAPABILITIES_CACHE_URL`` names (``locmem://`` or ``redis://…``), shared with the next
process when it is Redis.

``python -m tests.capabilities_child STEP...`` runs the steps in order and prints one JSON
line per ``check``: whether the member holds ``auth.view_group`` and how many permission
queries answering that took.
"""

from __future__ import annotations

import json
import os
import sys

DATABASE = os.environ["CAPABILITIES_DATABASE"]
CACHE_URL = os.environ.get("CAPABILITIES_CACHE_URL", "locmem://")

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
    "DATABASES": {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": DATABASE}},
    "CACHES": {
        "default": (
            {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
            if CACHE_URL.startswith("redis://")
            else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
        )
    },
    "DEFAULT_AUTO_FIELD": "django.db.models.BigAutoField",
    "USE_TZ": True,
}
EMAIL = "ann@example.com"
PERMISSION = "auth.view_group"


def main(steps: list[str]) -> None:
    import django
    from django.conf import settings

    settings.configure(**SETTINGS)
    django.setup()

    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from affordances import capabilities

    member_model = get_user_model()
    permission = Permission.objects.filter(codename="view_group").first
    for step in steps:
        if step == "setup":
            call_command("migrate", run_syncdb=True, verbosity=0)
            member_model.objects.create_user(EMAIL)  # type: ignore[attr-defined]
        elif step == "grant":
            member_model.objects.get(email=EMAIL).user_permissions.add(permission())
        elif step == "revoke":
            member_model.objects.get(email=EMAIL).user_permissions.remove(permission())
        elif step == "check":
            member = member_model.objects.get(email=EMAIL)
            with CaptureQueriesContext(connection) as captured:
                capabilities.prime(member)
                held = member.has_perm(PERMISSION)
            queries = sum('"auth_permission"' in q["sql"] for q in captured.captured_queries)
            print(json.dumps({"held": held, "queries": queries}), flush=True)
        else:
            raise SystemExit(f"unknown step {step!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
