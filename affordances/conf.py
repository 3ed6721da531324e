"""The ``AFFORDANCES`` setting, read through one object.

Read on every access (not cached at import) so ``override_settings`` works in tests.
Unknown keys are rejected: a typo must not silently fall back to a default.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured

__all__ = [
    "ANY_STATE",
    "DEFAULTS",
    "MODEL_DEFAULTS",
    "ModelOptions",
    "SettingError",
    "close_match",
    "did_you_mean",
    "settings",
]

DEFAULTS: dict[str, Any] = {
    # urn:{NAMESPACE}:operation:{name}:v{N}
    "NAMESPACE": "affordances",
    # "app_label.Model" -> options (see MODEL_DEFAULTS); a list of labels also works.
    "MODELS": {},
    # How long an Idempotency-Key is remembered, in seconds.
    "IDEMPOTENCY_TTL": 24 * 60 * 60,
    # Origins (scheme://host[:port]) besides the server's own allowed to call the MCP endpoint.
    "MCP_ALLOWED_ORIGINS": [],
    # Dotted paths of the DRF authentication classes of the MCP endpoints; default: the
    # project's DEFAULT_AUTHENTICATION_CLASSES without session authentication.
    "MCP_AUTHENTICATION_CLASSES": None,
    # OAuth 2.1 for the MCP endpoints (docs/howto/mcp-hosts.md#oauth): the issuers of the
    # authorization servers named in their RFC 9728 protected-resource metadata (an
    # absolute URL, or a path such as "/o" on the endpoint's own origin); empty: no
    # metadata, and 401 challenges without resource_metadata.
    "MCP_AUTHORIZATION_SERVERS": [],
    # The scopes a token carrying scopes needs: the read scope for every MCP request, the
    # write scope too for a tool that is not read-only; None: not required.
    "MCP_READ_SCOPE": "mcp:read",
    "MCP_WRITE_SCOPE": "mcp:write",
    # Refuse tokens that name no audience (RFC 8707 resource / JWT aud); a token naming
    # audiences is refused on an endpoint it was not issued for either way.
    "MCP_REQUIRE_AUDIENCE": False,
    # The `oauth` extra's authorization server (affordances.mcp.oauth). Requests per
    # client address to /o/register/ and /o/token/, in DRF's "N/period" form, counted in
    # the default cache (a shared one in production); None: unlimited.
    "OAUTH_THROTTLE_RATES": {"register": "20/hour", "token": "60/min"},
    # Hosts an https redirect URI may name (exact, or ".example.com" for it and its
    # subdomains); None: any. http is for loopback addresses only, whatever this says.
    "OAUTH_REDIRECT_HOSTS": None,
    # Seconds after which `expire_oauth_clients` deletes a self-registered client that
    # never obtained a token.
    "OAUTH_UNUSED_CLIENT_TTL": 24 * 60 * 60,
    # Introspected tokens of another server (resource-server mode): create a local user
    # for an (issuer, subject) no OAuthIdentity links yet; False: such a token is refused.
    "OAUTH_CREATE_USERS": False,
    # Client ID Metadata Documents (affordances.mcp.cimd): also fetch a document whose
    # host resolves to a loopback or private address (127.0.0.0/8, ::1, 10/8,
    # 172.16/12, 192.168/16, fc00::/7) — for development and tests only; link-local (the
    # cloud metadata address), multicast and reserved addresses are refused either way.
    "OAUTH_CIMD_ALLOW_PRIVATE": False,
    # Lists: items per page when the caller does not say, and the most it may ask for.
    "PAGE_SIZE": 50,
    "MAX_PAGE_SIZE": 200,
    # Seconds a run waits for its object's row lock before answering 503 lock_timeout
    # (PostgreSQL's lock_timeout, per transaction); None waits as the database does.
    # SQLite waits its connection's "timeout" option instead.
    "LOCK_TIMEOUT": 5,
    # Seconds after which the server stops a request (gunicorn's --timeout, default 30).
    # A keyed run's claim still "running" after LOCK_TIMEOUT + REQUEST_TIMEOUT outlived
    # any run, so its worker died: a retry with the same key and request takes it over.
    # None: a claim is held until IDEMPOTENCY_TTL.
    "REQUEST_TIMEOUT": 30,
    # Keep each distinct OpenAPI document (per code, settings, capability set, host,
    # language, version) and serve it again; False generates it on every request, for
    # projects whose own drf-spectacular hooks read more of the request than that.
    "OPENAPI_MEMO": True,
    # The alias in CACHES where affordances.capabilities.CachedModelBackend keeps each
    # caller's model-wide permissions across requests; used only when that cache is
    # shared by every process (not LocMem or Dummy). None: the backend loads them on
    # every request, as Django's ModelBackend.
    "CAPABILITIES_CACHE": "default",
    # Where "this object changed" and "your tools changed" are published after a run
    # commits (affordances.brokers): {"BACKEND": dotted path, "OPTIONS": {...}}; the
    # in-process default reaches one process only; None: nothing published, no stream.
    "EVENTS_BROKER": {"BACKEND": "affordances.brokers.InProcessBroker"},
    # Seconds a confirmation asked for (MCP's sealed requestState) may be answered in.
    "CONFIRMATION_TTL": 600,
    # Whether operations declared @operation(confirm=True) ask the person first. False
    # only where no person is there to ask (a test harness, a benchmark): they then run
    # on the first call, and the catalog says confirmationRequired: false.
    "CONFIRMATIONS": True,
}

# The longest duration setting: PostgreSQL's largest lock_timeout (2**31 - 1 ms, 24 days).
MAX_SECONDS = 2_147_483

MODEL_DEFAULTS: dict[str, Any] = {
    # Dotted path of the DRF serializer of the representation (required for the REST face).
    "SERIALIZER": None,
    # Dotted path of a function (user) -> QuerySet of the objects this user may see.
    "QUERYSET": None,
    # URL name prefix of the model's routes (DRF router basename); default: model name.
    "BASENAME": None,
    # Resource name used in operation names (cancel_{resource}); default: model name.
    "RESOURCE": None,
    # The plural in list_{plural}; default: the model's verbose_name_plural as an
    # identifier ("companies") when its verbose_name spells RESOURCE, else RESOURCE + "s".
    "PLURAL": None,
    # The nouns of generated prose ("Get purchase request", "List purchase requests");
    # default: the model's verbose_name / verbose_name_plural.
    "VERBOSE_NAME": None,
    "VERBOSE_NAME_PLURAL": None,
    # Integer field holding the version, bumped by every transition.
    "VERSION_FIELD": "version",
    # Dotted path of a django-filter FilterSet whose filters become list_* arguments.
    "FILTERSET": None,
    # Field names every list of the model is ordered by (a unique one last keeps pages stable).
    "ORDERING": ("pk",),
    # Paging of this model's lists; default: the global PAGE_SIZE / MAX_PAGE_SIZE.
    "PAGE_SIZE": None,
    "MAX_PAGE_SIZE": None,
    # The plain fields callers may change with edit_{resource} (REST PATCH, the MCP tool,
    # the admin's change form): a list, or a dict by state of the model's (first) FSM
    # field, "*" for every state. None: no edit operation (and PATCH is 405).
    "EDITABLE_FIELDS": None,
    # The role prerequisite of edit_{resource}, as @operation(requires=...) is a
    # transition's: a permission ("app_label.codename") or several the caller must hold
    # without an object before the change permission is asked of any object.
    "EDIT_REQUIRES": (),
}


@dataclass(frozen=True)
class ModelOptions:
    label: str
    serializer: str | None
    queryset: str | None
    basename: str | None
    resource: str | None
    version_field: str
    filterset: str | None
    ordering: tuple[str, ...] = ("pk",)
    page_size: int | None = None
    max_page_size: int | None = None
    plural: str | None = None
    verbose_name: str | None = None
    verbose_name_plural: str | None = None
    # (state or "*", field names) pairs, as declared; empty: the model takes no edits.
    editable_fields: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # The edit's role prerequisites (EDIT_REQUIRES).
    edit_requires: tuple[str, ...] = ()


def prerequisites(requires: Any) -> tuple[str, ...] | None:
    """``requires=`` (a transition's, an edit's ``EDIT_REQUIRES``) as a tuple of
    permission names — one name or a sequence of ``app_label.codename`` — or None when
    it is not that."""
    names = (requires,) if isinstance(requires, str) else requires
    if not isinstance(names, list | tuple) or not all(
        isinstance(name, str) and name.count(".") == 1 for name in names
    ):
        return None
    return tuple(names)


class SettingError(ImproperlyConfigured):
    """A mistake in ``AFFORDANCES`` (or in what it names), found by the rule that reads it.

    The same rule serves both paths: a system check turns it into an error at start-up —
    its id, its message and hint, reported on ``obj`` (the model class, else the setting)
    — and where the app reads the setting at run time, it is raised with the same words.
    """

    def __init__(
        self, message: str, *, check_id: str, hint: str = "", obj: Any = "AFFORDANCES"
    ) -> None:
        super().__init__(f"{message} {hint}".rstrip())
        self.message = message
        self.hint = hint
        self.check_id = check_id
        self.obj = obj


def close_match(name: str, known: Iterable[str]) -> str | None:
    """The known name a mistyped one most likely meant (``difflib``, ignoring case), or None."""
    by_folded = {str(option).casefold(): str(option) for option in known}
    found = difflib.get_close_matches(str(name).casefold(), list(by_folded), n=1)
    return by_folded[found[0]] if found else None


def did_you_mean(names: Iterable[str], known: Iterable[str]) -> str:
    """``"Did you mean 'MODELS'? "`` for mistyped ``names`` ("" when nothing is close)."""
    known = list(known)
    matches = [(name, close_match(name, known)) for name in names]
    found = [(name, match) for name, match in matches if match is not None]
    if not found:
        return ""
    if len(matches) == 1:
        return f"Did you mean {found[0][1]!r}? "
    return f"Did you mean {', '.join(f'{match!r} for {name!r}' for name, match in found)}? "


class AffordancesSettings:
    def _raw(self) -> Mapping[str, Any]:
        raw = getattr(django_settings, "AFFORDANCES", {})
        if not isinstance(raw, Mapping):
            raise ImproperlyConfigured("AFFORDANCES must be a dict.")
        unknown = sorted(set(raw) - set(DEFAULTS), key=str)
        if unknown:
            raise SettingError(
                f"AFFORDANCES has unknown setting(s): {', '.join(map(repr, unknown))}.",
                hint=f"{did_you_mean(unknown, DEFAULTS)}The settings are "
                f"{', '.join(sorted(DEFAULTS))}.",
                check_id="affordances.E044",
            )
        return raw

    def _get(self, name: str) -> Any:
        return self._raw().get(name, DEFAULTS[name])

    # One typed property per setting, each validating what it returns (a bad value is
    # ImproperlyConfigured here, and an error of its own system check at start-up:
    # SETTING_CHECKS in affordances.checks).

    @property
    def NAMESPACE(self) -> str:
        value = self._get("NAMESPACE")
        if not isinstance(value, str) or _NAMESPACE.fullmatch(value) is None:
            raise ImproperlyConfigured(
                "AFFORDANCES['NAMESPACE'] must be a URN namespace: a letter or digit, then "
                "up to 31 letters, digits or hyphens."
            )
        return value

    @property
    def IDEMPOTENCY_TTL(self) -> int:
        return _positive_setting("IDEMPOTENCY_TTL", self._get("IDEMPOTENCY_TTL"))

    @property
    def MCP_ALLOWED_ORIGINS(self) -> tuple[str, ...]:
        value = self._get("MCP_ALLOWED_ORIGINS")
        if not isinstance(value, list | tuple) or not all(
            isinstance(origin, str) and _ORIGIN.fullmatch(origin) for origin in value
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['MCP_ALLOWED_ORIGINS'] must be a list of origins such as "
                "'https://app.example.com' or 'http://localhost:5173'."
            )
        return tuple(value)

    @property
    def MCP_AUTHENTICATION_CLASSES(self) -> tuple[str | type, ...] | None:
        value = self._get("MCP_AUTHENTICATION_CLASSES")
        if value is None:
            return None
        if not isinstance(value, list | tuple) or not all(
            (isinstance(path, str) and path) or isinstance(path, type) for path in value
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['MCP_AUTHENTICATION_CLASSES'] must be a list of dotted paths "
                "of DRF authentication classes, or None."
            )
        return tuple(value)

    @property
    def MCP_AUTHORIZATION_SERVERS(self) -> tuple[str, ...]:
        value = self._get("MCP_AUTHORIZATION_SERVERS")
        if not isinstance(value, list | tuple) or not all(
            isinstance(issuer, str) and _ISSUER.fullmatch(issuer) for issuer in value
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['MCP_AUTHORIZATION_SERVERS'] must be a list of issuer URLs "
                "such as 'https://auth.example.com' or paths such as '/o' (no query, no "
                "fragment)."
            )
        return tuple(value)

    @property
    def MCP_READ_SCOPE(self) -> str | None:
        return _scope_setting("MCP_READ_SCOPE", self._get("MCP_READ_SCOPE"))

    @property
    def MCP_WRITE_SCOPE(self) -> str | None:
        return _scope_setting("MCP_WRITE_SCOPE", self._get("MCP_WRITE_SCOPE"))

    @property
    def MCP_REQUIRE_AUDIENCE(self) -> bool:
        value = self._get("MCP_REQUIRE_AUDIENCE")
        if not isinstance(value, bool):
            raise ImproperlyConfigured("AFFORDANCES['MCP_REQUIRE_AUDIENCE'] must be True or False.")
        return value

    @property
    def OAUTH_THROTTLE_RATES(self) -> dict[str, str | None]:
        value = self._get("OAUTH_THROTTLE_RATES")
        default = DEFAULTS["OAUTH_THROTTLE_RATES"]
        if value is None:
            return dict.fromkeys(default)
        if (
            not isinstance(value, Mapping)
            or not set(value) <= set(default)
            or not all(rate is None or _rate(rate) for rate in value.values())
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['OAUTH_THROTTLE_RATES'] must map 'register' and 'token' to a "
                "rate such as '20/hour' (or None: unlimited)."
            )
        return {**default, **value}

    @property
    def OAUTH_REDIRECT_HOSTS(self) -> tuple[str, ...] | None:
        value = self._get("OAUTH_REDIRECT_HOSTS")
        if value is None:
            return None
        if not isinstance(value, list | tuple) or not all(
            isinstance(host, str) and _HOST.fullmatch(host) for host in value
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['OAUTH_REDIRECT_HOSTS'] must be a list of host names "
                "('app.example.com', or '.example.com' with its subdomains), or None."
            )
        return tuple(host.lower() for host in value)

    @property
    def OAUTH_UNUSED_CLIENT_TTL(self) -> int:
        return _positive_setting("OAUTH_UNUSED_CLIENT_TTL", self._get("OAUTH_UNUSED_CLIENT_TTL"))

    @property
    def OAUTH_CREATE_USERS(self) -> bool:
        value = self._get("OAUTH_CREATE_USERS")
        if not isinstance(value, bool):
            raise ImproperlyConfigured("AFFORDANCES['OAUTH_CREATE_USERS'] must be True or False.")
        return value

    @property
    def OAUTH_CIMD_ALLOW_PRIVATE(self) -> bool:
        value = self._get("OAUTH_CIMD_ALLOW_PRIVATE")
        if not isinstance(value, bool):
            raise ImproperlyConfigured(
                "AFFORDANCES['OAUTH_CIMD_ALLOW_PRIVATE'] must be True or False."
            )
        return value

    @property
    def PAGE_SIZE(self) -> int:
        return _positive_setting("PAGE_SIZE", self._get("PAGE_SIZE"))

    @property
    def MAX_PAGE_SIZE(self) -> int:
        return _positive_setting("MAX_PAGE_SIZE", self._get("MAX_PAGE_SIZE"))

    @property
    def LOCK_TIMEOUT(self) -> float | None:
        return self.seconds("LOCK_TIMEOUT")

    @property
    def REQUEST_TIMEOUT(self) -> float | None:
        return self.seconds("REQUEST_TIMEOUT")

    @property
    def CONFIRMATION_TTL(self) -> int:
        return _positive_setting("CONFIRMATION_TTL", self._get("CONFIRMATION_TTL"))

    @property
    def CONFIRMATIONS(self) -> bool:
        value = self._get("CONFIRMATIONS")
        if not isinstance(value, bool):
            raise ImproperlyConfigured("AFFORDANCES['CONFIRMATIONS'] must be True or False.")
        return value

    @property
    def OPENAPI_MEMO(self) -> bool:
        value = self._get("OPENAPI_MEMO")
        if not isinstance(value, bool):
            raise ImproperlyConfigured("AFFORDANCES['OPENAPI_MEMO'] must be True or False.")
        return value

    @property
    def CAPABILITIES_CACHE(self) -> str | None:
        value = self._get("CAPABILITIES_CACHE")
        if value is None:
            return None
        if not isinstance(value, str) or value not in getattr(django_settings, "CACHES", {}):
            raise ImproperlyConfigured(
                "AFFORDANCES['CAPABILITIES_CACHE'] must be the alias of a cache in CACHES "
                "(such as 'default'), or None."
            )
        return value

    @property
    def EVENTS_BROKER(self) -> dict[str, Any] | None:
        value = self._get("EVENTS_BROKER")
        if value is None:
            return None
        if (
            not isinstance(value, Mapping)
            or not set(value) <= {"BACKEND", "OPTIONS"}
            or not isinstance(value.get("BACKEND"), str | type)
            or not isinstance(value.get("OPTIONS", {}), Mapping)
        ):
            raise ImproperlyConfigured(
                "AFFORDANCES['EVENTS_BROKER'] must be None or a dict with 'BACKEND' (the "
                "dotted path of a broker class) and optional 'OPTIONS' (its arguments)."
            )
        return {"BACKEND": value["BACKEND"], "OPTIONS": dict(value.get("OPTIONS", {}))}

    @property
    def lock_timeout_ms(self) -> int | None:
        value = self.seconds("LOCK_TIMEOUT")
        return None if value is None else max(1, round(value * 1000))

    @property
    def claim_stale_after(self) -> float | None:
        """Seconds after which a ``running`` idempotency claim is abandoned, or None.

        ``REQUEST_TIMEOUT`` bounds a run where the server stops requests; the lock wait
        (``LOCK_TIMEOUT``) is added as a margin for clock skew between hosts.
        """
        request = self.seconds("REQUEST_TIMEOUT")
        if request is None:
            return None
        return request + (self.seconds("LOCK_TIMEOUT") or 0)

    def seconds(self, name: str) -> float | None:
        """A duration setting: a positive number of seconds, or None."""
        value = self._raw().get(name, DEFAULTS[name])
        if value is None:
            return None
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not 0 < value <= MAX_SECONDS
        ):
            raise ImproperlyConfigured(
                f"AFFORDANCES[{name!r}] must be a positive number of seconds "
                f"(at most {MAX_SECONDS}) or None."
            )
        return value

    @property
    def models(self) -> tuple[ModelOptions, ...]:
        raw = self._raw().get("MODELS", {})
        if isinstance(raw, list | tuple):
            raw = {label: {} for label in raw}
        if not isinstance(raw, Mapping):
            raise ImproperlyConfigured("AFFORDANCES['MODELS'] must be a dict or a list of labels.")
        options = []
        for label, given in raw.items():
            given = given or {}
            unknown = sorted(set(given) - set(MODEL_DEFAULTS), key=str)
            if unknown:
                raise SettingError(
                    f"AFFORDANCES['MODELS'][{label!r}] has unknown option(s): "
                    f"{', '.join(map(repr, unknown))}.",
                    hint=f"{did_you_mean(unknown, MODEL_DEFAULTS)}A registration's options "
                    f"are {', '.join(MODEL_DEFAULTS)}.",
                    check_id="affordances.E045",
                    obj=f"AFFORDANCES['MODELS'][{label!r}]",
                )
            merged = {**MODEL_DEFAULTS, **given}
            options.append(
                ModelOptions(
                    label=label,
                    serializer=merged["SERIALIZER"],
                    queryset=merged["QUERYSET"],
                    basename=merged["BASENAME"],
                    resource=merged["RESOURCE"],
                    version_field=merged["VERSION_FIELD"],
                    plural=_identifier(label, "PLURAL", merged["PLURAL"]),
                    verbose_name=_text(label, "VERBOSE_NAME", merged["VERBOSE_NAME"]),
                    verbose_name_plural=_text(
                        label, "VERBOSE_NAME_PLURAL", merged["VERBOSE_NAME_PLURAL"]
                    ),
                    filterset=merged["FILTERSET"],
                    ordering=_ordering(label, merged["ORDERING"]),
                    page_size=_positive(label, "PAGE_SIZE", merged["PAGE_SIZE"]),
                    max_page_size=_positive(label, "MAX_PAGE_SIZE", merged["MAX_PAGE_SIZE"]),
                    editable_fields=_editable_fields(label, merged["EDITABLE_FIELDS"]),
                    edit_requires=_edit_requires(label, merged["EDIT_REQUIRES"]),
                )
            )
        return tuple(options)


def _ordering(label: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = (value,)
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise ImproperlyConfigured(
            f"AFFORDANCES['MODELS'][{label!r}]['ORDERING'] must be field names."
        )
    return tuple(value)


#: The key of a per-state ``EDITABLE_FIELDS`` that applies in every state.
ANY_STATE = "*"


def _editable_fields(label: str, value: Any) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """``EDITABLE_FIELDS`` as ``(state, fields)`` pairs: a list is every state's (``"*"``).
    Which names are fields that may be edited is the system check's (E043)."""
    if value is None:
        return ()
    by_state = {ANY_STATE: value} if isinstance(value, list | tuple) else value
    if (
        not isinstance(by_state, Mapping)
        or not by_state
        or not all(
            isinstance(state, str)
            and isinstance(names, list | tuple)
            and names
            and all(isinstance(name, str) and name for name in names)
            for state, names in by_state.items()
        )
    ):
        raise ImproperlyConfigured(
            f"AFFORDANCES['MODELS'][{label!r}]['EDITABLE_FIELDS'] must be a list of field "
            'names, or a dict of states ("*": every state) to lists of field names.'
        )
    return tuple((state, tuple(dict.fromkeys(names))) for state, names in by_state.items())


