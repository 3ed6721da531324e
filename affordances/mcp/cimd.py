"""Client ID Metadata Documents: a client whose ``client_id`` is an https URL, describing
itself at that URL (draft-ietf-oauth-client-id-metadata-document; the MCP authorization
spec of 2025-11-25 prefers them to dynamic registration).

django-oauth-toolkit 3.4 knows them (``OAUTH2_PROVIDER["CIMD_ENABLED"]``, which also
advertises ``client_id_metadata_document_supported`` in its RFC 8414 metadata): a
document becomes a public Application whose ``client_id`` is the URL, kept until its
``cimd_expires_at`` — the response's ``Cache-Control: max-age``, held between
``CIMD_METADATA_MIN_AGE_SECONDS`` and ``CIMD_METADATA_MAX_AGE_SECONDS`` — and fetched
again after. What this module adds, for a server any host may use:

- **one policy** (:func:`document_refusal`): a document meets what a registration meets
  (:func:`affordances.mcp.registration.refused`: the authorization code grant, https
  redirect URIs or http on a loopback address, ``OAUTH_REDIRECT_HOSTS``), its
  ``client_id`` is the URL it came from, and it describes a public client
  (``token_endpoint_auth_method: "none"``; ``private_key_jwt`` is refused, with a
  sentence saying so);
- **the fetch** (:class:`MetadataFetcher`, ``OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]``):
  https only; every address the host resolves to must be public, and the connection
  goes to the address checked (no second lookup can rebind it); no redirect followed;
  at most ``CIMD_MAX_DOCUMENT_SIZE`` bytes; the whole exchange — connection, TLS, headers,
  body — cut at ``CIMD_FETCH_TIMEOUT_SECONDS``. ``AFFORDANCES["OAUTH_CIMD_ALLOW_PRIVATE"]``
  lets development and tests fetch from loopback and private addresses; link-local
  (169.254.169.254, the cloud metadata), multicast and reserved ones never;
- **where a fetch happens**: a document never seen is fetched only at the authorization
  endpoint, once the person has logged in (:func:`resolve`, from
  :class:`affordances.mcp.consent.AuthorizationView`); the token endpoint fetches again
  only a document it knows whose time is up (:func:`known`, from
  :class:`affordances.mcp.oauth.OAuth2Validator`), keeping the last good one when that
  fails. An anonymous request never makes the server fetch a new URL;
- **errors a person can read**: a refused document is a 400 page saying why
  (``invalid_client``), never a 500 nor a redirect to a URI nobody vouched for. A
  failure is remembered ``CIMD_FAILURE_BACKOFF_SECONDS`` (in Django's default cache)
  and the page says so;
- a client with no secret gets none to hash, and loopback http redirect URIs pass the
  model's validation as a registration's do (:func:`~affordances.mcp.registration.admit_loopback`).
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import json
import logging
import socket
import ssl
import threading
import time
from datetime import timedelta
from typing import Any, TypeGuard
from urllib.parse import SplitResult, urlsplit

from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from oauth2_provider.cimd import CIMDError, is_cimd_client_id
from oauth2_provider.models import get_application_model
from oauth2_provider.settings import oauth2_settings

from affordances.compat.oauth_toolkit import (
    cimd_application_kwargs,
    cimd_backoff_cache_key,
    cimd_effective_max_age,
    cimd_fetch_slot,
    cimd_ip_is_public,
    cimd_registration_permitted,
    cimd_validate_client_id_url,
)
from affordances.conf import settings
from affordances.mcp.registration import admit_loopback, clean_text, refused

__all__ = [
    "CIMDError",
    "MetadataFetcher",
    "applies",
    "document_refusal",
    "known",
    "resolve",
]

log = logging.getLogger("affordances.mcp.cimd")

# OAUTH_CIMD_ALLOW_PRIVATE admits these and nothing else that is not public: a
# development server on this machine or the local network, never link-local addresses
# (169.254.169.254 answers cloud credentials), multicast, unspecified or reserved ones.
DEVELOPMENT_NETWORKS = tuple(
    ipaddress.ip_network(network)
    for network in (
        "127.0.0.0/8",
        "10.0.0.0/8",
        "172.16.0.0/12",
        "192.168.0.0/16",
        "::1/128",
        "fc00::/7",
    )
)
ACCEPT = "application/json, application/*+json"
USER_AGENT = "django-affordances (OAuth client metadata)"


def applies(client_id: object) -> TypeGuard[str]:
    """Whether ``client_id`` is to be resolved as a metadata document: CIMD is on and it
    is an http(s) URL — an http one only to be refused with the reason, rather than
    taken for an unknown client (the rest is checked by :func:`resolve`)."""
    return (
        bool(oauth2_settings.CIMD_ENABLED)
        and isinstance(client_id, str)
        and (is_cimd_client_id(client_id) or client_id[:7].lower() == "http://")
    )


def _max_length() -> int:
    # The column the URL is kept in (255 in django-oauth-toolkit 3.4; 100 before it).
    field = get_application_model()._meta.get_field("client_id")
    return int(getattr(field, "max_length", None) or 255)


def _checked_url(client_id: str) -> SplitResult:
    """The URL's parts, or CIMDError: the draft's rules (https, a host, a path, no
    userinfo, fragment or dot segments), no control character, and short enough to be
    a client_id here."""
    if not clean_text(client_id):
        raise CIMDError("its URL holds control characters")
    limit = _max_length()
    if len(client_id) > limit:
        raise CIMDError(f"its URL is longer than the {limit} characters a client_id may have here")
    cimd_validate_client_id_url(client_id)
    return urlsplit(client_id)


def _address_allowed(address: str) -> bool:
    if cimd_ip_is_public(address):
        return True
    if not settings.OAUTH_CIMD_ALLOW_PRIVATE:
        return False
    try:
        ip = ipaddress.ip_address(address.partition("%")[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return any(ip in network for network in DEVELOPMENT_NETWORKS)


def _addresses(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, each one checked: one not allowed refuses the
    host (never a pick among them: a split answer could smuggle an internal one in)."""
    try:
        candidates = [str(ipaddress.ip_address(host))]
    except ValueError:
        try:
            infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError):
            raise CIMDError(f"its host {host} could not be resolved") from None
        candidates = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not candidates:
        raise CIMDError(f"its host {host} could not be resolved")
    if not all(_address_allowed(address) for address in candidates):
        # The address itself is not shown: it would tell what a name means inside.
        raise CIMDError(
            f"its host {host} resolves to an address that is not public (loopback, "
            "private, link-local, multicast or reserved): this server fetches nothing "
            "from its own networks"
        )
    return candidates


