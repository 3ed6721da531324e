"""Media types the faces agree on without importing each other."""

from __future__ import annotations

__all__ = ["HAL_FORMS_MEDIA_TYPE"]

# mamund's HAL-FORMS; the REST face renders it, MCP's forms profile reads it.
HAL_FORMS_MEDIA_TYPE = "application/prs.hal-forms+json"
