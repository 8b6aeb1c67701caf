"""Inline a helper function at its one call: `loss = distill_loss(logits, targets, 2.0)` becomes the helper's body
(its parameters bound to the arguments) followed by `loss = <what it returned>`.

Programs keep their work in helpers (`observe(weight)`, `gradients(model, batch)`) that a repro needs only once.
The call is one more level to read, and a compiled call inside a helper with parameters is out of reach of the
statement that states the bug at the end of the repro; inlined, the helper's lines stand where they ran, and
later passes (unused variables, tuple splitting) take what the caller did not need.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ClassScope, ComprehensionScope, GlobalScope, Scope, ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import metadata
from minimizer.source.passes.structure.bodies import DOCSTRING_LINE, target_names
from minimizer.source.substitution import swap_nodes, as_operand
from minimizer.source.traversal import children, holds, parent_map

__all__ = ["inline_single_call_functions"]

# Between the call and its statement: a node under which the call may run zero or many times, or later.
_CONDITIONAL = (cst.Lambda, cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp, cst.IfExp, cst.BooleanOperation)
_COMPREHENSIONS = (cst.GeneratorExp, cst.ListComp, cst.SetComp, cst.DictComp)
_CALLER_STATEMENTS = (cst.Expr, cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Assert)


def inline_single_call_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one helper inlined at its only call, in source order.

    The helper is a module-level, undecorated, synchronous function with plain parameters (no `*args`,
    `**kwargs` or positional-only ones), no `global` or `nonlocal`, and at most one `return`, its last
    statement; or a generator whose one `yield` is its last statement, taken as `batch, = batches(...)`
    (which becomes `batch = <what it yielded>`), `next(batches(...))` or `list(batches(...))[0]` (the value in
    their place). Its name is referenced exactly once, as the function of a call with no starred
    arguments but, maybe, a last `*value` (its parameters left are bound together, `tokens, labels = value`), which is
    part of a simple statement (`f(x)`, `y = f(x)`, `return f(x) * 2`, the test of an `assert`), the test of an
    `if` (not an `elif`) or the iterable of a `for` in a module or function body, and not under
    a lambda, comprehension (but in its first iterable, which runs once where it stands), conditional expression
    or `and`/`or`. Names the helper binds must be unused where it
    is inlined (a parameter passed a name of its own spelling and never rebound is bound already); inside a
    function, the globals it reads must not be local there.
    """

    return distinct_candidates(module, _inlinings(module))


def _inlinings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    parents = parent_map(wrapper.module)
    global_scope = scopes[module]
    for function in module.body:
        if not _inlinable_definition(function):
            continue
        name = function.name.value  # type: ignore[attr-defined]
        assignments = list(global_scope.assignments[name])
        if len(assignments) != 1 or assignments[0].node is not function:
            continue
        references = [access.node for access in assignments[0].references]
        if len(references) != 1:
            continue
        call = parents.get(references[0])
        if not isinstance(call, cst.Call) or call.func is not references[0]:
            continue
        statement, small = _enclosing_statement(call, parents)
        if statement is None or not isinstance(parents.get(statement), (cst.Module, cst.IndentedBlock)):
            continue
        taken = _taking_one_value(call, small, parents) if _yielded(function) is not None else None
        if _yielded(function) is not None and taken is None:
            continue  # a generator's one value is taken by `batch, = batches()`, `next(...)` or `list(...)[0]` only
        bound = _bind_arguments(function, call)  # type: ignore[arg-type]
        if bound is None:
            continue
        helper_scope = scopes[function.body.body[0]]  # type: ignore[attr-defined]
        caller_scope = scopes[statement]
        reassigned = _names_the_statement_rebinds(small, call)
        renamed = _parameters_substituted(function, bound, helper_scope)  # type: ignore[arg-type]
        if caller_scope is None or not _fits_scope(helper_scope, caller_scope, bound, reassigned | set(renamed)):
            continue
        yield lambda f=function, c=call, s=statement, sm=small, b=bound, r=renamed, t=taken: _inline(module, f, c, s, sm, b, r, t)


