"""docs/demo.md#orders: customers and support may create orders (``orders.add_order``)."""

from __future__ import annotations

from django.db import migrations

GRANTS = {"customer": ["add_order"], "support": ["add_order"]}


def grant(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GRANTS.items():
        group = Group.objects.get(name=name)
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label="orders", codename__in=codenames)
        )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for name, codenames in GRANTS.items():
        group = Group.objects.filter(name=name).first()
        if group is not None:
            group.permissions.remove(
                *Permission.objects.filter(content_type__app_label="orders", codename__in=codenames)
            )


class Migration(migrations.Migration):
    dependencies = [("orders", "0002_groups")]

    operations = [migrations.RunPython(grant, revoke)]
