"""django-oauth-toolkit's private helpers, used in exactly one place.

Its dynamic client registration view (RFC 7591/7592) and its Client ID Metadata Document
support are written as views and module functions with no extension point between
"parse the request" and "save the application": :mod:`affordances.mcp.registration`
and :mod:`affordances.mcp.cimd` add their policy (grants, redirect hosts, rate limits,
SSRF rules) in between and reuse the toolkit's own steps for the rest, so the saved
applications and the answers are the toolkit's, not a second implementation of them.
The range in ``pyproject.toml`` (``<4``) is the one these were read against;
``tests/test_compat.py`` imports every one.
"""

from __future__ import annotations

# Client ID Metadata Documents (django-oauth-toolkit 3.4): the toolkit's URL rule, its
# address check, its cache keys and per-process fetch slots, its max-age reading, and
# the Application fields it builds from a document.
from oauth2_provider.cimd import _backoff_cache_key as cimd_backoff_cache_key
from oauth2_provider.cimd import _build_application_kwargs as cimd_application_kwargs
from oauth2_provider.cimd import _effective_max_age as cimd_effective_max_age
from oauth2_provider.cimd import _fetch_slot as cimd_fetch_slot
from oauth2_provider.cimd import _ip_is_public as cimd_ip_is_public
from oauth2_provider.cimd import _registration_permitted as cimd_registration_permitted
from oauth2_provider.cimd import _validate_client_id_url as cimd_validate_client_id_url

# Dynamic client registration: the permission check, the Application fields from a
# request, its error answers, the registration access token and the response body.
from oauth2_provider.views.dynamic_client_registration import (
    _application_to_response as application_to_response,
)
from oauth2_provider.views.dynamic_client_registration import (
    _build_application_kwargs as application_kwargs,
)
from oauth2_provider.views.dynamic_client_registration import (
    _check_permissions as registration_permitted,
)
from oauth2_provider.views.dynamic_client_registration import _error_response as error_response
from oauth2_provider.views.dynamic_client_registration import (
    _issue_registration_token as issue_registration_token,
)
from oauth2_provider.views.dynamic_client_registration import (
    _validation_error_description as validation_error_description,
)

__all__ = [
    "application_kwargs",
    "application_to_response",
    "cimd_application_kwargs",
    "cimd_backoff_cache_key",
    "cimd_effective_max_age",
    "cimd_fetch_slot",
    "cimd_ip_is_public",
    "cimd_registration_permitted",
    "cimd_validate_client_id_url",
    "error_response",
    "issue_registration_token",
    "registration_permitted",
    "validation_error_description",
]