class _PinnedConnection(http.client.HTTPSConnection):
    """HTTPS to ``address`` — the one checked — for ``host``: SNI, the certificate check
    and the Host header name the host, and no second lookup can move the connection."""

    def __init__(
        self, address: str, host: str, port: int, timeout: float, tls: ssl.SSLContext
    ) -> None:
        super().__init__(host, port, timeout=timeout, context=tls)
        self.address = address
        self.tls = tls

    def connect(self) -> None:
        raw = socket.create_connection((self.address, self.port), self.timeout)
        try:
            secure = self.tls.wrap_socket(
                raw, server_hostname=self.host, do_handshake_on_connect=False
            )
        except BaseException:
            raw.close()
            raise
        # Set before the handshake, so that the deadline can cut it too.
        self.sock = secure
        secure.do_handshake()


class MetadataFetcher:
    """Fetches a metadata document for ``OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"]``:
    ``fetch(client_id)`` answers ``(document, max_age_seconds)`` or raises CIMDError
    with a reason a person can read (shown on the error page).

    django-oauth-toolkit's ``SafeMetadataFetcher`` rules (https; every resolved address
    public, the connection to the checked one; no redirect; ``CIMD_MAX_DOCUMENT_SIZE``;
    a JSON object), with ``AFFORDANCES["OAUTH_CIMD_ALLOW_PRIVATE"]`` for development,
    the policy of :func:`document_refusal`, and a deadline on the whole exchange: each
    socket operation had its own timeout there, so a server sending a byte at a time
    could hold a worker for as long as it liked."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        parts = _checked_url(client_id)
        host = parts.hostname or ""
        port = parts.port or 443
        addresses = _addresses(host, port)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        timeout = float(oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS)
        deadline = time.monotonic() + timeout
        failure = "it could not be fetched"
        for address in addresses:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                status, headers, body = self._get(address, host, port, target, remaining)
            except _Unreachable as error:
                failure = str(error)
                continue
            document, max_age = self._read(status, headers, body)
            reason = document_refusal(client_id, document)
            if reason is not None:
                raise CIMDError(reason)
            return document, max_age
        raise CIMDError(failure)

    def _get(
        self, address: str, host: str, port: int, target: str, remaining: float
    ) -> tuple[int, http.client.HTTPMessage, bytes | None]:
        limit = int(oauth2_settings.CIMD_MAX_DOCUMENT_SIZE)
        connection = _PinnedConnection(address, host, port, remaining, ssl.create_default_context())
        expired = threading.Event()

        def cut() -> None:
            # Shut the socket down under the reading thread: its next (or current) read
            # ends at once, whatever the server trickles.
            expired.set()
            sock = connection.sock
            if sock is not None:
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)

        watchdog = threading.Timer(remaining, cut)
        watchdog.daemon = True
        watchdog.start()
        try:
            connection.request("GET", target, headers={"Accept": ACCEPT, "User-Agent": USER_AGENT})
            response = connection.getresponse()
            length = response.getheader("Content-Length") or ""
            # Announced too large: refused (by _read) without reading it.
            too_large = length.isdigit() and int(length) > limit
            body = None if too_large else response.read(limit + 1)
            return response.status, response.headers, body
        except ssl.SSLCertVerificationError as error:
            raise _Unreachable(
                f"its TLS certificate could not be verified ({error.verify_message})"
            ) from None
        except (OSError, http.client.HTTPException, ValueError) as error:
            log.info("Client metadata at %s (%s): %r", host, address, error)
            if expired.is_set():
                seconds = oauth2_settings.CIMD_FETCH_TIMEOUT_SECONDS
                raise _Unreachable(f"fetching it took longer than {seconds} s") from None
            raise _Unreachable("it could not be fetched (no connection, or TLS failed)") from None
        finally:
            watchdog.cancel()
            connection.close()

    def _read(
        self, status: int, headers: http.client.HTTPMessage, body: bytes | None
    ) -> tuple[dict[str, Any], int]:
        if 300 <= status < 400:
            raise CIMDError(
                f"it answered a redirect (HTTP {status}), and redirects are not followed: "
                "the document must be at the client_id URL itself"
            )
        if status != 200:
            raise CIMDError(f"it answered HTTP {status}")
        media_type = (headers.get("Content-Type") or "").partition(";")[0].strip().lower()
        if media_type != "application/json" and not (
            media_type.startswith("application/") and media_type.endswith("+json")
        ):
            raise CIMDError(f"it is not served as JSON (Content-Type {media_type or 'none'!r})")
        limit = int(oauth2_settings.CIMD_MAX_DOCUMENT_SIZE)
        if body is None or len(body) > limit:
            raise CIMDError(f"it is larger than {limit} bytes")
        try:
            document = json.loads(body)
        except ValueError:
            raise CIMDError("it is not valid JSON") from None
        if not isinstance(document, dict):
            raise CIMDError("it is not a JSON object")
        return document, int(cimd_effective_max_age(headers.get("Cache-Control")))


class _Unreachable(Exception):
    """This address gave no answer: the next one may."""


def document_refusal(client_id: str, document: dict[str, Any]) -> str | None:
    """Why this server refuses ``document`` as the description of ``client_id``, or
    None: the registration's policy, and what the draft asks of a document."""
    if document.get("client_id") != client_id:
        return "its client_id is not exactly the URL it was fetched from"
    method = document.get("token_endpoint_auth_method", "none")
    if method == "private_key_jwt":
        return (
            "it asks for private_key_jwt client authentication, which this server does "
            "not offer: a client described by a metadata document is public here "
            '(token_endpoint_auth_method "none", with PKCE)'
        )
    if method != "none":
        return (
            f"its token_endpoint_auth_method is {method!r}: a metadata document holds no "
            'shared secret, so the client is public ("none")'
        )
    if "client_secret" in document or "client_secret_expires_at" in document:
        return "it holds a client_secret, which a public document must not"
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(uri, str) for uri in uris):
        return "its redirect_uris is not a non-empty list of URIs"
    for key in ("client_uri", "logo_uri"):
        if key in document and not (document[key] and clean_text(document[key])):
            return f"its {key} is not a URI"
    reason = refused(document)
    return None if reason is None else reason[1]


