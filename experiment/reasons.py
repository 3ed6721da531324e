"""Saying why, item by item: the reason codes of the experiment's refusals and the words
that give each one.

A task (or a decision point) whose right outcome is to leave an object as it is also
wants the answer to give the reason. The first checks were one regular expression per
task over a bag of words ("payment|authori[sz]", "window|expired", "budget"): an agent
that called nothing and answered one paragraph stuffed with every reason word passed
them all. Now an answer gives a reason when it names its *code* or one of the
paraphrases of *that* code (:data:`REASONS`, each specific to its reason), and it says
why only when it gives the item's reason and no reason the item does not have
(:func:`why_failure`): a paragraph that gives them all gives none.

The codes are the servers' (``requires_supervisor``) and, for a refusal by a constraint
rather than a reason, the experiment's own name for it (``refund_above_total``: P9's
amount is above the order's total, the ``maximum`` its affordance states).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["REASONS", "STUFFED_ANSWER", "given", "gives", "why_failure"]

_NOT = r"(?:not|n't|never)"

# code → the paraphrases that give it (case-insensitive); the code itself always does.
REASONS: dict[str, tuple[str, ...]] = {
    "requires_supervisor": (r"\bsupervisor",),
    "refund_window_expired": (
        r"refund\W+window",
        r"\b30[- ]day",
        r"window\W+(?:has\W+|is\W+)?(?:expired|closed|passed|over)",
        r"too\W+long\W+ago",
    ),
    "payment_not_authorized": (
        rf"payment\W+(?:is\W+|has\W+|was\W+)?(?:{_NOT}\W+)(?:yet\W+|been\W+)*authori[sz]ed",
        r"unauthori[sz]ed\W+payment",
        r"payment\W+(?:is\W+)?(?:still\W+)?pending",
    ),
    "refund_above_total": (
        r"(?:less\W+than\W+or\W+equal\W+to|at\W+most|no\W+more\W+than|maximum(?:\W+of|\W+is)?"
        r"|up\W+to|limit\W+(?:of|is))\W+300",
        r"exceed\w*\W+(?:the\W+)?(?:order'?s?\W+)?(?:total|amount\W+paid|300)",
        r"more\W+than\W+(?:the\W+)?(?:order'?s?\W+)?(?:total|was\W+paid|300)",
    ),
    "budget_exhausted": (
        r"budget\W+(?:is\W+|has\W+been\W+|was\W+)?(?:exhausted|used\W+up|spent|depleted|taken)",
        r"(?:no|not\W+enough|insufficient)\W+(?:remaining\W+)?budget",
    ),
    "already_approved": (
        r"already\W+(?:been\W+)?approved",
        # The object itself is approved (C's forms do not say why; its state does).
        r"\b(?:it|request|#\d+|pr-\d+)\W+(?:is|was|has\W+been)\W+approved",
    ),
    "not_confirmed": (
        rf"{_NOT}\W+(?:yet\W+|been\W+)*confirmed",
        r"\bunconfirmed",
        # The order itself is still pending (not its payment: payment_not_authorized).
        r"\b(?:it|order|#\d+|demo-\d+)\W+is\W+(?:still\W+)?pending",
    ),
    "over_approval_limit": (
        r"approval\W+limit",
        r"(?:above|beyond|exceeds?|over)\W+(?:my\W+|your\W+|the\W+)?(?:approval\W+)?limit",
    ),
    "own_request": (
        r"own\W+request",
        r"four[- ]eyes",
        r"approve\W+(?:my|your|their|his|her)\W+own",
    ),
    "supplier_blocked": (r"supplier\W+(?:is\W+)?blocked", r"blocked\W+supplier"),
    "period_frozen": (r"period\W+(?:is\W+)?frozen", r"frozen\W+period", r"\bfreeze\b"),
    "no_recall_notice": (r"no\W+(?:open\W+)?(?:product\W+)?recall",),
    "invoice_mismatch": (
        rf"(?:does\W+{_NOT}|doesn't|{_NOT})\W+match",
        r"mismatch",
    ),
    "already_paid": (r"already\W+(?:been\W+)?paid",),
    "no_express_service": (r"no\W+express", r"express\W+(?:service\W+)?(?:is\W+)?not\W+offered"),
    "below_insurance_threshold": (
        r"insurance\W+threshold",
        r"(?:too\W+low|below\W+the\W+threshold)\W+(?:for|to)\W+(?:be\W+)?insur",
    ),
}

_COMPILED = {
    code: [re.compile(re.escape(code), re.IGNORECASE)]
    + [re.compile(pattern, re.IGNORECASE) for pattern in patterns]
    for code, patterns in REASONS.items()
}


def gives(answer: str, code: str) -> bool:
    """``answer`` names ``code`` or one of its paraphrases."""
    return any(pattern.search(answer) for pattern in _COMPILED[code])


def given(answer: str) -> set[str]:
    """Every reason of :data:`REASONS` the answer gives."""
    return {code for code in REASONS if gives(answer, code)}


def why_failure(answer: str, code: str, *, allowed: Iterable[str] = ()) -> str | None:
    """None when ``answer`` gives the reason ``code`` and no other reason but those
    ``allowed`` (the task's other reasons, the reasons the object read states); else
    what is wrong."""
    if code not in REASONS:
        raise KeyError(f"{code!r} is not a reason of experiment.reasons.REASONS")
    found = given(answer)
    if code not in found:
        return f"the answer does not give the reason ({code})"
    others = found - {code} - set(allowed)
    if others:
        return f"the answer gives other reasons too ({', '.join(sorted(others))})"
    return None


# The keyword-stuffing control's one answer (experiment.agents.stuffing): every reason,
# by code and in words, and the words the first checks looked for.
STUFFED_ANSWER = (
    "I left everything as it is. "
    + " ".join(f"{code}: {code.replace('_', ' ')}." for code in REASONS)
    + " It requires a supervisor; the 30-day refund window has expired; the payment is "
    "not authorized and still pending; the refund is at most 300, it exceeds the total; "
    "the budget is exhausted; it is already approved; it is not confirmed; it is beyond "
    "the approval limit; it is your own request; the supplier is blocked; the period is "
    "frozen; there is no recall; the invoice does not match; it is already paid; there "
    "is no express service; it is below the insurance threshold. Statuses: pending, "
    "confirmed, cancelled, canceled, shipped, delivered, approved, submitted."
)
