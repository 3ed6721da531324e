"""The mixed workload of `make load`, run by locust (headless) against 127.0.0.1 only.

Started by ``load/run.py``, which passes in the environment: ``LOAD_TOKENS`` (a JSON
file of access tokens per demo user), ``LOAD_ORDERS`` (a JSON file of the orders and
their customers), ``LOAD_RESULTS`` (where to write what succeeded) and
``LOAD_MAX_REQUESTS`` (a bound on the number of requests besides locust's run time).

Every user mixes reads (lists, details, the catalog, a static file), transitions over
REST with ``If-Match``, races (the same transition sent concurrently with one
``If-Match``) and MCP ``tools/call`` over ``POST /mcp``. A 409 or 412 is an expected
answer under contention, not a failure; anything else unexpected is.
"""

from __future__ import annotations

import json
import os
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import gevent
from locust import FastHttpUser, constant, events, task

# locust puts this file's folder on sys.path, not the repository's root.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from load.arguments import arguments_for, pick

TOKENS: dict[str, str] = json.loads(Path(os.environ["LOAD_TOKENS"]).read_text())
ORDERS: list[dict[str, Any]] = json.loads(Path(os.environ["LOAD_ORDERS"]).read_text())
RESULTS = Path(os.environ["LOAD_RESULTS"])
MAX_REQUESTS = int(os.environ.get("LOAD_MAX_REQUESTS") or 0)
RACERS = 3

STAFF = ("support", "warehouse", "supervisor")
READERS = ("auditor", "support", "alice")
MCP_HEADERS = {
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",  # stateless: no initialize needed per request
}
EXPECTED_REFUSALS = {409, 412}

successes: list[dict[str, Any]] = []
races: list[dict[str, Any]] = []
outcomes: Counter[str] = Counter()
errors: list[str] = []  # exceptions in tasks and in the race greenlets: each fails the run
failures: Counter[str] = Counter()  # unexpected answers, by endpoint and what went wrong
sent = 0
_runner: Any = None


@events.init.add_listener
def _remember_runner(environment: Any, **kwargs: Any) -> None:
    global _runner
    _runner = environment.runner


@events.request.add_listener
def _count(name: str, exception: Exception | None = None, **kwargs: Any) -> None:
    """Note each failure; stop after LOAD_MAX_REQUESTS requests, even before the run time."""
    global sent
    sent += 1
    if exception is not None:
        failures[f"{name}: {str(exception)[:200]}"] += 1
    if MAX_REQUESTS and sent == MAX_REQUESTS and _runner is not None:
        gevent.spawn(_runner.quit)


@events.user_error.add_listener
def _task_failed(user_instance: Any, exception: Exception, tb: Any, **kwargs: Any) -> None:
    errors.append(f"task: {exception!r}")


@events.test_stop.add_listener
def _write_results(**kwargs: Any) -> None:
    results = {
        "successes": successes,
        "races": races,
        "outcomes": outcomes,
        "failures": failures,
        "errors": errors,
    }
    RESULTS.write_text(json.dumps(results))


def problem_of(response: Any) -> str:
    """What went wrong, for a failure: the HTTP status and body, or the connection error."""
    if not response.status_code:
        return f"no response: {response.error!r}"
    return f"{response.status_code}: {(response.text or '')[:200]}"


def transition_path(affordance: dict[str, Any]) -> tuple[str, str]:
    """The target's path and its stats name (``POST /api/orders/{id}/confirm/``)."""
    path = urlsplit(affordance["target"]).path
    method = path.rstrip("/").rsplit("/", 1)[-1]
    return path, f"POST /api/orders/{{id}}/{method}/"


