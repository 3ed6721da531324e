"""Private framework internals in one place (issue 51, debt 7): outside
``affordances/compat/`` no module imports a private name of Django, DRF,
drf-spectacular, django-oauth-toolkit, django-fsm or ``re``, nor reads a private
attribute of another package's object; each use inside ``compat`` is a small commented
function (``tests/test_compat.py`` checks the ones an upgrade could break)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "affordances"
DEPENDENCIES = (
    "django",
    "rest_framework",
    "drf_spectacular",
    "oauth2_provider",
    "django_fsm",
    "re",
    "sre_parse",
    "sre_constants",
)
# Documented Django model API, spelled with an underscore for historical reasons.
PUBLIC_UNDERSCORED = {"_meta", "_state", "_default_manager", "_base_manager"}

# Hooks of a framework's base class that a subclass of the library overrides, calling the
# base's own. The core maps serializers itself (affordances.fieldschema); the OpenAPI
# face's AutoSchema still overrides these drf-spectacular hooks
# (affordances.compat.spectacular.AUTOSCHEMA_HOOKS says why), and django-oauth-toolkit's
# views offer no public extension point for theirs.
PENDING = {
    ("rest/openapi.py", "_map_basic_serializer"),
    ("rest/openapi.py", "_insert_field_validators"),
    ("rest/openapi.py", "_get_paginator"),
    ("rest/openapi.py", "_get_response_for_code"),
    ("rest/openapi.py", "_get_response_bodies"),
    ("rest/openapi.py", "_get_response_headers_for_code"),
    ("mcp/oauth.py", "_load_application"),
    ("mcp/oauth.py", "_save_bearer_token"),
    ("mcp/registration.py", "_authenticate_registration_request"),
}


def _own_private_names() -> set[str]:
    """Private names the library defines itself (its own methods and attributes)."""
    names = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                names.add(node.attr)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                names.add(node.id)
    return {name for name in names if name.startswith("_")}


def _uses(path: Path, own: set[str]) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] in DEPENDENCIES:
                private_module = any(part.startswith("_") for part in parts)
                for alias in node.names:
                    if private_module or alias.name.startswith("_"):
                        found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Attribute):
            name = node.attr
            if not name.startswith("_") or name.startswith("__") or name in PUBLIC_UNDERSCORED:
                continue
            base = node.value
            on_self = isinstance(base, ast.Name) and base.id in ("self", "cls")
            if on_self and name in own:
                continue  # the library's own attribute
            if not on_self and not isinstance(base, ast.Call) and name in own:
                continue  # the library's own attribute, on another of its objects
            found.append(f"{node.lineno}: .{name} on {ast.unparse(base)}")
    return found


def test_no_private_name_of_a_dependency_outside_compat():
    own = _own_private_names()
    offenders = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        if relative.parts[0] in ("compat", "migrations"):
            continue
        uses = [
            use
            for use in _uses(path, own)
            if (str(relative), use.rsplit(".", 1)[-1].split(" ")[0]) not in PENDING
        ]
        if uses:
            offenders[str(relative)] = uses
    assert offenders == {}


def test_every_compat_module_says_why_at_each_use():
    for path in sorted((PACKAGE / "compat").glob("*.py")):
        tree = ast.parse(path.read_text())
        assert ast.get_docstring(tree), path
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                assert ast.get_docstring(node), f"{path.name}: {node.name}"
