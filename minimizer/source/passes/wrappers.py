"""Remove functions that only forward their parameters to another callable: `def run(x): return model(x)`.

Each wrapper is a level of indirection the reader of a repro has to follow; replacing every reference to it by
the callable it forwards to (`torch.compile(run)` -> `torch.compile(model)`) and deleting it flattens that level.
"""

from __future__ import annotations

from typing import Any, Iterator, Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.cst_utils import (
    DOCSTRING_LINE,
    TORCH_COMPILE_CALL,
    is_literal,
    binds_locally,
    bind_names,
    bound_arguments,
    distinct_candidates,
    metadata,
    replace_nodes,
)
from minimizer.source.traversal import find_all

__all__ = ["bypass_wrapper_functions", "inline_expression_functions"]

_DOTTED_NAME = m.Name() | m.Attribute(value=m.MatchIfTrue(lambda value: m.matches(value, _DOTTED_NAME)))


def bypass_wrapper_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one wrapper function removed and every reference to it replaced by what it calls.

    A wrapper is a module-level, undecorated function whose body (after a docstring) is `return g(p1, ..., pk)`:
    `g` a name or dotted name that reads no parameter, `p1..pk` its first k positional parameters passed
    positionally in order, any further parameters unread. Functions in source order; a wrapper referenced from a
    scope that binds `g`'s root name to something else is skipped.

    A wrapper that also passes literals after all its parameters (`def repro(x): return torch.topk(x, 1)`, as
    the graph stage emits one operator) is bypassed where every reference is called, directly or compiled
    (`torch.compile(repro, ...)(a)` -> `torch.compile(torch.topk, ...)(a, 1)`): each call gets the literals.
    """
    return distinct_candidates(module, _bypasses(module))


def _bypasses(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    for function in module.body:
        forwarded = _forwarded_callable(function)
        if forwarded is None:
            continue
        target, literals = forwarded
        assignments = list(scopes[function].assignments[function.name.value])
        if len(assignments) != 1 or assignments[0].node is not function:
            continue
        references = [access.node for access in assignments[0].references]
        root = _root_name(target)
        if root == function.name.value or any(binds_locally(scopes[node], root) for node in references):
            continue
        replacements: dict = {function: cst.RemovalSentinel.REMOVE}
        if literals:
            calls = _calls_given_literals(module, references, target, literals)
            if calls is None:
                continue
            replacements.update(calls)
        else:
            replacements.update({node: target.deep_clone() for node in references})
        yield lambda r=replacements: replace_nodes(module, r)


def _calls_given_literals(
    module: cst.Module, references: list, target: cst.BaseExpression, literals: list[cst.Arg]
) -> Optional[dict]:
    """Each call of the wrapper (``references``), direct or through ``torch.compile(wrapper, ...)``, mapped to
    the call of ``target`` with ``literals`` after its arguments; None if a reference is anything else."""

    replacements = {}
    for reference in references:
        call = _call_of(module, reference)
        if call is None or any(arg.star or arg.keyword is not None for arg in call.args):
            return None
        if call.func is reference:
            func: cst.BaseExpression = target.deep_clone()
        else:
            compiled = call.func
            func = compiled.with_changes(args=[compiled.args[0].with_changes(value=target.deep_clone()), *compiled.args[1:]])
        args = [*call.args[:-1], call.args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)] if call.args else []
        replacements[call] = call.with_changes(func=func, args=[*args, *literals])
    return replacements


def _call_of(module: cst.Module, reference: cst.Name) -> Optional[cst.Call]:
    """The call ``reference(...)`` or ``torch.compile(reference, ...)(...)`` that ``reference`` is the callee of."""

    for call in find_all(module, m.Call()):
        if call.func is reference:
            return call
        compiled = call.func
        if m.matches(compiled, TORCH_COMPILE_CALL) and compiled.args and compiled.args[0].value is reference:
            if compiled.args[0].keyword is None and not compiled.args[0].star:
                return call
    return None


def _forwarded_callable(function: cst.CSTNode) -> Optional[tuple[cst.BaseExpression, list[cst.Arg]]]:
    """`g` and the literal arguments passed after the parameters when `function` is
    `def f(p1, ..., pn): return g(p1, ..., pk, *literals)` as described above, else None."""
    if not m.matches(function, m.FunctionDef(decorators=[])):
        return None
    call = _returned_value(function)
    if not m.matches(call, m.Call(func=_DOTTED_NAME)):
        return None
    params = function.params
    if params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel):
        return None
    if params.star_kwarg is not None:
        return None
    names = [param.name.value for param in params.params]
    forwarded = list(call.args)
    literals: list[cst.Arg] = []
    if len(forwarded) > len(names) or any(arg.keyword is not None for arg in forwarded):
        # Literals after every parameter: callers then pass exactly the parameters, so the literals follow.
        literals, forwarded = forwarded[len(names):], forwarded[: len(names)]
        if not names or not all(is_literal(arg.value) and not arg.star for arg in literals):
            return None
    passed = [arg.value for arg in forwarded]
    if any(arg.keyword is not None or arg.star for arg in forwarded) or len(passed) > len(names):
        return None
    if not all(m.matches(value, m.Name(name)) for value, name in zip(passed, names)):
        return None
    if any(param.default is not None for param in params.params[: len(passed)]):
        return None  # a caller that relies on the default would pass g one argument fewer
    if _root_name(call.func) in names:
        return None
    return call.func, [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in literals]


def _root_name(node: cst.BaseExpression) -> str:
    while isinstance(node, cst.Attribute):
        node = node.value
    return node.value


def inline_expression_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one helper that only returns an expression replaced, at each of its calls, by that
    expression: `def load_batch(): return torch.randn(32, 32)` used as `x = load_batch()` becomes
    `x = torch.randn(32, 32)`; `def forces(fn, p): return torch.func.grad(fn)(p)` called as `forces(energy, q)`
    becomes `torch.func.grad(energy)(q)`.

    The helper is a module-level, undecorated function whose body (after a docstring) is `return EXPR`, and
    whose name is only referenced by calls without starred arguments. Its parameters become each call's
    arguments (by position or keyword), else their defaults; an argument other than a name or a literal only
    where its parameter is read at most once, so it is still computed at most once. Nothing is inlined where
    the call's scope binds a name the expression reads from the module. The definition goes with it.
    """

    return distinct_candidates(module, _expression_inlinings(module))


