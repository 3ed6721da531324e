"""``manage.py affordances_schemas``: the protocol's JSON Schemas, as files.

The committed ``docs/schemas/*.schema.json`` are this command's output
(``python manage.py affordances_schemas docs/schemas``); ``--check`` reports files that
differ from what the library says, and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from affordances.protocol import SCHEMA_NAMES, schema_text


class Command(BaseCommand):
    help = (
        "Write the protocol's JSON Schemas (docs/protocol.md#schemas) into DIRECTORY as "
        "{name}.schema.json, or print one with --name."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("directory", nargs="?", help="Where to write the files.")
        parser.add_argument("--name", choices=SCHEMA_NAMES, help="Print this schema only.")
        parser.add_argument(
            "--check",
            action="store_true",
            help="Write nothing; fail when a file in DIRECTORY is missing or differs.",
        )

    def handle(
        self, *args: Any, directory: str | None, name: str | None, check: bool, **options: Any
    ) -> None:
        if name is not None:
            self.stdout.write(schema_text(name), ending="")
            return
        if directory is None:
            raise CommandError("Name a DIRECTORY (or a schema with --name).")
        root = Path(directory)
        stale = []
        for schema in SCHEMA_NAMES:
            path = root / f"{schema}.schema.json"
            text = schema_text(schema)
            if check:
                if not path.exists() or path.read_text(encoding="utf-8") != text:
                    stale.append(str(path))
                continue
            root.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            self.stdout.write(str(path))
        if stale:
            raise CommandError(f"Not what the library says (run without --check): {stale}")
