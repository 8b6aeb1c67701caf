"""The source lift: the compiled function's own source, called once at module level with arguments like the ones
the script passed at the failing call.

For a bug in Dynamo's tracing no recorded graph shows anything (the graph already holds the wrong branch or the
wrong ``requires_grad``), so the graph lift cannot apply; the source reducer, on its own, keeps the training step
or evaluation loop around the call, because the script's check sits at its end. The capture run recorded each
compiled function's first distinct calls (``minimizer.graph.call_record``); this module writes one as a program:

    <the script's imports and configuration, the function and what it reads>
    features = torch.randn(4, 6, requires_grad=True)
    out = torch.compile(pad_features, backend="aot_eager")(features, width=8)

A compile decorator on the function is left off its definition and the call compiles it explicitly, so every
compile form lifts alike (the eager side calls the same definition). Where the bug is the script's own check
(the ``script`` oracle), the program ends comparing the compiled call with eager; a differential oracle compares
them itself, and the statement stage writes its check.
"""

from __future__ import annotations

import ast
import dataclasses
import textwrap

from minimizer.graph.call_record import Argument, RecordedCall
from minimizer.graph.prelude import SCRIPT_MODULE, prelude_from_script, prelude_names, script_backend
from minimizer.graph.spelling import compile_keywords, mode_lines, nameable, tensor_expression
from minimizer.syntax import parse_python
from oracles.api import Verdict
from oracles.bug import ONLY_UNDER_COMPILE, Bug, same_bug

# Decorators that compile what they decorate: left off the lifted definition, which the call compiles itself.
_COMPILE_WORDS = ("compile", "optimize")


def lifted_program(script: str, call: RecordedCall, *, check: bool, exact: bool = False) -> str | None:
    """The program calling ``call``'s function as the script did, or ``None`` where it cannot be written (the
    function is not the script's own, or an argument is no tensor, literal or dataclass of the script).
    ``check``: end comparing compiled with eager; ``exact``: small floating tensors hold the recorded values."""

    if call.module != SCRIPT_MODULE or not call.writable or not nameable(call.compile):
        return None
    try:
        tree = parse_python(script)
    except SyntaxError:
        return None
    owner, _, name = call.target.rpartition(".")
    definition = _definition(tree, owner, name)
    if definition is None or "." in owner:
        return None
    carried = {owner or name} | {a.text for a in _objects(call)} | {script_backend(call.compile.backend)} - {None}
    prelude = _without_compile_decorators(prelude_from_script(script, carried), owner, name)
    if prelude is None:
        return None
    function = name
    if owner:
        prelude, function = _method_as_function(prelude, owner, name)
    writer = _Writer(prelude, exact)
    parameters = [a.arg for a in definition.args.posonlyargs + definition.args.args]
    arguments = [writer.bind(p, a) for p, a in zip(parameters + [f"arg{i}" for i in range(len(call.args))], call.args)]
    arguments += [f"{key}={writer.bind(key, value)}" for key, value in call.kwargs]
    keywords, imports = compile_keywords(call.compile, prelude)
    lines = [*(f"import {m}" for m in sorted(imports)), prelude.rstrip("\n"), *mode_lines(call.grad_enabled, call.autocast)]
    if "torch" not in prelude_names(prelude):
        lines.insert(0, "import torch")
    # The one bool it returned is read where it sits, at the call (`f(x)[1]['attached']`): the statement's text
    # stays `assert not out` while the function comes to return that bool alone (`return_the_element_read`).
    read = call.returned_at if check and call.returned else ""
    lines += ["", *writer.lines, f"out = torch.compile({', '.join([function, *keywords])})({', '.join(arguments)}){read}"]
    if check and call.returned:
        # It returned a bool: eager gives the other one where the bug is the compiled call's (the run checks it).
        lines += ["assert not out" if call.returned == "True" else "assert out"]
    elif check:
        lines += [f"expected = {function}({', '.join(arguments)})", "torch.testing.assert_close(out, expected)"]
    return "\n".join(lines) + "\n"


def _definition(tree: ast.Module, owner: str, name: str) -> ast.FunctionDef | None:
    """The top-level function ``name``, or the method ``name`` of the top-level class ``owner``."""

    body = tree.body
    if owner:
        classes = [s for s in body if isinstance(s, ast.ClassDef) and s.name == owner]
        if len(classes) != 1:
            return None
        body = classes[0].body
    found = [s for s in body if isinstance(s, ast.FunctionDef) and s.name == name]
    return found[-1] if found else None


