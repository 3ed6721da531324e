"""Spectral's ``spectral:oas`` ruleset on every OpenAPI document the app serves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from demo_tests.clients.conftest import CLIENTS, run
from demo_tests.clients.documents import rules_turned_off, served_documents
from demo_tests.conftest import Demo

pytestmark = pytest.mark.django_db

RULESET = CLIENTS / "spectral.yaml"


def test_every_served_document_passes_spectrals_oas_rules(demo: Demo, tmp_path: Path) -> None:
    documents = served_documents(demo, tmp_path)
    done = run(
        ["spectral", "lint", *map(str, documents), "--ruleset", str(RULESET),
         "--format", "json", "--fail-severity", "hint", "--quiet"],
        home=tmp_path,
    )  # fmt: skip
    # Warnings, information and hints count too: "clean" is no result at all.
    results = json.loads(done.stdout[done.stdout.index("[") :]) if "[" in done.stdout else None
    assert results is not None, done.stdout[-2000:] + done.stderr[-2000:]
    found = [(r["code"], Path(r["source"]).name, r["path"], r["message"]) for r in results]
    assert found == [], found
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_spectral_ruleset_turns_off_one_rule_and_says_why() -> None:
    turned_off = rules_turned_off(RULESET.read_text())
    assert list(turned_off) == ["path-keys-no-trailing-slash"]
    assert all(len(why) > 40 for why in turned_off.values()), turned_off
