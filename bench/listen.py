"""``make bench-listen``: MCP ``subscriptions/listen`` streams under load, beside the goals.

For each N (``--listeners 100,1000``) on a fresh copy of one seeded database:

1. the demo served as ``make demo`` serves it — uvicorn, ``--workers 2``, the Redis
   broker (``EVENTS_URL``, a channel of the run's own) and, as docs/howto/deploy.md
   says for several workers, the shared cache (``CACHE_URL``: the permissions kept by
   ``CachedModelBackend``) — on 127.0.0.1, ``DEBUG`` off, on
   a temporary SQLite file in WAL mode (``--database-url`` for another, e.g. PostgreSQL:
   its tables are dropped and made again);
2. N listeners opened by this process, each its own HTTP/1.1 connection and stream,
   spread over 100 users of the ``support`` group (a bearer token each): most on an
   order of their own, ``--shared`` of them (10%) on one shared order. The client is
   asyncio's streams with a small chunked-SSE reader — no HTTP library, no SDK — so that
   a thousand streams cost this process little (the SDK's ``Client.listen`` is what
   ``demo_tests/test_live.py`` runs);
3. the server's memory per idle listener: the RSS of all its processes (uvicorn's
   supervisor and workers, psutil) with the N listeners acknowledged and idle, minus
   with none (after a warm-up that opened and closed listeners), divided by N;
4. ``--events`` runs of ``hold_order`` (a transition from ``confirmed`` to itself that
   bumps the version) through ``perform()`` in another process
   (:mod:`bench.listen_driver`), one every ``--interval`` seconds, every tenth on the
   shared order and the others on the listeners' own orders in turn;
5. each listener's ``notifications/resources/updated`` matched with the runs by order
   and version. Latency: from the commit — stamped by the driver in the run's first
   ``on_commit`` callback, before the event is published — to the moment this process
   reads the notification off the socket (one clock: both processes on this machine).
   Lost: a run's notification that a listener of its order never read (within
   ``--grace`` seconds of the last run).

p50 and p99 of all deliveries, memory per idle listener and lost notifications are
printed beside the goals: p99 ≤ 200 ms at 1,000 listeners, ≤ 50 kB per idle listener,
none lost. Everything binds to 127.0.0.1; the server is stopped at the end, on failure
and on Ctrl-C.

``python -m bench.listen [--listeners 100,1000] [--events 200] [--interval 0.05]``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import psutil

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
WORKERS = 2
USERS = 100  # the listeners' users: one in N/USERS streams is each one's
VERSION = "2026-07-28"
UPDATED = "notifications/resources/updated"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
GOAL_P99_MS = 200.0  # at 1,000 listeners
GOAL_IDLE_KB = 50.0
GOAL_AT = 1000
# Listeners opened at once: the accept queue and the servers' start-up work stay small.
OPEN_AT_ONCE = 50


# --- one listener -----------------------------------------------------------------------


@dataclass
class Listener:
    """One stream: its connection, and the notifications read off it."""

    pk: int
    uri: str
    acknowledged: asyncio.Event = field(default_factory=asyncio.Event)
    heard: dict[int, float] = field(default_factory=dict)  # version -> read at (time.time)
    duplicates: int = 0
    failure: str | None = None
    ended: bool = False
    task: asyncio.Task[None] | None = None
    writer: asyncio.StreamWriter | None = None


def _listen_request(port: int, token: str, uri: str, request_id: int) -> bytes:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "subscriptions/listen",
            "params": {
                "_meta": {
                    "io.modelcontextprotocol/protocolVersion": VERSION,
                    "io.modelcontextprotocol/clientCapabilities": {},
                },
                "notifications": {"resourceSubscriptions": [uri]},
            },
        }
    ).encode()
    head = (
        f"POST /mcp HTTP/1.1\r\nHost: {HOST}:{port}\r\n"
        f"Authorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json, text/event-stream\r\n"
        f"MCP-Protocol-Version: {VERSION}\r\n"
        "Mcp-Method: subscriptions/listen\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


async def _chunks(reader: asyncio.StreamReader) -> Any:
    """The body of a chunked response, chunk by chunk, each with when it was read."""
    while True:
        size_line = await reader.readline()
        if not size_line:
            return
        size = int(size_line.split(b";")[0].strip() or b"0", 16)
        if size == 0:
            return
        data = await reader.readexactly(size + 2)
        yield data[:-2], time.time()


async def _run_listener(listener: Listener, port: int, token: str, request_id: int) -> None:
    try:
        reader, writer = await asyncio.open_connection(HOST, port, limit=1 << 20)
        listener.writer = writer
        writer.write(_listen_request(port, token, listener.uri, request_id))
        await writer.drain()
        status = await reader.readline()
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        if b" 200 " not in status or headers.get("transfer-encoding") != "chunked":
            rest = await asyncio.wait_for(reader.read(2000), 5)
            listener.failure = f"{status.decode().strip()} {rest[:300]!r}"
            return
        buffer = b""
        async for chunk, read_at in _chunks(reader):
            buffer += chunk
            while b"\n\n" in buffer:
                frame, buffer = buffer.split(b"\n\n", 1)
                for line in frame.split(b"\n"):
                    if line.startswith(b"data: "):
                        _heard(listener, json.loads(line[6:]), read_at)
        listener.ended = True
    except asyncio.CancelledError:
        raise
    except Exception as error:  # said in the report: a lost stream
        listener.failure = f"{type(error).__name__}: {error}"


def _heard(listener: Listener, message: dict[str, Any], read_at: float) -> None:
    method = message.get("method")
    if method == ACKNOWLEDGED:
        listener.acknowledged.set()
    elif method == UPDATED:
        version = message["params"]["_meta"].get("affordances/version")
        if version in listener.heard:
            listener.duplicates += 1
        else:
            listener.heard[version] = read_at


# --- the server -------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def _get(port: int, path: str) -> int:
    """The status of a GET (0 when nothing answers)."""
    try:
        with socket.create_connection((HOST, port), timeout=2) as sock:
            sock.sendall(
                f"GET {path} HTTP/1.1\r\nHost: {HOST}\r\nConnection: close\r\n\r\n".encode()
            )
            return int(sock.recv(64).split(b" ")[1])
    except (OSError, IndexError, ValueError):
        return 0


@contextlib.contextmanager
def _server(env: dict[str, str], log: Path) -> Iterator[tuple[int, psutil.Process]]:
    """uvicorn with the workers on a free port of 127.0.0.1, stopped on leaving (Ctrl-C and
    failures too)."""
    port = _free_port()
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "uvicorn",
                "config.asgi:application",
                "--host",
                HOST,
                "--port",
                str(port),
                "--workers",
                str(WORKERS),
                "--log-level",
                "warning",
                # Idle streams are the point: uvicorn must not close a connection whose
                # stream is quiet (it sends keep-alives itself every 15 s).
                "--timeout-keep-alive",
                "60",
                # Stopped with streams still open (Ctrl-C, a failure): closed, not awaited.
                "--timeout-graceful-shutdown",
                "3",
            ],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
            # Its own process group: Ctrl-C reaches this process, which stops the server.
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 90
        while _get(port, "/api/") == 0 or len(psutil.Process(process.pid).children()) < WORKERS:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"uvicorn did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.3)
        yield port, psutil.Process(process.pid)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _rss(server: psutil.Process) -> dict[int, int]:
    """The resident set of each of the server's processes, in bytes."""
    sizes = {}
    for process in [server, *server.children(recursive=True)]:
        with contextlib.suppress(psutil.NoSuchProcess):
            sizes[process.pid] = process.memory_info().rss
    return sizes


