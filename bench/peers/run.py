"""``make bench-peers``: this library next to the peers that do less, on one help desk.

The tutorial's help desk (docs/tutorial.md: ``Ticket`` with three django-fsm transitions)
and ``Case`` (12 transitions), N of each in an SQLite file in a temporary directory,
served in this one process through one WSGI handler (one worker, no server, no thread
pool of ours) by four faces:

- this library: ``ResourceViewSet`` under ``/api/`` and ``McpView`` at ``/mcp``;
- plain DRF: a ``ModelViewSet`` with one ``@action`` per transition under ``/plain/``;
- django-rest-framework-mcp: those viewsets as tools (``@mcp_viewset``) at
  ``/peers/drf-mcp/``;
- django-mcp-server: ``ModelQueryToolset`` reads and an ``MCPToolset`` of transitions
  at ``/peers/mcp-server`` (stateless).

The caller is a staff user who is not a superuser, holding the permissions through a
group, with one simplejwt bearer token on every face. Each request is one WSGI call; its
cost is the process's CPU time around that call (``time.process_time_ns``: every thread,
so django-mcp-server's event-loop thread counts too), and the garbage collections that
started during it (``gc.callbacks``). All the faces run once per round, rotated, and
backwards every other round, round after round, so every pair sees the same machine and
each face of a pair runs first as often as second; a transition runs on a row of its
own, reset outside the measurement. Medians per request, and per comparison the ratio of the
medians beside issue 41's goal.

``python -m bench.peers.run [--tickets 1000] [--rounds 101] [--page 100]``; the
``peers`` extra installed (``make bench-peers`` makes ``.venv-peers``).
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib.metadata import version
from typing import Any, TextIO

from bench.hotspots import profile_pair

MCP_VERSION_OURS = "2025-11-25"
MCP_VERSION_SDK1 = "2025-06-18"
TRANSITION_TICKETS = 6  # one row per transition face
PROFILED_REQUESTS = 30  # of each face of a missed comparison


# --- measuring ------------------------------------------------------------------------


class _GcCounter:
    """Collections started, per generation, since the counter was installed."""

    def __init__(self) -> None:
        self.started = [0, 0, 0]

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self.started[info["generation"]] += 1


@dataclass
class Face:
    key: str
    label: str
    method: str
    path: str
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # Untimed: before (fresh headers) and after (reset the row) each request.
    fresh: Callable[[], dict[str, str]] | None = None
    after: Callable[[], None] | None = None
    check: Callable[[bytes], str | None] | None = None
    cpu_ns: list[int] = field(default_factory=list)
    gen0: int = 0
    gen2: int = 0
    size: int = 0


@dataclass(frozen=True)
class Comparison:
    label: str
    ours: str
    peer: str
    goal: float | None
    was: str = "—"  # issue 41's measurement (gunicorn, one worker), for reference


class Wsgi:
    """One in-process WSGI call per request: Django's handler, the whole stack
    (middleware, authentication, the view, rendering), no client and no server."""

    def __init__(self, token: str) -> None:
        from django.core.handlers.wsgi import WSGIHandler

        self.handler = WSGIHandler()
        self.base = {
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "SERVER_PROTOCOL": "HTTP/1.1",
            "REMOTE_ADDR": "127.0.0.1",
            "HTTP_HOST": "testserver",
            "HTTP_AUTHORIZATION": f"Bearer {token}",
            "wsgi.version": (1, 0),
            "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr,
            "wsgi.multithread": False,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }

    def environ(self, face: Face) -> dict[str, Any]:
        path, _, query = face.path.partition("?")
        body = b"" if face.body is None else json.dumps(face.body).encode()
        environ = {
            **self.base,
            "REQUEST_METHOD": face.method,
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "wsgi.input": io.BytesIO(body),
            "CONTENT_LENGTH": str(len(body)),
        }
        if face.body is not None:
            environ["CONTENT_TYPE"] = "application/json"
        headers = {**face.headers, **(face.fresh() if face.fresh else {})}
        for name, value in headers.items():
            environ["HTTP_" + name.upper().replace("-", "_")] = value
        return environ

    def call(self, environ: dict[str, Any]) -> tuple[int, bytes]:
        status: list[str] = []

        def start_response(line: str, headers: Any, exc_info: Any = None) -> None:
            status.append(line)

        response = self.handler(environ, start_response)
        try:
            content = b"".join(response)
        finally:
            response.close()
        return int(status[0][:3]), content


# --- the run ----------------------------------------------------------------------------


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.run", description=__doc__)
    parser.add_argument("--tickets", type=int, default=1000, help="tickets (and cases)")
    parser.add_argument("--rounds", type=int, default=101, help="measured rounds")
    parser.add_argument("--warmup", type=int, default=3, help="unmeasured rounds first")
    parser.add_argument("--page", type=int, default=100, help="rows on the listed page")
    parser.add_argument(
        "--profile",
        action="store_true",
        help="where the time goes under every goal, met or not (missed ones always)",
    )
    args = parser.parse_args(argv)
    if args.page > args.tickets - TRANSITION_TICKETS or args.tickets < 2 * TRANSITION_TICKETS:
        parser.error("--page must leave the transition rows out: tickets ≥ page + 6, ≥ 12")

    directory = tempfile.mkdtemp(prefix="bench-peers-")
    os.environ["BENCH_PEERS_DIR"] = directory
    os.environ["DJANGO_SETTINGS_MODULE"] = "bench.peers.settings"  # its own project, always
    try:
        import django

        django.setup()
        return _run(args, out)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run(args: argparse.Namespace, out: TextIO) -> int:
    from django.core.management import call_command

    call_command("migrate", run_syncdb=True, verbosity=0)
    seeded = _seed(args.tickets)
    load_before = os.getloadavg()
    wsgi = Wsgi(seeded["token"])
    faces = _faces(seeded, args.page)
    comparisons = _comparisons(args.page)

    for face in faces:  # every face answers what it should, before anything is timed
        status, body = wsgi.call(wsgi.environ(face))
        problem = _verdict(face, status, body)
        if problem:
            raise SystemExit(f"{face.label}: {problem}")
        if face.after:
            face.after()

    counter = _GcCounter()
    gc.callbacks.append(counter)
    started = time.monotonic()
    try:
        for index in range(args.warmup + args.rounds):
            measured = index >= args.warmup
            shift = index % len(faces)
            order = faces[shift:] + faces[:shift]
            if index % 2:
                # Backwards every other round. The faces compared are neighbours (this
                # library, then its peer), and a request right after a different kind
                # of request costs more (cold caches: up to 1.5x for a detail after a
                # transition); rotated alone, the peer always ran second, after the
                # same request as ours. Backwards, each runs first as often as second.
                order.reverse()
            for face in order:
                environ = wsgi.environ(face)
                gen0, _, gen2 = counter.started
                before = time.process_time_ns()
                status, body = wsgi.call(environ)
                spent = time.process_time_ns() - before
                if measured:
                    face.cpu_ns.append(spent)
                    face.gen0 += counter.started[0] - gen0
                    face.gen2 += counter.started[2] - gen2
                    face.size = len(body)
                problem = _verdict(face, status, body, full=index == 0)
                if problem:
                    raise SystemExit(f"{face.label}: {problem}")
                if face.after:
                    face.after()
    finally:
        gc.callbacks.remove(counter)
    missed = _report(args, faces, comparisons, load_before, time.monotonic() - started, out)
    by_key = {face.key: face for face in faces}
    profiled = [c for c in comparisons if c.goal is not None] if args.profile else missed
    for comparison in profiled:
        # Where the time goes: the pair again, under cProfile (bench.hotspots).
        ours, peer = by_key[comparison.ours], by_key[comparison.peer]
        verdict = "MISSED" if comparison in missed else "met"
        print(f"\n{comparison.label}: {verdict}", file=out)
        for line in profile_pair(
            lambda face=peer: wsgi.call(wsgi.environ(face)),
            lambda face=ours: wsgi.call(wsgi.environ(face)),
            PROFILED_REQUESTS,
            between=lambda pair=(ours, peer): [face.after() for face in pair if face.after],
        ):
            print(line, file=out)
    return 0


def _verdict(face: Face, status: int, body: bytes, *, full: bool = True) -> str | None:
    if status != 200:
        return f"HTTP {status}: {body[:300]!r}"
    if full and face.check:
        return face.check(body)
    return None


def _seed(count: int) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group, Permission
    from rest_framework_simplejwt.tokens import AccessToken

    from bench.peers.helpdesk.models import CASE_STATES, Case, Ticket

    users = get_user_model()
    lead = users.objects.create_user("lead", password="bench-peers", is_staff=True)
    reporter = users.objects.create_user("rita", password="bench-peers")
    leads = Group.objects.create(name="leads")
    leads.permissions.set(
        Permission.objects.filter(
            content_type__app_label="helpdesk",
            codename__in=["work_ticket", "resolve_any_ticket", "close_ticket", "work_case"],
        )
    )
    lead.groups.add(leads)
    assert not lead.is_superuser

    states = ["open", "in_progress", "resolved", "closed"]
    tickets = Ticket.objects.bulk_create(
        Ticket(
            title=f"Ticket {index}",
            priority="urgent" if index % 5 == 0 else "normal",
            reporter=reporter,
            assignee=lead if index % 3 else None,
            status=states[index % 4],
            resolution="fixed" if states[index % 4] in {"resolved", "closed"} else "",
        )
        for index in range(count)
    )
    # The transitions' own rows, past the listed page: open, assigned to the caller.
    moving = [ticket.pk for ticket in tickets[-TRANSITION_TICKETS:]]
    Ticket.objects.filter(pk__in=moving).update(status="open", assignee=lead, version=1)
    Case.objects.bulk_create(
        Case(title=f"Case {index}", reporter=reporter, status=CASE_STATES[index % len(CASE_STATES)])
        for index in range(count)
    )
    # Read: an urgent ticket in progress, assigned (resolve open and narrowed, the rest
    # refused with their reasons).
    read = next(t.pk for i, t in enumerate(tickets) if i % 4 == 1 and i % 5 == 0 and i % 3)
    return {"token": str(AccessToken.for_user(lead)), "read": read, "moving": moving}


def _reset(pk: int) -> Callable[[], None]:
    def reset() -> None:
        from bench.peers.helpdesk.models import Ticket

        Ticket.objects.filter(pk=pk).update(status="open", version=1, resolution="")

    return reset


def _rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}


def _mcp_result(expect: Callable[[dict[str, Any]], bool]) -> Callable[[bytes], str | None]:
    def check(body: bytes) -> str | None:
        envelope = json.loads(body)
        result = envelope.get("result")
        if not isinstance(result, dict) or result.get("isError"):
            return f"not a result: {body[:400]!r}"
        return None if expect(result) else f"unexpected result: {body[:400]!r}"

    return check


def _text(result: dict[str, Any]) -> str:
    return " ".join(part.get("text", "") for part in result.get("content", []))


def _json(expect: Callable[[Any], bool]) -> Callable[[bytes], str | None]:
    def check(body: bytes) -> str | None:
        return None if expect(json.loads(body)) else f"unexpected: {body[:400]!r}"

    return check


def _faces(seeded: dict[str, Any], page: int) -> list[Face]:
    read, moving = seeded["read"], seeded["moving"]
    ours_mcp = {"Accept": "application/json", "MCP-Protocol-Version": MCP_VERSION_OURS}
    sdk1_mcp = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MCP_VERSION_SDK1,
    }
    plain_mcp = {"Accept": "application/json"}
    counter = iter(range(10**9))

    def idempotency_key() -> dict[str, str]:
        return {"Idempotency-Key": f"bench-peers-{next(counter)}"}

    def tool_names(*names: str) -> Callable[[dict[str, Any]], bool]:
        return lambda result: set(names) <= {tool["name"] for tool in result["tools"]}

    started = _json(lambda body: body["status"] == "in_progress")
    in_progress = _mcp_result(lambda result: '"in_progress"' in _text(result).replace("'", '"'))
    return [
        Face(
            "list.ours",
            "this library: /mcp tools/list",
            "POST",
            "/mcp",
            _rpc("tools/list"),
            ours_mcp,
            check=_mcp_result(tool_names("get_ticket", "start_ticket", "triage_case")),
        ),
        Face(
            "list.drf_mcp",
            "django-rest-framework-mcp: tools/list",
            "POST",
            "/peers/drf-mcp/",
            _rpc("tools/list"),
            plain_mcp,
            check=_mcp_result(tool_names("retrieve_tickets", "start_tickets", "triage_cases")),
        ),
        Face(
            "list.mcp_server",
            "django-mcp-server: tools/list",
            "POST",
            "/peers/mcp-server",
            _rpc("tools/list"),
            sdk1_mcp,
            check=_mcp_result(tool_names("query_data_collections", "start_ticket", "triage_case")),
        ),
        Face(
            "read.ours",
            "this library: get_ticket (with affordances)",
            "POST",
            "/mcp",
            _rpc("tools/call", {"name": "get_ticket", "arguments": {"ticketId": read}}),
            ours_mcp,
            check=_mcp_result(lambda r: "affordances" in r["structuredContent"]),
        ),
        Face(
            "read.drf_mcp",
            "django-rest-framework-mcp: retrieve_tickets",
            "POST",
            "/peers/drf-mcp/",
            _rpc("tools/call", {"name": "retrieve_tickets", "arguments": {"kwargs": {"pk": read}}}),
            plain_mcp,
            check=_mcp_result(lambda r: r["structuredContent"]["id"] == read),
        ),
        Face(
            "read.mcp_server",
            "django-mcp-server: query_data_collections",
            "POST",
            "/peers/mcp-server",
            _rpc(
                "tools/call",
                {
                    "name": "query_data_collections",
                    "arguments": {
                        "collection": "ticket",
                        "search_pipeline": [{"$match": {"id": read}}],
                    },
                },
            ),
            sdk1_mcp,
            check=_mcp_result(lambda r: f'"id":{read}' in _text(r).replace(" ", "")),
        ),
        Face(
            "move.ours",
            "this library: start_ticket",
            "POST",
            "/mcp",
            _rpc("tools/call", {"name": "start_ticket", "arguments": {"ticketId": moving[0]}}),
            ours_mcp,
            after=_reset(moving[0]),
            check=_mcp_result(lambda r: r["structuredContent"]["status"] == "in_progress"),
        ),
        Face(
            "move.drf_mcp",
            "django-rest-framework-mcp: start_tickets",
            "POST",
            "/peers/drf-mcp/",
            _rpc(
                "tools/call", {"name": "start_tickets", "arguments": {"kwargs": {"pk": moving[1]}}}
            ),
            plain_mcp,
            after=_reset(moving[1]),
            check=_mcp_result(lambda r: r["structuredContent"]["status"] == "in_progress"),
        ),
        Face(
            "move.mcp_server",
            "django-mcp-server: start_ticket",
            "POST",
            "/peers/mcp-server",
            _rpc("tools/call", {"name": "start_ticket", "arguments": {"ticket_id": moving[2]}}),
            sdk1_mcp,
            after=_reset(moving[2]),
            check=in_progress,
        ),
        Face(
            "detail.ours",
            "this library: GET /api/tickets/{id}/",
            "GET",
            f"/api/tickets/{read}/",
            headers={"Accept": "application/json"},
            check=_json(lambda body: "affordances" in body),
        ),
        Face(
            "detail.plain",
            "plain DRF: GET /plain/tickets/{id}/",
            "GET",
            f"/plain/tickets/{read}/",
            headers={"Accept": "application/json"},
            check=_json(lambda body: body["id"] == read),
        ),
        Face(
            "action.ours",
            "this library: POST …/start/",
            "POST",
            f"/api/tickets/{moving[3]}/start/",
            {},
            {"Accept": "application/json"},
            after=_reset(moving[3]),
            check=started,
        ),
        Face(
            "action_key.ours",
            "this library: POST …/start/, Idempotency-Key",
            "POST",
            f"/api/tickets/{moving[4]}/start/",
            {},
            {"Accept": "application/json"},
            fresh=idempotency_key,
            after=_reset(moving[4]),
            check=started,
        ),
        Face(
            "action.plain",
            "plain DRF: POST …/start/ (@action)",
            "POST",
            f"/plain/tickets/{moving[5]}/start/",
            {},
            {"Accept": "application/json"},
            after=_reset(moving[5]),
            check=started,
        ),
        Face(
            "tickets.ours",
            f"this library: GET /api/tickets/, {page} rows",
            "GET",
            f"/api/tickets/?page_size={page}",
            headers={"Accept": "application/json"},
            check=_json(lambda body: len(body["results"]) == page),
        ),
        Face(
            "tickets.plain",
            f"plain DRF: GET /plain/tickets/, {page} rows",
            "GET",
            f"/plain/tickets/?page_size={page}",
            headers={"Accept": "application/json"},
            check=_json(lambda body: len(body["results"]) == page),
        ),
        Face(
            "cases.ours",
            f"this library: GET /api/cases/, {page} rows",
            "GET",
            f"/api/cases/?page_size={page}",
            headers={"Accept": "application/json"},
            check=_json(lambda body: len(body["results"]) == page),
        ),
        Face(
            "cases.plain",
            f"plain DRF: GET /plain/cases/, {page} rows",
            "GET",
            f"/plain/cases/?page_size={page}",
            headers={"Accept": "application/json"},
            check=_json(lambda body: len(body["results"]) == page),
        ),
    ]


def _comparisons(page: int) -> list[Comparison]:
    drf_mcp, mcp_server = "django-rest-framework-mcp", "django-mcp-server"
    return [
        Comparison(f"MCP tools/list / {drf_mcp}", "list.ours", "list.drf_mcp", 1.0, "1.94-2.53"),
        Comparison(
            f"MCP tools/list / {mcp_server}", "list.ours", "list.mcp_server", 1.0, "0.61-0.80"
        ),
        Comparison(
            f"MCP read (affordances) / {drf_mcp}", "read.ours", "read.drf_mcp", 1.2, "1.70-1.89"
        ),
        Comparison(f"MCP read (affordances) / {mcp_server}", "read.ours", "read.mcp_server", 1.0),
        Comparison(f"MCP transition / {drf_mcp}", "move.ours", "move.drf_mcp", 1.2, "1.18-1.42"),
        Comparison(f"MCP transition / {mcp_server}", "move.ours", "move.mcp_server", 1.0),
        Comparison(
            "REST detail (affordances) / plain DRF", "detail.ours", "detail.plain", 1.3, "1.90-1.97"
        ),
        Comparison(
            "REST transition / plain DRF @action", "action.ours", "action.plain", None, "1.26-1.39"
        ),
        Comparison(
            "REST transition, Idempotency-Key / @action",
            "action_key.ours",
            "action.plain",
            None,
            "1.84-1.91",
        ),
        Comparison(
            f"REST list, {page} rows / plain DRF",
            "tickets.ours",
            "tickets.plain",
            1.15,
            "1.35-1.40",
        ),
        Comparison(
            f"REST list, {page} rows, 12 transitions / plain DRF",
            "cases.ours",
            "cases.plain",
            1.2,
            "1.52-1.64",
        ),
    ]


# --- the report ---------------------------------------------------------------------------


def _ms(ns: float) -> float:
    return ns / 1e6


def _report(
    args: argparse.Namespace,
    faces: list[Face],
    comparisons: list[Comparison],
    load_before: tuple[float, float, float],
    seconds: float,
    out: TextIO,
) -> list[Comparison]:
    """Print the tables; the comparisons whose goal was missed."""

    def line(text: str = "") -> None:
        print(text, file=out)

    load_after = os.getloadavg()
    packages = ", ".join(
        f"{name} {version(name)}"
        for name in (
            "Django",
            "djangorestframework",
            "django-rest-framework-mcp",
            "django-mcp-server",
            "mcp",
        )
    )
    line(
        f"django-affordances peer benchmark — {args.tickets} tickets and cases, SQLite, "
        f"one process, one WSGI handler"
    )
    line(f"Python {platform.python_version()}; {packages}")
    line(
        f"Caller: staff, not a superuser, permissions through a group; bearer token. "
        f"{args.rounds} interleaved rounds (+{args.warmup} warm-up), {seconds:.0f} s."
    )
    line(
        "Load average (1/5/15 min): "
        f"{' '.join(f'{v:.2f}' for v in load_before)} before, "
        f"{' '.join(f'{v:.2f}' for v in load_after)} after; {os.cpu_count()} CPUs."
    )
    line()
    line("Per request: median CPU (process time around the WSGI call), GC collections started")
    line(f"{'face':<50} {'ms':>7} {'p90 ms':>7} {'gen0/req':>9} {'gen2/req':>9} {'bytes':>8}")
    for face in faces:
        cpu = sorted(face.cpu_ns)
        n = len(cpu)
        line(
            f"{face.label:<50} {_ms(statistics.median(cpu)):>7.2f} "
            f"{_ms(cpu[min(n - 1, int(0.9 * n))]):>7.2f} "
            f"{face.gen0 / n:>9.2f} {face.gen2 / n:>9.2f} {face.size:>8}"
        )
    by_key = {face.key: face for face in faces}
    line()
    line("Ratios: this library / peer (medians; per-round ratios' quartiles) — issue 41's goals")
    line(
        f"{'request':<52} {'ours ms':>8} {'peer ms':>8} {'ratio':>7} {'quartiles':>11} "
        f"{'issue 41':>10}  goal"
    )
    met, missed = 0, []
    for comparison in comparisons:
        ours, peer = by_key[comparison.ours], by_key[comparison.peer]
        ratio = statistics.median(ours.cpu_ns) / statistics.median(peer.cpu_ns)
        rounds = sorted(a / b for a, b in zip(ours.cpu_ns, peer.cpu_ns, strict=True))
        low, high = rounds[len(rounds) // 4], rounds[(3 * len(rounds)) // 4]
        if comparison.goal is None:
            verdict = "(no goal)"
        elif ratio <= comparison.goal:
            verdict, met = f"≤ {comparison.goal:.2f}x met", met + 1
        else:
            verdict = f"≤ {comparison.goal:.2f}x MISSED"
            missed.append(comparison)
        line(
            f"{comparison.label:<52} {_ms(statistics.median(ours.cpu_ns)):>8.2f} "
            f"{_ms(statistics.median(peer.cpu_ns)):>8.2f} {ratio:>6.2f}x "
            f"{low:>5.2f}-{high:<5.2f} {comparison.was:>10}  {verdict}"
        )
    line()
    line(f"Goals: {met} met, {len(missed)} missed.")
    return missed


if __name__ == "__main__":
    sys.exit(main())
