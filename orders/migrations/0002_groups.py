"""Create the demo roles (docs/demo.md#orders) so a fresh database has them."""

from __future__ import annotations

from django.contrib.auth.management import create_permissions
from django.db import migrations

GROUPS = {
    "customer": ["cancel_order"],
    "support": ["view_order", "confirm_order", "cancel_order"],
    "warehouse": ["view_order", "ship_order", "deliver_order"],
    "supervisor": [
        "view_order",
        "confirm_order",
        "cancel_order",
        "cancel_high_value_order",
        "refund_order",
    ],
    "auditor": ["view_order"],
}


def create_groups(apps, schema_editor):
    # Permissions are normally created after migrate; make sure they exist now.
    app_config = apps.get_app_config("orders")
    app_config.models_module = True
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GROUPS.items():
        group, _ = Group.objects.get_or_create(name=name)
        permissions = Permission.objects.filter(
            content_type__app_label="orders", codename__in=codenames
        )
        missing = set(codenames) - set(permissions.values_list("codename", flat=True))
        if missing:
            raise RuntimeError(f"Missing permissions for group {name}: {sorted(missing)}")
        group.permissions.set(permissions)


def remove_groups(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name__in=GROUPS).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("orders", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_groups, remove_groups)]
