"""``make bench``: what each face costs next to the plain one, measured in one run.

On a throwaway database (SQLite, or whatever ``DATABASE_URL`` names), in-process through
the whole request stack (middleware, authentication, negotiation, rendering — no
``runserver``, whose delayed ACKs distort small responses), it prints:

- lists of N orders on one page, on every face and representation: time against the
  plain JSON list (``?affordances=none``), queries (which must not grow with N), and
  bytes per order, raw and gzipped;
- the documents a caller fetches once (catalog, OpenAPI, ``tools/list``), warm, against
  what the same request costs when nothing is sent back (a 304, an MCP ``ping``);
- a transition through the execution path against a plain DRF update of the same row,
  and MCP ``tools/call`` of it against the REST action;
- under an object-permission backend (django-rules, registered for the run), a page of
  orders whose transitions the rules grant per order, against a plain DRF list of the same
  orders whose serializer asks ``user.has_perm(perm, order)`` of each row for each
  operation, with the rule evaluations each makes.

Each pair is timed alternately, round after round (``--rounds`` at least, and until the
baseline has run a second), so both see the same machine; only the ratios mean much, and
each is printed beside its goal. A missed goal is followed by where the time goes: the pair
run again under cProfile, by package and function (:mod:`bench.hotspots`).
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connection
from django.http import HttpResponse
from django.test import Client
from django.test.utils import override_settings, setup_test_environment
from django.urls import path
from rest_framework import generics, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework_simplejwt.tokens import AccessToken

from affordances.catalog import get_catalog
from affordances.rest import ResourceUrlField
from bench.hotspots import profile_pair
from bench.object_permissions import RULE_CALLS, rules_backend
from orders.models import Order, OrderStatus
from orders.selectors import order_visible_queryset
from orders.services import seed_demo

LEGACY_MCP = "2025-11-25"
HAL_FORMS = "application/prs.hal-forms+json"


class _PlainOrderUpdate(serializers.ModelSerializer):
    class Meta:
        model = Order
        fields = ["id", "tracking_number", "description"]


class _PlainUpdateView(generics.UpdateAPIView):
    """The baseline of a transition: DRF's own update of the same row, nothing else."""

    queryset = Order.objects.all()
    serializer_class = _PlainOrderUpdate


# The permissions a hand-written serializer asks of each row, per operation name (filled
# from the catalog when the object-permissions table runs: the demo's transitions).
_ROW_PERMISSIONS: list[tuple[str, str]] = []


class _PlainOrderWithPermissions(serializers.ModelSerializer):
    """The demo's order representation as a hand-written DRF serializer would write it
    (the same fields; the same URL field, so that a row's link costs alike), with the
    operations the caller holds on the row: ``user.has_perm(perm, order)`` for each,
    row after row, as DRF's ``DjangoObjectPermissions`` or a template asks — no batching."""

    url = ResourceUrlField()
    customer = serializers.CharField(source="customer.username", read_only=True)
    paymentStatus = serializers.CharField(source="payment_status", read_only=True)
    trackingNumber = serializers.CharField(
        source="tracking_number", read_only=True, allow_null=True
    )
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)
    deliveredAt = serializers.DateTimeField(source="delivered_at", read_only=True, allow_null=True)
    permitted = serializers.SerializerMethodField()

    class Meta:
        model = Order
        fields = [
            "id",
            "url",
            "customer",
            "description",
            "status",
            "paymentStatus",
            "total",
            "currency",
            "trackingNumber",
            "createdAt",
            "updatedAt",
            "deliveredAt",
            "version",
            "permitted",
        ]
        read_only_fields = fields

    def get_permitted(self, order: Order) -> list[str]:
        user = self.context["request"].user
        return [name for name, perm in _ROW_PERMISSIONS if user.has_perm(perm, order)]


class _PlainPages(PageNumberPagination):
    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 1000


