"""Redocly CLI's recommended ruleset on every OpenAPI document the app serves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from demo_tests.clients.conftest import CLIENTS, run
from demo_tests.clients.documents import json_documents, rules_turned_off, served_documents
from demo_tests.conftest import Demo

pytestmark = pytest.mark.django_db

CONFIG = CLIENTS / "redocly.yaml"


def test_every_served_document_passes_redoclys_recommended_rules(
    demo: Demo, tmp_path: Path
) -> None:
    documents = served_documents(demo, tmp_path)
    done = run(
        ["redocly", "lint", *map(str, documents), "--config", str(CONFIG), "--format", "json"],
        home=tmp_path,
    )
    reports: list[Any] = [doc for doc in json_documents(done.stdout) if "problems" in doc]
    assert len(reports) == len(documents), done.stdout[-2000:] + done.stderr[-2000:]
    problems = [(p["ruleId"], p["message"]) for report in reports for p in report["problems"]]
    assert problems == [], problems
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_redocly_config_turns_off_one_rule_and_says_why() -> None:
    turned_off = rules_turned_off(CONFIG.read_text())
    assert list(turned_off) == ["no-path-trailing-slash"]
    assert all(len(why) > 40 for why in turned_off.values()), turned_off
