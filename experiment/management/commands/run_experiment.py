"""``manage.py run_experiment``: the seed's experiment, end to end (SPEC §13).

By default it runs on a throwaway database (a temporary SQLite file, or a scratch
database next to the configured PostgreSQL one), never on the developer's own data;
``--database-url`` runs on the given database instead — whose orders it resets.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections
from django.test import override_settings

from experiment.runner import Config, run_experiment, validate
from experiment.suite import TASKS


def _csv(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A fresh, migrated database beside the configured one, destroyed afterwards."""
    test = connection.settings_dict.setdefault("TEST", {})
    with tempfile.TemporaryDirectory(prefix="experiment-") as folder:
        if connection.vendor == "sqlite":
            # A file, not memory: the server's threads open their own connections.
            test["NAME"] = str(Path(folder) / "experiment.sqlite3")
        else:
            test["NAME"] = f"experiment_{connection.settings_dict['NAME']}"
        old_name = connection.creation.create_test_db(
            verbosity=0, autoclobber=True, serialize=False
        )
        try:
            yield str(test["NAME"])
        finally:
            connections.close_all()
            connection.creation.destroy_test_db(old_name, verbosity=0)


@contextmanager
def given_database(url: str) -> Iterator[str]:
    """The database at ``url`` as ``default``, migrated; its orders will be reset."""
    import dj_database_url

    connections.close_all()
    configured = connections.configure_settings({"default": dj_database_url.parse(url)})
    previous = connections.settings["default"]
    connections.settings["default"] = configured["default"]
    del connections["default"]
    try:
        call_command("migrate", verbosity=0, interactive=False)
        yield str(configured["default"]["NAME"])
    finally:
        connections.close_all()
        connections.settings["default"] = previous
        del connections["default"]


class Command(BaseCommand):
    help = (
        "Run the tasks through interfaces A (static), B (hybrid) and C (HAL-FORMS) against "
        "a live server and write results.json, report.md and chart.png."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--interfaces", default="A,B,C", help="Comma-separated: A,B,C.")
        parser.add_argument(
            "--tasks",
            default=",".join(task.id for task in TASKS),
            help=f"Comma-separated task ids (default all: {','.join(t.id for t in TASKS)}).",
        )
        parser.add_argument(
            "--agent",
            default="scripted",
            help="scripted, llm, or both (scripted,llm). llm reads OPENAI_BASE_URL, "
            "OPENAI_MODEL and OPENAI_API_KEY.",
        )
        parser.add_argument(
            "--repeat", type=int, default=1, help="Runs per task x interface (pass^k)."
        )
        parser.add_argument(
            "--seed", type=int, default=0, help="Seed of name scrambling and distractors."
        )
        parser.add_argument("--out", default="out/experiment", help="Folder for the report.")
        parser.add_argument(
            "--database-url",
            help="Run on this database instead of a throwaway one (its orders are reset!).",
        )
        parser.add_argument(
            "--protocol",
            choices=["auto", "legacy"],
            default="auto",
            help="MCP client mode: auto (2026-07-28) or legacy (initialize, 2025-11-25).",
        )
        parser.add_argument("--max-steps", type=int, default=20, help="LLM agent: step limit.")
        parser.add_argument(
            "--scramble-names", action="store_true", help="LLM agent: rename every tool randomly."
        )
        parser.add_argument(
            "--distractors", type=int, default=0, help="LLM agent: add N tools that do not exist."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["repeat"] < 1:
            raise CommandError("--repeat must be at least 1.")
        config = Config(
            interfaces=_csv(options["interfaces"].upper()),
            tasks=_csv(options["tasks"].upper()),
            agents=_csv(options["agent"].lower()),
            repeat=options["repeat"],
            seed=options["seed"],
            out=Path(options["out"]),
            mode=options["protocol"],
            max_steps=options["max_steps"],
            scramble_names=options["scramble_names"],
            distractors=options["distractors"],
        )
        from experiment.report import write_report

        try:
            validate(config)  # before a database is made for nothing
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

        database = (
            given_database(options["database_url"])
            if options["database_url"]
            else throwaway_database()
        )
        # The live server answers on 127.0.0.1 over plain HTTP whatever the deployment says.
        local = override_settings(
            ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "127.0.0.1"], SECURE_SSL_REDIRECT=False
        )
        try:
            with database as name, local:
                self.stdout.write(f"Database: {name}")
                results = run_experiment(config, log=self.stdout.write)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        paths = write_report(results, config.out)
        self.stdout.write(paths["markdown"].read_text().split("## Runs (means over repeats)")[0])
        self.stdout.write(
            self.style.SUCCESS(
                f"{sum(r['success'] for r in results['runs'])}/{len(results['runs'])} runs "
                f"passed in {results['meta']['wallSeconds']} s; wrote "
                + ", ".join(str(p) for p in paths.values())
            )
        )
