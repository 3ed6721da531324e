"""Redocly CLI's recommended ruleset on the OpenAPI document each role is served."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from demo_tests.clients.conftest import CLIENTS, run
from demo_tests.conftest import Demo

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["admin", "support", "warehouse", "alice"])
def test_the_served_document_passes_redoclys_recommended_rules(
    demo: Demo, tmp_path: Path, role: str
) -> None:
    client = APIClient()
    client.force_authenticate(demo.users[role])
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    document = tmp_path / "openapi.json"
    document.write_bytes(response.content)
    done = run(
        ["redocly", "lint", str(document), "--config", str(CLIENTS / "redocly.yaml"),
         "--format", "json"],
        home=tmp_path,
    )  # fmt: skip
    report: Any = json.loads(done.stdout[done.stdout.index("{") :])
    problems = [(p["ruleId"], p["message"]) for p in report["problems"]]
    assert problems == [], problems
    assert done.returncode == 0, done.stderr[-2000:]
