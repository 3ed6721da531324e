"""The admin is no way around the rules of the demo's procurement, and no way to a 500.

What holds on any model (only named fields edited, no deletion around a create, the FSM
field and the version never editable, control characters refused) is tested on the
library's own models in tests/security/test_admin_rules.py; here, the procurement's
budgets, reservations and four eyes, and the demo's user admin.

F5: a superuser saved ``quantity=1000`` on an approved purchase request in the change
form; cancelling it then released 100,000 of a 100 reservation. Every field a rule, the
budget or the four-eyes check reads was editable in every state. Now the change form
edits only what the project names per state (``editable_fields``), checked again under
the row lock at save time; the FSM field and the version are never editable, also on a
``protected=True`` FSM field of a project that says nothing about them; "save as new"
and deleting cannot go around the create operation or a reservation.

F9: a NUL or other control character in an admin URL or query string is a 400 on every
database (PostgreSQL raised ``DataError``: a 500).

The edits are posted as a browser would: the change page is read, its form filled in
and sent back, with the attacker's values added.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.messages import get_messages
from django.db import transaction
from django.db.models import Sum
from django.test import Client, override_settings
from django.urls import path
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from affordances.catalog import get_catalog
from affordances.execution import perform, perform_create
from affordances.models import AuditRecord
from affordances.problems import Problem
from demo_tests.conftest import ProcurementDemo
from procurement.admin import PurchaseRequestAdmin
from procurement.demo import RESERVED
from procurement.models import CostCenter, PurchaseRequest, Status, Supplier
from procurement.rules import approval_limit, delivery_dates, today
from tests.security.admin_forms import edit, post_edit, read_form


def messages_of(response: Any) -> list[str]:
    return [str(message) for message in get_messages(response.wsgi_request)]


# --------------------------------------------------------------------------------------
# Procurement helpers
# --------------------------------------------------------------------------------------


def pr_url(pk: int, view: str = "change") -> str:
    return f"/admin/procurement/purchaserequest/{pk}/{view}/"


def superuser(users: dict[str, Any]) -> Client:
    client = Client()
    client.force_login(users["admin"])
    return client


def user(name: str) -> Any:
    # A fresh user object: has_perm caches permissions on the instance.
    return get_user_model().objects.get(username=name)


def run(name: str, pk: int, who: str, arguments: dict[str, Any] | None = None) -> None:
    """One operation through the execution path, as every face runs it."""
    perform(
        operation=get_catalog().lookup(name),
        pk=pk,
        user=user(who),
        arguments=arguments or {},
        via="api",
        represent=lambda obj: {"id": obj.pk},
    )


def create(who: str, *, cost_center: str = "IT", quantity: int = 1, price: str = "100.00") -> int:
    outcome = perform_create(
        operation=get_catalog().create_for(PurchaseRequest),
        user=user(who),
        arguments={
            "title": "Pens",
            "costCenter": cost_center,
            "supplier": "Acme Office",
            "quantity": quantity,
            "unitPrice": price,
            "neededBy": (today() + timedelta(days=30)).isoformat(),
        },
        via="api",
        represent=lambda obj: {"id": obj.pk},
    )
    return int(outcome.body["id"])


def live_commitments() -> dict[int, Decimal]:
    """What each cost center's requests hold: reserved amounts, and what was paid."""
    held: dict[int, Decimal] = {}
    for center in CostCenter.objects.all():
        requests = PurchaseRequest.objects.filter(cost_center=center)
        reserved = requests.filter(status__in=RESERVED).aggregate(s=Sum("amount"))["s"]
        paid = requests.filter(status=Status.PAID).aggregate(s=Sum("invoice_amount"))["s"]
        held[center.pk] = (reserved or Decimal("0")) + (paid or Decimal("0"))
    return held


def assert_budgets_consistent(*, within_budget: bool = True) -> None:
    committed = dict(CostCenter.objects.values_list("pk", "committed"))
    assert committed == live_commitments()
    if within_budget:  # (paying an invoice a little above the amount may exceed it)
        for center in CostCenter.objects.all():
            assert center.remaining >= 0, center


