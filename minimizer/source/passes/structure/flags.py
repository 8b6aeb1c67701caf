"""Inline a helper at a call whose literal flag leaves it only returning an expression: with

    def scaled_head(x, fused=True):
        h = x
        if fused:
            ...  # launch the kernel
            return out
        return h * scale + shift

the call `scaled_head(x, False)` becomes `x * scale + shift`.

A helper that runs a kernel or its reference by a flag is called both ways by the check that compares them. With
two calls and two returns no other pass inlines it, so the reference stays behind the flag and the kernel's side
behind a condition. Inlined where the flag sends it to an expression, the helper is left with one call, which
the passes for single calls and conditions then take.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import binds_locally, metadata
from minimizer.source.passes.structure.bodies import DOCSTRING_LINE, PLAIN_VALUE, bound_arguments
from minimizer.source.rendering import code_size
from minimizer.source.substitution import as_operand, bind_names
from minimizer.source.traversal import find_all, parent_map

__all__ = ["inline_flag_calls"]

# Where a call's value stands without parentheses whatever expression replaces it.
_BARE_PLACES = (cst.Arg, cst.Assign, cst.AnnAssign, cst.Return, cst.Expr, cst.Element, cst.DictElement)
_FLAGS = {"True": True, "False": False, "None": False}


def inline_flag_calls(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one call of a helper replaced by the expression the helper returns there.

    The helper is a module-level, undecorated, synchronous function with plain parameters. At the call, its
    body (after a docstring) reads, statement by statement, as: `if p:` / `if not p:` on a parameter the call
    binds to `True`, `False` or `None` (by argument or default), which picks a branch; `name = value` where the
    value is a name or literal, or the name is read once by what runs after (a branch not taken reads
    nothing); then `return EXPR`, where `a if p else b` on such a flag is decided too. At least one such `if`
    or `a if p else b` is decided. `name, = items` reads as `name = items[0]`. Nothing is inlined where the call's scope binds a name the expression reads
    from the module. The helper stays for its other calls, and goes where this was its only one; where every
    call is decided, all of them at once is the first candidate.
    """

    return distinct_candidates(module, _flag_inlinings(module))


def _flag_inlinings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    scopes = metadata(module).resolve(ScopeProvider)
    global_scope = scopes[module]
    parents = parent_map(module)
    for function in module.body:
        if not _plain_function(function):
            continue
        assignments = global_scope[function.name.value]  # type: ignore[attr-defined]
        if len(assignments) != 1:
            continue
        references = [access.node for assignment in assignments for access in assignment.references]
        inlined: dict = {}
        calls = [c for c in find_all(module, m.Call()) if any(c.func is reference for reference in references)]  # type: ignore[attr-defined]
        for call in calls:
            value = _returned_at(function, call, scopes)  # type: ignore[arg-type]
            if value is not None:
                inlined[call] = value if isinstance(parents.get(call), _BARE_PLACES) else as_operand(value)
        if len(inlined) == len(references) > 1:
            # Every call decided (`net(x)` against `net(x, False)`): each written out alone is longer than its
            # call while the helper stays for the other, all of them at once lose the helper.
            everywhere = {**inlined, function: cst.RemovalSentinel.REMOVE}
            yield lambda r=everywhere: _no_larger(module, replace_nodes(module, r))
        rest = [call for call in calls if call not in inlined]
        if inlined and rest and len(calls) == len(references):
            # The reference's call decided, the kernel's not (its branch is statements): written out, the reference
            # is longer than its call, but the helper, left with calls that all pass the same flags, loses them.
            specialized = _specialized(function, rest)
            if specialized is not None:
                yield lambda r={**inlined, **specialized}: _no_larger(module, replace_nodes(module, r))
        for call, placed in inlined.items():
            replacements: dict = {call: placed}
            if len(references) == 1:
                replacements[function] = cst.RemovalSentinel.REMOVE
            yield lambda r=replacements: _no_larger(module, replace_nodes(module, r))


