"""``manage.py decision_points freeze|run`` — the decision-point study (issue 56).

- ``freeze --out DIR``: run the oracle on B on a throwaway database, take the items and
  write the frozen files and their manifest (before the pre-registration is committed).
- ``run --out DIR --local-model … --samples N --threads 1 [--limit K]``: the completions
  not yet in ``DIR/completions.jsonl`` (resumable; no report, no test: the analysis
  needs the complete run). It refuses to start unless the code, the frozen files and
  the pre-registration are committed as they are: the pre-registration comes first.
- ``report --out DIR --samples N``: the report and the pre-registered tests, from the
  complete journal only (:mod:`experiment.decision_points.report`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.test import override_settings

from experiment.local.weights import MODELS

DEFAULT_OUT = "docs/experiment/decision-points"


class Command(BaseCommand):
    help = "The decision-point study: freeze its items, run its completions, report."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("action", choices=["freeze", "run", "report"])
        parser.add_argument("--out", default=DEFAULT_OUT)
        parser.add_argument("--local-model", choices=sorted(MODELS), default="qwen2.5-coder-1.5b")
        parser.add_argument("--samples", type=int, default=10)
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--threads", type=int, default=1)
        parser.add_argument("--temperature", type=float, default=0.7)
        parser.add_argument("--max-tokens", type=int, default=768)
        parser.add_argument("--limit", type=int, help="Stop after this many completions.")

    def handle(self, *args: Any, **options: Any) -> None:
        out = Path(options["out"])
        if options["action"] == "freeze":
            self._freeze(out)
        elif options["action"] == "report":
            self._report(out, options)
        else:
            self._run(out, options)

    def _report(self, out: Path, options: dict[str, Any]) -> None:
        from experiment.decision_points.report import write_report
        from experiment.report import IncompleteRun

        try:
            paths = write_report(out, samples=options["samples"], seed=options["seed"])
        except (IncompleteRun, ValueError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write("Wrote " + ", ".join(str(p) for p in paths.values()))

    def _freeze(self, out: Path) -> None:
        from experiment.decision_points.freeze import freeze
        from experiment.management.commands.run_experiment import (
            quiet_request_log,
            throwaway_database,
        )
        from experiment.runner import ensure_demo_users, live_server

        loopback = override_settings(
            ALLOWED_HOSTS=[*settings.ALLOWED_HOSTS, "127.0.0.1"], SECURE_SSL_REDIRECT=False
        )
        with quiet_request_log(), throwaway_database(), loopback, live_server() as url:
            ensure_demo_users()
            manifest = freeze(out, base_url=url, log=lambda line: None)
        self.stdout.write(json.dumps({k: manifest[k] for k in ("files", "kinds")}, indent=1))
        # For the pre-registration (its test wants this table as it is).
        from experiment.decision_points.freeze import items_table

        items = json.loads((out / "items.json").read_text())
        self.stdout.write("\n" + items_table(items))

    def _run(self, out: Path, options: dict[str, Any]) -> None:
        from experiment.decision_points.freeze import FILES
        from experiment.decision_points.run import Endpoint, ModelFailed, run
        from experiment.local.endpoint import local_endpoint
        from experiment.local.server import ServerError
        from experiment.local.weights import ModelError
        from experiment.management.commands.run_experiment import terminations_interrupt
        from experiment.runner import CODE, _git, code_digest

        commit = _git("rev-parse", "HEAD") or "unknown"
        if commit != "unknown" and _git(
            "status", "--porcelain", "--untracked-files=no", "--", *CODE
        ):
            raise CommandError("The code differs from its commit: run from a clean worktree.")
        registered = [out / name for name in (*FILES, "MANIFEST.json", "preregistration.md")]
        if commit != "unknown":
            changed = _git("status", "--porcelain", "--", *map(str, registered))
            missing = [p for p in registered if not _git("ls-files", "--", str(p))]
            if changed or missing:
                raise CommandError(
                    "The pre-registration and the frozen files must be committed, unchanged, "
                    f"before the first completion: {changed or ', '.join(map(str, missing))}"
                )
        try:
            with (
                terminations_interrupt(),
                local_endpoint(
                    options["local_model"], threads=options["threads"], log=self.stdout.write
                ) as endpoint,
            ):
                facts = {
                    "commit": commit,
                    "code": code_digest(),
                    "model": endpoint.sha256,
                    "server": endpoint.server_version,
                    "threads": options["threads"],
                }
                done, left = run(
                    out,
                    Endpoint(endpoint.base_url, endpoint.model),
                    samples=options["samples"],
                    seed=options["seed"],
                    temperature=options["temperature"],
                    max_tokens=options["max_tokens"],
                    facts=facts,
                    log=self.stdout.write,
                    limit=options["limit"],
                )
        except KeyboardInterrupt:
            raise CommandError("Interrupted: the completions so far are kept; run again.") from None
        except (ValueError, ModelFailed, ModelError, ServerError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"{done} completion(s) done, {left} to do.")
