"""Clients generated from the live OpenAPI document, used against the live demo server.

- **openapi-typescript + tsc**: the types generated from the document a caller is
  served compile, with ``--strict``, a small committed client (``clients/typed_client.ts``)
  that reads an order's ``affordances`` and ``unavailableAffordances`` and confirms it
  (a transition without inputs) with ``expectedVersion``, ``If-Match`` and
  ``Idempotency-Key``; node then runs what tsc wrote against the server.
- **openapi-python-client**: a client generated from the same document reads the order
  into a model with typed affordance attributes (not ``additional_properties``),
  confirms it with a version, and parses the stale retry's problem with the order as
  ``current``.

Each generates once, in its test (one live server for the session: pytest-django's).
Skipped when the tools are not installed (``npm ci --prefix clients``; the project's
``clients`` extra for openapi-python-client).
"""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

import pytest

from demo_tests.clients.conftest import BIN, CLIENTS, last_json, run, token_for
from demo_tests.conftest import Demo
from orders.models import Order

pytestmark = pytest.mark.django_db(transaction=True, serialized_rollback=True)

ROLE = "admin"  # may confirm an order, and ship it once confirmed (unavailable before)
PENDING = "demo-01"  # pending, payment authorized: confirm_order applies
PYTHON_CLIENT = Path(sys.executable).parent / "openapi-python-client"
PACKAGE = "affordances_demo_client"


def _document(base: str, token: str, into: Path) -> Path:
    """The OpenAPI document the caller is served, as a file."""
    request = Request(
        f"{base}/api/schema/",
        headers={"Authorization": f"Bearer {token}", "Accept": "application/vnd.oai.openapi+json"},
    )
    with urlopen(request, timeout=60) as answer:  # the live server, on 127.0.0.1
        into.write_bytes(answer.read())
    return into


def _order(demo: Demo) -> Order:
    return demo.order(PENDING)


def test_a_strict_typescript_client_compiles_against_the_generated_types_and_runs(
    live_server: Any, demo: Demo, tmp_path: Path
) -> None:
    if not (BIN / "openapi-typescript").exists() or not (BIN / "tsc").exists():
        pytest.skip("openapi-typescript or typescript is not installed: npm ci --prefix clients")
    token = token_for(demo.users[ROLE])
    order = _order(demo)
    document = _document(live_server.url, token, tmp_path / "openapi.json")
    shutil.copy(CLIENTS / "typed_client.ts", tmp_path / "typed_client.ts")

    generated = run(
        ["openapi-typescript", str(document), "--output", str(tmp_path / "openapi.d.ts")],
        home=tmp_path,
    )
    assert generated.returncode == 0, generated.stderr[-3000:]
    # --strict, as the issue asks; it writes the JavaScript node runs (one tsc run: the
    # same checks as --noEmit, and something to run).
    compiled = run(
        ["tsc", "--strict", "--target", "es2022", "--module", "nodenext",
         "--moduleResolution", "nodenext", "--types", "node",
         "--typeRoots", str(CLIENTS / "node_modules" / "@types"),
         "--outDir", str(tmp_path / "out"), str(tmp_path / "typed_client.ts")],
        home=tmp_path,
    )  # fmt: skip
    assert compiled.returncode == 0, compiled.stdout[-3000:] + compiled.stderr[-3000:]

    done = run(
        ["node", str(tmp_path / "out" / "typed_client.js"), live_server.url, token, str(order.pk)],
        home=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = last_json(done.stdout)
    version = order.version
    assert seen["version"] == version
    assert "confirm_order (urn:example:operation:confirm-order:v1)" in seen["available"]
    assert "ship_order" in {name for name, _reason in seen["unavailable"]}
    after = f'"{version + 1}"'
    assert seen["confirmed"] == [200, "confirmed", version + 1, after]
    assert seen["replayed"] == [200, "true"]  # the same key again: the stored success
    assert seen["stale"] == [412, "stale_version", version + 1]
    assert seen["compact"] and all("(" not in name for name in seen["compact"])
    assert _order(demo).status == "confirmed"


@pytest.fixture
def python_client(live_server: Any, demo: Demo, tmp_path: Path) -> Iterator[Any]:
    """The package openapi-python-client generates from the caller's document, imported."""
    if not PYTHON_CLIENT.exists():
        pytest.skip("openapi-python-client is not installed (the project's clients extra)")
    token = token_for(demo.users[ROLE])
    document = _document(live_server.url, token, tmp_path / "openapi.json")
    config = tmp_path / "config.yaml"
    # No post hooks: the generator would run ruff over the package (time, and a PATH).
    config.write_text(f"package_name_override: {PACKAGE}\npost_hooks: []\n")
    done = subprocess.run(
        [str(PYTHON_CLIENT), "generate", "--path", str(document), "--config", str(config),
         "--meta", "none", "--output-path", str(tmp_path / PACKAGE), "--fail-on-warning"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module(PACKAGE)
        yield package.AuthenticatedClient(
            base_url=live_server.url, token=token, raise_on_unexpected_status=True
        )
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.partition(".")[0] == PACKAGE]:
            del sys.modules[name]


def test_a_generated_python_client_reads_typed_affordances_and_confirms_with_a_version(
    python_client: Any, demo: Demo
) -> None:
    api = importlib.import_module(f"{PACKAGE}.api.orders")
    catalog_api = importlib.import_module(f"{PACKAGE}.api.operations")
    models = importlib.import_module(f"{PACKAGE}.models")
    retrieve = importlib.import_module(f"{api.__name__}.orders_retrieve")
    confirm = importlib.import_module(f"{api.__name__}.confirm_order")
    catalog = importlib.import_module(f"{catalog_api.__name__}.operations_list")
    pk = str(_order(demo).pk)

    order = retrieve.sync(id=pk, client=python_client)
    assert isinstance(order, models.Order)
    assert not set(order.additional_properties) & {"affordances", "unavailableAffordances"}
    entry = next(entry for entry in order.affordances if entry.name == "confirm_order")
    assert isinstance(entry, models.AffordanceEntry)
    assert entry.operation == "urn:example:operation:confirm-order:v1"
    assert all(isinstance(e, models.UnavailableEntry) for e in order.unavailable_affordances)
    assert {e.name for e in order.unavailable_affordances} >= {"ship_order"}

    version = entry.valid_for_version
    body = models.ConfirmOrderInput(expected_version=version)
    key = f"python-client-{pk}-{version}"
    answer = confirm.sync_detailed(
        id=pk, client=python_client, body=body, if_match=f'"{version}"', idempotency_key=key
    )
    assert answer.status_code == 200, answer.content
    assert isinstance(answer.parsed, models.Order)
    assert (answer.parsed.status, answer.parsed.version) == ("confirmed", version + 1)
    assert answer.headers["ETag"] == f'"{version + 1}"'

    stale = confirm.sync_detailed(id=pk, client=python_client, body=body)
    assert stale.status_code == 412
    assert isinstance(stale.parsed, models.OrderProblem)
    assert stale.parsed.code == "stale_version"
    assert isinstance(stale.parsed.current, models.Order)
    assert stale.parsed.current.version == version + 1

    shape = models.OrdersRetrieveAffordances.COMPACT
    compact = retrieve.sync(id=pk, client=python_client, affordances=shape)
    assert compact.affordances
    assert all(isinstance(e, models.AffordanceEntryCompact) for e in compact.affordances)

    operations = catalog.sync(client=python_client)
    assert isinstance(operations, models.Catalog)
    assert "confirm_order" in {entry.name for entry in operations.operations}
