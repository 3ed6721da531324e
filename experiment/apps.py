from __future__ import annotations

from django.apps import AppConfig


class ExperimentConfig(AppConfig):
    name = "experiment"
    verbose_name = "Experiment"