def _objects(call: RecordedCall) -> list[Argument]:
    """Every dataclass instance and tensor of the script's own subclass among the call's arguments, at any depth:
    their classes go into the program."""

    found, todo = [], [*call.args, *(value for _, value in call.kwargs)]
    while todo:
        argument = todo.pop()
        found += [argument] if argument.kind == "object" or argument.kind == "tensor" and argument.text else []
        todo += [*argument.items, *(value for _, value in argument.fields)]
    return found


def _without_compile_decorators(prelude: str, owner: str, name: str) -> str | None:
    """``prelude`` with the compile decorators of the lifted function's definition left off."""

    try:
        tree = parse_python(prelude)
    except SyntaxError:
        return None
    definition = _definition(tree, owner, name)
    if definition is None:
        return None
    lines = prelude.splitlines(keepends=True)
    dropped = set()
    for decorator in definition.decorator_list:
        if any(word in ast.unparse(decorator) for word in _COMPILE_WORDS):
            dropped |= set(range(decorator.lineno - 1, (decorator.end_lineno or decorator.lineno)))
    return "".join(line for index, line in enumerate(lines) if index not in dropped)


def _method_as_function(prelude: str, owner: str, name: str) -> tuple[str, str]:
    """``prelude`` with the method ``owner.name`` written out of its class as a function of its own (``self`` its
    first parameter, as Dynamo traces it either way), and that function's name: the passes that drop a parameter
    no call needs, or bind one every call gives the same value, work on functions."""

    tree = parse_python(prelude)
    method = _definition(tree, owner, name)
    assert method is not None  # the prelude holds the class, and the method in it
    lines = prelude.splitlines()
    first = min([method.lineno, *(d.lineno for d in method.decorator_list)]) - 1
    source = textwrap.dedent("\n".join(lines[first : method.end_lineno]))
    top_level = {n.id for s in tree.body for n in ast.walk(s) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    top_level |= {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.ClassDef))}
    function = name if name not in top_level else f"{owner.lower()}_{name}"
    if function != name:
        source = source.replace(f"def {name}(", f"def {function}(", 1)
    return f"{prelude.rstrip()}\n\n\n{source}\n", function


class _Writer:
    """Binds the call's tensors to names (after the parameters they are passed as) and writes the rest inline."""

    def __init__(self, prelude: str, exact: bool):
        self.exact = exact
        self.taken = prelude_names(prelude) | {"torch", "out", "expected"}
        self.lines: list[str] = []

    def bind(self, parameter: str, argument: Argument) -> str:
        if argument.kind != "tensor":
            return self.expression(argument)
        name = parameter
        while name in self.taken:
            name += "_"
        self.taken.add(name)
        self.lines.append(f"{name} = {self.expression(argument)}")
        return name

    def expression(self, argument: Argument) -> str:
        if argument.kind == "tensor":
            spec = argument.spec
            if self.exact and spec.recorded is not None:
                spec = dataclasses.replace(spec, values=spec.recorded)
            made = tensor_expression(spec, grad=spec.requires_grad, device=repr(spec.device))
            return f"{made}.as_subclass({argument.text})" if argument.text else made
        if argument.kind == "sequence":
            items = [self.expression(item) for item in argument.items]
            if argument.text == "tuple":
                return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
            return f"[{', '.join(items)}]"
        if argument.kind == "object":
            fields = ", ".join(f"{key}={self.expression(value)}" for key, value in argument.fields)
            return f"{argument.text}({fields})"
        return argument.text


def lifted_bug(spec: str, pinned: Bug, verdict: Verdict) -> Bug | None:
    """The bug the lifted program's candidates keep, or ``None`` where its run does not show the bug: the
    original's; or, where the bug was the script's own check (failing only under ``torch.compile``), the lifted
    comparison of the compiled call with eager failing only under ``torch.compile``, its recorded evidence (where
    it has any: a bool or number has none) naming the compiled call."""

    if not verdict.fires:
        return None
    lifted = verdict.found
    if same_bug(pinned, lifted):
        return pinned
    if spec != "script" or not lifted.is_assertion or lifted.under_compile != ONLY_UNDER_COMPILE:
        return None
    if lifted.by_a_comparison and not lifted.compares_compiled:
        return None
    return lifted if pinned.under_compile == ONLY_UNDER_COMPILE else None
