from __future__ import annotations

from django.apps import AppConfig


class OrdersConfig(AppConfig):
    name = "orders"
    verbose_name = "Orders"
    default_auto_field = "django.db.models.BigAutoField"
