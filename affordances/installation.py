"""Whether the app's own tables are there: its migrations applied on a database.

One rule for the two places that ask: the database-tagged system check
(``affordances.E048``: ``manage.py check --database default``) and a run whose write
failed with a database error (:mod:`affordances.execution`), which then answers a
problem saying the server is not set up rather than a 500.
"""

from __future__ import annotations

import sys

from django.db import DatabaseError, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.migrations.loader import MigrationLoader

__all__ = ["APP_LABEL", "not_migrated", "running_migrate", "unapplied_migrations"]

APP_LABEL = "affordances"


def unapplied_migrations(connection: BaseDatabaseWrapper) -> list[str] | None:
    """The app's migrations not applied on ``connection``'s database, in the order
    ``migrate`` would apply them; empty where a database router keeps the app's models
    off that database; None when the database cannot be read."""
    from affordances.models import AuditRecord

    if not router.allow_migrate_model(connection.alias, AuditRecord):
        return []
    try:
        loader = MigrationLoader(connection, ignore_no_migrations=True)
    except DatabaseError:
        return None
    applied = loader.applied_migrations or {}
    unapplied: list[str] = []
    for leaf in loader.graph.leaf_nodes(APP_LABEL):
        for app_label, name in loader.graph.forwards_plan(leaf):
            key = (app_label, name)
            if app_label == APP_LABEL and key not in applied and name not in unapplied:
                unapplied.append(name)
    return unapplied


def not_migrated(connection: BaseDatabaseWrapper) -> str | None:
    """Why the app cannot work on ``connection``'s database — its migrations not applied
    — or None (they are, or it cannot tell)."""
    unapplied = unapplied_migrations(connection)
    if not unapplied:
        return None
    return (
        f"The database {connection.alias!r} lacks the tables of the affordances app: its "
        f"migration(s) {', '.join(unapplied)} are not applied, so every run of an "
        "operation fails (its audit record has no table)."
    )


def running_migrate() -> bool:
    """Whether this process is ``manage.py migrate``, whose system checks run before it
    applies the very migrations the check would report (``argv[1]`` is the subcommand,
    as Django's ``ManagementUtility`` reads it)."""
    return sys.argv[1:2] == ["migrate"]
