from __future__ import annotations

from django.apps import AppConfig


class AffordancesConfig(AppConfig):
    name = "affordances"
    verbose_name = "Affordances"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Registers the system checks (the core's, and those of the REST face) and the
        # receivers that keep the cached capabilities fresh (affordances.capabilities), and
        # those that end a user's OAuth sessions with the password (affordances.credentials).
        from affordances import capabilities, checks, credentials, events  # noqa: F401
        from affordances.rest import checks as rest_checks  # noqa: F401

        capabilities.connect()
        credentials.connect()
        # Tool-list changes for the listen streams (affordances.events).
        events.connect()
