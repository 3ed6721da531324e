"""The load tooling's tests run with the demo (``--ds demo_tests.settings``): its fixtures."""

from __future__ import annotations

from demo_tests.conftest import (  # noqa: F401
    _fresh_throttles,
    api,
    demo,
    procurement,
)
