"""Settings for the django-affordances demo project.

Everything that differs between a laptop and a server comes from the environment:
``DATABASE_URL``, ``SECRET_KEY``, ``DEBUG`` and ``ALLOWED_HOSTS``. The defaults are
safe for local use only; with ``DEBUG`` off the project refuses to start on the
default secret key. The production hardening (TLS, cookies, HSTS, static files, rate
limits, cache) is read from the environment too; see "Deploy" in the README.
"""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

_DEFAULT_SECRET_KEY = "django-insecure-local-development-key-do-not-use-in-production"


def env_bool(name: str, default: bool) -> bool:
    """Read a boolean from the environment: 1/true/yes/on or 0/false/no/off."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in {"1", "true", "yes", "on"}:
        return True
    if value in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/true/0/false, not {raw!r}.")


def env_int(name: str, default: int) -> int:
    """Read a non-negative integer from the environment."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = -1
    if value < 0:
        raise ImproperlyConfigured(f"{name} must be a non-negative integer, not {raw!r}.")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return [item.strip() for item in raw.split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY") or _DEFAULT_SECRET_KEY
if not DEBUG and SECRET_KEY == _DEFAULT_SECRET_KEY:
    raise ImproperlyConfigured(
        "DEBUG is off but SECRET_KEY is not set: refusing to start with the public "
        "development key. Set SECRET_KEY in the environment."
    )
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework_simplejwt",
    # Used refresh tokens are refused (SIMPLE_JWT below); its tables grow with every
    # login and refresh: run `manage.py flushexpiredtokens` daily.
    "rest_framework_simplejwt.token_blacklist",
    # The MCP endpoints' OAuth 2.1 authorization server (affordances.mcp.oauth): an MCP
    # host given the URL alone registers, sends its user to log in and consent, and gets
    # a token bound to the endpoint. `manage.py cleartokens` removes expired tokens.
    "oauth2_provider",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "affordances",
    "orders",
    "procurement",
    "experiment",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Static files straight from the WSGI app (gunicorn), before any other work is done.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Concurrent requests (live-server tests, the demo) would otherwise fail fast on a
    # locked database instead of waiting their turn.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Production serves hashed, compressed files (`collectstatic` first) that may be
    # cached forever; development and the tests need no `collectstatic` at all.
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
# Fixed at start-up rather than following DEBUG at request time: the test runner turns
# DEBUG off, and a DEBUG start (development, tests) has no STATIC_ROOT to read.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        # simplejwt's, with a token naming no valid user a 401 rather than a 500.
        "config.authentication.JWTAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": [
        "affordances.rest.renderers.JSONRenderer",
        "affordances.rest.browsable.AffordancesBrowsableAPIRenderer",
        "affordances.rest.renderers.HalFormsRenderer",
        "affordances.rest.renderers.HalRenderer",
    ],
    # Accept's q-values decide, on the project's own views too (the app's views use it
    # whatever this says).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "affordances.rest.ContentNegotiation",
    "DEFAULT_SCHEMA_CLASS": "affordances.rest.AutoSchema",
    # The project's own endpoints (the token views) take JSON only, bounded in size and
    # depth; the app's views add the browsable API's forms (without files).
    "DEFAULT_PARSER_CLASSES": ["affordances.rest.parsers.JSONParser"],
    # The app's own views render problems anyway; this makes the project's (the token
    # endpoints) answer in the same shape.
    "EXCEPTION_HANDLER": "affordances.rest.problem_exception_handler",
    # ASCII-escaped JSON: an echoed lone surrogate ("\\ud800") must not break rendering.
    "UNICODE_JSON": False,
    # Token and login endpoints (config.throttling): attempts per client address.
    "DEFAULT_THROTTLE_RATES": {"auth": os.environ.get("AUTH_THROTTLE_RATE") or "20/min"},
    # Behind N reverse proxies the client address is the Nth from the right of
    # X-Forwarded-For; 0 is REMOTE_ADDR. Never None: DRF would then take the whole
    # X-Forwarded-For, which the client writes, as the address.
    "NUM_PROXIES": env_int("NUM_PROXIES", 0),
}

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(minutes=30),
    "REFRESH_TOKEN_LIFETIME": timedelta(days=1),
    "AUTH_HEADER_TYPES": ("Bearer",),
    # A token signed with the real key but with a malformed exp/iat/nbf/jti is a 401,
    # not a 500.
    "AUTH_TOKEN_CLASSES": ("config.authentication.AccessToken",),
    # A refresh token of a deleted or inactive user is a 401, not a 500 (simplejwt #860),
    # and one issued under another password is refused too.
    "TOKEN_REFRESH_SERIALIZER": "config.authentication.TokenRefreshSerializer",
    # Every token carries a hash of the user's password hash: a password change
    # invalidates the access and refresh tokens issued before it.
    "CHECK_REVOKE_TOKEN": True,
    # A refresh answers a new refresh token and the one sent is refused from then on
    # (the token_blacklist app).
    "ROTATE_REFRESH_TOKENS": True,
    "BLACKLIST_AFTER_ROTATION": True,
}

