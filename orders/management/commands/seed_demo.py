from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandParser

from orders.services import seed_demo


class Command(BaseCommand):
    help = (
        "Create the demo users, orders (docs/demo.md#demo-data) and, with procurement "
        "installed, its purchase requests. Safe to run again."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password",
            help="Password for every demo user (a random one is generated and printed if omitted).",
        )
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Delete every order and purchase request first, then recreate them.",
        )

    def handle(self, *args: Any, password: str | None, reset: bool, **options: Any) -> None:
        result = seed_demo(password=password, reset=reset)
        self.stdout.write(f"Demo users: {', '.join(result.usernames)}")
        if result.password_generated:
            self.stdout.write(f"Generated password for every demo user: {result.password}")
        self.stdout.write(f"Orders created: {result.orders_created}")
        if apps.is_installed("procurement"):
            # The demo project's second domain; orders itself does not depend on it.
            from procurement.demo import seed_procurement, seed_procurement_users

            users = seed_procurement_users(password=result.password)
            self.stdout.write(f"Procurement demo users: {', '.join(users)}")
            created = seed_procurement(reset=reset)
            self.stdout.write(f"Purchase requests created: {created}")
