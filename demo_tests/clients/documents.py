"""The OpenAPI documents the project serves, written to files for the linters.

One per role (each caller is served its own operations), and the one generated without
a caller (``manage.py spectacular``): every shape of document a client may meet.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from demo_tests.conftest import Demo

ROLES = ("admin", "support", "warehouse", "alice")


def served_documents(demo: Demo, into: Path) -> list[Path]:
    files = []
    for role in ROLES:
        client = APIClient()
        client.force_authenticate(demo.users[role])
        response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
        assert response.status_code == 200, (role, response.content[:500])
        files.append(into / f"openapi-{role}.json")
        files[-1].write_bytes(response.content)
    uncalled = SchemaGenerator().get_schema(request=None, public=True)
    files.append(into / "openapi-spectacular.json")
    files[-1].write_text(json.dumps(uncalled))
    return files


def json_documents(text: str) -> list[Any]:
    """Every JSON document of ``text``, one after the other (Redocly writes one per
    file it lints), skipping whatever is not JSON between them."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    while (start := text.find("{", position)) != -1 or (start := text.find("[", position)) != -1:
        try:
            value, position = decoder.raw_decode(text, start)
        except ValueError:
            position = start + 1
            continue
        found.append(value)
    return found


def rules_turned_off(config: str) -> dict[str, str]:
    """Each rule a linter's YAML config turns off, with the comment just above it."""
    lines = config.splitlines()
    turned_off = {}
    for number, line in enumerate(lines):
        match = re.match(r"^\s+([\w-]+):\s*(off|false)\s*$", line)
        if match:
            comment = []
            for above in reversed(lines[:number]):
                if not above.strip().startswith("#"):
                    break
                comment.insert(0, above.strip().lstrip("#").strip())
            turned_off[match.group(1)] = " ".join(comment)
    return turned_off