def _edit_requires(label: str, value: Any) -> tuple[str, ...]:
    names = prerequisites(value)
    if names is None:
        raise ImproperlyConfigured(
            f"AFFORDANCES['MODELS'][{label!r}]['EDIT_REQUIRES'] takes permission names "
            "'app_label.codename' (one, or a list), as requires= does."
        )
    return names


# What an operation name may hold: MCP tool names are [A-Za-z0-9_.-], 1 to 64 characters.
IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,39}")


_NAMESPACE = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{0,31}")
_ORIGIN = re.compile(r"[a-z][a-z0-9+.-]*://[^/?#\s]+")
# An issuer (RFC 8414 §2: https, no query or fragment; http for local development), or
# a path on the MCP endpoint's own origin.
_ISSUER = re.compile(r"https?://[^/?#\s]+(?:/[^?#\s]*)?|/[^?#\s]*")
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")


# DRF's throttle rate: "<requests>/<s|m|h|d...>".
_RATE = re.compile(r"[1-9][0-9]{0,8}/(?:s|m|h|d)[a-z]*")
# A host name (a leading dot: it and its subdomains).
_HOST = re.compile(r"\.?[a-zA-Z0-9](?:[a-zA-Z0-9.-]{0,251}[a-zA-Z0-9])?")


def _rate(value: Any) -> bool:
    return isinstance(value, str) and _RATE.fullmatch(value) is not None


def _scope_setting(name: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or _SCOPE.fullmatch(value) is None:
        raise ImproperlyConfigured(
            f"AFFORDANCES[{name!r}] must be one scope token (such as 'mcp:read') or None."
        )
    return value


def _positive_setting(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(f"AFFORDANCES[{name!r}] must be a positive integer.")
    return value


def _identifier(label: str, key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or IDENTIFIER.fullmatch(value) is None:
        raise ImproperlyConfigured(
            f"AFFORDANCES['MODELS'][{label!r}][{key!r}] must be a lower-case identifier "
            "(a letter, then letters, digits or _; at most 40)."
        )
    return value


def _text(label: str, key: str, value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ImproperlyConfigured(f"AFFORDANCES['MODELS'][{label!r}][{key!r}] must be a text.")
    return value


def _positive(label: str, key: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(
            f"AFFORDANCES['MODELS'][{label!r}][{key!r}] must be a positive integer."
        )
    return value


settings = AffordancesSettings()
