"""The house: no import cycles, and imports go one way into the core.

Every import counts — at the top of a module or inside a function — because a lazy import
is still a dependency: it only moves the cycle to run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "compact_dp"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(name: str) -> set[str]:
    """The package's modules that ``name`` imports, anywhere in its code."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            targets = [f"{origin}.{a.name}" for a in node.names] + [origin]
        else:
            continue
        for t in targets:
            while t and t not in MODULES:
                t = t.rsplit(".", 1)[0] if "." in t else ""
            if t and t != name:
                found.add(t)
    return found


GRAPH = {name: imports_of(name) for name in MODULES}


def cycles() -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    return out


def test_no_module_imports_one_that_imports_it_back():
    assert cycles() == []


def test_the_core_imports_nothing_outside_it_but_the_errors():
    for name, deps in GRAPH.items():
        if name.startswith("compact_dp.core"):
            assert deps <= {d for d in MODULES if d.startswith("compact_dp.core")} | \
                {"compact_dp.errors"}, (name, deps)


def test_a_cycle_would_be_found():
    """The checker itself sees a cycle when one is added (and a function-level one)."""
    GRAPH["compact_dp.core.scan"].add("compact_dp.asking")
    try:
        assert any("compact_dp.core.scan" in c for c in cycles())
    finally:
        GRAPH["compact_dp.core.scan"].discard("compact_dp.asking")
    # main imports the typer app inside a function: that still counts
    assert "compact_dp.cli.app" in GRAPH["compact_dp.cli.main"]


def test_the_flow_drawing_names_modules_and_functions_that_exist():
    """docs/house.md's drawing of the flow is the code's: every ``room/module`` it names
    is a module, and every ``module.name`` a name in it (a module named by its last part
    alone must be the only one so named): a rename that forgets the drawing fails here."""
    import importlib
    import re
    text = (PACKAGE.parent / "docs" / "house.md").read_text()
    drawing = text.split("## The flow, from bytes to answer", 1)[1].split("```")[1]

    def module_of(path: str) -> str:
        dotted = path.replace("/", ".")
        found = [n for n in MODULES if n == f"compact_dp.{dotted}" or
                 "/" not in path and n.endswith("." + dotted)]
        assert len(found) == 1, f"docs/house.md's drawing names {path}: {found or 'none'}"
        return found[0]

    paths = set(re.findall(r"\b([a-z_]+/[a-z_]+)\b", drawing))
    names = set(re.findall(r"\b([a-z_]+(?:/[a-z_]+)*)\.([A-Za-z_]+)\b", drawing))
    for path in paths:
        module_of(path)
    for path, name in names:
        module = importlib.import_module(module_of(path))
        assert hasattr(module, name), f"docs/house.md's drawing names {path}.{name}"
    assert len(paths) >= 15 and len(names) >= 15