def _stored(client_id: str) -> Any:
    return get_application_model().objects.filter(client_id=client_id).first()


def _expired(application: Any) -> bool:
    expires = application.cimd_expires_at
    return expires is not None and timezone.now() > expires


def _is_document_client(application: Any) -> bool:
    sources = get_application_model().RegistrationSource
    return bool(application.registration_source == sources.CIMD)


def _save(client_id: str, document: dict[str, Any], max_age: int, application: Any) -> Any:
    """The document as a public Application whose client_id is the URL (created, or
    the earlier one updated), valid until ``max_age`` seconds from now."""
    model = get_application_model()
    fields = cimd_application_kwargs(document)
    if application is None:
        application = model(client_id=client_id)
    application.user = None
    application.client_type = model.CLIENT_PUBLIC
    application.registration_source = model.RegistrationSource.CIMD
    application.cimd_expires_at = timezone.now() + timedelta(seconds=max_age)
    # No secret to authenticate with, none to generate and hash on every first sight.
    application.client_secret = ""
    application.hash_client_secret = False
    for name, value in fields.items():
        setattr(application, name, value)
    admit_loopback(application)
    try:
        # client_id unique: the database decides (a concurrent first sight wins below).
        application.full_clean(exclude=["client_secret"], validate_unique=False)
    except ValidationError as error:
        raise CIMDError("it is not valid client metadata: " + "; ".join(error.messages)) from None
    try:
        with transaction.atomic():
            application.save()
    except IntegrityError:
        winner = _stored(client_id)
        if winner is None or not _is_document_client(winner):
            raise CIMDError("its URL is the client_id of another client here") from None
        return winner
    return application


