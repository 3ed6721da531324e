"""The vocabulary of a task (docs/experiment/index.md): what an agent is asked, what the runner does
meanwhile, and what counts.

A :class:`Task` has a goal in words (for a model), the same goal as steps (:class:`Act`,
:class:`Report`; for the scripted baselines: what to do, never whether the shop will
allow it), optionally a change the runner makes while the agent works
(:class:`Injection`), and a check of the database afterwards (:class:`Check`). Demo
orders are named by their seed key (``demo-05``); the goal names them by id (``#17``),
resolved after each reset. The tasks themselves are in :mod:`experiment.suite`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

__all__ = [
    "ANY",
    "Act",
    "Check",
    "Injection",
    "Phase",
    "Report",
    "Task",
    "fill_goal",
    "parse_report",
    "perform_as",
]

ANY = "any"


@dataclass(frozen=True)
class Act:
    """Run operation ``verb`` on an object of ``resource`` (the tool ``{verb}_{resource}``).

    ``order`` names the object: a demo key (``demo-05``, ``pr-05``) or ``new:N`` (the
    N-th object this task creates). ``arguments`` may use ``$total`` (a field of the
    object as read). ``fallbacks`` names, per argument, the other values the task
    accepts (or ``"any"``). ``only_if`` is a condition on the object as read: act only
    if every field has that value. ``explain``: the goal asks why, should the step not
    be possible (an agent that is not told why must ask the server). A task acts on one
    resource.
    """

    verb: str
    order: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    fallbacks: Mapping[str, Sequence[Any] | str] = field(default_factory=dict)
    only_if: Mapping[str, Any] = field(default_factory=dict)
    resource: str = "order"
    explain: bool = False

    @property
    def tool(self) -> str:
        return f"{self.verb}_{self.resource}"


@dataclass(frozen=True)
class Report:
    """Report statuses, one line per object ``#<id>: <status>``: every object of
    ``resource`` the user may see (``all``) or the objects this task created
    (``created``)."""

    scope: Literal["all", "created"]
    resource: str = "order"


Step = Act | Report


@dataclass
class Check:
    """What a task's check may look at after the run (ORM; runs outside the event loop)."""

    pks: dict[str, int]
    user: str
    answer: str
    started: datetime
    failures: list[str] = field(default_factory=list)

    def order(self, key: str) -> Any:
        from orders.models import Order

        return Order.objects.get(pk=self.pks[key])

    def request(self, key: str) -> Any:
        """A demo purchase request (``pr-05``) as it is now."""
        from procurement.models import PurchaseRequest

        return PurchaseRequest.objects.get(pk=self.pks[key])

    def created(self, description: str) -> Any | None:
        from orders.models import Order

        return Order.objects.filter(description=description).order_by("-id").first()

    def audit(self, order: Any, operation_name: str) -> list[Any]:
        from django.contrib.contenttypes.models import ContentType

        from affordances.models import AuditRecord

        return list(
            AuditRecord.objects.filter(
                content_type=ContentType.objects.get_for_model(order),
                object_id=str(order.pk),
                operation_name=operation_name,
                created_at__gte=self.started,
            )
        )

    def expect(self, condition: bool, failure: str) -> None:
        if not condition:
            self.failures.append(failure)

    def expect_status(self, order: Any, status: str) -> None:
        if order is None:
            self.failures.append(f"the object was not created (expected {status})")
            return
        self.expect(order.status == status, f"#{order.pk} is {order.status}, not {status}")

    def expect_answer(self, pattern: str, failure: str) -> None:
        """The answer says it: ``pattern`` (a regular expression) occurs in it, in any
        case. Tasks use words their goal does not contain, so only an agent that found
        them out can say them."""
        self.expect(re.search(pattern, self.answer, re.IGNORECASE) is not None, failure)

    def expect_reason(self, code: str, *, allowed: Sequence[str] = ()) -> None:
        """The answer gives the reason ``code`` (its code or a paraphrase of it) and no
        other reason but those ``allowed`` (:mod:`experiment.reasons`): an answer that
        lists every reason gives none."""
        from experiment.reasons import why_failure

        failure = why_failure(self.answer, code, allowed=allowed)
        if failure is not None:
            self.failures.append(failure)

    def expect_report(self, objects: Sequence[Any]) -> None:
        choices = type(objects[0])._meta.get_field("status").choices if objects else None
        statuses = {value for value, _ in choices} if choices else None
        reported = parse_report(self.answer, statuses=statuses)
        wanted = {o.pk: o.status for o in objects}
        self.expect(reported == wanted, f"report {reported} != state {wanted}")


