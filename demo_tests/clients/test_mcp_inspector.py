"""The MCP Inspector CLI: ``tools/list`` (its ``--strict`` schema-portability check) and
one ``tools/call`` on each interface, in the handshake era and in 2026-07-28's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from demo_tests.clients.conftest import last_json, run, token_for
from demo_tests.conftest import Demo

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ENDPOINTS = ("/mcp", "/mcp/static", "/mcp/forms")
ERAS = ("legacy", "modern")
NEVER_FOR_A_CUSTOMER = ("confirm_order", "ship_order", "deliver_order", "refund_order")


def _inspect(url: str, token: str, era: str, home: Path, *args: str) -> Any:
    command = ["mcp-inspector", "--cli", url, "--transport", "http"]
    command += ["--header", f"Authorization: Bearer {token}", "--protocol-era", era]
    return run([*command, "--format", "json", *args], home=home)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_tools_list_is_portable_and_per_caller(
    live_server: Any, demo: Demo, tmp_path: Path, endpoint: str, era: str
) -> None:
    url = live_server.url + endpoint
    for role in ("support", "alice"):
        done = _inspect(
            url, token_for(demo.users[role]), era, tmp_path, "--method", "tools/list", "--strict"
        )
        # --strict: every portability finding on stderr, exit 6 on an error-severity one.
        assert done.returncode == 0, done.stderr[-3000:]
        assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr[-3000:]
        envelope = last_json(done.stdout)
        assert "schemaFindings" not in envelope
        names = {tool["name"] for tool in envelope["result"]["tools"]}
        if endpoint == "/mcp/forms":
            assert names == {"read_resource", "submit_form"}
        elif role == "support":
            assert {"get_order", "list_orders", "cancel_order", "confirm_order"} <= names
        else:
            assert {"get_order", "list_orders", "cancel_order"} <= names
            assert not names & set(NEVER_FOR_A_CUSTOMER)
            assert not any(word in json.dumps(envelope) for word in NEVER_FOR_A_CUSTOMER)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_one_tools_call_answers_the_order(
    live_server: Any, demo: Demo, tmp_path: Path, endpoint: str, era: str
) -> None:
    order = demo.order("demo-01")
    if endpoint == "/mcp/forms":
        call = ["--tool-name", "read_resource"]
        call += [
            "--tool-args-json",
            json.dumps({"url": f"{live_server.url}/api/orders/{order.pk}/"}),
        ]
    else:
        call = ["--tool-name", "get_order", "--tool-args-json", json.dumps({"orderId": order.pk})]
    done = _inspect(
        live_server.url + endpoint, token_for(demo.users["support"]), era, tmp_path,
        "--method", "tools/call", *call,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    # The Inspector validates structuredContent with Ajv: an unknown format would warn.
    assert "unknown format" not in done.stderr, done.stderr[-3000:]
    result = last_json(done.stdout)["result"]
    assert result.get("isError") is not True
    body = result["structuredContent"]
    assert body["id"] == order.pk and body["status"] == "pending"
