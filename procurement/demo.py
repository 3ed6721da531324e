"""The procurement demo data: every rule and every trap, each once (README table).

Requests are born in their seeded state — data, not transitions — and each carries a
stable key in its title (``Demo request pr-05: …``) so tasks and tests can name it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import NamedTuple

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import AbstractUser, Group
from django.db import transaction
from django.db.models import Sum

from procurement.models import CostCenter, FreezePeriod, PurchaseRequest, Status, Supplier
from procurement.rules import today

# username: group. The orders seed creates the shared `auditor` (and `admin`).
DEMO_USERS = {
    "rita": "requester",
    "remy": "requester",
    "approver": "approver",
    "senior_approver": "senior_approver",
    "buyer": "buyer",
    "receiving_clerk": "receiving_clerk",
    "accounts_payable": "accounts_payable",
}
REQUESTERS = ("rita", "remy")

# code: (name, budget, members)
COST_CENTERS = {
    "IT": ("Information technology", "100000.00", ("rita", "remy", "approver")),
    "OPS": ("Operations", "80000.00", ("remy",)),
    "MKT": ("Marketing", "10000.00", ("rita", "remy")),
    "FAC": ("Facilities", "20000.00", ("rita",)),
}
# name: (blocked, lead time in days, express, recall notice)
SUPPLIERS = {
    "Acme Office": (False, 5, False, ""),
    "Globex": (True, 5, False, ""),
    "Initech": (False, 10, True, ""),
    "Stark Industries": (False, 20, False, ""),
    "Umbrella Labs": (False, 3, False, "Recall 2026-11: nitrile gloves, batch 4471"),
}


@dataclass(frozen=True)
class DemoRequest:
    key: str
    requester: str
    what: str
    cost_center: str
    supplier: str
    status: str
    quantity: int
    unit_price: str
    needed_in_days: int = 30
    quote: str = ""
    delivery_in_days: int | None = None
    received: int | None = None  # default: all of it, once received
    invoice: str | None = None  # default: the amount, once invoiced


D = DemoRequest
DEMO_REQUESTS: tuple[DemoRequest, ...] = (
    D("pr-01", "rita", "Desk lamps", "IT", "Acme Office", "draft", 10, "45.00"),
    D("pr-02", "rita", "Server rack", "IT", "Stark Industries", "draft", 1, "12000.00"),
    D("pr-03", "rita", "Monitors", "IT", "Acme Office", "submitted", 20, "150.00"),
    D("pr-04", "remy", "Laptops", "IT", "Stark Industries", "submitted", 4, "2000.00"),
    D("pr-05", "approver", "Headsets", "IT", "Acme Office", "submitted", 6, "150.00"),
    D("pr-06", "remy", "Safety boots", "OPS", "Globex", "submitted", 5, "300.00"),
    D("pr-07", "rita", "Trade fair booth", "MKT", "Acme Office", "submitted", 2, "1000.00"),
    D("pr-08", "remy", "Flyers", "MKT", "Acme Office", "submitted", 1, "600.00"),
    D("pr-09", "rita", "Banners", "MKT", "Acme Office", "submitted", 1, "600.00"),
    D("pr-10", "rita", "Storage array", "IT", "Stark Industries", "submitted", 2, "30000.00",
      quote="Q-7002"),
    D("pr-11", "remy", "Keyboards", "IT", "Acme Office", "approved", 10, "100.00"),
    D("pr-12", "rita", "Office chairs", "FAC", "Acme Office", "approved", 3, "200.00"),
    D("pr-13", "remy", "Pallet jack", "OPS", "Globex", "approved", 2, "400.00"),
    D("pr-14", "rita", "Docking stations", "IT", "Initech", "ordered", 5, "80.00",
      needed_in_days=2, delivery_in_days=8),
    D("pr-15", "remy", "Forklift", "OPS", "Stark Industries", "ordered", 1, "30000.00",
      quote="Q-7015", delivery_in_days=20),
    D("pr-16", "rita", "USB cables", "IT", "Acme Office", "ordered", 40, "25.00",
      delivery_in_days=5),
    D("pr-17", "remy", "Shelving units", "OPS", "Acme Office", "received", 50, "20.00",
      received=45),
    D("pr-18", "rita", "Lab gloves", "IT", "Umbrella Labs", "received", 100, "5.00"),
    D("pr-19", "rita", "Webcams", "IT", "Acme Office", "received", 10, "30.00"),
    D("pr-20", "remy", "Toner", "OPS", "Acme Office", "invoiced", 10, "50.00"),
    D("pr-21", "rita", "Printers", "IT", "Acme Office", "invoiced", 20, "100.00",
      invoice="2600.00"),
    D("pr-22", "remy", "Conveyor belt", "OPS", "Stark Industries", "invoiced", 1, "8000.00"),
    D("pr-23", "rita", "Notebooks", "IT", "Acme Office", "paid", 5, "40.00"),
    D("pr-24", "remy", "Espresso machine", "IT", "Acme Office", "rejected", 1, "900.00"),
    D("pr-25", "rita", "Whiteboard", "IT", "Acme Office", "withdrawn", 1, "120.00"),
    D("pr-26", "remy", "Label printer", "OPS", "Acme Office", "cancelled", 1, "250.00"),
    D("pr-27", "remy", "Spring campaign", "MKT", "Acme Office", "paid", 1, "9000.00"),
)  # fmt: skip

RESERVED = (Status.APPROVED, Status.ORDERED, Status.RECEIVED, Status.INVOICED)
AFTER_ORDER = (Status.ORDERED, Status.RECEIVED, Status.INVOICED, Status.PAID)
AFTER_RECEIPT = (Status.RECEIVED, Status.INVOICED, Status.PAID)


def title(spec: DemoRequest) -> str:
    return f"Demo request {spec.key}: {spec.what}"


def demo_request(key: str) -> PurchaseRequest:
    """The seeded request with this key (``pr-05``)."""
    return PurchaseRequest.objects.get(title__startswith=f"Demo request {key}:")


class SeededUsers(NamedTuple):
    usernames: tuple[str, ...]
    kept: tuple[str, ...]  # existing users that kept their password


def seed_procurement_users(*, password: str, keep_passwords: bool = False) -> SeededUsers:
    """The procurement demo users, each with ``password`` — except, with
    ``keep_passwords``, those that exist already, which keep theirs."""
    user_model = get_user_model()
    hashed = make_password(password)  # one password for all: hashed once
    kept = []
    for username, group in DEMO_USERS.items():
        user, created = user_model.objects.get_or_create(username=username)
        user.email = f"{username}@example.com"
        # Procurement staff may use the admin; requesters, like customers, may not.
        user.is_staff = username not in REQUESTERS
        user.is_superuser = False
        if keep_passwords and not created:
            kept.append(username)
        else:
            user.password = hashed
        user.save()
        user.groups.set([Group.objects.get(name=group)])
    return SeededUsers(tuple(DEMO_USERS), tuple(kept))


@transaction.atomic
def seed_procurement(*, reset: bool = False) -> int:
    """Reference data and the demo requests of the existing demo users; safe to rerun.

    Returns how many requests were created. With ``reset`` every request is deleted first.
    """
    users = {u.username: u for u in get_user_model().objects.filter(username__in=DEMO_USERS)}
    missing = sorted(set(DEMO_USERS) - set(users))
    if missing:
        raise get_user_model().DoesNotExist(f"Seed the users first: no {', '.join(missing)}.")
    if reset:
        PurchaseRequest.objects.all().delete()
    centers = _cost_centers(users)
    suppliers = _suppliers()
    _freeze(centers["FAC"])
    created = sum(_request(spec, users, centers, suppliers, fresh=reset) for spec in DEMO_REQUESTS)
    _recompute_committed()
    return created


def _cost_centers(users: dict[str, AbstractUser]) -> dict[str, CostCenter]:
    centers = {}
    for code, (name, amount, members) in COST_CENTERS.items():
        center, _ = CostCenter.objects.update_or_create(
            code=code, defaults={"name": name, "budget": Decimal(amount)}
        )
        center.members.set([users[m] for m in members])
        centers[code] = center
    return centers


def _suppliers() -> dict[str, Supplier]:
    suppliers = {}
    for name, (blocked, lead, express, recall) in SUPPLIERS.items():
        suppliers[name], _ = Supplier.objects.update_or_create(
            name=name,
            defaults={
                "blocked": blocked,
                "lead_time_days": lead,
                "express_available": express,
                "recall_notice": recall,
            },
        )
    return suppliers


def _freeze(center: CostCenter) -> None:
    """Facilities closes its books: a freeze around today, whenever the demo runs."""
    FreezePeriod.objects.filter(note="Demo: facilities year-end closing").delete()
    FreezePeriod.objects.create(
        starts_on=today() - timedelta(days=2),
        ends_on=today() + timedelta(days=30),
        cost_center=center,
        note="Demo: facilities year-end closing",
    )


def _request(
    spec: DemoRequest,
    users: dict[str, AbstractUser],
    centers: dict[str, CostCenter],
    suppliers: dict[str, Supplier],
    *,
    fresh: bool = False,
) -> int:
    # ``fresh``: every request was just deleted (the experiment resets before each run).
    if not fresh and PurchaseRequest.objects.filter(title=title(spec)).exists():
        return 0
    status = Status(spec.status)
    amount = Decimal(spec.unit_price) * spec.quantity
    received = spec.quantity if spec.received is None else spec.received
    delivery = spec.delivery_in_days if spec.delivery_in_days is not None else 0
    request = PurchaseRequest.objects.create(
        requester=users[spec.requester],
        title=title(spec),
        cost_center=centers[spec.cost_center],
        supplier=suppliers[spec.supplier],
        quantity=spec.quantity,
        unit_price=Decimal(spec.unit_price),
        needed_by=today() + timedelta(days=spec.needed_in_days),
        quote_reference=spec.quote,
        status=status,
        delivery_date=today() + timedelta(days=delivery) if status in AFTER_ORDER else None,
        received_quantity=received if status in AFTER_RECEIPT else 0,
    )
    # What needs the request's id, or follows from its state: written once more, if any.
    later: list[str] = []
    if status in AFTER_ORDER:
        request.po_number = f"PO-{request.pk:06d}"
        later.append("po_number")
    if status in (Status.INVOICED, Status.PAID):
        request.invoice_number = f"INV-{spec.key.upper()}"
        request.invoice_amount = Decimal(spec.invoice) if spec.invoice else amount
        later += ["invoice_number", "invoice_amount"]
    if status == Status.PAID:
        request.payment_method = "bank_transfer"
        later.append("payment_method")
    if later:
        request.save(update_fields=later)
    return 1


def _recompute_committed() -> None:
    """Committed budget = what the requests hold: reserved amounts, and what was paid."""
    for center in CostCenter.objects.all():
        requests = PurchaseRequest.objects.filter(cost_center=center)
        reserved = requests.filter(status__in=RESERVED).aggregate(s=Sum("amount"))["s"]
        paid = requests.filter(status=Status.PAID).aggregate(s=Sum("invoice_amount"))["s"]
        center.committed = (reserved or Decimal("0")) + (paid or Decimal("0"))
        center.save(update_fields=["committed"])
