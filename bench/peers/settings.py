"""The peer benchmark's project: the tutorial's settings (docs/tutorial.md, step 1) plus
the two MCP peers' apps and settings as their READMEs give them.

The database is an SQLite file in the directory ``BENCH_PEERS_DIR`` (``run.py`` makes a
temporary one); connections persist across requests, as a production worker keeps them.
"""

import os
from pathlib import Path

SECRET_KEY = "django-affordances-peer-benchmark"
DEBUG = False  # as in production: DEBUG keeps every query's SQL
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "drf_spectacular",
    "affordances",
    "djangorestframework_mcp",  # django-rest-framework-mcp
    "mcp_server",  # django-mcp-server
    "bench.peers.helpdesk",
]

# `django-admin startproject`'s.
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "bench.peers.urls"
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

DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": str(Path(os.environ.get("BENCH_PEERS_DIR", ".")) / "bench-peers.sqlite3"),
        "CONN_MAX_AGE": None,
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The tutorial's, step 1.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework_simplejwt.authentication.JWTAuthentication",  # bearer tokens
        "rest_framework.authentication.SessionAuthentication",  # the browsable API
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
}
SPECTACULAR_SETTINGS = {"POSTPROCESSING_HOOKS": ["affordances.rest.openapi.postprocess"]}

AFFORDANCES = {
    "NAMESPACE": "helpdesk",
    "MODELS": {
        "helpdesk.Ticket": {
            "SERIALIZER": "bench.peers.helpdesk.serializers.TicketSerializer",
            "QUERYSET": "bench.peers.helpdesk.selectors.tickets_visible_to",
            "PAGE_SIZE": 50,
            "MAX_PAGE_SIZE": 1000,
        },
        "helpdesk.Case": {
            "SERIALIZER": "bench.peers.helpdesk.serializers.CaseSerializer",
            "QUERYSET": "bench.peers.helpdesk.selectors.cases_visible_to",
            "PAGE_SIZE": 50,
            "MAX_PAGE_SIZE": 1000,
        },
    },
}

# django-mcp-server (its README): the endpoint, the same bearer token, and stateless (a
# stateful server keeps each MCP session in a Django session: a load and a save a request).
DJANGO_MCP_ENDPOINT = "peers/mcp-server"
DJANGO_MCP_AUTHENTICATION_CLASSES = ["rest_framework_simplejwt.authentication.JWTAuthentication"]
DJANGO_MCP_GLOBAL_SERVER_CONFIG = {"name": "helpdesk", "stateless": True}

# A root handler at WARNING, as a deployed project configures one: without it the MCP
# SDK 1.x (django-mcp-server's FastMCP) installs its own at INFO when imported, and logs
# every request ("Processing request of type …") — a cost no deployment pays.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
}
