"""`make load`: gunicorn + PostgreSQL under a bounded mixed workload, then consistency checks.

1. Creates the database of ``DATABASE_URL`` if missing (default
   ``postgres://root@127.0.0.1:5432/affordances_load``), migrates, collects the static
   files, runs ``seed_demo --reset`` and adds a few hundred orders via
   ``orders.services``. The database is the load test's own: its orders are reset.
2. Starts gunicorn with the project's ``config/gunicorn.py`` and production settings
   (DEBUG off, a random SECRET_KEY, plain HTTP, confirmations off: no person is behind
   the load generator) and several workers, bound to 127.0.0.1 on a free port.
3. Runs locust headless (``load/locustfile.py``) for a fixed time and at most a fixed
   number of requests, and prints throughput and p50/p99 per endpoint, and the CPU time
   gunicorn and PostgreSQL spent per request (``load/cpu.py``: comparable across runs
   on a busy machine, where throughput is not).
4. Checks the database against what the load generator saw (``load/checks.py``).

Exits non-zero when a check fails or a request failed unexpectedly. gunicorn and locust
are stopped in every case, Ctrl-C included.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import signal
import socket
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from decimal import Decimal
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from load.checks import Audit, OrderNow, Race, Report, Success, check_consistency  # noqa: E402
from load.cpu import CpuMeter  # noqa: E402
from load.stats import print_table  # noqa: E402

BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://root@127.0.0.1:5432/affordances_load"
PASSWORD = "load-test-password"
ROLES = ("support", "warehouse", "supervisor", "auditor", "alice", "bob")
HOST = "127.0.0.1"  # loopback only: the server and the load never leave this machine


# Integer options: (name, environment variable, default, help).
OPTIONS = (
    ("duration", "LOAD_DURATION", 30, "seconds of load"),
    ("users", "LOAD_USERS", 12, "concurrent simulated users"),
    ("max-requests", "LOAD_MAX_REQUESTS", 50000, "stop after this many requests"),
    ("workers", "LOAD_WORKERS", 4, "gunicorn worker processes"),
    ("threads", "LOAD_THREADS", 2, "threads per gunicorn worker"),
    ("orders", "LOAD_EXTRA_ORDERS", 300, "orders added to the demo data"),
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="The load test of `make load`.")
    for name, variable, default, text in OPTIONS:
        parser.add_argument(
            f"--{name}",
            type=int,
            default=int(os.environ.get(variable) or default),
            help=f"{text} (default {default}, env {variable})",
        )
    parser.add_argument("--seed", type=int, default=1, help="random seed of the extra orders")
    parser.add_argument(
        "--out",
        type=Path,
        default=ROOT / "out" / "load",
        help="directory for the logs and locust's stats (default out/load)",
    )
    args = parser.parse_args(argv)
    for name, *_ in OPTIONS:
        minimum = 0 if name == "orders" else 1
        if getattr(args, name.replace("-", "_")) < minimum:
            parser.error(f"--{name} must be at least {minimum}")
    return args


# --- environment and database ---------------------------------------------------------


def server_environment(database_url: str) -> dict[str, str]:
    """Production settings on plain loopback HTTP (no TLS here, hence no redirect)."""
    alphabet = string.ascii_letters + string.digits
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "CONN_MAX_AGE": "60",
        "DEBUG": "0",
        "SECRET_KEY": "".join(secrets.choice(alphabet) for _ in range(50)),
        "ALLOWED_HOSTS": f"{HOST},localhost",
        "SECURE_SSL_REDIRECT": "0",
        "SESSION_COOKIE_SECURE": "0",
        "CSRF_COOKIE_SECURE": "0",
        "PYTHONUNBUFFERED": "1",
        # No person is behind the load generator to answer a confirmation
        # (docs/protocol.md#confirmations): the demo's cancel and refund run on the call,
        # as AFFORDANCES["CONFIRMATIONS"] = False says, instead of the generator
        # answering for a person (over MCP 2025-11-25 nobody could be asked anyway).
        "AFFORDANCES_CONFIRMATIONS": "0",
    }


def ensure_database(database_url: str) -> None:
    """Create a PostgreSQL database that does not exist yet (SQLite creates itself)."""
    import dj_database_url
    import psycopg
    from psycopg import sql

    config = dj_database_url.parse(database_url)
    if "postgresql" not in config["ENGINE"]:
        return
    params = {
        "dbname": "postgres",
        "host": config.get("HOST") or None,
        "port": config.get("PORT") or None,
        "user": config.get("USER") or None,
        "password": config.get("PASSWORD") or None,
    }
    with psycopg.connect(**{k: v for k, v in params.items() if v}, autocommit=True) as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [config["NAME"]]
        ).fetchone()
        if not exists:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(config["NAME"])))
            print(f"created database {config['NAME']}")


def database_name(database_url: str) -> str:
    import dj_database_url

    return str(dj_database_url.parse(database_url)["NAME"])


def manage(*args: str, env: dict[str, str]) -> None:
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )


def seed(extra: int, *, rng: random.Random) -> tuple[dict[int, str], list[dict[str, Any]]]:
    """Add ``extra`` pending orders; return every order's seeded state and the workload's view."""
    from django.contrib.auth import get_user_model

    from orders.models import Order
    from orders.services import order_create

    customers = list(get_user_model().objects.filter(username__in=["alice", "bob"]))
    for index in range(extra):
        order_create(
            customer=customers[index % len(customers)],
            # Some above 1000: cancelling those needs a supervisor (requires_supervisor).
            total=Decimal(rng.randrange(1000, 150000)) / 100,
            description=f"Load order {index + 1}",
        )
    rows = list(Order.objects.values_list("id", "status", "customer__username"))
    seeded = {pk: status for pk, status, _ in rows}
    view = [{"id": pk, "customer": customer} for pk, _, customer in rows]
    return seeded, view


# --- processes ------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def start(command: list[str], *, env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    # A session of its own: Ctrl-C reaches this script only, which then stops the group.
    with log.open("wb") as out:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(process: subprocess.Popen[bytes] | None, name: str) -> None:
    if process is None or process.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            process.wait(timeout=grace)
            print(f"stopped {name}")
            return
        except subprocess.TimeoutExpired:
            continue


def wait_until_serving(base: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"gunicorn exited with {process.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"{base}/api/", timeout=2):
                return
        except urllib.error.HTTPError:
            return  # 401: serving
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"gunicorn did not answer within 60 s; see {log}")


def post_json(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.load(response)


# --- report ---------------------------------------------------------------------------


def consistency(results: dict[str, Any], seeded: dict[int, str]) -> Report:
    from django.contrib.contenttypes.models import ContentType

    from affordances.models import AuditRecord
    from orders.models import Order

    orders = {
        pk: OrderNow(state=status, version=version)
        for pk, status, version in Order.objects.values_list("id", "status", "version")
    }
    records = AuditRecord.objects.filter(
        content_type=ContentType.objects.get_for_model(Order),
        object_id__in=[str(pk) for pk in orders],
    ).values_list("id", "object_id", "operation_name", "source_state", "target_state", "version")
    audits = [
        Audit(id=pk, order_id=int(obj), operation=op, source_state=src, target_state=dst, version=v)
        for pk, obj, op, src, dst, v in records
    ]
    successes = [
        Success(
            order_id=s["order"],
            operation=s["operation"],
            version=s["version"],
            state=s["state"],
            via=s["via"],
        )
        for s in results["successes"]
    ]
    races = [
        Race(order_id=r["order"], expected_version=r["expectedVersion"], winners=r["winners"])
        for r in results["races"]
    ]
    return check_consistency(
        seeded=seeded, orders=orders, audits=audits, successes=successes, races=races
    )


# --- main -----------------------------------------------------------------------------


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def prepare(args: argparse.Namespace, env: dict[str, str]) -> tuple[dict[int, str], list[Any]]:
    """Database, schema, static files and data; return the seeded states and the orders."""
    ensure_database(env["DATABASE_URL"])
    manage("migrate", "--noinput", env=env)
    manage("collectstatic", "--noinput", env=env)
    manage("seed_demo", "--reset", "--password", PASSWORD, env=env)
    os.environ.update({k: env[k] for k in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL")})
    import django

    django.setup()
    seeded, view = seed(args.orders, rng=random.Random(args.seed))
    print(f"seeded:  {len(seeded)} orders ({args.orders} added to the demo's)")
    return seeded, view


def gunicorn_command(args: argparse.Namespace, port: int) -> list[str]:
    return [
        # The project's configuration (trusted proxies: none), then this run's options.
        str(BIN / "gunicorn"), "-c", str(ROOT / "config" / "gunicorn.py"),
        "config.wsgi:application",
        "--bind", f"{HOST}:{port}",
        "--workers", str(args.workers),
        "--threads", str(args.threads),
        "--timeout", "30",
        # Longer than the load generator leaves a pooled connection idle: a request
        # must never meet a connection the server is closing.
        "--keep-alive", "75",
        "--graceful-timeout", "10",
    ]  # fmt: skip


def locust_command(args: argparse.Namespace, base: str, out: Path) -> list[str]:
    return [
        str(BIN / "locust"), "-f", str(ROOT / "load" / "locustfile.py"),
        "--headless", "--host", base,
        "--users", str(args.users), "--spawn-rate", str(args.users),
        "--run-time", f"{args.duration}s", "--stop-timeout", "10",
        "--json-file", str(out / "locust"),
        "--exit-code-on-error", "0",  # failures are judged below, with the checks
    ]  # fmt: skip


def access_token(base: str, username: str) -> str:
    return post_json(f"{base}/api/token/", {"username": username, "password": PASSWORD})["access"]


def verdict(results: dict[str, Any], report: Report, *, total: int, failed: int) -> bool:
    print(
        f"checked: {report.checked_orders} orders, {report.checked_records} audit records, "
        f"{report.checked_successes} successes seen ({report.unseen_records} records not "
        f"seen by the generator), {report.checked_races} races"
    )
    if failed:
        print(f"FAIL: {failed} requests failed unexpectedly")
    for failure, count in sorted(results["failures"].items())[:10]:
        print(f"FAIL: {count} times: {failure}")
    for error in results["errors"][:10]:
        print(f"FAIL: load generator error: {error}")
    for problem in report.problems:
        print(f"FAIL: {problem}")
    print("consistency: OK" if report.ok else "consistency: FAILED")
    return report.ok and total > 0 and not failed and not results["errors"]


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    # Ctrl-C (even where a shell started us with SIGINT ignored), kill and hang-up all
    # end in the `finally` below, which stops gunicorn and locust.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, _interrupt)
    signal.signal(signal.SIGHUP, _interrupt)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    env = server_environment(os.environ.get("DATABASE_URL") or DEFAULT_DATABASE_URL)
    gunicorn = locust = None
    try:
        print(f"database: {env['DATABASE_URL']}")
        seeded, view = prepare(args, env)

        port = free_port()
        base = f"http://{HOST}:{port}"
        command = gunicorn_command(args, port)
        print("server:  " + " ".join(command[1:]))
        gunicorn = start(command, env=env, log=out / "gunicorn.log")
        wait_until_serving(base, gunicorn, out / "gunicorn.log")

        results_path, stats_path = out / "results.json", out / "locust.json"
        for stale in (results_path, stats_path):
            stale.unlink(missing_ok=True)
        (out / "tokens.json").write_text(json.dumps({r: access_token(base, r) for r in ROLES}))
        (out / "orders.json").write_text(json.dumps(view))
        print(
            f"load:    {args.users} users, {args.duration} s or {args.max_requests} requests, "
            f"against {base}"
        )
        meter = CpuMeter(server_pid=gunicorn.pid, database=database_name(env["DATABASE_URL"]))
        meter.start()
        started = time.monotonic()
        locust = start(
            locust_command(args, base, out),
            env={
                **os.environ,
                "LOAD_TOKENS": str(out / "tokens.json"),
                "LOAD_ORDERS": str(out / "orders.json"),
                "LOAD_RESULTS": str(results_path),
                "LOAD_MAX_REQUESTS": str(args.max_requests),
            },
            log=out / "locust.log",
        )
        try:
            code = locust.wait(timeout=args.duration + 120)
        except subprocess.TimeoutExpired:
            print("FAIL: locust did not stop in time")
            return 1
        meter.stop()
        print(f"ran for {time.monotonic() - started:.1f} s (logs in {out})")
        if code != 0 or not results_path.exists() or not stats_path.exists():
            print(f"FAIL: locust exited with {code}; see {out / 'locust.log'}")
            return 1

        print()
        total, failed = print_table(json.loads(stats_path.read_text()))
        results = json.loads(results_path.read_text())
        print(meter.summary(total))
        print()
        print("outcomes: " + ", ".join(f"{k}={v}" for k, v in sorted(results["outcomes"].items())))

        stop(gunicorn, "gunicorn")  # every response is in: check a quiet database
        report = consistency(results, seeded)
        return 0 if verdict(results, report, total=total, failed=failed) else 1
    except KeyboardInterrupt:
        print("\ninterrupted")
        return 130
    finally:
        stop(locust, "locust")
        stop(gunicorn, "gunicorn")


if __name__ == "__main__":
    sys.exit(main())
