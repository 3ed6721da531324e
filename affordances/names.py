"""Names the faces agree on without importing each other: media types and URL names."""

from __future__ import annotations

__all__ = ["ENTRY_POINT_URL_NAME", "HAL_FORMS_MEDIA_TYPE"]

# mamund's HAL-FORMS; the REST face renders it, interface C reads it.
HAL_FORMS_MEDIA_TYPE = "application/prs.hal-forms+json"
# The URL name of the API entry point (``affordances.rest.urls``).
ENTRY_POINT_URL_NAME = "api-entry-point"
