from __future__ import annotations

from typing import Any

from django.apps import apps
from django.core.management.base import BaseCommand, CommandParser

from orders.services import seed_demo


class Command(BaseCommand):
    help = (
        "Create the demo users, orders (docs/demo.md#demo-data) and, with procurement "
        "installed, its purchase requests. Safe to run again: without --password, users "
        "that exist keep their password."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--password",
            help=(
                "Password for every demo user, existing ones included. Without it, new "
                "users get a generated one (printed) and existing users keep theirs."
            ),
        )
        parser.add_argument(
            "--reset",
            action="store_true",
            help="Delete every order and purchase request first, then recreate them.",
        )

    def handle(self, *args: Any, password: str | None, reset: bool, **options: Any) -> None:
        result = seed_demo(password=password, reset=reset)
        usernames, kept = list(result.usernames), list(result.kept)
        self.stdout.write(f"Demo users: {', '.join(result.usernames)}")
        self.stdout.write(f"Orders created: {result.orders_created}")
        if apps.is_installed("procurement"):
            # The demo project's second domain; orders itself does not depend on it.
            from procurement.demo import seed_procurement, seed_procurement_users

            users = seed_procurement_users(
                password=result.password, keep_passwords=result.password_generated
            )
            usernames += users.usernames
            kept += users.kept
            self.stdout.write(f"Procurement demo users: {', '.join(users.usernames)}")
            created = seed_procurement(reset=reset)
            self.stdout.write(f"Purchase requests created: {created}")
        # Say what happened to every password: a rerun must not leave someone trying the
        # password they were told when it was replaced, nor hide one it generated.
        if not result.password_generated:
            self.stdout.write("Password: the one given, now every demo user's (theirs replaced).")
        elif len(kept) < len(usernames):
            new = ", ".join(name for name in usernames if name not in kept)
            self.stdout.write(f"Generated password for the new users ({new}): {result.password}")
        if kept:
            self.stdout.write(
                f"Kept their password: {', '.join(kept)} (--password PW sets one for all)."
            )
