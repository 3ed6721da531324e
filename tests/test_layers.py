"""The core's imports go one way (issue 51, debt 4): no module of the package imports,
directly or through others, a module that imports it back — not even through an import
deferred into a function, which grimp sees as import-linter does."""

from __future__ import annotations

import grimp

PACKAGE = "affordances"


def _module_graph() -> dict[str, set[str]]:
    """Module → modules it imports, inside the package (sub-packages' modules as
    themselves)."""
    graph = grimp.build_graph(PACKAGE)
    edges: dict[str, set[str]] = {}
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported.startswith(PACKAGE + ".") and imported != module:
                edges.setdefault(module, set()).add(imported)
    return edges


def _cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_the_package():
    # Packages' __init__ modules re-export their faces' parts: an __init__ importing its
    # own sub-modules is not a cycle of the design.
    edges = {
        module: {imported for imported in imports if not imported.startswith(module + ".")}
        for module, imports in _module_graph().items()
    }
    assert _cycles(edges) == []


def test_the_architecture_page_shows_the_layers_the_code_has():
    from tests import architecture

    page = architecture.PAGE.read_text()
    assert architecture.page_with_diagram(page) == page, (
        "docs/explanation/architecture.md's diagram is not the code's: "
        "python -m tests.architecture --write"
    )
    # Every arrow goes down: a layer imports only layers below it.
    for source, target in __import__("re").findall(r"L(\d+) --> L(\d+)", page):
        assert int(source) < int(target), (source, target)
