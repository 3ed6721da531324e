"""The library's test settings: Django, DRF, django-fsm and the affordances app, with the
test models of ``tests.generic`` — nothing of the demo (``config``, ``orders``,
``procurement``), the experiment or the load tooling.

``make test`` runs ``tests/`` with these settings and with those packages made
unimportable (``-p tests.no_demo``); the demo's tests are in ``demo_tests/``.
``DATABASE_URL`` (``sqlite:///…`` or ``postgres://…``) picks the database, as in CI.
"""

from __future__ import annotations

import os
from urllib.parse import unquote, urlsplit

SECRET_KEY = "django-affordances-library-tests"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    # The `oauth` extra's authorization server (tests/test_mcp_oauth.py).
    "oauth2_provider",
    # A per-object permission backend (tests/test_role_prerequisites.py).
    "guardian",
    "affordances",
    "tests.generic",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

# Each test mounts the URLconf of the test models it uses (tests/generic/*_api.py).
ROOT_URLCONF = "tests.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    }
]


def _database(url: str) -> dict[str, object]:
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": parts.path[1:] or ":memory:"}
    if parts.scheme in {"postgres", "postgresql"}:
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": parts.path.lstrip("/"),
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": parts.hostname or "",
            "PORT": str(parts.port or ""),
        }
    raise ValueError(f"DATABASE_URL must be sqlite:// or postgres://, not {url!r}")


DATABASES = {"default": _database(os.environ.get("DATABASE_URL") or "sqlite:///")}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["OPTIONS"] = {"timeout": 20}  # live-server tests
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
STATIC_URL = "static/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # fast tests

# What the README's "Use it in your own project" sets.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework_simplejwt.authentication.JWTAuthentication",  # the `jwt` extra
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "affordances.rest.renderers.JSONRenderer",
        "affordances.rest.browsable.AffordancesBrowsableAPIRenderer",
        "affordances.rest.renderers.HalFormsRenderer",
        "affordances.rest.renderers.HalRenderer",
    ],
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "affordances.rest.ContentNegotiation",
    "DEFAULT_PARSER_CLASSES": ["affordances.rest.parsers.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "affordances.rest.AutoSchema",
    "EXCEPTION_HANDLER": "affordances.rest.problem_exception_handler",
    # ASCII-escaped JSON, as the demo: a lone surrogate must not break rendering
    # (tests/test_encoding.py compares the library's renderer with DRF's under it).
    "UNICODE_JSON": False,
}
SPECTACULAR_SETTINGS = {
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "affordances.rest.openapi.postprocess",
    ],
}

# django-oauth-toolkit as docs/howto/mcp-hosts.md#oauth configures it (the URLs are only
# mounted by tests/generic/oauth_api.py).
OAUTH2_PROVIDER = {
    "SCOPES": {"mcp:read": "Read", "mcp:write": "Run operations"},
    "DEFAULT_SCOPES": ["mcp:read"],
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "OAUTH2_VALIDATOR_CLASS": "affordances.mcp.oauth.OAuth2Validator",
}

AFFORDANCES = {
    "NAMESPACE": "example",
    "MODELS": {},
}

# django-guardian: no anonymous user row in every test database.
ANONYMOUS_USER_NAME = None