# django-oauth-toolkit as the MCP endpoints' authorization server (docs/howto/mcp-hosts.md).
OAUTH2_PROVIDER = {
    # AFFORDANCES["MCP_READ_SCOPE"] and ["MCP_WRITE_SCOPE"]; a client asking for no scope
    # may read, and asks for writing when a tool call needs it (MCP step-up).
    "SCOPES": {
        "mcp:read": "Read what you may read (list, get)",
        "mcp:write": "Run the operations you may run (transitions, creates)",
    },
    "DEFAULT_SCOPES": ["mcp:read"],
    # The authorization code grant with PKCE, S256 only (RFC 9700 §2.1.1).
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    # Public clients (PKCE, no secret) as most MCP hosts are, and confidential ones.
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": [
        "none",
        "client_secret_basic",
        "client_secret_post",
    ],
    # Tokens in the Authorization header only, hashed at rest; RFC 9207 `iss` in every
    # authorization response.
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    # Each refresh answers a new refresh token; reusing an old one revokes its family.
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": 3600,
    "REFRESH_TOKEN_EXPIRE_SECONDS": 30 * 24 * 3600,
    # RFC 7591: MCP hosts register themselves (affordances.mcp.oauth.RegistrationView
    # takes the authorization code grant only).
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    # RFC 9700 §2.1: https redirect URIs — and http on a loopback address, where desktop
    # hosts receive the answer (RFC 8252 §7.3, as the MCP authorization spec allows):
    # affordances.mcp.registration admits exactly those itself, on POST and PUT, and the
    # consent view redirects to them, with DEBUG off too. "http" stays out of this list
    # (so `check --deploy` has no oauth2_provider.W008 to report): no other http URI.
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https"],
    # Refresh tokens of deactivated users and replayed codes refused (and the code's
    # tokens revoked), foreign tokens mapped by (issuer, sub): affordances.mcp.oauth.
    "OAUTH2_VALIDATOR_CLASS": "affordances.mcp.oauth.OAuth2Validator",
    # RFC 7592 registration tokens expire (django-oauth-toolkit's default: the year 9999).
    "DCR_REGISTRATION_TOKEN_EXPIRE_SECONDS": 7 * 24 * 3600,
    # Client ID Metadata Documents, which MCP 2025-11-25 prefers to registration: a host
    # names an https URL as its client_id and this server fetches its description there
    # (at the consent page, once the person logged in), under the registration's policy,
    # with django-oauth-toolkit's limits (16 kB, 5 s, kept per Cache-Control between
    # 5 minutes and a day). affordances.mcp.cimd's fetcher refuses private addresses
    # unless AFFORDANCES["OAUTH_CIMD_ALLOW_PRIVATE"] (development only).
    "CIMD_ENABLED": True,
    "CIMD_METADATA_FETCHER": "affordances.mcp.cimd.MetadataFetcher",
}
# Where the consent page sends a visitor who is not logged in: DRF's login page (any
# user; the admin's takes staff only), rate-limited like the others (config.throttling).
LOGIN_URL = "rest_framework:login"
# Where a login without ?next= lands: the API's entry point (Django's default,
# /accounts/profile/, is no page here). The front door's login link carries ?next=.
LOGIN_REDIRECT_URL = "affordances:entry-point"

