"""The shape of the house, checked from the code's own imports (AST): no import cycle inside caplib, no module that
reaches into another module's private names, no module too long to hold in one's head."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "caplib"
MAX_LINES = 600


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``from X import ...`` names (relative imports resolved against ``module``)."""
    if node.level == 0:
        return node.module or ""
    package = module.split(".") if MODULES[module].name == "__init__.py" else module.split(".")[:-1]
    base = package[: len(package) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def imports(module: str) -> list[tuple[str, str | None]]:
    """(imported caplib module, imported name or None) of every import statement of ``module``, at any depth."""
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(MODULES[module].read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("caplib")]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node)
            if not target.startswith("caplib"):
                continue
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.append((submodule, None) if submodule in MODULES else (target, alias.name))
    return found


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module in MODULES:
        targets = set()
        for target, _ in imports(module):
            # importing caplib.a.b runs caplib.a first: a package's __init__ counts as imported
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            if target and target != module and not (MODULES[target].name == "__init__.py"
                                                    and module.startswith(f"{target}.")):
                targets.add(target)
        graph[module] = targets
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a list of nodes (first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_tree():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycle_inside_caplib():
    assert find_cycle(_graph()) is None


def test_no_module_imports_a_private_name_of_another():
    offenders = [f"{module} imports {name} from {target}" for module in MODULES
                 for target, name in imports(module) if name and name.startswith("_") and target != module
                 and name != "__version__"]
    assert offenders == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_is_longer_than_600_lines(module):
    lines = len(MODULES[module].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{MODULES[module]} has {lines} lines"


def test_the_checks_see_the_whole_package():
    assert {"caplib.cap", "caplib.nli", "caplib.checkpoints", "caplib.scoring"} <= set(MODULES)
    assert ("caplib.checkpoints", "resolve_checkpoint") in imports("caplib.nli")
