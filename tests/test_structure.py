"""The package's shape: no import cycle between its modules, no module over 400 lines.

`lint-imports` (contracts in pyproject.toml) checks which layer may import which. It has no
contract for a cycle between single modules (`acyclic_siblings` compares packages), so that is
checked here on grimp's graph, the one import-linter builds. Imports inside functions count:
a lazy import hides a cycle from Python at start-up, not from the design.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path

import grimp

PACKAGE = "agent_chat"
PACKAGE_DIR = Path(__file__).resolve().parent.parent / PACKAGE
MAX_LINES = 400


def _internal_graph() -> tuple[grimp.ImportGraph, dict[str, set[str]]]:
    graph = grimp.build_graph(PACKAGE, cache_dir=None)
    edges = {
        module: {m for m in graph.find_modules_directly_imported_by(module) if m in graph.modules}
        for module in graph.modules
    }
    return graph, edges


def _strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components of more than one module, or one that imports
    itself, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, successors = work[-1]
            advanced = False
            for succ in successors:
                if succ not in index:
                    index[succ] = low[succ] = counter
                    counter += 1
                    stack.append(succ)
                    on_stack.add(succ)
                    work.append((succ, iter(sorted(edges[succ]))))
                    advanced = True
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges[node]:
                    found.append(sorted(component))
    return sorted(found)


def _shortest_cycle(start: str, members: set[str], edges: dict[str, set[str]]) -> list[str]:
    """The shortest import path from `start` back to itself inside one component."""
    previous: dict[str, str] = {}
    queue = deque([start])
    seen = {start}
    while queue:
        node = queue.popleft()
        for succ in sorted(edges[node] & members):
            if succ == start:
                path = [node]
                while path[-1] != start:
                    path.append(previous[path[-1]])
                return [*reversed(path), start]
            if succ not in seen:
                seen.add(succ)
                previous[succ] = node
                queue.append(succ)
    raise AssertionError(f"{start} is in no cycle")  # pragma: no cover


def _describe_import(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    if not details:
        return ""
    first = details[0]
    lazy = " (inside a function)" if first.get("is_lazy") else ""
    return f"  l.{first['line_number']}: {first['line_contents']}{lazy}"


def import_cycles() -> list[str]:
    """One readable entry per group of modules that import each other."""
    graph, edges = _internal_graph()
    reports = []
    for component in _strongly_connected(edges):
        lines = [f"{len(component)} modules import each other: {', '.join(component)}"]
        # Shortest cycles until every module of the group is on one: each is an import chain
        # to break.
        covered: set[str] = set()
        for start in component:
            if start in covered:
                continue
            cycle = _shortest_cycle(start, set(component), edges)
            covered.update(cycle)
            lines.append("  cycle:")
            for importer, imported in zip(cycle, cycle[1:], strict=False):
                detail = _describe_import(graph, importer, imported)
                lines.append(f"    {importer} -> {imported}{detail}")
        reports.append("\n".join(lines))
    return reports


def oversized_modules() -> list[str]:
    sizes = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            sizes.append(f"{path.relative_to(PACKAGE_DIR.parent)}: {lines} lines")
    return sizes


def test_no_import_cycle_between_modules() -> None:
    cycles = import_cycles()
    assert not cycles, "import cycles in agent_chat:\n" + "\n".join(cycles)


def test_no_module_is_over_400_lines() -> None:
    offenders = oversized_modules()
    assert not offenders, f"modules over {MAX_LINES} lines (split them):\n" + "\n".join(offenders)


def test_the_cycle_finder_finds_a_cycle() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert _strongly_connected(edges) == [["a", "b", "c"], ["e"]]
    assert _shortest_cycle("a", {"a", "b", "c"}, edges) == ["a", "b", "c", "a"]
    assert _shortest_cycle("e", {"e"}, edges) == ["e", "e"]


def test_pages_read_no_setting_when_they_compile() -> None:
    """Every test stack serves one frontend build (tests/support/builds.py), and a deployment
    builds once for any settings: a component or page that read the environment while the
    pages compile would bake one value into the bundle. Such settings go to the state (run
    time), or into `builds.COMPILE_SETTINGS` if they truly must be compiled in."""
    readers = ("load_settings(", "os.environ", "os.getenv(")
    found = [
        f"{path.relative_to(PACKAGE_DIR)}: {reader}"
        for folder in ("components", "pages")
        for path in sorted((PACKAGE_DIR / folder).rglob("*.py"))
        for reader in readers
        if reader in path.read_text(encoding="utf-8")
    ]
    assert not found, found