def _specialized(function: cst.FunctionDef, calls: list[cst.Call]) -> Optional[dict]:
    """``function`` without the flag parameters that ``calls`` all bind to the same literal (and that it reads only
    as an `if`'s or a conditional expression's test), each test decided, and the calls without those arguments:
    replacements for ``replace_nodes``; None where no flag is shared, or an argument of one is not the last."""

    params, keyword_only = list(function.params.params), list(function.params.kwonly_params)
    bound = [bound_arguments(call.args, params, keyword_only, function.body) for call in calls]
    if any(values is None for values in bound) or not isinstance(function.body, cst.IndentedBlock):
        return None
    shared = {
        name: value for name, value in bound[0].items()  # type: ignore[union-attr]
        if m.matches(value, m.Name()) and value.value in _FLAGS and all(v[name].deep_equals(value) for v in bound)  # type: ignore[index]
        and _read_as_tests_only(function.body, name)
    }
    if not shared:
        return None
    replacements: dict = {}
    for call in calls:
        kept = [a for a in call.args if not (a.keyword is not None and a.keyword.value in shared)]
        positional = [i for i, a in enumerate(kept) if a.keyword is None]
        flagged = [i for i in positional if i < len(params) and params[i].name.value in shared]
        if flagged and flagged != positional[len(positional) - len(flagged):]:
            return None  # a shared flag passed before another positional argument
        kept = [a for i, a in enumerate(kept) if i not in flagged]
        if kept:
            kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        replacements[call] = call.with_changes(args=kept)
    body = function.body.visit(_FlagDecider(shared))
    body = body.with_changes(body=_up_to_return(body.body))  # what followed the branch that returns runs no more
    left = [p for p in params if p.name.value not in shared]
    if left:
        left[-1] = left[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    params_left = function.params.with_changes(params=left, kwonly_params=[p for p in keyword_only if p.name.value not in shared])
    replacements[function] = function.with_changes(params=params_left, body=body)
    return replacements


def _up_to_return(statements: Sequence[cst.BaseStatement]) -> list[cst.BaseStatement]:
    for index, statement in enumerate(statements):
        if m.matches(statement, m.SimpleStatementLine(body=[m.Return()])):
            return list(statements[: index + 1])
    return list(statements)


def _read_as_tests_only(body: cst.BaseSuite, name: str) -> bool:
    reads = m.findall(body, m.Name(name))
    tests = [t for node in m.findall(body, m.If() | m.IfExp()) for t in [node.test] if m.matches(t, m.Name(name) | m.UnaryOperation(operator=m.Not(), expression=m.Name(name)))]  # type: ignore[attr-defined]
    return bool(reads) and len(reads) == len(tests) and not m.findall(body, m.AssignTarget(target=m.Name(name)))


class _FlagDecider(cst.CSTTransformer):
    """Each `if p:` / `if not p:` and `a if p else b` on a flag of ``flags`` (name -> the literal it is bound to)
    replaced by what it runs or gives."""

    def __init__(self, flags: dict[str, cst.BaseExpression]):
        super().__init__()
        self._values = flags
        self._names = set(flags)

    def leave_If(self, original_node: cst.If, updated_node: cst.If):
        branch = _decided_branch(updated_node, self._values, self._names)
        if branch is None:
            return updated_node
        return cst.FlattenSentinel(branch) if branch else cst.RemovalSentinel.REMOVE

    def leave_IfExp(self, original_node: cst.IfExp, updated_node: cst.IfExp) -> cst.BaseExpression:
        taken = _flag_value(updated_node.test, self._values, self._names)
        return updated_node if taken is None else as_operand(updated_node.body if taken else updated_node.orelse)


def _no_larger(module: cst.Module, candidate: cst.Module) -> Optional[cst.Module]:
    # A reference written out longer than its call is no step: the helper's other call keeps the helper. Measured
    # without the parentheses the arguments were put in (`(x * 0.5) * scale`), as the reducer measures it.
    from minimizer.source.layout import format_source

    laid_out = cst.parse_module(format_source(candidate.code))
    return laid_out if code_size(laid_out.code) <= code_size(module.code) else None


def _plain_function(node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.FunctionDef) or node.decorators or node.asynchronous:
        return False
    params = node.params
    plain = params.star_arg is cst.MaybeSentinel.DEFAULT or isinstance(params.star_arg, cst.ParamStar)
    return plain and params.star_kwarg is None and not params.posonly_params


def _returned_at(function: cst.FunctionDef, call: cst.Call, scopes) -> Optional[cst.BaseExpression]:
    """What ``function`` returns at ``call``, written in the call's terms, where its flags decide it (see
    ``inline_flag_calls``); None otherwise."""

    params = function.params
    values = bound_arguments(call.args, list(params.params), list(params.kwonly_params), function.body)
    if values is None or not isinstance(function.body, cst.IndentedBlock):
        return None
    parameters = set(values)
    statements = list(function.body.body)
    if statements and m.matches(statements[0], DOCSTRING_LINE):
        statements = statements[1:]
    decided = 0
    computed: list[str] = []  # names bound to what is not a name or literal: each may be read once
    walked: list[cst.BaseExpression] = []  # what the statements that run read (a branch not taken reads nothing)
    while statements:
        statement, rest = statements[0], statements[1:]
        if isinstance(statement, cst.If):
            branch = _decided_branch(statement, values, parameters)
            if branch is None:
                return None
            statements, decided = [*branch, *rest], decided + 1
            continue
        small = _only_small_statement(statement)
        if isinstance(small, cst.Return) and small.value is not None:
            value, chosen = _decided_expressions(small.value, values, parameters)
            if not decided + chosen:
                return None
            returned = bind_names(value, values)
            reads = {name.value for name in m.findall(value, m.Name())} - set(values)
            if reads & _assigned_names(function):
                return None  # a local the branches not taken would have bound
            if returned is None or any(binds_locally(scopes.get(call), name) for name in reads):
                return None
            walked.append(value)
            if any(sum(len(m.findall(read, m.Name(name))) for read in walked) > 1 for name in computed):
                return None  # substituted, it would be computed twice
            return returned
        alias = _alias(small, values)
        if alias is None:
            return None
        walked.append(small.value)  # type: ignore[union-attr]
        computed += [] if m.matches(alias[1], PLAIN_VALUE | _PLAIN_ITEM) else [alias[0]]
        values = {**values, alias[0]: alias[1]}
        statements = rest
    return None


def _decided_expressions(
    value: cst.BaseExpression, values: dict[str, cst.BaseExpression], parameters: set[str]
) -> tuple[cst.BaseExpression, int]:
    """``value`` with each ``a if p else b`` on a flag parameter replaced by the side it takes, and how many."""

    chosen = 0

    class Decide(cst.CSTTransformer):
        def leave_IfExp(self, original: cst.IfExp, updated: cst.IfExp) -> cst.BaseExpression:
            nonlocal chosen
            taken = _flag_value(updated.test, values, parameters)
            if taken is None:
                return updated
            chosen += 1
            return as_operand(updated.body if taken else updated.orelse)

    decided = value.visit(Decide())
    return decided, chosen  # type: ignore[return-value]


def _flag_value(test: cst.BaseExpression, values: dict[str, cst.BaseExpression], parameters: set[str]) -> Optional[bool]:
    """What ``p`` / ``not p`` is, ``p`` a parameter bound to a literal flag; None otherwise."""

    negated = False
    if m.matches(test, m.UnaryOperation(operator=m.Not())):
        test, negated = test.expression, True  # type: ignore[attr-defined]
    if not isinstance(test, cst.Name) or test.value not in parameters:
        return None
    flag = values.get(test.value)
    if not isinstance(flag, cst.Name) or flag.value not in _FLAGS:
        return None
    return _FLAGS[flag.value] != negated


def _decided_branch(
    statement: cst.If, values: dict[str, cst.BaseExpression], parameters: set[str]
) -> Optional[Sequence[cst.BaseStatement]]:
    """The statements ``if p:`` / ``if not p:`` runs, ``p`` a parameter bound to a literal flag; None otherwise."""

    taken = _flag_value(statement.test, values, parameters)
    if taken is None:
        return None
    if taken:
        return list(statement.body.body)
    orelse = statement.orelse
    if orelse is None:
        return []
    return [orelse] if isinstance(orelse, cst.If) else list(orelse.body.body)


def _assigned_names(function: cst.FunctionDef) -> set[str]:
    return {name.value for target in m.findall(function.body, m.AssignTarget()) for name in m.findall(target, m.Name())}


def _only_small_statement(statement: cst.BaseStatement) -> Optional[cst.BaseSmallStatement]:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def _alias(small: Optional[cst.BaseSmallStatement], values: dict[str, cst.BaseExpression]) -> Optional[tuple[str, cst.BaseExpression]]:
    """``(name, value)`` for ``name = value``, the value in the call's terms."""

    if not isinstance(small, cst.Assign) or len(small.targets) != 1:
        return None
    target, value = small.targets[0].target, small.value
    if m.matches(target, _ONE_NAME_UNPACKED):  # `width, = widths`: the one item, `widths[0]`
        target = target.elements[0].value  # type: ignore[attr-defined]
        value = cst.Subscript(as_operand(value), [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
    if not isinstance(target, cst.Name):
        return None
    bound = bind_names(value, values)
    return None if bound is None else (target.value, as_operand(bound))


# `name, = items` and `[name] = items`: one name unpacked from a sequence of one item.
_ONE_NAME_UNPACKED = m.Tuple(elements=[m.Element(value=m.Name())]) | m.List(elements=[m.Element(value=m.Name())])
# An item of a name read by a literal index (`widths[0]`): read twice, it reads the same.
_PLAIN_ITEM = m.Subscript(value=m.Name(), slice=[m.SubscriptElement(slice=m.Index(value=m.Integer()))])
