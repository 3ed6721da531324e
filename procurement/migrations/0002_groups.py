"""Create the procurement roles so a fresh database has them.

The auditor role is shared with orders: it gains the right to view purchase requests
and nothing else (no operation), so it reads every request and changes none.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.management import create_permissions
from django.db import migrations

REQUEST = ["view_purchaserequest", "add_purchaserequest", "submit_purchase_request"]
GROUPS = {
    # Requesters see their own requests only (no view permission).
    "requester": ["add_purchaserequest", "submit_purchase_request"],
    "approver": [*REQUEST, "approve_purchase_request"],
    "senior_approver": [*REQUEST, "approve_purchase_request", "approve_large_purchase_request"],
    "buyer": ["view_purchaserequest", "order_purchase_request"],
    "receiving_clerk": ["view_purchaserequest", "receive_purchase_request"],
    "accounts_payable": [
        "view_purchaserequest",
        "invoice_purchase_request",
        "pay_purchase_request",
    ],
}
SHARED = {"auditor": ["view_purchaserequest"]}


def _permissions(apps, codenames):
    Permission = apps.get_model("auth", "Permission")
    permissions = Permission.objects.filter(
        content_type__app_label="procurement", codename__in=codenames
    )
    missing = set(codenames) - set(permissions.values_list("codename", flat=True))
    if missing:
        raise RuntimeError(f"Missing permissions: {sorted(missing)}")
    return permissions


def create_groups(apps, schema_editor):
    # Permissions are normally created after migrate; make sure they exist now.
    app_config = apps.get_app_config("procurement")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    for name, codenames in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.set(_permissions(apps, codenames))
    for name, codenames in SHARED.items():
        group, _ = Group.objects.get_or_create(name=name)
        group.permissions.add(*_permissions(apps, codenames))


def remove_groups(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.filter(name__in=GROUPS).delete()
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in SHARED.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.remove(
                *Permission.objects.filter(
                    content_type__app_label="procurement", codename__in=codenames
                )
            )


class Migration(migrations.Migration):
    dependencies = [
        ("procurement", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        # After orders has set the shared auditor group's permissions (it sets, not adds).
        *([("orders", "0002_groups")] if "orders" in settings.INSTALLED_APPS else []),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
