from __future__ import annotations

from django.apps import AppConfig


class AffordancesConfig(AppConfig):
    name = "affordances"
    verbose_name = "Affordances"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from affordances import checks  # noqa: F401 - registers the system checks
