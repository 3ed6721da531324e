from __future__ import annotations

from django.apps import AppConfig


class GenericConfig(AppConfig):
    name = "tests.generic"
    label = "generic"
    default_auto_field = "django.db.models.BigAutoField"
