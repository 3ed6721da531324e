"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, server mode)
against the three interfaces, through a proxy that adds the bearer token.

The suite's scenarios that apply to this server must pass. The others exercise the
suite's own fixture tools and resources (``test_simple_text``, ``test://…``) or
capabilities this server does not advertise (prompts, logging, completions, resource
subscriptions): each must fail, and only for that reason — both lists are explicit
here, so a scenario that starts failing, or starts passing, is visible.

Its authorization scenarios (``auth/*``) are all client scenarios in the installed
version: each stands up its own mock authorization and resource server and checks the
client under test, so none applies to this server (whose authorization is tested by
tests/test_mcp_oauth.py and, with real clients, demo_tests/test_mcp_oauth_flow.py). A
version that brings server ones fails the last test here, to be run then. The
authorization *server* scenarios of 0.2.0-alpha.12 (``conformance authorization``) run
in test_mcp_conformance_authorization.py, on that version.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from demo_tests.clients.conftest import BIN, CLIENTS, run, token_for
from demo_tests.conftest import Demo

# The pinned 0.1.16 (clients/package.json), by its own path: 0.2.0-alpha.12, installed
# beside it as ``conformance-next`` for its authorization server scenarios, changes the
# server scenario set, and its ``conformance`` may be the one in node_modules/.bin.
SUITE = [
    str(BIN / "node"),
    str(CLIENTS / "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
]

MUST_PASS = {
    "server-initialize",
    "ping",
    "tools-list",
    "resources-list",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",  # nothing to check for a stateless server: no failure
}
FIXTURE_TOOL = "Unknown tool"  # the suite calls its own test_* tools
NOT_ADVERTISED = "Method not found"  # prompts/*, logging/*, completion/*, subscribe
FIXTURE_RESOURCE = "Resource not found"  # the suite reads its own test:// resources
EXPECTED_FAILURES = {
    "tools-call-simple-text": FIXTURE_TOOL,
    "tools-call-image": FIXTURE_TOOL,
    "tools-call-audio": FIXTURE_TOOL,
    "tools-call-embedded-resource": FIXTURE_TOOL,
    "tools-call-mixed-content": FIXTURE_TOOL,
    "tools-call-error": FIXTURE_TOOL,
    "tools-call-with-progress": FIXTURE_TOOL,
    "tools-call-sampling": FIXTURE_TOOL,
    "tools-call-elicitation": FIXTURE_TOOL,
    "elicitation-sep1034-defaults": FIXTURE_TOOL,
    "elicitation-sep1330-enums": FIXTURE_TOOL,
    "tools-call-with-logging": NOT_ADVERTISED,
    "logging-set-level": NOT_ADVERTISED,
    "completion-complete": NOT_ADVERTISED,
    "resources-subscribe": NOT_ADVERTISED,
    "resources-unsubscribe": NOT_ADVERTISED,
    "prompts-list": NOT_ADVERTISED,
    "prompts-get-simple": NOT_ADVERTISED,
    "prompts-get-with-args": NOT_ADVERTISED,
    "prompts-get-embedded-resource": NOT_ADVERTISED,
    "prompts-get-with-image": NOT_ADVERTISED,
    "resources-read-text": FIXTURE_RESOURCE,
    "resources-read-binary": FIXTURE_RESOURCE,
    "resources-templates-read": FIXTURE_RESOURCE,
}


# Interface C (forms) reads resources through read_resource, and advertises no resources.
_FORMS_NOT_ADVERTISED = (
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
)
PER_ENDPOINT = {
    "/mcp": (MUST_PASS, EXPECTED_FAILURES),
    "/mcp/static": (MUST_PASS, EXPECTED_FAILURES),
    "/mcp/forms": (
        MUST_PASS - {"resources-list"},
        {**EXPECTED_FAILURES, **dict.fromkeys(_FORMS_NOT_ADVERTISED, NOT_ADVERTISED)},
    ),
}


def _results(directory: Path) -> dict[str, list[dict[str, Any]]]:
    """Scenario name → its checks, from the suite's ``-o`` directory."""
    found: dict[str, list[dict[str, Any]]] = {}
    for checks in sorted(directory.glob("server-*/checks.json")):
        # server-{scenario}-{ISO time with dashes}Z
        scenario = re.sub(r"-\d{4}-\d\d-\d\dT[\d-]+Z$", "", checks.parent.name)
        scenario = scenario.removeprefix("server-")
        found[scenario] = json.loads(checks.read_text())
    return found


@pytest.mark.django_db(transaction=True, serialized_rollback=True)
@pytest.mark.parametrize("endpoint", ["/mcp", "/mcp/static", "/mcp/forms"])
def test_the_conformance_suite_passes_what_applies_and_fails_only_for_fixtures(
    live_server: Any, demo: Demo, bearer_proxy: Any, tmp_path: Path, endpoint: str
) -> None:
    base = bearer_proxy(live_server.url, token_for(demo.users["support"]))
    out = tmp_path / "results"
    done = run(
        [*SUITE, "server", "--url", base + endpoint, "-o", str(out)],
        home=tmp_path,
        timeout=300,
    )
    results = _results(out)
    must_pass, expected_failures = PER_ENDPOINT[endpoint]
    assert set(results) == must_pass | set(expected_failures), done.stdout[-3000:]

    failing = {
        name: [c for c in checks if c["status"] == "FAILURE"] for name, checks in results.items()
    }
    failing = {name: checks for name, checks in failing.items() if checks}
    assert set(failing) == set(expected_failures), done.stdout[-3000:]
    for name, checks in failing.items():
        for check in checks:
            assert expected_failures[name] in check.get("errorMessage", ""), (name, check)
    for name in must_pass:
        assert any(c["status"] == "SUCCESS" for c in results[name]) or (
            name == "server-sse-multiple-streams"
        ), (name, results[name])


def _scenarios(listing: str) -> set[str]:
    return set(re.findall(r"^\s*- (\S+)", listing, flags=re.MULTILINE))


def test_the_installed_suite_has_authorization_scenarios_for_clients_only(
    tmp_path: Path,
) -> None:
    done = run([*SUITE, "list"], home=tmp_path)
    assert done.returncode == 0, done.stderr
    servers, _, clients = done.stdout.partition("Client scenarios")
    assert servers.startswith("Server scenarios") and clients, done.stdout
    assert _scenarios(servers) == MUST_PASS | set(EXPECTED_FAILURES) | {
        "json-schema-2020-12",  # not in the active suite the test above runs
        "server-sse-polling",
    }
    assert not {name for name in _scenarios(servers) if "auth" in name}
    authorization = {name for name in _scenarios(clients) if name.startswith("auth/")}
    assert {"auth/metadata-default", "auth/scope-step-up", "auth/resource-mismatch"} <= (
        authorization
    )
