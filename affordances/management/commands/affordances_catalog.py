from __future__ import annotations

import json
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from rest_framework.utils.encoders import JSONEncoder

from affordances.catalog import get_catalog


class Command(BaseCommand):
    help = (
        "Print the operation catalog as JSON (docs/protocol.md#catalog), optionally as one "
        "user sees it."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", help="Username: print only what this user may know about.")
        parser.add_argument("--indent", type=int, default=2)
        parser.add_argument(
            "--resource", help="Resource name (e.g. order): print only its operations."
        )

    def handle(
        self, *args: Any, user: str | None, indent: int, resource: str | None, **options: Any
    ) -> None:
        catalog = get_catalog()
        operations = list(catalog)
        if user is not None:
            try:
                caller = get_user_model().objects.get_by_natural_key(user)
            except get_user_model().DoesNotExist:
                raise CommandError(f"No user named {user!r}.") from None
            operations = catalog.for_user(caller)
        if resource is not None:
            known = {op.resource.name for op in catalog}
            if resource not in known:
                raise CommandError(f"No resource named {resource!r}: {', '.join(sorted(known))}.")
            operations = [op for op in operations if op.resource.name == resource]
        document = {"operations": [catalog.documents[op.name] for op in operations]}
        self.stdout.write(json.dumps(document, cls=JSONEncoder, indent=indent))
