"""The Django side of ``make bench-listen`` (:mod:`bench.listen`), in a process of its own.

``seed``: migrate a fresh database, add the demo's users, the listeners' users (in the
``support`` group: they see every order) with an access token each, and orders in
``confirmed`` — the state from which ``hold_order`` (a transition that keeps the state and
bumps the version) can run again and again. Prints what it made as JSON.

``drive``: run ``hold_order`` on the planned orders, paced, through ``perform()`` as the
``supervisor`` — another user, in another process than the server's, as an operator's
script would — and write when each run committed: the first ``on_commit`` callback of the
run's transaction, registered before ``perform()`` registers the one that publishes, so
the time is taken right after the commit and before the event leaves.

Both read the environment the server reads (``DATABASE_URL``, ``EVENTS_URL``,
``EVENTS_CHANNEL``, ``ORDERS_ENABLE_HOLD``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from decimal import Decimal
from typing import Any

LISTENER_GROUP = "support"
DRIVER = "supervisor"
OPERATION = "hold_order"


def _setup() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()


def seed(orders: int, users: int, password: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import Group
    from django.core.management import call_command
    from django.db import connection
    from rest_framework_simplejwt.tokens import AccessToken

    from orders.models import Order, OrderStatus, PaymentStatus
    from orders.services import seed_demo

    if connection.vendor == "sqlite":
        # Several server processes and the driver write and read at once: readers must
        # not wait for a writer (the mode is kept in the file).
        with connection.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode=WAL")
    call_command("migrate", verbosity=0, interactive=False)
    seed_demo(password=password)
    user_model = get_user_model()
    group = Group.objects.get(name=LISTENER_GROUP)
    hashed = make_password(None)  # no password: they hold tokens
    user_model.objects.bulk_create(
        [
            user_model(username=f"bench-listener-{n:04d}", password=hashed, is_staff=True)
            for n in range(users)
        ]
    )
    listeners = list(user_model.objects.filter(username__startswith="bench-listener-"))
    group.user_set.add(*listeners)
    customer = user_model.objects.get(username="alice")
    created = Order.objects.bulk_create(
        [
            Order(
                customer=customer,
                description=f"bench {n}",
                total=Decimal("100.00"),
                payment_status=PaymentStatus.AUTHORIZED,
                status=OrderStatus.CONFIRMED,
            )
            for n in range(orders)
        ]
    )
    pks = [order.pk for order in created]
    if not all(isinstance(pk, int) for pk in pks):  # backends that return no keys
        pks = list(
            Order.objects.filter(description__startswith="bench ").values_list("pk", flat=True)
        )
    return {
        "orders": sorted(pks),
        "tokens": [str(AccessToken.for_user(user)) for user in listeners],
    }


def drive(pks: list[int], warmup: list[int], interval: float) -> list[tuple[int, int, float]]:
    """Run the transition on ``pks`` in order, one every ``interval`` seconds (after
    unmeasured runs on ``warmup``); returns ``(pk, version, committed at)`` per run."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from affordances.catalog import get_catalog
    from affordances.execution import perform

    operation = get_catalog().lookup(OPERATION)
    if operation is None:
        raise SystemExit(f"no operation {OPERATION} (ORDERS_ENABLE_HOLD=1 switches it on)")
    user = get_user_model().objects.get(username=DRIVER)
    commits: list[tuple[int, int, float]] = []

    def run(pk: int) -> tuple[int, float]:
        stamp: list[float] = []
        with transaction.atomic():
            transaction.on_commit(lambda: stamp.append(time.time()))
            outcome = perform(
                operation=operation,
                pk=pk,
                user=user,
                arguments={"note": "make bench-listen"},
                via="api",
                represent=lambda instance: {"version": instance.version},
            )
        return int(outcome.body["version"]), stamp[0]

    for pk in warmup:  # the catalog, the connection, the broker's: not in the figures
        run(pk)
    start = time.monotonic()
    for n, pk in enumerate(pks):
        delay = start + n * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        version, committed = run(pk)
        commits.append((pk, version, committed))
    return commits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.listen_driver", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    seeding = commands.add_parser("seed")
    seeding.add_argument("--orders", type=int, required=True)
    seeding.add_argument("--users", type=int, required=True)
    seeding.add_argument("--password", required=True)
    driving = commands.add_parser("drive")
    driving.add_argument("--plan", required=True, help="JSON: pks, warmup, interval")
    args = parser.parse_args(argv)
    _setup()
    if args.command == "seed":
        json.dump(seed(args.orders, args.users, args.password), sys.stdout)
    else:
        with open(args.plan) as plan_file:
            plan = json.load(plan_file)
        json.dump(drive(plan["pks"], plan["warmup"], plan["interval"]), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
