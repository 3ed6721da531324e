"""The keyword-stuffing control: it calls nothing and answers one paragraph that gives
every reason of the experiment (:data:`experiment.reasons.STUFFED_ANSWER`).

The first "say why" checks looked for reason words in the answer; this agent passed the
tasks whose right outcome is to leave the object as it is (P1, P4, P7, P9, Q5) on
every arm without reading anything. A check that wants the item's own reason and no
other passes it nowhere (``--agent stuffing``;
``experiment/tests/test_experiment_harness_fixes.py``).
"""

from __future__ import annotations

from experiment.agents.base import Brief
from experiment.client import McpSession
from experiment.reasons import STUFFED_ANSWER

__all__ = ["StuffingAgent"]


class StuffingAgent:
    name = "stuffing"

    async def run(self, session: McpSession, brief: Brief) -> str:
        return STUFFED_ANSWER