SPECTACULAR_SETTINGS = {
    "TITLE": "django-affordances demo API",
    "DESCRIPTION": "Stable verbs, dynamic affordances: orders with their operations.",
    "VERSION": "0.1.0",
    "LICENSE": {"name": "MIT", "url": "https://opensource.org/licenses/MIT"},
    # Who answers for the API (Spectral's info-contact): the project's issue tracker.
    "CONTACT": {
        "name": "django-affordances",
        "url": "https://github.com/django-affordances/django-affordances/issues",
    },
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    # No deep links: Swagger UI writes each operation's link inside its (button) header,
    # a control within a control that keyboard and screen-reader users cannot reach.
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "affordances.rest.openapi.postprocess",
    ],
}

# The `hold_order` operation exists only while this is on (`@operation(enabled_by=…)`);
# the experiment switches it on mid-run to see which interface notices (task N1).
ORDERS_ENABLE_HOLD = env_bool("ORDERS_ENABLE_HOLD", False)

AFFORDANCES = {
    "NAMESPACE": "example",
    # gunicorn's timeout (config/gunicorn.py): how long a run can possibly last.
    "REQUEST_TIMEOUT": int(os.environ.get("GUNICORN_TIMEOUT") or "30"),
    # Whether an @operation(confirm=True) asks the person first (docs/protocol.md#confirmations).
    # Off only for a server no person is behind: `make load`'s (load/run.py).
    "CONFIRMATIONS": env_bool("AFFORDANCES_CONFIRMATIONS", True),
    # OAuth 2.1 (docs/howto/mcp-hosts.md#oauth): the MCP endpoints name the authorization
    # server at /o in their RFC 9728 metadata and challenges, and take its tokens (bound to
    # the endpoint, RFC 8707) as well as simplejwt's from /api/token/.
    "MCP_AUTHORIZATION_SERVERS": ["/o"],
    "MCP_AUTHENTICATION_CLASSES": [
        "affordances.mcp.oauth.OAuth2Authentication",
        "config.authentication.JWTAuthentication",
    ],
    # /o/register/ and /o/token/, per client address (the default cache, as the logins).
    "OAUTH_THROTTLE_RATES": {
        "register": os.environ.get("OAUTH_REGISTER_THROTTLE_RATE") or "20/hour",
        "token": os.environ.get("OAUTH_TOKEN_THROTTLE_RATE") or "60/min",
    },
    "MODELS": {
        "orders.Order": {
            "SERIALIZER": "orders.serializers.OrderSerializer",
            "QUERYSET": "orders.selectors.order_visible_queryset",
            "BASENAME": "order",
            "FILTERSET": "orders.filters.OrderFilter",
            "ORDERING": ["pk"],
            "PAGE_SIZE": 50,
            "MAX_PAGE_SIZE": 200,
        },
        "procurement.PurchaseRequest": {
            "SERIALIZER": "procurement.serializers.PurchaseRequestSerializer",
            "QUERYSET": "procurement.selectors.purchase_request_visible_queryset",
            "RESOURCE": "purchase_request",
            "BASENAME": "purchase-request",
            "FILTERSET": "procurement.filters.PurchaseRequestFilter",
            "ORDERING": ["pk"],
            "PAGE_SIZE": 50,
            "MAX_PAGE_SIZE": 200,
        },
    },
}

