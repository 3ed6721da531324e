"""``-p tests.no_demo``: the library's tests run with the demo and the tooling unimportable.

``make test`` loads this plugin for ``tests/``: importing ``orders``, ``procurement``,
``config``, ``experiment``, ``load`` or ``demo_tests`` (or anything under them) raises
``ModuleNotFoundError``, as in a project that has only the library installed. A test
that needs the demo belongs in ``demo_tests/``.
"""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec
from types import ModuleType

BLOCKED = ("orders", "procurement", "config", "experiment", "load", "demo_tests")


class _Blocked(MetaPathFinder):
    def find_spec(
        self, fullname: str, path: object = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(
                f"No module named {fullname!r} (blocked by tests.no_demo: the library's "
                "tests must not need the demo)",
                name=fullname,
            )
        return None


def _install() -> None:
    loaded = sorted(name for name in sys.modules if name.partition(".")[0] in BLOCKED)
    if loaded:
        raise RuntimeError(f"tests.no_demo loaded too late: {', '.join(loaded)} imported")
    sys.meta_path.insert(0, _Blocked())


_install()


def pytest_report_header() -> str:
    return f"demo packages blocked: {', '.join(BLOCKED)}"
