"""``manage.py run_experiment``: the seed's experiment, end to end (docs/experiment/index.md).

By default it runs on a throwaway database (a temporary SQLite file, or a scratch
database next to the configured PostgreSQL one), never on the developer's own data;
``--database-url`` runs on the given database instead — whose orders it resets.
"""

from __future__ import annotations

import json
import logging
import signal
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import replace
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection, connections
from django.test import override_settings

from experiment.local.endpoint import CONTEXT_TOKENS, local_endpoint
from experiment.local.server import ServerError
from experiment.local.weights import MODELS, ModelError
from experiment.runner import CONDITIONS, Config, interface_id, run_experiment, validate
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


# --quick: what fits in 40 minutes on 2 cores with the small model (README, "A real
# model"): one run of a task of each kind through every interface, 12 steps at most.
QUICK = {
    "local_model": "qwen2.5-coder-0.5b",
    "interfaces": "A,B,B-compact,C",
    "tasks": "S3,P1,R1,N1,Q8",
    "repeat": 1,
    "max_steps": 12,
}
DEFAULTS = {
    "max_steps": 20,
    "interfaces": "A,B,C",
    "tasks": ",".join(task.id for task in TASKS),
    "repeat": 1,
    "agent": "scripted",
}
# Seconds one run takes on 2 cores, for the estimate: measured 2026-12-04 (0.5B: 20 runs of
# --quick in 24 min; 1.5B: the README's 4-run example in 8 min). Real runs vary tenfold.
SECONDS_PER_RUN = {
    "scripted": 1.0,
    "oracle": 1.0,
    "idle": 0.2,
    "stuffing": 0.2,
    "qwen2.5-coder-0.5b": 75.0,
    "qwen2.5-coder-1.5b": 120.0,
}


@contextmanager
def quiet_request_log() -> Iterator[None]:
    """No "Not Found" line per refused request of an agent: the runs record them."""
    logger = logging.getLogger("django.request")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