# --- Production hardening -------------------------------------------------------------
# Each TLS setting defaults to on when DEBUG is off and can be switched by the variable
# of the same name; local development and the tests (DEBUG on) stay on plain HTTP.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", not DEBUG)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
# HSTS is opt-in: browsers remember it for its whole lifetime, so turn it on only once
# HTTPS works for good (and for every subdomain before SECURE_HSTS_INCLUDE_SUBDOMAINS).
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Trusting X-Forwarded-Proto is only safe behind a proxy that always sets it.
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True


def _cache(url: str) -> dict[str, str]:
    """``CACHE_URL``: ``locmem://`` (default), ``redis://…``/``rediss://…`` or ``db://TABLE``."""
    scheme, _, rest = url.partition("://")
    if scheme == "locmem":
        return {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": rest}
    if scheme in {"redis", "rediss"}:
        return {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url}
    if scheme == "db" and rest:
        return {"BACKEND": "django.core.cache.backends.db.DatabaseCache", "LOCATION": rest}
    raise ImproperlyConfigured(f"CACHE_URL must be locmem://, redis:// or db://TABLE: {url!r}.")


# The rate limits count in this cache. LocMem is per process: with several workers each
# one counts on its own, so a shared cache (redis://, db://) makes the limit exact.
CACHES = {"default": _cache(os.environ.get("CACHE_URL") or "locmem://")}

# Each caller's permissions are kept in this cache across requests by CachedModelBackend
# (docs/howto/roles-permissions.md#the-capabilities-cache), only when the cache is shared:
# a change is announced in the cache, so a per-process LocMem (2 gunicorn workers by
# default) could not reach the other workers. With locmem:// Django's ModelBackend loads
# the permissions on every request (the library would cache nothing anyway, and say so).
AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend"
    if CACHES["default"]["BACKEND"].endswith("LocMemCache")
    else "affordances.capabilities.CachedModelBackend"
]

# Every committed run publishes "this object changed" (the MCP listen streams hear it;
# affordances.brokers): through Redis at EVENTS_URL (redis://127.0.0.1:6379/0) every
# worker of an ASGI server hears every run; without it, each process hears its own runs.
if os.environ.get("EVENTS_URL"):
    AFFORDANCES["EVENTS_BROKER"] = {
        "BACKEND": "affordances.brokers.RedisBroker",
        "OPTIONS": {
            "url": os.environ["EVENTS_URL"],
            "channel": os.environ.get("EVENTS_CHANNEL") or "affordances",
        },
    }

# --- Logging --------------------------------------------------------------------------
# Django's default sends errors with DEBUG off to mail_admins only, and there are no
# ADMINS: a 500 was logged nowhere. Everything goes to stderr instead, where gunicorn's
# own log and the service manager collect it. WARNING by default: every traceback and
# Django's 4xx lines (a flood of 401s or 429s shows), without the libraries' INFO chatter.
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LOG_LEVEL = (os.environ.get("LOG_LEVEL") or "WARNING").strip().upper()
if LOG_LEVEL not in _LOG_LEVELS:
    raise ImproperlyConfigured(
        f"LOG_LEVEL must be one of {', '.join(_LOG_LEVELS)}, not {os.environ['LOG_LEVEL']!r}."
    )
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s [%(process)d] %(message)s"},
    },
    "handlers": {
        "stderr": {"class": "logging.StreamHandler", "formatter": "plain"},
    },
    # One handler, on the root: the project's loggers (affordances.*, orders.*) and
    # Django's reach it by propagation, and pytest's caplog sees them all.
    "root": {"handlers": ["stderr"], "level": LOG_LEVEL},
    "loggers": {
        # Without Django's own handlers (console only with DEBUG on, mail_admins).
        "django": {"handlers": [], "level": LOG_LEVEL, "propagate": True},
    },
}