def assert_approvals_within_rules() -> None:
    """Every approved request was approved within its approver's limit, never by its
    requester — as it is now, whatever was edited since."""
    approvals = AuditRecord.objects.filter(operation_name="approve_purchase_request")
    for record in approvals.order_by("id"):
        request = PurchaseRequest.objects.get(pk=int(record.object_id))
        approver = get_user_model().objects.get(pk=record.user_id)
        assert request.requester_id != approver.pk, request
        assert request.amount <= approval_limit(approver), request


def request_row(pk: int) -> dict[str, Any]:
    return PurchaseRequest.objects.filter(pk=pk).values().get()


# --------------------------------------------------------------------------------------
# F5: the reported attack, through the real admin views
# --------------------------------------------------------------------------------------


def test_f5_an_approved_requests_quantity_cannot_be_edited_and_cancelling_keeps_the_budget(
    procurement: ProcurementDemo,
) -> None:
    center = CostCenter.objects.get(code="IT")
    pk = create("rita")
    run("submit_purchase_request", pk, "rita")
    run("approve_purchase_request", pk, "approver")
    assert CostCenter.objects.get(pk=center.pk).committed == center.committed + 100

    response = edit(superuser(procurement.users), pr_url(pk), quantity=1000)

    assert response.status_code == 302
    request = PurchaseRequest.objects.get(pk=pk)
    assert (request.quantity, request.amount, request.version) == (1, Decimal("100.00"), 3)
    assert_budgets_consistent()
    run("cancel_purchase_request", pk, "buyer", {"reason": "duplicate"})
    assert CostCenter.objects.get(pk=center.pk).committed == center.committed
    assert_budgets_consistent()


def _attack(users: dict[str, Any]) -> dict[str, Any]:
    """A value for every field a rule, the budget or four eyes reads, and more."""
    return {
        "quantity": 1000,
        "unit_price": "99999.00",
        "cost_center": CostCenter.objects.get(code="MKT").pk,
        "supplier": Supplier.objects.get(name="Globex").pk,
        "requester": users["approver"].pk,
        "received_quantity": 0,
        "invoice_amount": "1.00",
        "invoice_number": "FORGED",
        "needed_by": (today() + timedelta(days=400)).isoformat(),
        "delivery_date": (today() + timedelta(days=400)).isoformat(),
        "quote_reference": "Q-999",
        "po_number": "PO-FORGED",
        "title": "Edited",
        "expedited": "on",
        "insured": "on",
        "recalled": "on",
        "claim": "forged",
        "payment_method": "card",
        "status": "paid",
        "version": 99,
        "amount": "1.00",
    }


@pytest.mark.parametrize(
    "key",
    ["pr-03", "pr-11", "pr-16", "pr-19", "pr-20", "pr-21", "pr-23", "pr-24", "pr-26"],
)
def test_no_field_of_a_request_past_its_draft_is_edited_in_the_admin(
    procurement: ProcurementDemo, key: str
) -> None:
    pk = procurement.request(key).pk
    before, records = request_row(pk), AuditRecord.objects.count()
    budgets = dict(CostCenter.objects.values_list("pk", "committed"))
    client = superuser(procurement.users)

    _, editable = read_form(client, pr_url(pk))
    page = client.get(pr_url(pk)).content.decode()
    response = edit(client, pr_url(pk), **_attack(procurement.users))

    assert editable == set()
    assert 'name="_save"' not in page  # nothing to save in this state
    assert 'data-operation="' in page  # the operations remain
    assert response.status_code == 302
    assert request_row(pk) == before
    assert AuditRecord.objects.count() == records
    assert dict(CostCenter.objects.values_list("pk", "committed")) == budgets
    assert_budgets_consistent()


