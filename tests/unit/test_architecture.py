"""No import circles in the product (issue 39): every module's imports point one way.

``make lint`` checks the same with import-linter's ``acyclic_siblings`` contract
(``setup.cfg``); this test names every circle it finds, module by module, so a failure says
which imports to cut. Imports under ``TYPE_CHECKING`` count: a circle for the type checker is
a circle for a reader too.
"""

from __future__ import annotations

import grimp

PACKAGES = ("volcano_py", "webhooks", "devcluster")


def import_circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in graph.modules:
                continue
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == module:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return circles


def test_the_product_has_no_import_circle() -> None:
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    assert import_circles(graph) == []


def test_the_circle_finder_finds_a_circle() -> None:
    graph = grimp.ImportGraph()
    for module in ("p.a", "p.b", "p.c", "p.d"):
        graph.add_module(module)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.c", imported="p.d")
    assert import_circles(graph) == [["p.a", "p.b", "p.c"]]
