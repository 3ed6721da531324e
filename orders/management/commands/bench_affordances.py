"""``make bench``: what affordances cost, measured in one run on a throwaway database.

Prints, for N orders on one page, the time of the list with affordances against the
plain list (``?affordances=none``) and their query counts; then the per-request cost
of a transition through the execution path against a plain DRF update of the same
row. Timings are medians of several rounds; only the ratios mean much.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser
from django.db import connection
from django.test.utils import override_settings, setup_test_environment
from rest_framework import generics, serializers
from rest_framework.test import APIClient, APIRequestFactory, force_authenticate

from orders.models import Order, OrderStatus
from orders.services import seed_demo
from orders.views import OrderViewSet


class _PlainOrderUpdate(serializers.ModelSerializer):
    class Meta:
        model = Order
        fields = ["id", "tracking_number", "description"]


class _PlainUpdateView(generics.UpdateAPIView):
    queryset = Order.objects.all()
    serializer_class = _PlainOrderUpdate


def _median_ms(run: Callable[[], Any], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _count_queries(run: Callable[[], Any]) -> int:
    # An execute wrapper, not CaptureQueriesContext: request_started resets the
    # query log in the middle of a request made by the test client.
    executed = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        run()
    return len(executed)


class Command(BaseCommand):
    help = "Benchmark the order list with and without affordances, and transitions vs updates."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sizes", default="10,100,1000")
        parser.add_argument("--rounds", type=int, default=7)
        parser.add_argument("--transitions", type=int, default=100)
        parser.add_argument("--user", default="support", help="Demo user making the requests.")

    def handle(self, *args: Any, **options: Any) -> None:
        setup_test_environment()
        old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            self._bench(options)
        finally:
            connection.creation.destroy_test_db(old_name, verbosity=0)

    def _bench(self, options: dict[str, Any]) -> None:
        seed_demo(password="bench-password", reset=True)
        user_model = get_user_model()
        customer = user_model.objects.get(username="alice")
        sizes = [int(size) for size in options["sizes"].split(",")]
        rounds = options["rounds"]
        # One page holds the whole list.
        affordances = {**settings.AFFORDANCES}
        affordances["MODELS"] = {
            label: {**options_, "MAX_PAGE_SIZE": max(sizes)}
            for label, options_ in settings.AFFORDANCES["MODELS"].items()
        }
        override = override_settings(AFFORDANCES=affordances)
        override.enable()

        self.stdout.write(
            f"Order list as {options['user']} ({connection.vendor}), median of {rounds} rounds"
        )
        self.stdout.write(
            f"{'N':>6} {'plain ms':>10} {'afford ms':>10} {'ratio':>7} "
            f"{'plain q':>8} {'afford q':>9}"
        )
        for size in sizes:
            Order.objects.all().delete()
            Order.objects.bulk_create(
                Order(
                    customer=customer,
                    total=Decimal("100.00") + index,
                    payment_status="authorized" if index % 3 else "failed",
                    status=[OrderStatus.PENDING, OrderStatus.CONFIRMED, OrderStatus.SHIPPED][
                        index % 3
                    ],
                )
                for index in range(size)
            )
            results = {}
            for label, query in (("plain", "&affordances=none"), ("afford", "")):
                url = f"/api/orders/?page_size={size}{query}"

                def fetch(url: str = url, size: int = size) -> None:
                    client = APIClient()
                    client.force_authenticate(user_model.objects.get(username=options["user"]))
                    response = client.get(url)
                    assert response.status_code == 200, response.content[:200]
                    assert len(response.json()["results"]) == size

                fetch()  # warm caches (catalog, URL resolvers)
                results[label] = (_median_ms(fetch, rounds), _count_queries(fetch))
            (plain_ms, plain_q), (afford_ms, afford_q) = results["plain"], results["afford"]
            self.stdout.write(
                f"{size:>6} {plain_ms:>10.1f} {afford_ms:>10.1f} {afford_ms / plain_ms:>6.2f}x "
                f"{plain_q:>8} {afford_q:>9}"
            )
        self._bench_transitions(options["transitions"], options["user"])

    def _bench_transitions(self, count: int, username: str) -> None:
        user_model = get_user_model()
        warehouse = user_model.objects.get(username="warehouse")
        customer = user_model.objects.get(username="alice")
        Order.objects.all().delete()
        orders = Order.objects.bulk_create(
            Order(customer=customer, total=Decimal("50.00"), status=OrderStatus.CONFIRMED)
            for _ in range(count)
        )
        factory = APIRequestFactory()
        ship = OrderViewSet.as_view({"post": "transition_ship"})
        plain = _PlainUpdateView.as_view()

        def timed(view: Any, method: str, order: Order, body: dict[str, Any]) -> float:
            request = getattr(factory, method)(f"/bench/{order.pk}/", body, format="json")
            force_authenticate(request, user=warehouse)
            started = time.perf_counter()
            response = view(request, pk=order.pk)
            response.render()
            elapsed = (time.perf_counter() - started) * 1000
            assert response.status_code == 200, response.content[:200]
            return elapsed

        transition_ms = statistics.median(
            timed(ship, "post", order, {"trackingNumber": f"TRK{order.pk:08d}"}) for order in orders
        )
        update_ms = statistics.median(
            timed(plain, "patch", order, {"description": "updated"}) for order in orders
        )
        self.stdout.write("")
        self.stdout.write(f"Per request, median of {count} ({connection.vendor})")
        self.stdout.write(f"  transition via execution path: {transition_ms:.2f} ms")
        self.stdout.write(f"  plain DRF update of the row:   {update_ms:.2f} ms")
        self.stdout.write(f"  ratio:                         {transition_ms / update_ms:.2f}x")
