from django.apps import AppConfig


class HelpdeskConfig(AppConfig):
    name = "bench.peers.helpdesk"
    label = "helpdesk"  # the tutorial's permission names: helpdesk.work_ticket, …
    default_auto_field = "django.db.models.BigAutoField"