def _threads(server: psutil.Process) -> list[int]:
    """The threads of each worker."""
    return [worker.num_threads() for worker in _workers(server)]


# --- one N ------------------------------------------------------------------------------


@dataclass
class Result:
    listeners: int
    shared: int
    events: int
    expected: int
    received: int
    lost: int
    duplicates: int
    failures: list[str]
    latencies_ms: list[float]
    shared_latencies_ms: list[float]
    idle_bytes: float
    rss_before: dict[int, int]
    rss_idle: dict[int, int]
    threads: list[int]
    opened_s: float
    load: tuple[float, float, float]

    def percentile(self, values: list[float], q: float) -> float:
        if not values:
            return float("nan")
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


async def _open_all(
    listeners: list[Listener], port: int, tokens: list[str], timeout: float
) -> float:
    started = time.monotonic()
    for first in range(0, len(listeners), OPEN_AT_ONCE):
        group = listeners[first : first + OPEN_AT_ONCE]
        for n, listener in enumerate(group, start=first):
            listener.task = asyncio.create_task(
                _run_listener(listener, port, tokens[n % len(tokens)], n + 1)
            )
        await _acknowledged(group, started + timeout)
    return time.monotonic() - started


async def _acknowledged(listeners: list[Listener], deadline: float) -> None:
    for listener in listeners:
        while not listener.acknowledged.is_set():
            if listener.failure or listener.ended:
                raise SystemExit(f"a listener on {listener.uri} failed: {listener.failure}")
            if time.monotonic() > deadline:
                raise SystemExit(f"a listener on {listener.uri} was not acknowledged in time")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(listener.acknowledged.wait(), 0.2)