def _expression_inlinings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    scopes = metadata(module).resolve(ScopeProvider)
    global_scope = scopes[module]
    for statement in module.body:
        if not isinstance(statement, cst.FunctionDef) or statement.decorators or statement.asynchronous:
            continue
        expression = _returned_expression(statement)
        params = statement.params
        if expression is None or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
            continue
        if params.posonly_params:
            continue
        references = [access.node for assignment in global_scope[statement.name.value] for access in assignment.references]
        if not references or len(global_scope[statement.name.value]) != 1:
            continue
        calls = [c for c in find_all(module, m.Call()) if any(c.func is r for r in references)]  # type: ignore[union-attr]
        if len(calls) != len(references):
            continue  # the helper is also passed around, not only called
        values = [_inlined_call(call, expression, params, scopes) for call in calls]
        if any(value is None for value in values):
            continue
        replacements = {**dict(zip(calls, values)), statement: cst.RemovalSentinel.REMOVE}
        yield lambda r=replacements: replace_nodes(module, r)


def _inlined_call(
    call: cst.Call, expression: cst.BaseExpression, params: cst.Parameters, scopes: Any
) -> Optional[cst.BaseExpression]:
    """``expression`` with the helper's parameters bound to ``call``'s arguments, or ``None`` where it cannot
    stand in the call's place."""

    values = bound_arguments(call.args, list(params.params), list(params.kwonly_params), expression)
    if values is None:
        return None
    reads = {name.value for name in m.findall(expression, m.Name())} - set(values)
    if any(binds_locally(scopes.get(call), name) for name in reads):
        return None
    return bind_names(expression, values)


def _returned_expression(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    value = _returned_value(function)
    if value is None or m.findall(value, m.Yield() | m.Await()):
        return None
    return value


def _returned_value(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """`EXPR` when the function's body (after a docstring) is only `return EXPR`, else None."""

    if not isinstance(function.body, cst.IndentedBlock):
        return None
    body = list(function.body.body)
    if len(body) == 2 and m.matches(body[0], DOCSTRING_LINE):
        body = body[1:]
    if len(body) != 1 or not m.matches(body[0], m.SimpleStatementLine(body=[m.Return()])):
        return None
    return body[0].body[0].value  # type: ignore[union-attr]

