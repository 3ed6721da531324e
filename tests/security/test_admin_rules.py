"""The admin is no way around the rules, and no way to a 500 — on the library's own models
(the shop of ``tests.generic.shop``, and ``generic.Ticket`` in admins that say nothing).

F5 (found on the demo's purchase requests): every field a rule reads was editable in
every state. Now the change form edits only what the project names per state
(``editable_fields``), checked again under the row lock at save time; the FSM field and
the version are never editable, also on a ``protected=True`` FSM field of a project that
says nothing about them; deleting cannot go around the create operation.

F9: a NUL or other control character in an admin URL or query string is a 400 on every
database (PostgreSQL raised ``DataError``: a 500).

The edits are posted as a browser would: the change page is read, its form filled in
and sent back, with the attacker's values added. What depends on the demo's procurement
(budgets, reservations, four eyes) stays in demo_tests/security/test_admin_rules.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory, override_settings
from django.urls import path
from django.utils import timezone

from affordances.admin import AffordanceAdminMixin
from tests.generic.models import Ticket
from tests.generic.shop import Purchase
from tests.security.admin_forms import edit, read_form
from tests.shop_data import Shop


def superuser(shop: Shop) -> Client:
    client = Client()
    client.force_login(shop.users["admin"])
    return client


# --------------------------------------------------------------------------------------
# The shop: only what the project names is edited
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["p-02", "p-05", "p-07"])
def test_only_a_purchases_description_is_edited_in_the_admin(shop: Shop, key: str) -> None:
    purchase = shop.purchase(key)
    url = f"/admin/generic/purchase/{purchase.pk}/change/"

    response = edit(
        superuser(shop),
        url,
        description="Gift wrapped",
        total="1.00",
        payment_status="failed",
        customer="bob",
        tracking_number="FORGED123",
        delivered_at_0=timezone.localdate().isoformat(),
        delivered_at_1="00:00:00",
        status="cancelled",
        version=42,
    )

    assert response.status_code == 302
    after = shop.purchase(key)
    assert after.description == "Gift wrapped"
    for name in (
        "total",
        "payment_status",
        "customer",
        "tracking_number",
        "delivered_at",
        "status",
    ):
        assert getattr(after, name) == getattr(purchase, name), name
    assert after.version == purchase.version + 1


def test_a_purchase_is_never_deleted_in_the_admin(shop: Shop) -> None:
    purchase = shop.purchase("p-09")
    response = superuser(shop).get(f"/admin/generic/purchase/{purchase.pk}/delete/")
    assert response.status_code == 403
    assert Purchase.objects.filter(pk=purchase.pk).exists()


# --------------------------------------------------------------------------------------
# A project that says nothing: a protected FSM field, no readonly_fields
# --------------------------------------------------------------------------------------


class BareTicketAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    """What a project writes from the README's first step: nothing about state or version."""


class AssigningTicketAdmin(AffordanceAdminMixin, admin.ModelAdmin):
    # Naming the state and the version changes nothing: they are never editable.
    editable_fields = {"open": ["assignee", "state", "version"]}


bare_site = admin.AdminSite(name="bare_ticket_admin")
bare_site.register(Ticket, BareTicketAdmin)
assigning_site = admin.AdminSite(name="assigning_ticket_admin")
assigning_site.register(Ticket, AssigningTicketAdmin)


urlpatterns = [
    path("bare/", bare_site.urls),
    path("assigning/", assigning_site.urls),
]


@pytest.fixture
def ticket_admin(db: None) -> Iterator[Client]:
    models = {**django_settings.AFFORDANCES["MODELS"], "generic.Ticket": {}}
    affordances = {**django_settings.AFFORDANCES, "MODELS": models}
    with override_settings(AFFORDANCES=affordances, ROOT_URLCONF=__name__):
        client = Client()
        client.force_login(get_user_model().objects.create_superuser("root", password="x"))
        yield client


@pytest.mark.parametrize("site", ["bare", "assigning"])
def test_a_protected_fsm_field_is_read_only_without_the_project_saying_so(
    ticket_admin: Client, site: str
) -> None:
    ticket = Ticket.objects.create(assignee="ann")
    url = f"/{site}/generic/ticket/{ticket.pk}/change/"
    _, editable = read_form(ticket_admin, url)
    assert "state" not in editable and "version" not in editable

    response = edit(ticket_admin, url, state="closed", version=7, assignee="bo")

    assert response.status_code == 302  # was a 500: "Direct state modification is not allowed"
    ticket = Ticket.objects.get(pk=ticket.pk)
    assert ticket.state == "open"
    if site == "bare":  # nothing named: nothing editable
        assert (ticket.assignee, ticket.version) == ("ann", 1)
    else:
        assert (ticket.assignee, ticket.version) == ("bo", 2)


def test_the_fsm_field_and_version_are_never_form_fields(ticket_admin: Client) -> None:
    ticket = Ticket.objects.create(assignee="ann")
    request = RequestFactory().get("/")
    request.user = get_user_model().objects.get(username="root")
    for model_admin in (
        BareTicketAdmin(Ticket, bare_site),
        AssigningTicketAdmin(Ticket, bare_site),
    ):
        for obj in (ticket, None):
            form = model_admin.get_form(request, obj)
            assert {"state", "version"}.isdisjoint(form.base_fields)
            assert {"state", "version"} <= set(model_admin.get_readonly_fields(request, obj))


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
    "all=&status__exact=pending%00",
    "_changelist_filters=status__exact%3D%00",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize(
    "changelist", ["/admin/generic/purchase/", "/admin/affordances/auditrecord/"]
)
def test_a_control_character_in_a_changelist_query_is_a_400(
    shop: Shop, changelist: str, query: str
) -> None:
    response = superuser(shop).get(f"{changelist}?{query}")
    assert response.status_code == 400


def test_a_control_character_is_a_400_on_every_admin_page_of_a_model(shop: Shop) -> None:
    client = superuser(shop)
    pk = shop.purchase("p-01").pk
    base = "/admin/generic/purchase/"
    for url in (
        f"{base}{pk}/change/?_changelist_filters=%00",
        f"{base}{pk}/history/?q=%00",
        f"{base}{pk}/delete/?x=%00",
        f"{base}{pk}/operation/confirm_purchase/?x=%00",
        f"{base}catalog/?x=%00",
        f"{base}add/?x=%00",
        f"{base}%00/change/",
        f"{base}1%00/history/",
        f"{base}{pk}/operation/confirm%00/",
    ):
        assert client.get(url).status_code == 400, url
    # A POST's query string too; nothing ran.
    response = client.post(
        f"{base}{pk}/operation/confirm_purchase/?x=%00", {"expectedVersion": "1"}
    )
    assert response.status_code == 400
    assert Purchase.objects.get(pk=pk).status == "pending"
    # Still answered normally without one.
    assert client.get(f"{base}?status__exact=pending&q=lamp").status_code == 200


@pytest.mark.parametrize("selected", ["\x00", "abc", "1.5", ""])
def test_a_bulk_action_on_malformed_ids_is_a_400(shop: Shop, selected: str) -> None:
    response = superuser(shop).post(
        "/admin/generic/purchase/", {"action": "delete_selected", "_selected_action": [selected]}
    )
    assert response.status_code == 400