def _inlinable_definition(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.FunctionDef) or node.decorators or node.asynchronous:
        return False
    params = node.params
    if params.posonly_params or params.star_kwarg is not None or not isinstance(params.star_arg, cst.MaybeSentinel):
        return False
    if not isinstance(node.body, cst.IndentedBlock) or m.findall(node, m.Await() | m.Global() | m.Nonlocal()):
        return False
    yields = list(_own_nodes(node.body, cst.Yield))
    if yields:  # a generator that yields one value, last: `def batches(): ...; yield batch`
        return len(yields) == 1 and _yielded(node) is not None and not list(_own_nodes(node.body, cst.Return))
    returns = [r for r in _own_nodes(node.body, cst.Return)]
    if not returns:
        return True
    last = node.body.body[-1]
    return len(returns) == 1 and m.matches(last, m.SimpleStatementLine(body=[m.Return()])) and last.body[0] is returns[0]  # type: ignore[attr-defined]


def _yielded(function: cst.FunctionDef) -> cst.BaseExpression | None:
    """`E` when the function's last statement is `yield E`."""

    last = function.body.body[-1]  # type: ignore[attr-defined]
    pattern = m.SimpleStatementLine(body=[m.Expr(value=m.Yield(value=m.MatchIfTrue(lambda v: v is not None and not isinstance(v, cst.From))))])
    return last.body[0].value.value if m.matches(last, pattern) else None  # type: ignore[attr-defined]


_ONE_TARGET_UNPACKED = m.Assign(targets=[m.AssignTarget(target=m.Tuple(elements=[m.Element()]) | m.List(elements=[m.Element()]))])
_FIRST = m.Subscript(slice=[m.SubscriptElement(m.Index(m.Integer("0")))])


def _taking_one_value(call: cst.Call, small: cst.CSTNode, parents) -> cst.CSTNode | None:
    """What takes a generator's one value from ``call``: the statement ``batch, = batches()`` itself, or the
    expression ``next(batches())`` or ``list(batches())[0]`` (which the value then replaces); else ``None``."""

    if m.matches(small, _ONE_TARGET_UNPACKED) and small.value is call:  # type: ignore[attr-defined]
        return small
    arg = parents.get(call)
    outer = parents.get(arg) if isinstance(arg, cst.Arg) and not arg.star and not arg.keyword else None
    if not m.matches(outer, m.Call(func=m.Name("next") | m.Name("list"), args=[m.Arg()])):
        return None
    if outer.func.value == "next":  # type: ignore[union-attr]
        return outer
    first = parents.get(outer)
    return first if m.matches(first, _FIRST) and first.value is outer else None  # type: ignore[attr-defined]