def test_a_draft_is_edited_within_the_create_bounds_and_approved_for_its_new_amount(
    procurement: ProcurementDemo,
) -> None:
    pk = procurement.request("pr-01").pk  # rita's draft, 10 x 45.00 on IT
    client = superuser(procurement.users)
    _, editable = read_form(client, pr_url(pk))
    assert editable == {"title", "supplier", "quantity", "unit_price", "needed_by"}
    assert 'name="_save"' in client.get(pr_url(pk)).content.decode()

    too_many = edit(client, pr_url(pk), quantity=100001)
    assert too_many.status_code == 200  # the form again, with the create input's bound
    assert PurchaseRequest.objects.get(pk=pk).quantity == 10

    acme = Supplier.objects.get(name="Acme Office").pk
    changes = {"quantity": 12, "unit_price": "90.00", "supplier": acme}
    response = edit(client, pr_url(pk), **_attack(procurement.users) | changes)
    assert response.status_code == 302
    request = PurchaseRequest.objects.get(pk=pk)
    assert (request.quantity, request.amount, request.version) == (12, Decimal("1080.00"), 2)
    assert (request.requester.username, request.cost_center.code) == ("rita", "IT")
    assert (request.status, request.quote_reference, request.po_number) == ("draft", "", "")
    (record,) = AuditRecord.objects.filter(
        object_id=str(pk), operation_name="edit_purchase_request"
    )
    changed = ["needed_by", "quantity", "title", "unit_price"]
    assert record.arguments["changed"] == changed
    assert set(record.arguments["from"]) == set(record.arguments["to"]) == set(changed)
    assert (record.arguments["from"]["quantity"], record.arguments["to"]["quantity"]) == (10, 12)

    center = CostCenter.objects.get(code="IT")
    run("submit_purchase_request", pk, "rita")
    run("approve_purchase_request", pk, "senior_approver")
    assert CostCenter.objects.get(pk=center.pk).committed == center.committed + request.amount
    assert_budgets_consistent()
    assert_approvals_within_rules()


def test_a_form_opened_on_a_draft_edits_nothing_once_the_request_is_approved(
    procurement: ProcurementDemo,
) -> None:
    pk = create("rita")
    client = superuser(procurement.users)
    form, editable = read_form(client, pr_url(pk))
    assert "quantity" in editable
    run("submit_purchase_request", pk, "rita")
    run("approve_purchase_request", pk, "approver")

    response = post_edit(client, pr_url(pk), form, quantity=1000)

    assert response.status_code == 302
    assert PurchaseRequest.objects.get(pk=pk).quantity == 1
    assert_budgets_consistent()


