"""The demo's tests: fixtures for the demo data of docs/demo.md#demo-data and API clients per role.

These tests run with the demo's settings (``demo_tests.settings``), not the library's
(``tests.settings``): ``make test`` runs them as
``python -m pytest --ds demo_tests.settings demo_tests experiment/tests load/tests``.
``experiment/tests`` and ``load/tests`` take these fixtures from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings

if "orders" not in settings.INSTALLED_APPS:
    raise pytest.UsageError(
        "The demo's tests need the demo's settings: python -m pytest --ds demo_tests.settings "
        "demo_tests experiment/tests load/tests (make test runs them so)."
    )

from django.contrib.auth.models import AbstractUser
from django.test.testcases import QuietWSGIRequestHandler
from rest_framework.test import APIClient

from orders.models import Order
from orders.services import DEMO_ORDERS, seed_demo
from tests.xdist_scheduling import pytest_xdist_make_scheduler  # noqa: F401 (-n: the units)

# The live server (pytest-django's live_server) writes a response's status line, headers
# and body in separate small writes; with Nagle's algorithm on, each later write waits
# for the client's delayed ACK, 40 ms on Linux: most of the wall time of a test that
# makes many requests to it (the experiment's runs) was that wait. What is sent is the same.
QuietWSGIRequestHandler.disable_nagle_algorithm = True

# The longest modules first: pytest-xdist hands tests to its workers in collection order
# (tests/xdist_scheduling.py), so a long module collected last keeps one worker busy after
# the other has run out of work (with two workers, the suite is as long as its busier
# worker). Within each of pytest-django's classes (database, transactional, neither).
LONGEST_FIRST = (
    # Live servers in other processes (uvicorn workers, Redis; a browser): started first
    # among the transactional tests, so neither worker is left with one at the end.
    "demo_tests/test_live.py",
    "demo_tests/test_admin_live_notice.py",
    "demo_tests/test_admin_layout_browser.py",
    "demo_tests/test_bench_listen.py",
    "demo_tests/test_browsable_live_notice.py",
    "demo_tests/test_front_door_browser.py",
    "demo_tests/test_mcp_sdk_confirmations.py",
    "experiment/tests/test_experiment_controls.py",
    "demo_tests/test_fuzz_openapi.py",
    "experiment/tests/test_experiment_llm.py",
    "demo_tests/clients",
    "demo_tests/security/test_deploy_attacks.py",
    "demo_tests/test_interfaces.py",
    "demo_tests/security/test_admin_rules.py",
    "demo_tests/test_fuzz_mcp.py",
    "demo_tests/test_providers.py",
    "demo_tests/test_admin_browser.py",
    "demo_tests/test_mcp_oauth_flow.py",
    # A subprocess per test: with no database, collected among the last otherwise.
    "demo_tests/test_settings.py",
    "demo_tests/test_production.py",
    "demo_tests/test_bench_command.py",
)


@pytest.hookimpl(tryfirst=True)  # before pytest-django's, whose stable sort then puts the
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:  # transactional last
    def rank(item: pytest.Item) -> int:
        path = item.nodeid.split("::")[0]
        return next(
            (n for n, first in enumerate(LONGEST_FIRST) if path.startswith(first)),
            len(LONGEST_FIRST),
        )

    items.sort(key=rank)  # stable: each module keeps its own order


DEMO_PASSWORD = "demo-password-for-tests"
ROLES = ("admin", "support", "warehouse", "supervisor", "auditor", "alice", "bob")


@dataclass
class Demo:
    users: dict[str, AbstractUser]
    orders: dict[str, Order]

    def order(self, key: str) -> Order:
        """A fresh copy of a demo order by its key (demo-01 … demo-12)."""
        return Order.objects.get(pk=self.orders[key].pk)


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None, django_db_blocker: Any) -> None:
    """The demo data (docs/demo.md#demo-data), seeded once per test database.

    Seeding both domains costs about a tenth of a second; paid by each of some 2,500
    tests it was a third of the suite's time. Every test still starts from the seeded
    data: a test's transaction is rolled back, and a transactional test (flushed when it
    ends) has its database restored from the serialized contents, which are taken again
    here so that they hold the seed.
    """
    from django.db import connections

    from procurement.demo import seed_procurement, seed_procurement_users

    with django_db_blocker.unblock():
        seed_demo(password=DEMO_PASSWORD)
        seed_procurement_users(password=DEMO_PASSWORD)
        seed_procurement()
        for connection in connections.all():
            if hasattr(connection, "_test_serialized_contents"):
                connection._test_serialized_contents = connection.creation.serialize_db_to_string()


def _seeded() -> bool:
    """Whether the demo data is there (gone after a transactional test without a
    serialized rollback, which flushes every table)."""
    from django.contrib.auth import get_user_model

    return get_user_model().objects.filter(username__in=ROLES).count() == len(
        ROLES
    ) and Order.objects.filter(description__startswith="Demo order ").count() == len(DEMO_ORDERS)


@pytest.fixture
def demo(db: None) -> Demo:
    if not _seeded():
        seed_demo(password=DEMO_PASSWORD)
    from django.contrib.auth import get_user_model

    users = {u.username: u for u in get_user_model().objects.filter(username__in=ROLES)}
    orders = {
        spec.key: Order.objects.get(description=f"Demo order {spec.key}") for spec in DEMO_ORDERS
    }
    return Demo(users=users, orders=orders)


@pytest.fixture
def api(demo: Demo) -> Callable[[str], APIClient]:
    """``api("alice")``: an API client authenticated as that demo user."""

    def make(username: str) -> APIClient:
        client = APIClient()
        # A fresh user object per client: permission caches must not leak between roles.
        from django.contrib.auth import get_user_model

        client.force_authenticate(get_user_model().objects.get(username=username))
        return client

    return make


@pytest.fixture(autouse=True)
def _fresh_throttles() -> None:
    # Rate limits count in the cache; one test's logins must not throttle the next.
    from django.core.cache import cache

    cache.clear()


# --- procurement ---------------------------------------------------------------------

PROCUREMENT_ROLES = (
    "rita",
    "remy",
    "approver",
    "senior_approver",
    "buyer",
    "receiving_clerk",
    "accounts_payable",
    "auditor",
    "admin",
)


@dataclass
class ProcurementDemo:
    users: dict[str, AbstractUser]

    def request(self, key: str) -> Any:
        """A fresh copy of a demo purchase request by its key (pr-01 … pr-27)."""
        from procurement.demo import demo_request

        return demo_request(key)


@pytest.fixture
def procurement(demo: Demo) -> ProcurementDemo:
    """The orders demo (its admin and auditor) plus the procurement users and requests."""
    from django.contrib.auth import get_user_model

    from procurement.demo import seed_procurement, seed_procurement_users
    from procurement.models import PurchaseRequest

    users = {u.username: u for u in get_user_model().objects.filter(username__in=PROCUREMENT_ROLES)}
    if len(users) < len(PROCUREMENT_ROLES) or not PurchaseRequest.objects.exists():
        seed_procurement_users(password=DEMO_PASSWORD)
        seed_procurement()
        users = {
            u.username: u for u in get_user_model().objects.filter(username__in=PROCUREMENT_ROLES)
        }
    return ProcurementDemo(users=users)