def _workers(server: psutil.Process) -> list[psutil.Process]:
    """uvicorn's worker processes (spawned by multiprocessing; not its resource tracker)."""
    return [
        child
        for child in server.children()
        if any("spawn_main" in part for part in child.cmdline())
    ]


def _cpu(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


async def _warm_up(
    server: psutil.Process,
    port: int,
    tokens: list[str],
    uri: str,
    pk: int,
    args: argparse.Namespace,
) -> None:
    workers = _workers(server)
    served = dict.fromkeys((worker.pid for worker in workers), 0)
    for _ in range(20):
        before = {worker.pid: _cpu(worker) for worker in workers}
        # As many at once as the measurement opens: what serving that many concurrent
        # requests grows once (the allocator's arenas, the request threads' stacks) is
        # in the baseline, not charged to the listeners.
        warm = [Listener(pk, uri) for _ in range(OPEN_AT_ONCE)]
        await _open_all(warm, port, tokens, args.open_timeout)
        await _close_all(warm)
        for worker in workers:
            served[worker.pid] += _cpu(worker) > before[worker.pid]
        if min(served.values()) >= 2:
            return
    raise SystemExit(f"the warm-up did not reach every worker: {served}")


async def _close_all(listeners: list[Listener]) -> None:
    for listener in listeners:
        if listener.task is not None:
            listener.task.cancel()
        if listener.writer is not None:
            listener.writer.close()
    await asyncio.gather(
        *(listener.task for listener in listeners if listener.task), return_exceptions=True
    )


async def _measure(
    args: argparse.Namespace,
    count: int,
    port: int,
    server: psutil.Process,
    seeded: dict[str, Any],
    env: dict[str, str],
    directory: Path,
) -> Result:
    base = f"http://{HOST}:{port}"
    tokens = seeded["tokens"]
    orders = seeded["orders"]
    shared_count = round(count * args.shared)
    own_count = count - shared_count
    warmup_pks, shared_pk, own_pks = orders[:2], orders[2], orders[3 : 3 + own_count]
    if len(own_pks) < own_count:
        raise SystemExit(f"seeded {len(orders)} orders, {own_count + 3} needed")

    # Warm-up: streams opened and closed until every worker has served some (its first
    # ones import and build what every later one shares: the hub, its Redis connection,
    # the users' tokens and permissions read once).
    await _warm_up(server, port, tokens, f"{base}/api/orders/{shared_pk}/", shared_pk, args)
    await asyncio.sleep(args.settle)
    rss_before = _rss(server)

    listeners = [Listener(pk, f"{base}/api/orders/{pk}/") for pk in own_pks]
    listeners += [
        Listener(shared_pk, f"{base}/api/orders/{shared_pk}/") for _ in range(shared_count)
    ]
    opened_s = await _open_all(listeners, port, tokens, args.open_timeout)
    await asyncio.sleep(args.settle)
    rss_idle = _rss(server)
    threads = _threads(server)
    idle_bytes = (sum(rss_idle.values()) - sum(rss_before.values())) / count

    # The runs: every tenth on the shared order, the others on the own orders in turn.
    plan: list[int] = []
    own_turn = 0
    for n in range(args.events):
        if shared_count and (n % 10 == 5 or not own_pks):
            plan.append(shared_pk)
        else:
            plan.append(own_pks[own_turn % len(own_pks)])
            own_turn += 1
    plan_file = directory / "plan.json"
    plan_file.write_text(json.dumps({"pks": plan, "warmup": warmup_pks, "interval": args.interval}))
    load = os.getloadavg()
    driver = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.listen_driver",
        "drive",
        "--plan",
        str(plan_file),
        cwd=ROOT,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    timeout = 120 + args.events * args.interval * 3
    try:
        out, err = await asyncio.wait_for(driver.communicate(), timeout)
    finally:
        if driver.returncode is None:  # stopped or timed out: no runs left behind
            driver.kill()
            await driver.wait()
    if driver.returncode != 0:
        raise SystemExit(f"the driver failed:\n{err.decode()[-3000:]}")
    commits = [tuple(row) for row in json.loads(out)]

    by_pk: dict[int, list[Listener]] = {}
    for listener in listeners:
        by_pk.setdefault(listener.pk, []).append(listener)
    expected = sum(len(by_pk.get(pk, [])) for pk, _, _ in commits)
    deadline = time.monotonic() + args.grace
    while time.monotonic() < deadline:
        received = sum(
            1 for pk, version, _ in commits for lis in by_pk.get(pk, []) if version in lis.heard
        )
        if received >= expected:
            break
        await asyncio.sleep(0.1)
    await _close_all(listeners)

    latencies: list[float] = []
    shared_latencies: list[float] = []
    lost = 0
    for pk, version, committed in commits:
        for listener in by_pk.get(pk, []):
            read_at = listener.heard.get(version)
            if read_at is None:
                lost += 1
                continue
            delay = (read_at - committed) * 1000
            latencies.append(delay)
            if pk == shared_pk:
                shared_latencies.append(delay)
    failures = [f"{lis.uri}: {lis.failure}" for lis in listeners if lis.failure]
    failures += [f"{lis.uri}: ended early" for lis in listeners if lis.ended]
    return Result(
        listeners=count,
        shared=shared_count,
        events=len(commits),
        expected=expected,
        received=len(latencies),
        lost=lost,
        duplicates=sum(lis.duplicates for lis in listeners),
        failures=failures,
        latencies_ms=latencies,
        shared_latencies_ms=shared_latencies,
        idle_bytes=idle_bytes,
        rss_before=rss_before,
        rss_idle=rss_idle,
        threads=threads,
        opened_s=opened_s,
        load=load,
    )


# --- the run ----------------------------------------------------------------------------


def _raise_open_files(count: int) -> None:
    """This process holds a socket per listener, the server one per stream: both inherit
    the limit set here."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 2 * count + 1024
    if soft == resource.RLIM_INFINITY or soft >= wanted:
        return
    if hard != resource.RLIM_INFINITY and hard < wanted:
        raise SystemExit(f"{count} listeners need {wanted} open files; the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def _database(args: argparse.Namespace, directory: Path) -> str:
    return args.database_url or f"sqlite:///{directory / 'bench.sqlite3'}"


def _environment(args: argparse.Namespace, database_url: str, channel: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PYTHONPATH", "VIRTUAL_ENV")
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DATABASE_URL=database_url,
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(40),
        # Plain HTTP on 127.0.0.1: DEBUG off would otherwise send every request to https.
        SECURE_SSL_REDIRECT="0",
        SESSION_COOKIE_SECURE="0",
        CSRF_COOKIE_SECURE="0",
        EVENTS_URL=args.redis_url,
        # Several workers, as docs/howto/deploy.md says: permissions kept in a shared cache
        # (CachedModelBackend), read for a whole batch of listeners in one round trip.
        CACHE_URL=args.redis_url,
        EVENTS_CHANNEL=channel,
        ORDERS_ENABLE_HOLD="1",
        LOG_LEVEL="WARNING",
        PYTHONUNBUFFERED="1",
    )
    return env


def _reset_database(env: dict[str, str]) -> None:
    """A database at ``--database-url``: emptied, so that the seed makes it afresh."""
    code = (
        "import django; django.setup(); from django.core.management import call_command; "
        "call_command('flush', interactive=False, verbosity=0)"
    )
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=False)


def _seed(env: dict[str, str], orders: int) -> dict[str, Any]:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.listen_driver",
            "seed",
            "--orders",
            str(orders),
            "--users",
            str(USERS),
            "--password",
            secrets.token_urlsafe(16),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"seeding failed:\n{done.stderr[-3000:]}")
    seeded: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return seeded


def _copy_sqlite(source: str, target: Path) -> str:
    path = Path(source.removeprefix("sqlite:///"))
    shutil.copyfile(path, target)
    return f"sqlite:///{target}"


def _stop(signum: int, frame: Any) -> None:
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.listen", description=__doc__)
    parser.add_argument("--listeners", default="100,1000", help="N, comma-separated")
    parser.add_argument("--shared", type=float, default=0.1, help="share on one order")
    parser.add_argument("--events", type=int, default=200, help="runs per N")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between runs")
    parser.add_argument("--grace", type=float, default=5.0, help="seconds to wait at the end")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds before measuring")
    parser.add_argument("--open-timeout", type=float, default=300.0)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument(
        "--database-url",
        default="",
        help="a database to use instead of a temporary SQLite file (emptied first!)",
    )
    args = parser.parse_args(argv)
    # Stopped from outside (a timeout, a CI runner): unwind, so the server is stopped too.
    signal.signal(signal.SIGTERM, _stop)
    counts = [int(n.replace("_", "")) for n in args.listeners.split(",") if n.strip()]
    if not counts or min(counts) < 1:
        parser.error("--listeners: positive counts")
    _raise_open_files(max(counts))

    directory = Path(tempfile.mkdtemp(prefix="bench-listen-"))
    channel = f"bench-listen-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        seed_url = _database(args, directory)
        env = _environment(args, seed_url, channel)
        if args.database_url:
            _reset_database(env)
        started = time.monotonic()
        seeded = _seed(env, max(counts) + 3)
        print(
            f"seeded {len(seeded['orders'])} orders and {len(seeded['tokens'])} listening "
            f"users in {time.monotonic() - started:.0f} s",
            file=out,
            flush=True,
        )
        results = []
        for count in counts:
            database_url = seed_url
            if not args.database_url:
                # A fresh copy of the seeded file for each N: the versions start again.
                database_url = _copy_sqlite(seed_url, directory / f"bench-{count}.sqlite3")
            run_env = {**env, "DATABASE_URL": database_url}
            with _server(run_env, directory / "uvicorn.log") as (port, server):
                result = asyncio.run(
                    _measure(args, count, port, server, seeded, run_env, directory)
                )
            results.append(result)
            _print_one(result, out)
        _print_table(args, results, database=seed_url.split(":", 1)[0], out=out)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return 0


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value == value else "—"


def _print_one(result: Result, out: TextIO) -> None:
    before = sum(result.rss_before.values()) / 2**20
    idle = sum(result.rss_idle.values()) / 2**20
    per_process = ", ".join(
        f"{(result.rss_idle.get(pid, 0) - size) / 2**20:+.1f}"
        for pid, size in sorted(result.rss_before.items())
    )
    print(
        f"\n{result.listeners:,} listeners ({result.shared} on the shared order): opened and "
        f"acknowledged in {result.opened_s:.1f} s; server RSS {before:.1f} MiB idle without "
        f"listeners, {idle:.1f} MiB with them (MiB per process: {per_process}; threads per "
        f"worker: {', '.join(map(str, result.threads))}); "
        f"{result.events} runs, {result.expected} notifications expected, "
        f"{result.received} read, {result.lost} lost, {result.duplicates} duplicated; "
        f"load average before the runs {result.load[0]:.2f}",
        file=out,
        flush=True,
    )
    if result.shared_latencies_ms:
        print(
            f"  runs on the shared order ({result.shared} listeners each): p50 "
            f"{_ms(result.percentile(result.shared_latencies_ms, 0.5))}, p99 "
            f"{_ms(result.percentile(result.shared_latencies_ms, 0.99))}",
            file=out,
        )
    for failure in result.failures[:5]:
        print(f"  {failure}", file=out)


def _print_table(
    args: argparse.Namespace, results: list[Result], *, database: str, out: TextIO
) -> None:
    print(
        f"\nmake bench-listen: uvicorn, {WORKERS} workers, Redis broker, {database}; "
        f"{args.events} runs per N, one every {args.interval * 1000:.0f} ms; "
        "latency from the commit to the client's read",
        file=out,
    )
    print(
        f"{'listeners':>9} {'p50':>8} {'p99':>8} {'max':>8}  {'p99 goal':<22}"
        f"{'kB/idle':>8}  {'goal':<14}{'lost':>6}  goal",
        file=out,
    )
    for result in results:
        p50 = result.percentile(result.latencies_ms, 0.5)
        p99 = result.percentile(result.latencies_ms, 0.99)
        top = max(result.latencies_ms, default=float("nan"))
        kb = result.idle_bytes / 1000
        if result.listeners == GOAL_AT:
            p99_goal = "ok" if p99 <= GOAL_P99_MS else f"MISSED (≤ {GOAL_P99_MS:.0f} ms)"
        else:
            p99_goal = f"(≤ {GOAL_P99_MS:.0f} ms at {GOAL_AT:,})"
        kb_goal = "ok" if kb <= GOAL_IDLE_KB else f"MISSED (≤ {GOAL_IDLE_KB:.0f})"
        lost = result.lost
        lost_goal = "ok" if lost == 0 else "MISSED (0)"
        print(
            f"{result.listeners:>9,} {_ms(p50):>8} {_ms(p99):>8} {_ms(top):>8}  {p99_goal:<22}"
            f"{kb:>8.1f}  {kb_goal:<14}{lost:>6}  {lost_goal}",
            file=out,
        )


if __name__ == "__main__":
    sys.exit(main())
