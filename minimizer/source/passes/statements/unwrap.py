"""Replace a compound statement by the statements it holds: drop the `if`, `with`, `for` or `try` around them.

Scripts wrap their work in `if __name__ == "__main__":`, `with torch.no_grad():`, `try: ... except: ...` and
`def main(): ...` + `main()`; once the repro no longer needs the wrapper, its header is pure noise, and deleting
whole statements cannot remove it without removing the body as well.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import GlobalScope, ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node, replace_nodes
from minimizer.source.passes.items.comprehensions import one_item
from minimizer.source.passes.scopes import metadata
from minimizer.source.traversal import children, parent_map, walk

__all__ = ["unwrap_compound_statements"]



def unwrap_compound_statements(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one compound statement replaced by its body, outer statements first, in source order.

    Per statement: an `if` by its body, then by its `else` body (or by its `elif` chain); a `with` by its body
    unless the body reads an `as` name; a `for` by its body unless the body reads the loop variable; a `try` by
    its body (handlers, `else` and `finally` go). A module-level function without parameters or decorators that is
    referenced exactly once, by a `name(...)` statement at module level, is inlined there and its `def` removed
    (its parameters bound first, `p1, p2 = a1, a2`; not when it returns anything).
    `while` loops stay. A `for` whose body reads the loop variable is replaced by its only iteration (`x, =
    data`, then the body), and `for i, x in enumerate(data)` that never reads `i` by `for x in data`.
    """
    return distinct_candidates(module, _unwrappings(module))


def _unwrappings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    inlinable = _inlinable_functions(module)
    for statement in _compound_statements(module.body):
        if statement in inlinable:
            yield lambda: _inline_function(module, statement, inlinable[statement])
            continue
        for body in _bodies(statement):
            yield lambda: replace_node(module, statement, _flattened(statement, body))
        if isinstance(statement, cst.For) and (simpler := _without_unused_index(statement)) is not None:
            yield lambda: replace_node(module, statement, simpler)


def _compound_statements(statements: Sequence[cst.BaseStatement]) -> Iterator[cst.BaseCompoundStatement]:
    """Compound statements in pre-order (outer first), including those in `else`, `except` and `finally` parts."""
    for statement in statements:
        if isinstance(statement, cst.BaseCompoundStatement):
            yield statement
            for block in _nested_blocks(statement):
                yield from _compound_statements(block.body)


def _nested_blocks(statement: cst.CSTNode) -> Iterator[cst.IndentedBlock]:
    for child in children(statement):
        if isinstance(child, cst.IndentedBlock):
            yield child
        elif isinstance(child, (cst.If, cst.Else, cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)):
            # an `elif` is an If inside the If: its blocks belong to the same statement
            yield from _nested_blocks(child)


def _bodies(statement: cst.BaseCompoundStatement) -> list:
    """What `statement` may be replaced by: suites, or an `elif` chain that can stand as an `if` of its own."""
    if isinstance(statement, cst.If):
        orelse = statement.orelse
        return [statement.body] + ([] if orelse is None else [orelse if isinstance(orelse, cst.If) else orelse.body])
    if isinstance(statement, (cst.Try, cst.TryStar)):
        return [statement.body]
    if isinstance(statement, cst.With):
        bound = [item.asname.name for item in statement.items if item.asname is not None]
        return [] if _reads_any(statement.body, bound) else [statement.body]
    if isinstance(statement, cst.For):
        if not _reads_any(statement.body, [statement.target]):
            return [statement.body]
        return [] if statement.asynchronous else [_first_iteration(statement)]
    return []


def _first_iteration(loop: cst.For) -> cst.IndentedBlock:
    """The loop's body run once, on the only item: a training loop of one step becomes the step.
    (`for x in data: f(x)` -> `x, = data` then `f(x)`; it fails, and is turned down, when `data` holds more.)"""

    target, item = loop.target, one_item(loop.iter)
    if item is not None:
        # Over one item (`for name, out in [(n, f(x))]`, `for step in range(1)`): the item bound to the target,
        # which reads as the step it is and is smaller than the loop (the unpacking below is not).
        bind = cst.Assign(targets=[cst.AssignTarget(target=target)], value=item)
        return cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[bind]), *_statements(loop.body)])
    if isinstance(target, cst.Tuple):
        target = target.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    unpack = cst.Tuple(elements=[cst.Element(value=target)], lpar=[], rpar=[])
    bind = cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=unpack)], value=loop.iter)])
    return cst.IndentedBlock(body=[bind, *_statements(loop.body)])