@contextmanager
def terminations_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP stop the command as Ctrl-C does: the runs finished so far are
    reported and the model's server is stopped. (``kill`` must do it: a run started in
    the background by a non-interactive shell ignores SIGINT.)"""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class Command(BaseCommand):
    help = (
        "Run the tasks through interfaces A (static), B (hybrid), B-compact and C "
        "(HAL-FORMS) against a live server and write results.json, report.md and chart.png."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--interfaces",
            help="Comma-separated: A,B,B-compact,B-focus,C (default A,B,C). B-focus is B "
            "behind a host that shows the model only the read and create tools and those "
            "the affordances it has read name.",
        )
        parser.add_argument(
            "--tasks",
            help=f"Comma-separated task ids (default all: {','.join(t.id for t in TASKS)}).",
        )
        parser.add_argument(
            "--agent",
            help="Comma-separated: scripted (default), llm, oracle, idle, stuffing. llm reads "
            "OPENAI_BASE_URL, OPENAI_MODEL and OPENAI_API_KEY, unless --local-model serves "
            "one here. The controls: oracle (the llm agent's code path, its model replaying "
            "the scripted solution: passes what scripted passes), idle (answers at once, "
            "calls nothing: passes no task) and stuffing (calls nothing, answers with every "
            "reason there is: passes no task).",
        )
        parser.add_argument(
            "--local-model",
            choices=sorted(MODELS),
            help="Serve this model on 127.0.0.1 with llama-server for the llm agent "
            "(fetched and verified on first use; implies --agent llm).",
        )
        parser.add_argument(
            "--quick",
            action="store_true",
            help="About 40 minutes on 2 cores: "
            + ", ".join(f"--{k.replace('_', '-')} {v}" for k, v in QUICK.items())
            + " unless given.",
        )
        parser.add_argument("--repeat", type=int, help="Runs per task x interface (pass^k).")
        parser.add_argument(
            "--seed", type=int, default=0, help="Seed of task order, sampling, perturbations."
        )
        parser.add_argument("--out", default="out/experiment", help="Folder for the report.")
        parser.add_argument(
            "--resume",
            action="store_true",
            help="Keep the runs already in OUT/runs.jsonl and do only the others.",
        )
        parser.add_argument(
            "--report-only",
            action="store_true",
            help="Run nothing: write report.md and the charts again from OUT/results.json.",
        )
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
        parser.add_argument(
            "--threads",
            type=int,
            default=2,
            help="--local-model: llama-server's threads (2; 1 leaves a core for other work, "
            "with taskset -c 1 in front).",
        )
        parser.add_argument("--max-steps", type=int, help="LLM agent: step limit (20).")
        parser.add_argument(
            "--max-tokens", type=int, default=768, help="LLM agent: tokens per completion."
        )
        parser.add_argument(
            "--temperature",
            type=float,
            help="LLM agent: sampling temperature (default: OPENAI_TEMPERATURE; 0.7 for "
            "--local-model).",
        )
        parser.add_argument(
            "--conditions",
            help=f"LLM agent, comma-separated: {', '.join(CONDITIONS)} (default plain); "
            "each is reported as its own condition.",
        )
        parser.add_argument(
            "--scramble-names",
            action="store_true",
            help="LLM agent: as --conditions scrambled (with --distractors: both at once).",
        )
        parser.add_argument(
            "--distractors",
            type=int,
            help="LLM agent: how many tools that do not exist the distractors conditions "
            "add (default 4); alone, as --conditions distractors.",
        )

    def _config(self, options: dict[str, Any]) -> Config:
        if options["quick"]:
            for key, value in QUICK.items():
                if options.get(key) is None:
                    options[key] = value
        if options["local_model"] and options["agent"] is None:
            options["agent"] = "llm"
        for key, value in DEFAULTS.items():
            if options.get(key) is None:
                options[key] = value
        if options["repeat"] < 1:
            raise CommandError("--repeat must be at least 1.")
        if options["threads"] < 1:
            raise CommandError("--threads must be at least 1.")
        conditions = _csv(options["conditions"] or "")
        if not conditions:
            legacy = [
                name
                for name, on in (
                    ("scrambled", options["scramble_names"]),
                    ("distractors", bool(options["distractors"])),
                )
                if on
            ]
            conditions = ("+".join(legacy),) if legacy else ("plain",)
        llm_options: dict[str, Any] = {"max_tokens": options["max_tokens"]}
        temperature = options["temperature"]
        if temperature is None and options["local_model"]:
            temperature = 0.7
        if temperature is not None:
            llm_options["temperature"] = temperature
        try:
            interfaces = tuple(interface_id(name) for name in _csv(options["interfaces"]))
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        return Config(
            interfaces=interfaces,
            tasks=_csv(options["tasks"].upper()),
            agents=_csv(options["agent"].lower()),
            repeat=options["repeat"],
            seed=options["seed"],
            out=Path(options["out"]),
            mode=options["protocol"],
            max_steps=options["max_steps"],
            conditions=conditions,
            distractors=options["distractors"] or 4,
            llm_options=llm_options,
            resume=options["resume"],
        )

    def handle(self, *args: Any, **options: Any) -> None:
        from experiment.report import IncompleteRun, write_report

        if options["report_only"]:
            source = Path(options["out"]) / "results.json"
            try:
                results = json.loads(source.read_text())
                paths = write_report(
                    {"meta": results["meta"], "runs": results["runs"]}, source.parent
                )
            except IncompleteRun as exc:
                raise CommandError(str(exc)) from exc
            except (OSError, ValueError, KeyError) as exc:
                raise CommandError(f"--report-only needs {source} from a run: {exc}") from exc
            self.stdout.write("Wrote " + ", ".join(str(p) for p in paths.values()))
            return
        config = self._config(options)

        local = options["local_model"]
        if local and "llm" not in config.agents:
            raise CommandError("--local-model serves the llm agent: add --agent llm.")
        probe = (
            replace(config, llm_endpoint={"base_url": "http://127.0.0.1:1", "model": local})
            if local
            else config
        )
        try:
            validate(probe)  # before a model is fetched or a database made for nothing
        except ValueError as exc:
            raise CommandError(str(exc)) from exc

        database = (
            given_database(options["database_url"])
            if options["database_url"]
            else throwaway_database()
        )
        # The live server answers on 127.0.0.1 over plain HTTP whatever the deployment says.
        loopback = override_settings(
            ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "127.0.0.1"], SECURE_SSL_REDIRECT=False
        )
        model = self._local_model(local, config, threads=options["threads"])
        per_run = {
            **{
                agent: SECONDS_PER_RUN[agent]
                for agent in ("scripted", "oracle", "idle", "stuffing")
            },
            "llm": SECONDS_PER_RUN.get(local or "", 0.0),
        }
        try:
            with (
                terminations_interrupt(),
                quiet_request_log(),
                model as config,
                database as name,
                loopback,
            ):
                self.stdout.write(f"Database: {name}")
                results = run_experiment(config, log=self.stdout.write, seconds_per_run=per_run)
        except (ValueError, ModelError, ServerError) as exc:
            raise CommandError(str(exc)) from exc
        if not results["meta"]["complete"]:
            # No report and no test from part of the planned runs: the journal keeps them.
            raise CommandError(
                f"Interrupted after {len(results['runs'])} of {results['meta']['plannedRuns']} "
                f"runs, kept in {config.out / 'runs.jsonl'}; no report before the run is "
                "complete (--resume continues)."
            )
        paths = write_report(results, config.out)
        self.stdout.write(paths["markdown"].read_text().split("## Runs (means over repeats)")[0])
        summary = (
            f"{sum(r['success'] for r in results['runs'])}/{len(results['runs'])} runs "
            f"passed in {results['meta']['wallSeconds']} s; wrote "
            + ", ".join(str(p) for p in paths.values())
        )
        self.stdout.write(self.style.SUCCESS(summary))

    def _local_model(
        self, name: str | None, config: Config, *, threads: int
    ) -> AbstractContextManager[Config]:
        """The config pointed at a llama-server of ``name`` for the block's length."""
        if name is None:
            return nullcontext(config)

        @contextmanager
        def served() -> Iterator[Config]:
            with local_endpoint(name, threads=threads, log=self.stdout.write) as endpoint:
                yield replace(
                    config,
                    llm_endpoint={
                        "base_url": endpoint.base_url,
                        "model": endpoint.model,
                        "tokenize_url": endpoint.tokenize_url,
                    },
                    llm_meta={
                        "title": endpoint.title,
                        "sha256": endpoint.sha256,
                        "server": endpoint.server_version,
                        "contextTokens": CONTEXT_TOKENS,
                        "threads": threads,
                    },
                )

        return served()