def _own_nodes(node: cst.CSTNode, kind: type) -> Iterator[cst.CSTNode]:
    """The nodes of `kind` under `node`, not looking inside nested functions and classes."""

    for child in children(node):
        if isinstance(child, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(child, kind):
            yield child
        yield from _own_nodes(child, kind)


def _enclosing_statement(
    call: cst.Call, parents
) -> tuple[Optional[cst.SimpleStatementLine | cst.If | cst.For], Optional[cst.CSTNode]]:
    node: cst.CSTNode = call
    while True:
        parent = parents.get(node)
        if isinstance(parent, cst.If) and node is parent.test and not isinstance(parents.get(parent), cst.If):
            return parent, parent  # an `if`'s test runs first, once (an `elif`'s only when the tests before fail)
        if isinstance(parent, cst.For) and node is parent.iter and parent.asynchronous is None:
            return parent, parent  # so does a loop's iterable
        comprehension = parents.get(parent) if isinstance(parent, cst.CompFor) and node is parent.iter else None
        if isinstance(comprehension, _COMPREHENSIONS) and comprehension.for_in is parent:
            node = comprehension  # so does a comprehension's first iterable, where the comprehension stands
            continue
        if parent is None or isinstance(parent, _CONDITIONAL) or isinstance(parent, cst.BaseCompoundStatement):
            return None, None
        if isinstance(parent, cst.Assert) and node is parent.msg:
            return None, None  # an assert's message is evaluated only when the assert fails
        if isinstance(parent, _CALLER_STATEMENTS):
            line = parents.get(parent)
            if isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1:
                return line, parent
            return None, None
        node = parent


@dataclass(frozen=True, eq=False)
class _Unpacked:
    """The parameters a last argument ``*value`` fills, bound together: ``tokens, labels = value``."""

    names: tuple[str, ...]
    value: cst.BaseExpression


def _bind_arguments(function: cst.FunctionDef, call: cst.Call) -> Optional[dict[str, cst.BaseExpression | _Unpacked]]:
    """Each parameter's value at this call (argument or default), or None if the call cannot bind. A last
    positional argument ``*value`` binds every positional parameter left, together (`check(model, *data[0])`
    -> `tokens, labels = data[0]`); where ``value`` holds another number of items, the candidate fails."""

    params = [*function.params.params, *function.params.kwonly_params]
    positional = list(function.params.params)
    bound: dict[str, cst.BaseExpression | _Unpacked] = {}
    for index, arg in enumerate(call.args):
        if arg.star == "*" and index == len(call.args) - 1 and index < len(positional):
            unpacked = _Unpacked(tuple(p.name.value for p in positional[index:]), arg.value)
            bound.update((name, unpacked) for name in unpacked.names)
            continue
        if arg.star:
            return None
        if arg.keyword is None:
            if index >= len(positional):
                return None
            bound[positional[index].name.value] = arg.value
        else:
            if arg.keyword.value in bound or arg.keyword.value not in {p.name.value for p in params}:
                return None
            bound[arg.keyword.value] = arg.value
    for param in params:
        if param.name.value not in bound:
            if param.default is None:
                return None
            bound[param.name.value] = param.default
    return bound


def _names_the_statement_rebinds(small: cst.CSTNode, call: cst.Call) -> set[str]:
    """The plain names `small` assigns whose old value it does not read outside `call`: whatever the inlined
    body leaves in them is overwritten before anyone reads it (`eager, compiled = observe(w)` where `observe` has a
    local `eager`)."""

    if isinstance(small, cst.For):  # the loop binds its targets from the value, before its body reads them
        targets, value = [small.target], small.iter
    elif isinstance(small, (cst.Assign, cst.AnnAssign)) and small.value is not None:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else [small.target]
        value = small.value
    else:
        return set()
    names = set().union(*(target_names(target) for target in targets))
    outside = {n.value for n in m.findall(swap_nodes(value, {call: cst.Name("None")}), m.Name())}
    return names - outside


def _fits_scope(helper: Scope, caller: Scope, bound: dict[str, cst.BaseExpression], reassigned: set[str]) -> bool:
    if isinstance(caller, (ClassScope, ComprehensionScope)):
        return False
    helper_locals = {assignment.name for assignment in helper.assignments}
    for name in helper_locals:
        if _already_bound(name, bound, helper) or name in reassigned:
            continue
        if caller.assignments[name] or caller.accesses[name]:
            return False
    if isinstance(caller, GlobalScope):
        return True
    # Inside a function, a global the helper reads must not be shadowed by a local of the caller.
    read = {access.node.value for access in helper.accesses if isinstance(access.node, cst.Name)}
    return not any(caller.assignments[name] for name in read - helper_locals)


def _parameters_substituted(
    function: cst.FunctionDef, bound: dict[str, cst.BaseExpression], helper: Scope
) -> dict[str, list[cst.Name]]:
    """Parameters the helper never rebinds whose reads can take the argument in their place: the helper's reads
    of each, to be written as the argument (no `x = logits` line, and no clash with a caller's own `x`). A
    parameter passed a plain name (`row_softmax(logits)`) where the helper binds nothing of its spelling; one
    passed any other expression (`scaled_head(x * 0.5)`) where the helper reads it once, in its first statement
    (the argument is then evaluated where it was, before the rest of the body), and binds no name the
    expression reads."""

    helper_locals = {assignment.name for assignment in helper.assignments}
    first = _first_statement(function)
    renamed = {}
    for name, value in bound.items():
        assignments = list(helper.assignments[name])
        if isinstance(value, _Unpacked) or len(assignments) != 1 or m.matches(value, m.Name(name)):
            continue
        reads = [access.node for access in assignments[0].references]
        if not reads or not all(isinstance(node, cst.Name) for node in reads):
            continue
        if isinstance(value, cst.Name):
            if value.value not in helper_locals:
                renamed[name] = reads
        elif len(reads) == 1 and first is not None and holds(first, reads[0]) and not (
            {n.value for n in m.findall(value, m.Name())} & (helper_locals - {name})
        ):
            renamed[name] = reads
    return renamed


def _first_statement(function: cst.FunctionDef) -> cst.CSTNode | None:
    """The helper's first simple statement, where it is the first (a loop or a comprehension would evaluate an
    argument written into it more than once)."""

    body = [line for line in function.body.body if not m.matches(line, DOCSTRING_LINE)]  # type: ignore[attr-defined]
    if not body or not isinstance(body[0], cst.SimpleStatementLine):
        return None
    repeated = m.Lambda() | m.ListComp() | m.SetComp() | m.DictComp() | m.GeneratorExp()
    return None if m.findall(body[0], repeated) else body[0]


def _already_bound(name: str, bound: dict[str, cst.BaseExpression], helper: Scope) -> bool:
    """A parameter passed the caller's variable of the same name, and never rebound in the helper."""

    value = bound.get(name)
    return isinstance(value, cst.Name) and value.value == name and len(list(helper.assignments[name])) == 1


def _inline(
    module: cst.Module,
    function: cst.FunctionDef,
    call: cst.Call,
    statement: cst.SimpleStatementLine,
    small: cst.CSTNode,
    bound: dict[str, cst.BaseExpression],
    renamed: dict[str, list[cst.Name]],
    taken: cst.CSTNode | None = None,
) -> cst.Module:
    parents = parent_map(function)
    spelled = {read: _written_for(bound[name], parents.get(read)) for name, reads in renamed.items() for read in reads}
    bound = {name: value for name, value in bound.items() if name not in renamed}
    helper = swap_nodes(function, spelled)
    body = list(helper.body.body)  # type: ignore[attr-defined]
    if body and m.matches(body[0], DOCSTRING_LINE):
        body = body[1:]
    returned: cst.BaseExpression = cst.Name("None")
    yielded = _yielded(helper)
    if yielded is not None:
        body.pop()
        if taken is not small:  # `next(batches())`, `list(batches())[0]`: the value in its place
            return _replace_call(module, function, statement, [*_bindings(bound), *body, swap_nodes(statement, {taken: yielded})])
        target = small.targets[0].target.elements[0].value  # type: ignore[attr-defined]
        assign = cst.Assign(targets=[cst.AssignTarget(target)], value=yielded)
        return _replace_call(module, function, statement, [*_bindings(bound), *body, statement.with_changes(body=[assign])])
    if body and m.matches(body[-1], m.SimpleStatementLine(body=[m.Return()])):
        value = body.pop().body[0].value  # type: ignore[attr-defined]
        returned = value if value is not None else returned
    if isinstance(small, cst.Expr) and small.value is call:
        # The call's value was dropped; what it returned goes too, unless it does something.
        tail = [] if m.matches(returned, m.Name() | m.BaseString() | m.Integer() | m.Float()) else [statement.with_changes(body=[small.with_changes(value=returned)])]
    else:
        tail = [swap_nodes(statement, {call: returned})]
    return _replace_call(module, function, statement, [*_bindings(bound), *body, *tail])


def _written_for(value: cst.BaseExpression, where: cst.CSTNode | None) -> cst.BaseExpression:
    """``value`` as it reads in place of a parameter: bare where it is a whole value (`h = x`, `f(x)`),
    parenthesized inside an expression."""

    if isinstance(value, cst.Name):
        return cst.Name(value.value)
    whole = isinstance(where, (cst.Assign, cst.Arg, cst.Element, cst.Return, cst.SubscriptElement))
    return value if whole else as_operand(value)


def _bindings(bound: dict[str, cst.BaseExpression | _Unpacked]) -> list[cst.SimpleStatementLine]:
    lines = []
    for name, value in bound.items():
        if isinstance(value, _Unpacked):
            if name == value.names[0]:
                targets = cst.Tuple([cst.Element(cst.Name(n)) for n in value.names], lpar=[], rpar=[])
                lines.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(targets)], value=value.value)]))
        elif not m.matches(value, m.Name(name)):
            lines.append(cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(name))], value=value)]))
    return lines


def _replace_call(module: cst.Module, function: cst.FunctionDef, statement: cst.SimpleStatementLine, new: list) -> cst.Module:
    lines = [line.with_changes(leading_lines=()) for line in new]
    if lines:  # the blank lines and comments above the call now stand above what replaces it
        lines[0] = lines[0].with_changes(leading_lines=statement.leading_lines)
    replacement = cst.FlattenSentinel(lines) if lines else cst.RemovalSentinel.REMOVE
    return replace_nodes(module, {function: cst.RemovalSentinel.REMOVE, statement: replacement})
