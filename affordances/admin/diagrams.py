"""State diagrams of FSM models: SVG through Graphviz when it is installed, else a table."""

from __future__ import annotations

import shutil
from typing import Any

from django_fsm import FSMFieldMixin

from affordances.catalog import get_catalog
from affordances.resources import Resource

__all__ = ["state_diagram"]


def _edges(resource: Resource, field: FSMFieldMixin, user: Any) -> list[tuple[str, str, str]]:
    edges = []
    for operation in get_catalog().transitions_for(resource.model):
        # Only what this user may know about: a diagram is one more face of the catalog.
        facts = operation.facts
        if facts.field is not field or not operation.permits(user):
            continue
        for source in facts.sources:
            for target in facts.targets:
                edges.append((source, operation.title, target))
    return edges


def _svg(edges: list[tuple[str, str, str]]) -> str | None:
    try:
        import graphviz  # optional: django-fsm-2[graphviz]
    except ImportError:
        return None
    if shutil.which("dot") is None:
        return None
    graph = graphviz.Digraph(graph_attr={"rankdir": "LR"}, node_attr={"shape": "box"})
    for source, title, target in edges:
        graph.edge(source, target, label=title)
    svg: bytes = graph.pipe(format="svg")
    return svg.decode()


def state_diagram(resource: Resource, field: FSMFieldMixin, user: Any) -> dict[str, Any]:
    """``{"field", "svg" (or None), "edges": [(source, operation title, target)]}``.

    The edges are the transitions ``user`` has the capability for.
    """
    edges = _edges(resource, field, user)
    return {"field": field.name, "svg": _svg(edges), "edges": edges}