def test_the_state_is_checked_again_under_the_row_lock(
    procurement: ProcurementDemo, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The admin read the request as a draft (its form allows the quantity); an approval
    # committed before the save took the row lock. The save must see the approval.
    pk = create("rita")
    stale = PurchaseRequest.objects.get(pk=pk)
    client = superuser(procurement.users)
    form, _ = read_form(client, pr_url(pk))
    run("submit_purchase_request", pk, "rita")
    run("approve_purchase_request", pk, "approver")
    monkeypatch.setattr(
        PurchaseRequestAdmin, "get_object", lambda *args, **kwargs: copy.deepcopy(stale)
    )

    response = post_edit(client, pr_url(pk), form, quantity=1000)

    assert response.status_code == 302
    assert response["Location"] == pr_url(pk)
    (message,) = messages_of(response)
    assert message.startswith("Nothing was saved. quantity: Not editable while")
    request = PurchaseRequest.objects.get(pk=pk)
    assert (request.quantity, request.status, request.version) == (1, "approved", 3)
    assert_budgets_consistent()


def test_save_as_new_cannot_create_a_request_outside_the_create_operation(
    procurement: ProcurementDemo,
) -> None:
    pk = procurement.request("pr-11").pk
    client = superuser(procurement.users)
    form, _ = read_form(client, pr_url(pk))
    count = PurchaseRequest.objects.count()

    response = client.post(
        pr_url(pk),
        {**form, **{k: str(v) for k, v in _attack(procurement.users).items()}, "_saveasnew": "1"},
    )

    assert response.status_code == 403
    assert PurchaseRequest.objects.count() == count
    assert_budgets_consistent()


@pytest.mark.parametrize("key", ["pr-11", "pr-16", "pr-20", "pr-23"])
def test_a_request_holding_budget_cannot_be_deleted_in_the_admin(
    procurement: ProcurementDemo, key: str
) -> None:
    pk = procurement.request(key).pk
    client = superuser(procurement.users)

    assert client.get(pr_url(pk, "delete")).status_code == 403
    assert client.post(pr_url(pk, "delete"), {"post": "yes"}).status_code == 403
    bulk = client.post(
        "/admin/procurement/purchaserequest/",
        {"action": "delete_selected", "_selected_action": [str(pk)], "post": "yes"},
    )
    assert bulk.status_code == 403
    assert PurchaseRequest.objects.filter(pk=pk).exists()
    assert_budgets_consistent()


def test_a_draft_may_be_deleted_in_the_admin(procurement: ProcurementDemo) -> None:
    pk = procurement.request("pr-01").pk
    response = superuser(procurement.users).post(pr_url(pk, "delete"), {"post": "yes"})
    assert response.status_code == 302
    assert not PurchaseRequest.objects.filter(pk=pk).exists()
    assert_budgets_consistent()


def test_a_cost_center_edit_never_writes_back_the_committed_budget(
    procurement: ProcurementDemo,
) -> None:
    center = CostCenter.objects.get(code="IT")
    url = f"/admin/procurement/costcenter/{center.pk}/change/"
    client = superuser(procurement.users)
    below = edit(client, url, budget=str(center.committed - 1))
    assert below.status_code == 200  # refused: the form again
    assert CostCenter.objects.get(pk=center.pk).budget == center.budget

    # An approval commits between the admin's read of the cost center and its save.
    pk = procurement.request("pr-03").pk
    original = CostCenterAdminSaveHook.install(
        lambda: run("approve_purchase_request", pk, "approver")
    )
    try:
        response = edit(client, url, name="IT renamed", committed="0.00")
    finally:
        CostCenterAdminSaveHook.uninstall(original)
    assert response.status_code == 302
    center = CostCenter.objects.get(pk=center.pk)
    assert center.name == "IT renamed"
    assert_budgets_consistent()


class CostCenterAdminSaveHook:
    """Run something just before the cost center admin saves (a concurrent approval)."""

    @staticmethod
    def install(before: Callable[[], None]) -> Any:
        from procurement.admin import CostCenterAdmin

        original = CostCenterAdmin.save_model

        def save_model(self: Any, request: Any, obj: Any, form: Any, change: bool) -> None:
            before()
            original(self, request, obj, form, change)

        CostCenterAdmin.save_model = save_model  # type: ignore[method-assign]
        return original

    @staticmethod
    def uninstall(original: Any) -> None:
        from procurement.admin import CostCenterAdmin

        CostCenterAdmin.save_model = original  # type: ignore[method-assign]


@pytest.mark.parametrize(("key", "saved"), [("pr-11", False), ("pr-01", True)])
def test_a_list_editable_change_goes_through_the_same_check(
    procurement: ProcurementDemo, key: str, saved: bool
) -> None:
    request = procurement.request(key)
    client = superuser(procurement.users)
    with override_settings(ROOT_URLCONF=__name__):
        changelist = f"/listing/procurement/purchaserequest/?id__exact={request.pk}"
        assert client.get(changelist).status_code == 200
        response = client.post(
            changelist,
            {
                "form-TOTAL_FORMS": "1",
                "form-INITIAL_FORMS": "1",
                "form-MIN_NUM_FORMS": "0",
                "form-MAX_NUM_FORMS": "1000",
                "form-0-id": str(request.pk),
                "form-0-quantity": "1000",
                "_save": "Save",
            },
        )
    assert response.status_code == 302
    after = PurchaseRequest.objects.get(pk=request.pk)
    assert after.quantity == (1000 if saved else request.quantity)
    if not saved:
        (message,) = messages_of(response)
        assert message.startswith("Nothing was saved. quantity: Not editable while")
    assert_budgets_consistent()


# --------------------------------------------------------------------------------------
# A project that edits in the change list
# --------------------------------------------------------------------------------------


class ListEditingRequestAdmin(PurchaseRequestAdmin):
    """A project that edits quantities right in the change list."""

    list_display = ["id", "title", "quantity", "status"]
    list_editable = ["quantity"]


listing_site = admin.AdminSite(name="listing_admin")
listing_site.register(PurchaseRequest, ListEditingRequestAdmin)

urlpatterns = [path("listing/", listing_site.urls)]


# --------------------------------------------------------------------------------------
# F9: control characters in admin URLs are a 400 on every database
# --------------------------------------------------------------------------------------

QUERIES = [
    "status__exact=%00",
    "q=%00",
    "q=a%00b",
    "o=%00",
    "p=%00",
    "%00=1",
    "status__exact=%01",
    "q=%1F",
    "q=%7F",
    "q=%C2%85",  # NEL, a C1 control
    "all=&status__exact=draft%00",
    "_changelist_filters=status__exact%3D%00",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    "changelist",
    ["/admin/procurement/purchaserequest/"],
)
def test_a_control_character_in_a_changelist_query_is_a_400(
    procurement: ProcurementDemo, changelist: str, query: str
) -> None:
    response = superuser(procurement.users).get(f"{changelist}?{query}")
    assert response.status_code == 400


def test_a_control_character_is_a_400_on_every_admin_page_of_a_model(
    procurement: ProcurementDemo,
) -> None:
    client = superuser(procurement.users)
    pk = procurement.request("pr-03").pk
    base = "/admin/procurement/purchaserequest/"
    for url in (
        f"{base}{pk}/change/?_changelist_filters=%00",
        f"{base}{pk}/history/?q=%00",
        f"{base}{pk}/delete/?x=%00",
        f"{base}{pk}/operation/approve_purchase_request/?x=%00",
        f"{base}catalog/?x=%00",
        f"{base}add/?x=%00",
        f"{base}%00/change/",
        f"{base}1%00/history/",
        f"{base}{pk}/operation/approve%00/",
        "/admin/procurement/costcenter/?q=%00",
        "/admin/procurement/supplier/?blocked__exact=%00",
    ):
        assert client.get(url).status_code == 400, url
    # A POST's query string too; nothing ran.
    response = client.post(
        f"{base}{pk}/operation/approve_purchase_request/?x=%00", {"expectedVersion": "1"}
    )
    assert response.status_code == 400
    assert PurchaseRequest.objects.get(pk=pk).status == Status.SUBMITTED
    # Still answered normally without one.
    assert client.get(f"{base}?status__exact=draft&q=lamp").status_code == 200


@pytest.mark.parametrize("selected", ["\x00", "abc", "1.5", ""])
def test_a_bulk_action_on_malformed_ids_is_a_400(
    procurement: ProcurementDemo, selected: str
) -> None:
    client = superuser(procurement.users)
    for changelist in ("/admin/procurement/purchaserequest/",):
        response = client.post(
            changelist, {"action": "delete_selected", "_selected_action": [selected]}
        )
        assert response.status_code == 400, changelist


# --------------------------------------------------------------------------------------
# The property: whatever runs and whatever the admin saves, the budget holds
# --------------------------------------------------------------------------------------

PROPERTY = settings(
    max_examples=50,
    deadline=None,
    derandomize=True,
    database=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _arguments(name: str, request: PurchaseRequest, choice: int) -> dict[str, Any]:
    if name == "reject_purchase_request":
        return {"reason": "not_needed"}
    if name == "request_changes_purchase_request":
        return {"note": "Fewer, please."}
    if name == "attach_quote_purchase_request":
        return {"quoteReference": "Q-1234"}
    if name == "order_purchase_request":
        return {"deliveryDate": delivery_dates(request)[0]}
    if name == "cancel_purchase_request":
        return {"reason": "duplicate"}
    if name == "receive_purchase_request":
        return {"quantity": max(1, request.quantity - choice % 2)}
    if name == "invoice_purchase_request":
        value = request.unit_price * request.received_quantity
        return {"invoiceNumber": "INV-1", "amount": str(value if choice % 3 else value + 1)}
    if name == "pay_purchase_request":
        return {"paymentMethod": "bank_transfer"}
    return {}


# (operation, who runs it: a role, or "requester" for the request's own requester)
OPERATIONS = [
    ("submit_purchase_request", "requester"),
    ("attach_quote_purchase_request", "requester"),
    ("withdraw_purchase_request", "requester"),
    ("approve_purchase_request", "approver"),
    ("approve_purchase_request", "senior_approver"),
    ("approve_purchase_request", "admin"),
    ("approve_purchase_request", "requester"),
    ("reject_purchase_request", "approver"),
    ("request_changes_purchase_request", "senior_approver"),
    ("order_purchase_request", "buyer"),
    ("cancel_purchase_request", "buyer"),
    ("receive_purchase_request", "receiving_clerk"),
    ("invoice_purchase_request", "accounts_payable"),
    ("pay_purchase_request", "accounts_payable"),
]
EDITS: dict[str, list[Any]] = {
    "quantity": [1, 7, 1000, 100001],
    "unit_price": ["0.50", "100.00", "9999.00"],
    "cost_center": ["IT", "MKT", "OPS"],
    "supplier": ["Acme Office", "Globex"],
    "requester": ["rita", "remy", "approver", "senior_approver"],
    "received_quantity": [0, 3],
    "invoice_amount": ["1.00", "100000.00"],
    "needed_by": [1, 400],
    "title": ["Edited"],
}

steps = st.one_of(
    st.tuples(
        st.just("create"),
        st.sampled_from(["rita", "remy"]),
        st.sampled_from(["IT", "MKT", "OPS"]),
        st.integers(1, 40),
        st.sampled_from(["10.00", "100.00", "450.00", "2600.00"]),
    ),
    st.tuples(
        st.just("operation"), st.sampled_from(OPERATIONS), st.integers(0, 200), st.integers(0, 5)
    ),
    st.tuples(
        st.just("edit"), st.sampled_from(sorted(EDITS)), st.integers(0, 200), st.integers(0, 3)
    ),
)


# The reported attack as a sequence: 1 x 100 created, edited as a draft, submitted,
# approved, its quantity edited to 1000 in the admin, cancelled (index 0: the newest).
F5_SEQUENCE = [
    ("create", "rita", "IT", 1, "100.00"),
    ("edit", "quantity", 0, 1),
    ("operation", ("submit_purchase_request", "requester"), 0, 0),
    ("operation", ("approve_purchase_request", "approver"), 0, 0),
    ("edit", "quantity", 0, 2),
    ("operation", ("cancel_purchase_request", "buyer"), 0, 0),
]


def _edit_value(name: str, choice: int) -> Any:
    value = EDITS[name][choice % len(EDITS[name])]
    if name == "cost_center":
        return CostCenter.objects.get(code=value).pk
    if name == "supplier":
        return Supplier.objects.get(name=value).pk
    if name == "requester":
        return user(value).pk
    if name == "needed_by":
        return (today() + timedelta(days=value)).isoformat()
    return value


def test_after_any_operations_and_admin_edits_the_budget_and_approvals_hold(
    procurement: ProcurementDemo,
) -> None:
    client = superuser(procurement.users)
    assert_budgets_consistent()

    @PROPERTY
    @given(st.lists(steps, min_size=1, max_size=10))
    @example(F5_SEQUENCE)
    def sequence(chosen: list[tuple[Any, ...]]) -> None:
        with transaction.atomic():
            for step in chosen:
                # Newest first: small indexes reach the requests this sequence created.
                pks = list(PurchaseRequest.objects.order_by("-pk").values_list("pk", flat=True))
                if step[0] == "create":
                    _, who, code, quantity, price = step
                    with contextlib.suppress(Problem):
                        create(who, cost_center=code, quantity=quantity, price=price)
                elif step[0] == "operation":
                    _, (name, who), index, choice = step
                    request = PurchaseRequest.objects.get(pk=pks[index % len(pks)])
                    runner = request.requester.username if who == "requester" else who
                    with contextlib.suppress(Problem):
                        run(name, request.pk, runner, _arguments(name, request, choice))
                else:
                    _, field, index, choice = step
                    pk = pks[index % len(pks)]
                    response = edit(client, pr_url(pk), **{field: _edit_value(field, choice)})
                    assert response.status_code in (200, 302), response.status_code
                assert_budgets_consistent(within_budget=False)
                assert_approvals_within_rules()
            transaction.set_rollback(True)

    sequence()


def test_the_sites_autocomplete_refuses_control_characters(demo):
    # Django's autocomplete searches through the remote model's admin (here the users'):
    # a NUL in the term was a DataError on PostgreSQL.
    from django.test import Client

    client = Client(raise_request_exception=False)
    client.force_login(demo.users["admin"])
    query = "app_label=orders&model_name=order&field_name=customer&term="
    assert client.get(f"/admin/autocomplete/?{query}%00").status_code == 400
    assert client.get(f"/admin/autocomplete/?{query}a%00b").status_code == 400
    assert client.get("/admin/auth/user/?q=%00").status_code == 400
