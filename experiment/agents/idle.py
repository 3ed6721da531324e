"""The idle control: it answers at once and calls nothing.

A task an idle agent passes measures nothing, so every task must fail with it, on every
interface (``--agent idle``; ``experiment/tests/test_experiment_controls.py``). Its answer says
only that nothing was done: no status, reason or id a check could mistake for a report.
"""

from __future__ import annotations

from experiment.agents.base import Brief
from experiment.client import McpSession

__all__ = ["IDLE_ANSWER", "IdleAgent"]

IDLE_ANSWER = "I did nothing."


class IdleAgent:
    name = "idle"

    async def run(self, session: McpSession, brief: Brief) -> str:
        return IDLE_ANSWER