_REPORT_LINE = re.compile(r"#\s*(\d+)\s*[:=\-\u2013]+\s*\**\s*([a-z_]+)", re.IGNORECASE)


def parse_report(answer: str, *, statuses: set[str] | None = None) -> dict[int, str]:
    """``#<id>: <status>`` lines of an answer (markdown emphasis tolerated) whose status
    is one of ``statuses`` (default: the order statuses)."""
    if statuses is None:
        from orders.models import OrderStatus

        statuses = set(OrderStatus.values)
    found: dict[int, str] = {}
    for match in _REPORT_LINE.finditer(answer):
        status = match.group(2).lower()
        if status in statuses:
            found[int(match.group(1))] = status
    return found


@dataclass(frozen=True)
class Injection:
    """A change the runner makes during the run, as another user (through ``perform``).

    ``when`` is ``before_write`` (just before the agent's first write on ``order``, so
    after any read it made) or ``after_list_tools`` (once the agent's tool list is
    frozen). ``apply`` runs outside the event loop and may return an undo for the end
    of the run.
    """

    when: Literal["before_write", "after_list_tools"]
    apply: Callable[[Mapping[str, int]], Callable[[], None] | None]
    order: str | None = None
    description: str = ""


@dataclass(frozen=True)
class Phase:
    """A later part of a task, done by another user: a fresh agent and session as
    ``user``, told ``goal``. Goals name demo objects (``{pr-05}``) and the objects
    earlier phases created (``{new:1}``) by id."""

    user: str
    goal: str
    steps: tuple[Step, ...]


_KEY = re.compile(r"\{((?:[a-z]+-\d\d)|(?:new:\d+))\}")


def fill_goal(goal: str, pks: Mapping[str, int]) -> str:
    """``{new:1}`` → ``#42``; a key no earlier phase made ends the run with that reason."""

    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in pks:
            raise LookupError(f"{key} was never created, so this phase cannot be told of it")
        return f"#{pks[key]}"

    return _KEY.sub(one, goal)


@dataclass(frozen=True)
class Task:
    id: str
    title: str
    user: str
    goal: str
    steps: tuple[Step, ...]
    check: Callable[[Check], None]
    injection: Injection | None = None
    # Then, in order, the parts other users do (a chain across roles).
    phases: tuple[Phase, ...] = ()
    # A URLconf to serve during the run (S5: the confirm URL renamed).
    urlconf: str | None = None
    # The run succeeds only if nothing outside the user's catalog reached the agent.
    requires_no_leaks: bool = False
    # Where the task means something (None: every interface). S5 renames a URL: only an
    # interface that follows URLs can tell it from S1.
    interfaces: tuple[str, ...] | None = None

    def goal_for(self, pks: Mapping[str, int]) -> str:
        return fill_goal(self.goal, pks)

    @property
    def users(self) -> tuple[str, ...]:
        return (self.user, *(phase.user for phase in self.phases))


def perform_as(
    username: str, operation_name: str, key: str, **arguments: Any
) -> Callable[[Mapping[str, int]], None]:
    """An injection's change: ``username`` runs the operation on demo object ``key``
    through the one execution path, as the admin would."""

    def apply(pks: Mapping[str, int]) -> None:
        from django.contrib.auth import get_user_model

        from affordances.catalog import get_catalog
        from affordances.execution import perform

        operation = get_catalog().lookup(operation_name)
        assert operation is not None, operation_name
        perform(
            operation=operation,
            pk=pks[key],
            user=get_user_model().objects.get(username=username),
            arguments=arguments,
            via="admin",
            represent=lambda instance: {"id": instance.pk},
        )

    return apply
