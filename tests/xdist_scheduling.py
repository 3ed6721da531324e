"""With ``-n``: how pytest-xdist hands out the tests, in both test sessions.

Each conftest imports :func:`pytest_xdist_make_scheduler`. Every run of consecutive tests
of one module, in the order collection leaves them (the conftest's LONGEST_FIRST, then
pytest-django's database classes), is one unit of work, given whole to the next worker
that is free; the units go out in that order.

Why not pytest-xdist's default (``load``): it first sends each worker a quarter of its
share of consecutive tests, then ever smaller batches, so several long modules could land
on one worker — both adoption modules did, or a batch of long tests near the end — while
the other ran out of work. Why not one test at a time: what a module computes once per
process (its module-scoped fixtures, such as an adoption test's project; the leak
matrices' observations, made once per row) would be computed on both workers. A unit runs
in one process as the whole suite does without ``-n``, and in collection order, so no
worker runs a database test after a transactional one (whose flush empties the tables).

An explicit ``--dist`` wins.
"""

from __future__ import annotations

from typing import Any

import pytest


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "load":  # what -n alone sets
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModuleRuns(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log: Any) -> None:
            super().__init__(config, log)
            self.runs: dict[str, str] = {}

        def _split_scope(self, nodeid: str) -> str:
            if not self.runs:  # every worker collected the same tests in the same order
                collection = next(iter(self.registered_collections.values()))
                module, run = None, 0
                for each in collection:
                    if each.split("::")[0] != module:
                        module, run = each.split("::")[0], run + 1
                    self.runs[each] = f"{run}:{module}"
            return self.runs[nodeid]

    config.option.loadscopereorder = False  # the units in collection order, not biggest first
    return ModuleRuns(config, log)
