"""Remove functions that only forward their parameters to another callable: `def run(x): return model(x)`.

Each wrapper is a level of indirection the reader of a repro has to follow; replacing every reference to it by
the callable it forwards to (`torch.compile(run)` -> `torch.compile(model)`) and deleting it flattens that level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Optional

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import binds_locally, metadata
from minimizer.source.passes.structure.bodies import DOCSTRING_LINE, bound_arguments
from minimizer.source.patterns import TORCH_COMPILE_CALL, is_literal
from minimizer.source.substitution import bind_names
from minimizer.source.traversal import find_all, parent_map

__all__ = ["bypass_wrapper_functions", "inline_expression_functions"]

_DOTTED_NAME = m.Name() | m.Attribute(value=m.MatchIfTrue(lambda value: m.matches(value, _DOTTED_NAME)))


def bypass_wrapper_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one wrapper function removed and every reference to it replaced by what it calls.

    A wrapper is a module-level, undecorated function whose body (after a docstring) is `return g(p1, ..., pk)`:
    `g` a name or dotted name that reads no parameter, `p1..pk` its first k positional parameters passed
    positionally in order, any further parameters unread. Functions in source order; a wrapper referenced from a
    scope that binds `g`'s root name to something else is skipped.

    A wrapper that passes its parameters in another order, or literals beside them (`def repro(w, x): return
    conv2d(x, w, 1)`, as the graph stage emits one operator), or calls `g` without returning its value, is
    bypassed where every reference is called, directly or compiled, with one positional argument per parameter
    (`torch.compile(repro, ...)(a, b)` -> `torch.compile(conv2d, ...)(b, a, 1)`); without a return, only calls
    whose value goes unused.
    """
    return distinct_candidates(module, _bypasses(module))


@dataclass(frozen=True)
class _Forwarding:
    """What a wrapper does: call ``target`` with, per argument, its parameter's index or a literal ``cst.Arg``."""

    target: cst.BaseExpression
    plan: tuple[int | cst.Arg, ...]
    parameters: int
    returns: bool

    @property
    def plain(self) -> bool:
        """Its callers' arguments go to ``target`` as they are: a reference can become ``target`` itself."""

        return self.returns and self.plan == tuple(range(len(self.plan)))


def _bypasses(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    for function in module.body:
        forwarding = _forwarding(function)
        if forwarding is None:
            continue
        assignments = list(scopes[function].assignments[function.name.value])
        if len(assignments) != 1 or assignments[0].node is not function:
            continue
        references = [access.node for access in assignments[0].references]
        root = _root_name(forwarding.target)
        if root == function.name.value or any(binds_locally(scopes[node], root) for node in references):
            continue
        replacements: dict = {function: cst.RemovalSentinel.REMOVE}
        if forwarding.plain:
            replacements.update({node: forwarding.target.deep_clone() for node in references})
        else:
            calls = _rewritten_calls(module, references, forwarding)
            if calls is None:
                continue
            replacements.update(calls)
        yield lambda r=replacements: replace_nodes(module, r)


def _rewritten_calls(module: cst.Module, references: list, forwarding: _Forwarding) -> Optional[dict]:
    """Each call of the wrapper (``references``), direct or through ``torch.compile(wrapper, ...)``, mapped to
    the call of its target with the arguments its plan makes; None if a reference is anything else."""

    parents = parent_map(module)
    replacements = {}
    for reference in references:
        call = _call_of(reference, parents)
        if call is None or len(call.args) != forwarding.parameters:
            return None
        if any(arg.star or arg.keyword is not None for arg in call.args):
            return None
        if not forwarding.returns and not isinstance(parents.get(call), cst.Expr):
            return None  # the wrapper returned None where the target returns a value: only unused calls
        target = forwarding.target.deep_clone()
        if call.func is reference:
            func: cst.BaseExpression = target
        else:
            compiled = call.func
            func = compiled.with_changes(args=[compiled.args[0].with_changes(value=target), *compiled.args[1:]])
        args = [call.args[step] if isinstance(step, int) else step for step in forwarding.plan]
        args = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in args]
        replacements[call] = call.with_changes(func=func, args=args)
    return replacements


