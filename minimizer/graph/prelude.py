"""What a program lifted out of a script takes from it: the script's imports and compiler configuration, and the
definitions of what the lifted call needs (a backend the script defines, the compiled function itself), with the
top-level definitions those read.

Both lifts use it: the graph lift's emitted module (``minimizer.graph.emit``) and the source lift's program
(``minimizer.source.lift``).
"""

from __future__ import annotations

import ast
from typing import Iterable

from minimizer.syntax import parse_python

# The module name a script runs under (``runpy.run_path(..., run_name="__main__")``): a backend or function it
# defines is recorded as ``__main__:name``.
SCRIPT_MODULE = "__main__"


def script_backend(backend: str) -> str | None:
    """The name of a backend the script itself defines (recorded as ``__main__:name``, or made by a factory it
    defines, ``__main__:factory(scale=2.0)``), else ``None``."""

    module, sep, name = backend.partition(":")
    return name.partition("(")[0] if sep and module == SCRIPT_MODULE else None


def imports_by_name(prelude: str, module: str, name: str) -> bool:
    """Whether the prelude binds ``name`` by ``from module import name``."""

    try:
        tree = parse_python(prelude)
    except SyntaxError:
        return False
    return any(
        isinstance(node, ast.ImportFrom) and node.module == module and any(a.name == name and a.asname is None for a in node.names)
        for node in tree.body
    )


def prelude_names(prelude: str) -> set[str]:
    """Names the prelude binds (imports, assignments), so generated names never shadow them."""

    try:
        tree = parse_python(prelude)
    except SyntaxError:
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
    return names


_CONFIG_WORDS = ("config", "backends", "set_float32_matmul_precision", "use_deterministic_algorithms",
                 "set_default_dtype", "set_default_device", "set_flush_denormal", "set_grad_enabled", "set_autocast")  # fmt: skip


def prelude_from_script(source: str, carried: Iterable[str] = ()) -> str:
    """The original script's top-level imports and compiler configuration, as source text, then the script's own
    definitions of the names ``carried`` (a backend the script defines, compiled by that name).

    Kept: ``import`` statements; assignments to attributes of imported modules that configure torch
    (``torch._inductor.config.x = ...``, ``torch.backends.cudnn.allow_tf32 = ...``); calls of functions that
    were imported by name (``plant_miscompile()``) and configuration calls of torch. These stand for the
    compiler's state; the source reducer removes the ones the bug does not need. A carried name comes with the
    top-level definitions it reads, and theirs (``definitions_read_by``); so do the operators the script registers
    (``torch.library``, ``triton_op``), which a compiled call reaches by ``torch.ops``, not by name.
    """

    try:
        tree = parse_python(source)
    except SyntaxError:
        return ""
    imported_names: set[str] = set()
    module_aliases: set[str] = set()
    kept: list[str] = []
    for statement in tree.body:
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                module_aliases.add((alias.asname or alias.name).split(".")[0])
            kept.append(_source_of(source, statement))
        elif isinstance(statement, ast.ImportFrom):
            if statement.module == "__future__":
                continue
            for alias in statement.names:
                imported_names.add(alias.asname or alias.name)
            kept.append(_source_of(source, statement))
        elif isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if all(_is_config_target(t, module_aliases | imported_names) for t in targets):
                kept.append(_source_of(source, statement))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            dotted = _dotted(statement.value.func)
            if dotted is None:
                continue
            root = dotted.split(".")[0]
            if (root in imported_names and "." not in dotted and root not in ("print",)) or (
                root in module_aliases | imported_names and any(word in dotted for word in _CONFIG_WORDS)
            ):
                kept.append(_source_of(source, statement))
    registrations = _registrations(tree)
    read = {n.id for s in registrations for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    chosen = {id(s) for s in definitions_read_by(tree, {*carried, *read})} | {id(s) for s in registrations}
    kept += [_source_of(source, statement) for statement in tree.body if id(statement) in chosen]
    return "\n".join(kept) + ("\n" if kept else "")


# What registers an operator: ``torch.library`` (``custom_op``, ``register_fake``, ``Library(...)``, ``define``,
# ``impl``) and Triton's ``triton_op``.
_REGISTERING = ("library", "custom_op", "triton_op", "register_fake", "register_autograd", "register_kernel")


def _registrations(tree: ast.Module) -> list[ast.stmt]:
    """The top-level statements that register an operator: a compiled call reaches it by ``torch.ops``, not by a
    name the def-use closure follows. A definition decorated to register, a ``Library`` bound to a name and every
    call on that name, a registering call."""

    found: list[ast.stmt] = []
    libraries: set[str] = set()
    for statement in tree.body:
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef)):
            if any(word in ast.unparse(d) for d in statement.decorator_list for word in _REGISTERING):
                found.append(statement)
        elif isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Call):
            if any(word in (_dotted(statement.value.func) or "") for word in _REGISTERING):
                found.append(statement)
                libraries |= {t.id for t in statement.targets if isinstance(t, ast.Name)}
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            dotted = _dotted(statement.value.func) or ""
            if dotted.split(".")[0] in libraries or any(word in dotted for word in _REGISTERING):
                found.append(statement)
    return found


def definitions_read_by(tree: ast.Module, names: Iterable[str]) -> list[ast.stmt]:
    """The top-level ``def``, ``class`` and plain assignments that bind ``names``, and those their code reads,
    transitively, in the script's order (imports are not among them: the prelude has them all)."""

    binders: dict[str, list[ast.stmt]] = {}
    for statement in tree.body:
        for bound in _bound_by(statement):
            binders.setdefault(bound, []).append(statement)
    wanted, chosen = list(names), set()
    while wanted:
        for statement in binders.get(wanted.pop(), []):
            if id(statement) not in chosen:
                chosen.add(id(statement))
                wanted += [n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)]
    return [statement for statement in tree.body if id(statement) in chosen]


def _bound_by(statement: ast.stmt) -> list[str]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Assign, ast.AnnAssign)):
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return [t.id for t in targets if isinstance(t, ast.Name)]
    return []


def _is_config_target(target: ast.expr, roots: set[str]) -> bool:
    dotted = _dotted(target)
    return dotted is not None and "." in dotted and dotted.split(".")[0] in roots and any(
        word in dotted for word in _CONFIG_WORDS
    )


def _dotted(expr: ast.expr) -> str | None:
    parts = []
    while isinstance(expr, ast.Attribute):
        parts.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    parts.append(expr.id)
    return ".".join(reversed(parts))


def _source_of(source: str, statement: ast.stmt) -> str:
    """``statement``'s text in ``source``, with its decorators (``ast`` starts a decorated definition at ``def``)."""

    decorators = getattr(statement, "decorator_list", [])
    if not decorators:
        return ast.get_source_segment(source, statement) or ast.unparse(statement)
    lines = source.splitlines()
    first = min(d.lineno for d in decorators) - 1
    return "\n".join(lines[first : statement.end_lineno])
