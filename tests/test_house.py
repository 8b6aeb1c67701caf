"""The shape of the code: rooms small enough to read, functions that fit on a screen, no import cycles."""

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("minimizer", "oracles")
MOST_LINES_PER_MODULE = 600
MOST_LINES_PER_FUNCTION = 60


def _modules():
    for path in sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        yield path, name, ast.parse(path.read_text())


def _imported(path, name, tree):
    """Modules ``tree`` imports, at any depth (a function's lazy import is still an edge), outside TYPE_CHECKING."""

    skipped = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
               for n in ast.walk(node)}
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            base = node.module
            if node.level:
                package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + [node.module])
            yield base
            yield from (f"{base}.{alias.name}" for alias in node.names)


def test_no_module_is_longer_than_a_room_should_be():
    long = {name: len(path.read_text().splitlines()) for path, name, _ in _modules()}
    assert {n: lines for n, lines in long.items() if lines > MOST_LINES_PER_MODULE} == {}


def test_no_function_is_longer_than_a_screen():
    long = {
        f"{name}.{node.name}": node.end_lineno - node.lineno + 1
        for _, name, tree in _modules()
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    assert {n: lines for n, lines in long.items() if lines > MOST_LINES_PER_FUNCTION} == {}


def test_no_import_cycles():
    modules = list(_modules())
    names = {name for _, name, _ in modules}
    graph = nx.DiGraph()
    for path, name, tree in modules:
        graph.add_edges_from((name, other) for other in _imported(path, name, tree) if other in names and other != name)
    assert list(nx.simple_cycles(graph)) == []
