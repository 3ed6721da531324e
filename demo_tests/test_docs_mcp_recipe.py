"""The Python recipe of docs/howto/mcp-hosts.md#python, run as it is shown.

The page's ``client.py`` runs in a subprocess (its own event loop, as a reader runs
it) against a live demo server, with a token of ``support`` in ``TOKEN``; what it
prints must be the output the page shows under it. Only the URL and the order's id
are the live server's.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rest_framework_simplejwt.tokens import AccessToken

from demo_tests.conftest import Demo

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "howto" / "mcp-hosts.md"
SHOWN_URL = "http://127.0.0.1:8000/mcp"


def block(text: str, title: str) -> str:
    found = re.search(rf'^```\w+ title="{re.escape(title)}"\n(.*?)^```', text, re.M | re.S)
    assert found is not None, title
    return found[1]


def test_the_python_recipe_prints_what_the_page_shows(
    live_server: Any, demo: Demo, tmp_path: Path
) -> None:
    text = PAGE.read_text()
    code = block(text, "client.py")
    shown = block(text, "TOKEN=… python client.py, as support")
    order = demo.order("demo-01")
    assert SHOWN_URL in code and '{"orderId": 1}' in code
    script = tmp_path / "client.py"
    script.write_text(
        code.replace(SHOWN_URL, f"{live_server.url}/mcp").replace(
            '{"orderId": 1}', f'{{"orderId": {order.pk}}}'
        )
    )
    env = {**os.environ, "TOKEN": str(AccessToken.for_user(demo.users["support"]))}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout == shown