_ENUMERATE_LOOP = m.For(
    target=m.Tuple(elements=[m.Element(value=m.Name()), m.Element()]),
    iter=m.Call(func=m.Name("enumerate"), args=[m.Arg(keyword=None, star="")]),
)


def _without_unused_index(loop: cst.For) -> cst.For | None:
    """`for i, x in enumerate(data)` whose body never reads `i` -> `for x in data`."""

    if not m.matches(loop, _ENUMERATE_LOOP):
        return None
    index, item = loop.target.elements  # type: ignore[attr-defined]
    if _reads_any(loop.body, [index.value]):
        return None
    return loop.with_changes(target=item.value, iter=loop.iter.args[0].value)  # type: ignore[attr-defined]


def _reads_any(body: cst.CSTNode, targets: Sequence[cst.BaseExpression]) -> bool:
    names = {name.value for target in targets for name in m.findall(target, m.Name())}
    return any(m.findall(body, m.Name(m.MatchIfTrue(names.__contains__))))


def _flattened(statement: cst.BaseCompoundStatement, body) -> cst.FlattenSentinel | cst.If:
    if isinstance(body, cst.If):
        return body.with_changes(leading_lines=statement.leading_lines)
    statements = _statements(body)
    first = statements[0]
    statements[0] = first.with_changes(leading_lines=[*statement.leading_lines, *first.leading_lines])
    return cst.FlattenSentinel(statements)


def _statements(suite: cst.BaseSuite) -> list[cst.BaseStatement]:
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    # `if x: a; b` holds small statements; they need a line of their own.
    small = [*suite.body[:-1], suite.body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)]
    return [cst.SimpleStatementLine(body=small)]


def _inlinable_functions(module: cst.Module) -> dict[cst.FunctionDef, cst.SimpleStatementLine]:
    """Module-level `def name(): ...` statements referenced only by one `name()` statement in module scope."""
    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    parents = parent_map(wrapper.module)
    found = {}
    for function in module.body:
        if not m.matches(function, m.FunctionDef(decorators=[], asynchronous=None)) or _has_star_parameters(function):
            continue
        assignments = list(scopes[function].assignments[function.name.value])
        if len(assignments) != 1 or len(assignments[0].references) != 1:
            continue
        reference = next(iter(assignments[0].references)).node
        line = parents.get(parents.get(parents.get(reference)))
        if m.matches(line, _CALL_LINE) and line.body[0].value.func is reference:
            if isinstance(scopes[line], GlobalScope) and _bindable(function, line.body[0].value) and not _returns(function):
                found[function] = line
    return found


_CALL_LINE = m.SimpleStatementLine(body=[m.Expr(value=m.Call(func=m.Name()))])


def _has_star_parameters(function: cst.FunctionDef) -> bool:
    params = function.params
    return bool(params.posonly_params or params.kwonly_params) or not isinstance(
        params.star_arg, cst.MaybeSentinel
    ) or params.star_kwarg is not None


def _bindable(function: cst.FunctionDef, call: cst.Call) -> bool:
    """The call passes every parameter without a default, positionally, and nothing else."""

    params = function.params.params
    if any(arg.keyword is not None or arg.star for arg in call.args) or len(call.args) > len(params):
        return False
    return all(param.default is not None for param in params[len(call.args):])


def _returns(function: cst.FunctionDef) -> bool:
    """A `return` of the function itself (not of a function or lambda nested in it)."""

    class Finder(cst.CSTVisitor):
        found = False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return node is function

        def visit_Return(self, node: cst.Return) -> None:
            self.found = True

    finder = Finder()
    walk(function, finder)
    return finder.found


def _parameter_binding(function: cst.FunctionDef, call: cst.Call) -> list[cst.SimpleStatementLine]:
    """`p1, p2 = a1, a2` for the call's arguments (defaults for the rest); nothing for a function without
    parameters."""

    params = function.params.params
    if not params:
        return []
    values = [arg.value for arg in call.args] + [param.default for param in params[len(call.args):]]
    if len(params) == 1:
        target, value = cst.Name(params[0].name.value), values[0]
    else:
        target = cst.Tuple([cst.Element(cst.Name(p.name.value)) for p in params], lpar=[], rpar=[])
        value = cst.Tuple([cst.Element(v) for v in values], lpar=[], rpar=[])
    return [cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=target)], value=value)])]


def _inline_function(module: cst.Module, function: cst.FunctionDef, call_line: cst.SimpleStatementLine) -> cst.Module:
    body = cst.IndentedBlock(body=[*_parameter_binding(function, call_line.body[0].value), *_statements(function.body)])  # type: ignore[attr-defined]
    return replace_nodes(module, {function: cst.RemovalSentinel.REMOVE, call_line: _flattened(call_line, body)})