def _fetch(client_id: str, request: Any, application: Any) -> Any:
    """Fetch, check and keep the document of ``client_id``; CIMDError saying why not."""
    if not cimd_registration_permitted(request, client_id):
        raise CIMDError("this server does not accept clients from its host")
    key = cimd_backoff_cache_key(client_id)
    recent = cache.get(key)
    if recent:
        seconds = oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS
        reason = recent.rstrip(".") if isinstance(recent, str) else "it could not be used"
        raise CIMDError(f"{reason} (tried less than {seconds} seconds ago; try again later)")
    with cimd_fetch_slot() as acquired:
        if not acquired:
            raise CIMDError("too many documents are being fetched right now; try again shortly")
        try:
            document, max_age = oauth2_settings.CIMD_METADATA_FETCHER().fetch(client_id)
            # Whatever fetcher is configured (an egress proxy's), the same policy.
            refusal = document_refusal(client_id, document)
            if refusal is not None:
                raise CIMDError(refusal)
            return _save(client_id, document, int(max_age), application)
        except CIMDError as error:
            log.info("Client metadata document %r refused: %s", client_id, error)
            cache.set(key, str(error), oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)
            raise
        except Exception:
            # A client-controlled URL on the authorization path: never a 500.
            log.exception("Client metadata document %r: unexpected error", client_id)
            reason = "it could not be used (an unexpected error, logged by this server)"
            cache.set(key, reason, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)
            raise CIMDError(reason) from None


def _owner(client_id: str) -> Any:
    """The Application stored under ``client_id``, or None."""
    if not clean_text(client_id):  # PostgreSQL cannot even compare a NUL
        return None
    return _stored(client_id)


def resolve(client_id: str, request: Any) -> Any:
    """The Application of the metadata document at ``client_id``, fetched now when it is
    new or its time is up; CIMDError saying why it cannot be used. For the authorization
    endpoint, after the person has logged in. A document fetched before whose new fetch
    fails keeps serving (a blip must not lock its users out; the draft forbids taking
    an error for the document)."""
    application = _owner(client_id)
    if application is not None and not _is_document_client(application):
        return application  # a client registered otherwise owns this id: never replaced
    _checked_url(client_id)
    if application is not None and not _expired(application):
        return application
    try:
        return _fetch(client_id, request, application)
    except CIMDError:
        if application is None:
            raise
        return application


def known(client_id: str, request: Any) -> Any:
    """The Application of a document already fetched (refreshed when its time is up,
    the last good one kept when that fails), or None: anywhere but the authorization
    endpoint, a URL never seen is an unknown client and nothing is fetched."""
    application = _owner(client_id)
    if application is None or not _is_document_client(application):
        return application
    if _expired(application):
        with contextlib.suppress(CIMDError):
            _checked_url(client_id)
            application = _fetch(client_id, request, application)
    return application
