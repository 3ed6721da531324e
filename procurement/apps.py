from __future__ import annotations

from django.apps import AppConfig


class ProcurementConfig(AppConfig):
    name = "procurement"
    verbose_name = "Procurement"
    default_auto_field = "django.db.models.BigAutoField"