class _PlainOrderList(generics.ListAPIView):
    """The baseline of a list under object permissions: DRF's own list of the orders the
    caller may see (the registration's queryset), paginated alike."""

    serializer_class = _PlainOrderWithPermissions
    pagination_class = _PlainPages

    def get_queryset(self) -> Any:
        return order_visible_queryset(self.request.user).order_by("pk")


# Mounted beside the project's URLs for the run only.
urlpatterns = [
    path("bench/plain/<int:pk>/", _PlainUpdateView.as_view()),
    path("bench/plain/orders/", _PlainOrderList.as_view()),
]


@dataclass(frozen=True)
class Goal:
    at_most: float

    def met(self, ratio: float) -> bool:
        return ratio <= self.at_most

    def verdict(self, ratio: float) -> str:
        return "ok" if self.met(ratio) else f"MISSED (goal ≤ {self.at_most:.2f}x)"


def _timed(run: Callable[[], Any]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


# A document fetched once, against the request answering nothing.
DOCUMENT_GOAL = Goal(1.2)
# A list under an object-permission backend, against a plain DRF list asking each row
# about each operation.
OBJECT_PERMISSIONS_GOAL = Goal(1.3)

# Each pair runs until its baseline has run this long (and ``--rounds`` rounds at least):
# 21 rounds of a 10 ms request are 0.2 s of it, and a ratio that moved by ±0.05 from one
# run to the next.
MIN_SECONDS = 1.0


def _pair(
    first: Callable[[], Any], second: Callable[[], Any], rounds: int, seconds: float
) -> tuple[float, float, float]:
    """Medians of ``first`` and ``second`` and the median of their per-round ratios
    (second / first), alternated so that both see the same machine: ``rounds`` rounds
    at least, and until ``first`` has run ``seconds``."""
    first(), second()  # warm: URL resolvers, the catalog, per-caller documents
    a: list[float] = []
    b: list[float] = []
    while len(a) < rounds or sum(a) < seconds * 1000:
        a.append(_timed(first))
        b.append(_timed(second))
    ratio = statistics.median(y / x for x, y in zip(a, b, strict=True))
    return statistics.median(a), statistics.median(b), ratio


# Requests of each side profiled after a missed goal: enough for the shares to settle.
PROFILED_REQUESTS = 30


def _hotspots(
    baseline: Callable[[], Any], face: Callable[[], Any], requests: int = PROFILED_REQUESTS
) -> list[str]:
    """Where ``face`` spends its time beyond ``baseline``, alternated as measured."""
    return profile_pair(baseline, face, requests)


def _count_queries(run: Callable[[], Any]) -> int:
    # An execute wrapper, not CaptureQueriesContext: request_started resets the
    # query log in the middle of a request made by the test client.
    executed: list[str] = []

    def count(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        executed.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        run()
    return len(executed)


def _ok(response: HttpResponse, status: int = 200) -> HttpResponse:
    if response.status_code != status:
        raise CommandError(f"{response.status_code}: {response.content[:300]!r}")
    return response


class _Caller:
    """One demo user on every face: a session for the admin, a bearer token elsewhere."""

    def __init__(self, username: str) -> None:
        self.user = get_user_model().objects.get(username=username)
        self.client = Client()
        self.client.force_login(self.user)
        self.bearer = {"Authorization": f"Bearer {AccessToken.for_user(self.user)}"}

    def get(self, url: str, **headers: str) -> HttpResponse:
        return self.client.get(url, headers={**self.bearer, **headers})

    def post(self, url: str, body: Any, **headers: str) -> HttpResponse:
        return self.client.post(
            url,
            json.dumps(body),
            content_type="application/json",
            headers={**self.bearer, **headers},
        )

    def admin_get(self, url: str) -> HttpResponse:
        return self.client.get(url)  # the session cookie

    def mcp(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        endpoint: str = "/mcp",
        check: bool = False,
    ) -> HttpResponse:
        """One JSON-RPC request; ``check`` reads the answer (outside the timed calls: a
        client's parsing is not the server's cost)."""
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        headers = {"Accept": "application/json", "MCP-Protocol-Version": LEGACY_MCP}
        response = _ok(self.post(endpoint, body, **headers))
        if check:
            envelope = json.loads(response.content)
            result = envelope.get("result")
            if result is None or result.get("isError"):
                raise CommandError(f"{method}: {envelope}")
        return response


class Command(BaseCommand):
    help = "What each face costs next to the plain one: lists, documents, transitions."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--sizes", default="100,1000", help="Orders on the page, e.g. 10,100")
        parser.add_argument("--rounds", type=int, default=21)
        parser.add_argument(
            "--min-seconds",
            type=float,
            default=MIN_SECONDS,
            help="Each pair runs until its baseline has run this long.",
        )
        parser.add_argument("--transitions", type=int, default=200)
        parser.add_argument(
            "--object-rows",
            type=int,
            default=200,
            help="Orders on the page of the object-permissions table.",
        )
        parser.add_argument("--user", default="admin", help="Demo user making the requests.")
        parser.add_argument(
            "--sections",
            default="lists,object-permissions,documents,transitions",
            help="Which tables to print (comma-separated).",
        )
        parser.add_argument(
            "--profile",
            action="store_true",
            help="Say where the time goes for every goal, met or not (missed ones always).",
        )
        parser.add_argument(
            "--profile-requests",
            type=int,
            default=PROFILED_REQUESTS,
            help="Requests of each side profiled (fewer: a quicker, rougher picture).",
        )
        parser.add_argument(
            "--if-reachable",
            action="store_true",
            help="Skip, with a note, when the database does not answer (make bench's 2nd run).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["if_reachable"] and not self._reachable():
            host = connection.settings_dict.get("HOST")
            self.stdout.write(f"{connection.vendor} at {host}: not reachable, skipped.")
            return
        try:
            self._throwaway(options)
        except KeyboardInterrupt:
            # Ctrl-C: each row was printed as it was measured, so what ran is above; the
            # throwaway database is dropped on the way out (_throwaway's finally).
            self.stdout.write("")
            self.stderr.write(
                "Interrupted: the rows above are what was measured.", self.style.WARNING
            )
            raise SystemExit(130) from None

    def _throwaway(self, options: dict[str, Any]) -> None:
        """The bench on a database of its own, made (migrated) first and dropped after."""
        setup_test_environment()
        self._progress(f"Creating a throwaway {connection.vendor} database (migrations)…")
        old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
        try:
            self._bench(options)
        finally:
            self._progress("Dropping the throwaway database.")
            connection.creation.destroy_test_db(old_name, verbosity=0)

    def _progress(self, what: str) -> None:
        """What the bench is doing, on stderr: the tables on stdout stay as they were."""
        self.stderr.write(what, style_func=str)

    def _reachable(self) -> bool:
        try:
            connection.ensure_connection()
        except Exception:
            return False
        connection.close()
        return True

    def _bench(self, options: dict[str, Any]) -> None:
        self._progress("Seeding the demo data…")
        seed_demo(password="bench-password", reset=True)
        sizes = [int(size) for size in options["sizes"].split(",")]
        rounds = options["rounds"]
        self.min_seconds: float = options["min_seconds"]
        self.profile_all: bool = options["profile"]
        self.profile_requests: int = max(1, options["profile_requests"])
        caller = _Caller(options["user"])
        self.stdout.write(
            f"django-affordances bench — {connection.vendor}, as {options['user']}, medians of "
            f"at least {rounds} alternated rounds and {options['min_seconds']:g} s of the "
            "baseline, in-process"
        )
        object_rows = options["object_rows"]
        with self._settings(max(*sizes, object_rows)):
            sections = set(options["sections"].split(","))
            if "lists" in sections:
                self._lists(caller, sizes, rounds)
            if "object-permissions" in sections:
                self._object_permissions(object_rows, rounds)
            if "documents" in sections:
                self._documents(caller, rounds)
            if "transitions" in sections:
                self._transitions(caller, options["transitions"])

    @contextmanager
    def _settings(self, page_size: int) -> Iterator[None]:
        affordances = {**settings.AFFORDANCES}
        affordances["MODELS"] = {
            label: {**options_, "MAX_PAGE_SIZE": page_size}
            for label, options_ in settings.AFFORDANCES["MODELS"].items()
        }
        model_admin = admin.site._registry[Order]
        per_page = model_admin.list_per_page
        model_admin.list_per_page = page_size  # one page holds the whole list
        root = _bench_urlconf(settings.ROOT_URLCONF)
        # Throttles count requests, and a benchmark makes many.
        rest = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_CLASSES": []}
        try:
            # DEBUG as in production: with it on, every query's SQL is kept, and Django's
            # signal checks cache the test client's receivers — each holding what its
            # request rendered (a 1,000-row change list) — and tools/list measured 2 to 3x
            # a ping after the lists, 1.05x without them.
            with override_settings(
                DEBUG=False, AFFORDANCES=affordances, ROOT_URLCONF=root, REST_FRAMEWORK=rest
            ):
                yield
        finally:
            model_admin.list_per_page = per_page

    # Lists ------------------------------------------------------------------------

    def _lists(self, caller: _Caller, sizes: list[int], rounds: int) -> None:
        faces: dict[str, Callable[[int], HttpResponse]] = {
            "REST JSON, plain": lambda n: caller.get(
                f"/api/orders/?page_size={n}&affordances=none"
            ),
            "REST JSON, affordances": lambda n: caller.get(f"/api/orders/?page_size={n}"),
            "REST JSON, compact": lambda n: caller.get(
                f"/api/orders/?page_size={n}&affordances=compact"
            ),
            "HAL-FORMS": lambda n: caller.get(f"/api/orders/?page_size={n}", Accept=HAL_FORMS),
            "HAL": lambda n: caller.get(
                f"/api/orders/?page_size={n}", Accept="application/hal+json"
            ),
            "MCP list_orders (B)": lambda n: caller.mcp(
                "tools/call", {"name": "list_orders", "arguments": {"pageSize": n}}
            ),
            "MCP list_orders (A)": lambda n: caller.mcp(
                "tools/call",
                {"name": "list_orders", "arguments": {"pageSize": n}},
                endpoint="/mcp/static",
            ),
            "admin change list": lambda n: caller.admin_get("/admin/orders/order/"),
        }
        goals = {
            "REST JSON, affordances": Goal(1.15),
            "REST JSON, compact": Goal(1.15),
            "HAL-FORMS": Goal(1.2),
        }
        baseline = "REST JSON, plain"
        queries: dict[str, list[int]] = {name: [] for name in faces}
        self.stdout.write("")
        self.stdout.write("Lists: one page of N orders, against the plain JSON list")
        self.stdout.write(
            f"{'face':<24} {'N':>5} {'ms':>8} {'ratio':>7} {'queries':>8} "
            f"{'B/order':>8} {'gzip B/order':>13}  goal"
        )
        for size in sizes:
            self._progress(f"Lists of {size} orders: each face against the plain list…")
            _orders(size)
            plain = faces[baseline]
            for name, face in faces.items():
                body = _ok(face(size)).content
                if b'"isError":true' in body:
                    raise CommandError(f"{name}: {body[:300]!r}")
                _, face_ms, ratio = _pair(
                    partial(plain, size), partial(face, size), rounds, self.min_seconds
                )
                queries[name].append(_count_queries(partial(face, size)))
                goal = goals.get(name)
                self.stdout.write(
                    f"{name:<24} {size:>5} {face_ms:>8.2f} {ratio:>6.2f}x {queries[name][-1]:>8} "
                    f"{len(body) / size:>8.0f} {len(gzip.compress(body)) / size:>13.0f}  "
                    f"{goal.verdict(ratio) if goal else ''}"
                )
                if goal and self._profiled(goal, ratio):
                    self._write(
                        _hotspots(partial(plain, size), partial(face, size), self.profile_requests)
                    )
        grow = [name for name, counts in queries.items() if len(set(counts)) > 1]
        self.stdout.write(
            "Queries constant in N on every face."
            if not grow
            else f"Queries GROW with N on: {', '.join(grow)}."
        )

    # Object permissions -------------------------------------------------------------

    def _object_permissions(self, size: int, rounds: int) -> None:
        """A page of ``size`` orders for a caller whose transitions an object-permission
        backend (django-rules) grants per order, against a plain DRF list of the same
        orders whose serializer asks ``user.has_perm(perm, order)`` for each operation
        of each row."""
        self.stdout.write("")
        self.stdout.write(
            "Object permissions (django-rules): one page of N orders, against a plain DRF "
            "list asking has_perm(perm, order) per row and operation"
        )
        # django-rules is the dev extra's (an object-permission backend), not the demo's.
        if importlib.util.find_spec("rules") is None:
            self.stdout.write("django-rules is not installed: skipped.")
            return
        self._progress(f"{size} orders under django-rules, against plain DRF…")
        _rule_orders(size)
        user = _rules_user()
        caller = _Caller(user.username)
        with rules_backend():
            _ROW_PERMISSIONS[:] = [
                (operation.name, permission)
                for operation in get_catalog().transitions_for(Order)
                for permission in operation.permissions
                if isinstance(permission, str)
            ]
            baseline = "plain DRF, has_perm per row"

            def plain() -> HttpResponse:
                return caller.get(f"/bench/plain/orders/?page_size={size}")

            def face() -> HttpResponse:
                return caller.get(f"/api/orders/?page_size={size}")

            _agree(json.loads(_ok(plain()).content), json.loads(_ok(face()).content), size)
            plain_ms, face_ms, ratio = _pair(plain, face, rounds, self.min_seconds)
            goal = OBJECT_PERMISSIONS_GOAL
            self.stdout.write(
                f"{'list':<30} {'N':>5} {'ms':>8} {'ratio':>7} {'queries':>8} "
                f"{'rule calls':>11}  goal"
            )
            self.stdout.write(
                f"{baseline:<30} {size:>5} {plain_ms:>8.2f} {'':>7} "
                f"{_count_queries(plain):>8} {_rule_calls(plain):>11}"
            )
            self.stdout.write(
                f"{'REST JSON, affordances':<30} {size:>5} {face_ms:>8.2f} {ratio:>6.2f}x "
                f"{_count_queries(face):>8} {_rule_calls(face):>11}  {goal.verdict(ratio)}"
            )
            if self._profiled(goal, ratio):
                self._write(_hotspots(plain, face, self.profile_requests))

    # Documents --------------------------------------------------------------------

    def _documents(self, caller: _Caller, rounds: int) -> None:
        self.stdout.write("")
        self.stdout.write(
            "Documents a caller fetches once, warm, against the request answering nothing"
        )
        self.stdout.write(f"{'document':<24} {'ms':>8} {'vs':<14} {'ms':>8} {'ratio':>7}  goal")
        for name, url in (("catalog", "/api/operations/"), ("OpenAPI", "/api/schema/")):
            etag = _ok(caller.get(url))["ETag"]
            empty, full, ratio = _pair(
                lambda url=url, etag=etag: _ok(caller.get(url, **{"If-None-Match": etag}), 304),
                lambda url=url: _ok(caller.get(url)),
                rounds,
                self.min_seconds,
            )
            self._document_row(name, full, "304", empty, ratio)
            if self._profiled(DOCUMENT_GOAL, ratio):
                self._write(
                    _hotspots(
                        lambda url=url, etag=etag: caller.get(url, **{"If-None-Match": etag}),
                        lambda url=url: caller.get(url),
                        self.profile_requests,
                    )
                )
        caller.mcp("tools/list", check=True)
        ping, tools, ratio = _pair(
            lambda: caller.mcp("ping"), lambda: caller.mcp("tools/list"), rounds, self.min_seconds
        )
        self._document_row("MCP tools/list", tools, "ping", ping, ratio)
        if self._profiled(DOCUMENT_GOAL, ratio):
            self._write(
                _hotspots(
                    lambda: caller.mcp("ping"),
                    lambda: caller.mcp("tools/list"),
                    self.profile_requests,
                )
            )

    def _profiled(self, goal: Goal, ratio: float) -> bool:
        """Whether to say where the time goes: a missed goal, or ``--profile``."""
        return self.profile_all or not goal.met(ratio)

    def _write(self, lines: list[str]) -> None:
        for line in lines:
            self.stdout.write(line)

    def _document_row(
        self, name: str, full: float, against: str, empty: float, ratio: float
    ) -> None:
        self.stdout.write(
            f"{name:<24} {full:>8.2f} {against:<14} {empty:>8.2f} {ratio:>6.2f}x  "
            f"{DOCUMENT_GOAL.verdict(ratio)}"
        )

    # Transitions ------------------------------------------------------------------

    def _transitions(self, caller: _Caller, count: int) -> None:
        self._progress(f"{count} transitions of each kind, one fresh row each…")
        Order.objects.all().delete()
        update, ship_rest, ship_mcp, orders = _transition_calls(caller, count)
        # Alternated, one fresh row each: every transition really moves a confirmed order.
        samples: dict[str, list[float]] = {"update": [], "rest": [], "mcp": []}
        for index in range(count):
            samples["update"].append(_timed(update[index]))
            samples["rest"].append(_timed(ship_rest[index]))
            samples["mcp"].append(_timed(ship_mcp[index]))
        moved = Order.objects.filter(pk__in=[o.pk for o in orders], status=OrderStatus.SHIPPED)
        if moved.count() != 2 * count:
            raise CommandError(f"{moved.count()} of {2 * count} orders were shipped.")
        update_ms, rest_ms, mcp_ms = (
            statistics.median(samples[k]) for k in ("update", "rest", "mcp")
        )
        rest_ratio, mcp_ratio = (
            statistics.median(y / x for x, y in zip(samples[a], samples[b], strict=True))
            for a, b in (("update", "rest"), ("rest", "mcp"))
        )
        self.stdout.write("")
        self.stdout.write(f"A transition (ship), median of {count}, one fresh row each")
        self.stdout.write(f"{'request':<34} {'ms':>8} {'ratio':>7}  goal")
        self.stdout.write(f"{'plain DRF update of the row':<34} {update_ms:>8.2f}")
        goal = Goal(2.0) if connection.vendor == "postgresql" else None
        self.stdout.write(
            f"{'REST action (execution path)':<34} {rest_ms:>8.2f} {rest_ratio:>6.2f}x  "
            f"{goal.verdict(rest_ratio) if goal else '(goal ≤ 2.00x on PostgreSQL)'}"
        )
        if goal and self._profiled(goal, rest_ratio):
            self._write(self._transition_hotspots(caller, "update", "rest"))
        mcp_goal = Goal(1.1)
        self.stdout.write(
            f"{'MCP tools/call, vs the REST action':<34} {mcp_ms:>8.2f} {mcp_ratio:>6.2f}x  "
            f"{mcp_goal.verdict(mcp_ratio)}"
        )
        if self._profiled(mcp_goal, mcp_ratio):
            self._write(self._transition_hotspots(caller, "rest", "mcp"))

    def _transition_hotspots(self, caller: _Caller, baseline: str, face: str) -> list[str]:
        """:func:`_hotspots` of two transition requests, each on a fresh row."""
        requests = self.profile_requests
        update, rest, mcp, _ = _transition_calls(caller, 2 * requests)
        calls = {"update": iter(update), "rest": iter(rest), "mcp": iter(mcp)}
        return profile_pair(lambda: next(calls[baseline])(), lambda: next(calls[face])(), requests)


def _transition_calls(
    caller: _Caller, count: int
) -> tuple[list[Callable[[], Any]], list[Callable[[], Any]], list[Callable[[], Any]], list[Order]]:
    """``count`` requests of each kind: DRF's plain update and then the REST action of
    the same confirmed orders, MCP's tools/call of as many others (and all the orders)."""
    customer = get_user_model().objects.get(username="alice")
    orders = Order.objects.bulk_create(
        Order(customer=customer, total=Decimal("50.00"), status=OrderStatus.CONFIRMED)
        for _ in range(2 * count)
    )
    rest, mcp = orders[:count], orders[count:]
    update = [
        lambda order=order: _ok(
            caller.client.patch(
                f"/bench/plain/{order.pk}/",
                json.dumps({"description": "updated"}),
                content_type="application/json",
                headers=caller.bearer,
            )
        )
        for order in rest  # the rows the REST action ships next
    ]
    ship_rest = [
        lambda order=order: _ok(
            caller.post(f"/api/orders/{order.pk}/ship/", {"trackingNumber": f"TRK{order.pk:08d}"})
        )
        for order in rest
    ]
    ship_mcp = [
        lambda order=order: caller.mcp(
            "tools/call",
            {
                "name": "ship_order",
                "arguments": {"orderId": order.pk, "trackingNumber": f"TRK{order.pk:08d}"},
            },
        )
        for order in mcp
    ]
    return update, ship_rest, ship_mcp, orders


def _orders(size: int) -> None:
    customer = get_user_model().objects.get(username="alice")
    Order.objects.all().delete()
    Order.objects.bulk_create(
        Order(
            customer=customer,
            total=Decimal("100.00") + index,
            payment_status="authorized" if index % 3 else "failed",
            status=[OrderStatus.PENDING, OrderStatus.CONFIRMED, OrderStatus.SHIPPED][index % 3],
        )
        for index in range(size)
    )


def _rule_calls(run: Callable[[], Any]) -> int:
    """The rule evaluations ``run`` makes."""
    before = RULE_CALLS[0]
    run()
    return RULE_CALLS[0] - before


def _rules_user() -> Any:
    """A clerk who may view every order (a model-level permission, through Django's
    backend) and holds no transition model-wide: the rules decide per order."""
    from django.contrib.auth.models import Permission

    user, _ = get_user_model().objects.get_or_create(username="bench-rules")
    user.user_permissions.set(
        [Permission.objects.get(content_type__app_label="orders", codename="view_order")]
    )
    return user


def _rule_orders(size: int) -> None:
    """``size`` orders in every state, of totals on both sides of the rules' bound."""
    customer = get_user_model().objects.get(username="alice")
    states = [
        OrderStatus.PENDING,
        OrderStatus.CONFIRMED,
        OrderStatus.SHIPPED,
        OrderStatus.DELIVERED,
        OrderStatus.CANCELLED,
    ]
    Order.objects.all().delete()
    Order.objects.bulk_create(
        Order(
            customer=customer,
            total=Decimal("100.00") + 7 * index,
            payment_status="authorized" if index % 4 else "failed",
            status=states[index % len(states)],
        )
        for index in range(size)
    )


def _agree(plain: dict[str, Any], listed: dict[str, Any], size: int) -> None:
    """Both lists have the page's rows, and every operation the affordances offer on a
    row is one the plain list says the caller holds there (a bench of wrong answers
    would measure nothing)."""
    rows = plain["results"], listed["results"]
    if not len(rows[0]) == len(rows[1]) == size:
        raise CommandError(f"pages of {len(rows[0])} and {len(rows[1])} rows, not {size}")
    for held, row in zip(*rows, strict=True):
        offered = {entry["name"] for entry in row["affordances"]}
        if not offered <= set(held["permitted"]):
            raise CommandError(f"order {row['id']}: {offered} offered, {held['permitted']} held")


def _bench_urlconf(root: str) -> Any:
    """The project's URLs plus the plain update view (a module object Django accepts)."""
    import importlib
    import types

    module = types.ModuleType("orders.bench_urls")
    module.urlpatterns = [*urlpatterns, *importlib.import_module(root).urlpatterns]  # type: ignore[attr-defined]
    return module