def _call_of(reference: cst.Name, parents: dict) -> Optional[cst.Call]:
    """The call ``reference(...)`` or ``torch.compile(reference, ...)(...)`` that ``reference`` is the callee of."""

    parent = parents.get(reference)
    if isinstance(parent, cst.Call):
        return parent if parent.func is reference else None
    if not isinstance(parent, cst.Arg) or parent.keyword is not None or parent.star:
        return None
    compiled = parents.get(parent)
    if not m.matches(compiled, TORCH_COMPILE_CALL) or compiled.args[0] is not parent:  # type: ignore[union-attr]
        return None
    outer = parents.get(compiled)
    return outer if isinstance(outer, cst.Call) and outer.func is compiled else None


def _forwarding(function: cst.CSTNode) -> Optional[_Forwarding]:
    """What ``function`` forwards to when it is a wrapper as described above, else None."""

    if not m.matches(function, m.FunctionDef(decorators=[])):
        return None
    call, returns = _returned_value(function), True
    if call is None:
        call, returns = _called_value(function), False
    if not m.matches(call, m.Call(func=_DOTTED_NAME)):
        return None
    params = function.params
    if params.posonly_params or params.kwonly_params or not isinstance(params.star_arg, cst.MaybeSentinel):
        return None
    if params.star_kwarg is not None:
        return None
    names = [param.name.value for param in params.params]
    if _root_name(call.func) in names:
        return None
    plan: list[int | cst.Arg] = []
    for arg in call.args:
        if arg.star:
            return None
        if arg.keyword is None and m.matches(arg.value, m.Name()) and arg.value.value in names:
            plan.append(names.index(arg.value.value))
        elif is_literal(arg.value):
            plan.append(arg)
        else:
            return None
    indices = [step for step in plan if isinstance(step, int)]
    if len(indices) != len(set(indices)):
        return None  # a parameter passed twice: its argument would be computed twice
    if any(params.params[index].default is not None for index in indices):
        return None  # a caller that relies on the default would pass g one argument fewer
    return _Forwarding(call.func, tuple(plan), len(names), returns)


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
    for statement, name, params, expression in _expression_helpers(module):
        if expression is None or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None:
            continue
        if params.posonly_params:
            continue
        references = [access.node for assignment in global_scope[name] for access in assignment.references]
        if not references or len(global_scope[name]) != 1:
            continue
        calls = [c for c in find_all(module, m.Call()) if any(c.func is r for r in references)]  # type: ignore[union-attr]
        if len(calls) != len(references):
            continue  # the helper is also passed around, not only called
        values = [_inlined_call(call, expression, params, scopes) for call in calls]
        if any(value is None for value in values):
            continue
        replacements = {**dict(zip(calls, values)), statement: cst.RemovalSentinel.REMOVE}
        yield lambda r=replacements: replace_nodes(module, r)


_NAMED_LAMBDA = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Lambda())])


def _expression_helpers(module: cst.Module) -> Iterator[tuple]:
    """Each module-level helper that computes one expression, as (statement, name, parameters, expression or
    None): an undecorated ``def`` that only returns it, or a lambda bound to a name (``close = lambda a, b:
    torch.allclose(a, b)``)."""

    for statement in module.body:
        if isinstance(statement, cst.FunctionDef) and not statement.decorators and not statement.asynchronous:
            yield statement, statement.name.value, statement.params, _returned_expression(statement)
        elif m.matches(statement, _NAMED_LAMBDA):
            assign = statement.body[0]  # type: ignore[attr-defined]
            function = assign.value
            yield statement, assign.targets[0].target.value, function.params, function.body


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

    statement = _only_statement(function, m.Return())
    return None if statement is None else statement.value  # type: ignore[attr-defined]


def _called_value(function: cst.FunctionDef) -> Optional[cst.BaseExpression]:
    """`EXPR` when the function's body (after a docstring) is only the expression statement `EXPR`, else None."""

    statement = _only_statement(function, m.Expr())
    return None if statement is None else statement.value  # type: ignore[attr-defined]


def _only_statement(function: cst.FunctionDef, kind: m.BaseMatcherNode) -> Optional[cst.BaseSmallStatement]:
    if not isinstance(function.body, cst.IndentedBlock):
        return None
    body = list(function.body.body)
    if len(body) == 2 and m.matches(body[0], DOCSTRING_LINE):
        body = body[1:]
    if len(body) != 1 or not m.matches(body[0], m.SimpleStatementLine(body=[kind])):
        return None
    return body[0].body[0]  # type: ignore[union-attr]

