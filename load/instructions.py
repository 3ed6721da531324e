"""Instructions the server side spends per request, counted by valgrind, not timed.

``python load/instructions.py`` prepares a throwaway database (``DATABASE_URL``, default
a temporary SQLite file; its orders are reset), then runs the load's read mix in-process
through the whole request stack (order detail, order list, catalog, MCP ``get_order``,
as ``support``) twice under ``valgrind --tool=callgrind``: once with none of the
requests and once with ``--requests`` of each. The difference divided by the number of
requests is the work per request, the same for the same code on a busy machine —
compare two builds with it where ``make load``'s throughput cannot. It takes minutes
(valgrind runs Python some 50 times slower).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def _setup(prepare: bool) -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.update({"DEBUG": "0", "SECRET_KEY": "i" * 50, "ALLOWED_HOSTS": "testserver"})
    os.environ["SECURE_SSL_REDIRECT"] = "0"
    import django

    django.setup()
    if prepare:
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        call_command("seed_demo", "--reset", "--password", "instructions-pw-1", verbosity=0)


def mix(count: int) -> None:
    """``count`` requests of each kind, after a few of each to warm every cache."""
    from django.contrib.auth import get_user_model
    from django.test import Client
    from rest_framework_simplejwt.tokens import AccessToken

    from orders.models import Order

    user = get_user_model().objects.get(username="support")
    auth = {"HTTP_AUTHORIZATION": f"Bearer {AccessToken.for_user(user)}"}
    mcp = {**auth, "HTTP_ACCEPT": "application/json, text/event-stream"}
    client = Client()
    ids = list(Order.objects.values_list("id", flat=True))

    def rpc(index: int, method: str, params: dict[str, Any]) -> Any:
        body = {"jsonrpc": "2.0", "id": index, "method": method, "params": params}
        return client.post("/mcp", json.dumps(body), content_type="application/json", **mcp)

    answer = rpc(
        0,
        "initialize",
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "instructions", "version": "1"},
        },
    )
    if answer.headers.get("Mcp-Session-Id"):
        mcp["HTTP_MCP_SESSION_ID"] = answer.headers["Mcp-Session-Id"]
    mcp["HTTP_MCP_PROTOCOL_VERSION"] = "2025-11-25"

    def get_order(index: int) -> Any:
        arguments = {"orderId": ids[index % len(ids)]}
        response = rpc(index, "tools/call", {"name": "get_order", "arguments": arguments})
        result = json.loads(response.content).get("result") or {}
        assert result.get("structuredContent", {}).get("id") == arguments["orderId"], result
        return response

    kinds = (
        lambda i: client.get(f"/api/orders/{ids[i % len(ids)]}/", **auth),
        lambda i: client.get("/api/orders/", **auth),
        lambda i: client.get("/api/operations/", **auth),
        get_order,
    )
    for index in range(5 + count):
        for kind in kinds:
            response = kind(index + 1)
            assert response.status_code == 200, response.content[:200]


def _counted(count: int, env: dict[str, str]) -> int:
    with tempfile.TemporaryDirectory() as scratch:
        run = subprocess.run(
            [
                "valgrind", "--tool=callgrind", f"--callgrind-out-file={scratch}/out",
                sys.executable, __file__, "--inner", str(count),
            ],
            env=env, capture_output=True, text=True, check=True,
        )  # fmt: skip
    match = _COLLECTED.search(run.stderr)
    if match is None:
        raise RuntimeError(f"valgrind reported no count:\n{run.stderr[-2000:]}")
    return int(match.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30, help="of each kind (default 30)")
    parser.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner is not None:
        _setup(prepare=False)
        mix(args.inner)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        env = {**os.environ}
        env.setdefault("DATABASE_URL", f"sqlite:///{scratch}/instructions.sqlite3")
        subprocess.run([sys.executable, __file__, "--prepare"], env=env, check=True)
        empty, full = _counted(0, env), _counted(args.requests, env)
    requests = 4 * args.requests
    print(f"database: {env['DATABASE_URL']}")
    print(f"{(full - empty) / requests / 1e6:.2f} million instructions per request ")
    print(f"({requests} requests: order detail, order list, catalog, MCP get_order)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--prepare"]:
        _setup(prepare=True)
        sys.exit(0)
    sys.exit(main())