class Mixed(FastHttpUser):
    wait_time = constant(0)  # as fast as the server answers: a throughput test

    def headers(self, role: str, **extra: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKENS[role]}", "Accept": "application/json", **extra}

    def some_order(self, role: str) -> dict[str, Any]:
        mine = [o for o in ORDERS if o["customer"] == role]
        return random.choice(mine or ORDERS)

    def read_order(self, role: str, order_id: int) -> dict[str, Any] | None:
        with self.client.get(
            f"/api/orders/{order_id}/",
            headers=self.headers(role),
            name="GET /api/orders/{id}/",
            catch_response=True,
        ) as response:
            if response.status_code != 200:
                response.failure(problem_of(response))
                return None
            return response.json()

    # --- reads ------------------------------------------------------------------------

    @task(4)
    def list_orders(self) -> None:
        role = random.choice(READERS)
        status = random.choice(["", "pending", "confirmed", "shipped", "delivered"])
        query = f"?page_size=50&status={status}" if status else "?page_size=50"
        self.client.get(f"/api/orders/{query}", headers=self.headers(role), name="GET /api/orders/")

    @task(6)
    def order_detail(self) -> None:
        role = random.choice(READERS)
        self.read_order(role, self.some_order(role)["id"])

    @task(1)
    def catalog(self) -> None:
        self.client.get(
            "/api/operations/",
            headers=self.headers(random.choice(READERS)),
            name="GET /api/operations/",
        )

    @task(1)
    def static_file(self) -> None:
        self.client.get("/static/admin/css/base.css", name="GET /static/ (whitenoise)")

    # --- transitions over REST ----------------------------------------------------------

    @task(6)
    def transition(self) -> None:
        role = random.choice([*STAFF, *STAFF, "alice", "bob"])
        order = self.read_order(role, self.some_order(role)["id"])
        affordance = pick(order["affordances"]) if order else None
        if order is None or affordance is None:
            return
        self.attempt(role, order, affordance, race=None)

    @task(2)
    def race(self) -> None:
        role = random.choice(STAFF)
        order = self.read_order(role, self.some_order(role)["id"])
        affordance = pick(order["affordances"]) if order else None
        if order is None or affordance is None:
            return
        tally: dict[str, Any] = {
            "order": order["id"],
            "expectedVersion": order["version"],
            "operation": affordance["name"],
            "winners": 0,
        }
        attempts = [gevent.spawn(self.racer, role, order, affordance, tally) for _ in range(RACERS)]
        gevent.joinall(attempts)
        races.append(tally)

    def racer(
        self, role: str, order: dict[str, Any], affordance: dict[str, Any], race: dict[str, Any]
    ) -> None:
        # A greenlet of our own: locust would not see what it raises.
        try:
            self.attempt(role, order, affordance, race=race)
        except Exception as exc:
            errors.append(f"race: {exc!r}")

    def attempt(
        self,
        role: str,
        order: dict[str, Any],
        affordance: dict[str, Any],
        *,
        race: dict[str, Any] | None,
    ) -> None:
        path, name = transition_path(affordance)
        if race is not None:
            name += " (race)"
        with self.client.post(
            path,
            json=arguments_for(affordance, order),
            headers=self.headers(role, **{"If-Match": f'"{order["version"]}"'}),
            name=name,
            catch_response=True,
        ) as response:
            status = response.status_code
            outcomes[f"rest {status}"] += 1
            if status == 200:
                body = response.json()
                successes.append(
                    {
                        "order": body["id"],
                        "operation": affordance["name"],
                        "version": body["version"],
                        "state": body["status"],
                        "via": "api",
                    }
                )
                if race is not None:
                    race["winners"] += 1
            elif status in EXPECTED_REFUSALS:
                response.success()  # lost a race or a stale view: the contract's answer
            else:
                response.failure(problem_of(response))

    # --- MCP --------------------------------------------------------------------------

    def mcp(self, role: str, tool: str, arguments: dict[str, Any], name: str) -> Any:
        body = {
            "jsonrpc": "2.0",
            "id": random.randint(1, 2**31),
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        headers = self.headers(role, **MCP_HEADERS)
        with self.client.post(
            "/mcp", json=body, headers=headers, name=name, catch_response=True
        ) as response:
            if response.status_code != 200:
                response.failure(problem_of(response))
                return None
            envelope = response.json()
            if "result" not in envelope:
                response.failure(f"JSON-RPC error {envelope.get('error')}")
                return None
            result = envelope["result"]
            if result.get("isError"):
                code = result["structuredContent"].get("code")
                outcomes[f"mcp {code}"] += 1
                if code not in {"stale_version", "operation_not_available"}:
                    response.failure(f"tool error {code}")
                return None
            return result["structuredContent"]

    @task(2)
    def mcp_read(self) -> None:
        role = random.choice(READERS)
        if random.random() < 0.3:
            self.mcp(role, "list_orders", {"pageSize": 20}, "MCP tools/call list_orders")
        else:
            order_id = self.some_order(role)["id"]
            self.mcp(role, "get_order", {"orderId": order_id}, "MCP tools/call get_order")

    @task(3)
    def mcp_transition(self) -> None:
        role = random.choice(STAFF)
        order_id = self.some_order(role)["id"]
        order = self.mcp(role, "get_order", {"orderId": order_id}, "MCP tools/call get_order")
        affordance = pick(order["affordances"]) if order else None
        if order is None or affordance is None:
            return
        arguments = {
            **affordance["arguments"],
            **arguments_for(affordance, order, money=float),
            "expectedVersion": affordance["validForVersion"],
        }
        result = self.mcp(role, affordance["name"], arguments, "MCP tools/call (transition)")
        outcomes["mcp ok" if result else "mcp refused"] += 1
        if result:
            successes.append(
                {
                    "order": result["id"],
                    "operation": affordance["name"],
                    "version": result["version"],
                    "state": result["status"],
                    "via": "mcp",
                }
            )
