"""Replace a layer by what an autograd bug needs of it: an output that requires grad.

A script's `nn.Linear` or `nn.Conv2d` often stands in a repro only to put its input on autograd's tape; its
weights, shapes and import are noise. Bypassing the call (`bypass_operators`) turns `encoder(x)` into `x` and
takes the grad away with the weights, so the candidate fails differently; this pass keeps the grad: the input
becomes a leaf that requires grad, and the layer a cheap differentiable step (`x * 2`) that `bypass_operators`
may later drop where the bug does not need an intermediate tensor either.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.signatures.parameters import given_parameters
from minimizer.source.substitution import substitute_under
from minimizer.source.traversal import find_all, parent_map

__all__ = ["layers_to_leaves"]

# `torch.X(...)` calls that make a floating-point tensor, which may then require grad.
_FACTORIES = {
    "randn", "rand", "ones", "zeros", "empty", "full", "tensor", "linspace", "eye",
    "randn_like", "rand_like", "ones_like", "zeros_like", "empty_like", "full_like",
}
_FACTORY = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(lambda name: name in _FACTORIES))))
_NN = m.Name("nn") | m.Attribute(value=m.Name("torch"), attr=m.Name("nn"))
# `nn.Linear(...)`, `torch.nn.Conv2d(...)`: a layer class of torch.nn, constructed.
_LAYER = m.Call(func=m.Attribute(value=_NN, attr=m.Name(m.MatchIfTrue(lambda name: name[:1].isupper()))))
_ONE_INPUT = m.Call(args=[m.Arg(keyword=None, star="")])
_LAYER_BINDING = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=_LAYER)])


def layers_to_leaves(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one torch.nn layer replaced, in source order.

    A layer constructed where it is called on a tensor factory (`nn.Linear(1, 1)(torch.randn(1))`) becomes the
    factory with `requires_grad=True`. A layer bound to a name (`encoder = nn.Conv2d(1, 1, 1)`) whose every use
    is a call on one input goes with its binding: each `encoder(x)` becomes `x * 2`, and the tensor factories
    outside functions that do not say `requires_grad` get `requires_grad=True`: all of them, then each alone. So
    does a layer every call of a function gives one of its parameters (a method lifted with its `self`,
    `torch.compile(f)(nn.Linear(1, 1), x)`), where the function only calls it on one input: the parameter and
    the arguments go.
    """

    return distinct_candidates(module, _replacements(module))


def _replacements(module: cst.Module) -> Iterator[cst.Module | None]:
    for call in find_all(module, m.Call(func=_LAYER) & _ONE_INPUT):
        made = call.args[0].value
        if m.matches(made, _FACTORY) and not _says_requires_grad(made):
            yield lambda call=call, made=made: replace_nodes(module, {call: _requiring_grad(made)})
    for function, parameter, removal in given_parameters(module, _LAYER):
        uses = find_all(function.body, m.Name(parameter.name.value))
        applied = find_all(function.body, m.Call(func=m.Name(parameter.name.value)) & _ONE_INPUT)
        if applied and len(applied) == len(uses):
            # The parameter and the layers given for it go; each call of it doubles its input instead.
            yield from _requiring_grad_at_once_then_each(_replace_bound_layer(module, removal, applied))
    names = [(line, line.body[0].targets[0].target.value) for line in find_all(module, _LAYER_BINDING)]
    for line, name in names:
        if sum(bound == name for _, bound in names) != 1:
            continue
        uses = [node for node in find_all(module, m.Name(name)) if node is not line.body[0].targets[0].target]
        calls = find_all(module, m.Call(func=m.Name(name)) & _ONE_INPUT)
        if not calls or len(calls) != len(uses):
            continue
        # Which input feeds the layer is not known here: every factory at once, then each alone (a buffer the
        # script updates in place must not require grad).
        yield from _requiring_grad_at_once_then_each(_replace_bound_layer(module, {line: cst.RemovalSentinel.REMOVE}, calls))


def _requiring_grad_at_once_then_each(replaced: cst.Module) -> Iterator:
    factories = _factories_outside_functions(replaced)
    for chosen in [factories, *([[f] for f in factories] if len(factories) > 1 else [])]:
        yield lambda replaced=replaced, chosen=chosen: replace_nodes(replaced, {node: _requiring_grad(node) for node in chosen})


def _replace_bound_layer(module: cst.Module, replacements: dict, calls: list[cst.Call]) -> cst.Module:
    replacements = dict(replacements)
    parents = parent_map(module)
    for call in calls:
        doubled = cst.BinaryOperation(left=call.args[0].value, operator=cst.Multiply(), right=cst.Integer("2"))
        # Parentheses only where an operator or attribute around the call would bind tighter.
        replacements[call] = substitute_under(parents.get(call), call, doubled)
    return replace_nodes(module, replacements)


def _factories_outside_functions(module: cst.Module) -> list[cst.Call]:
    inside = {id(node) for function in find_all(module, m.FunctionDef() | m.Lambda()) for node in find_all(function, _FACTORY)}
    return [
        node for node in find_all(module, _FACTORY)
        if id(node) not in inside and not _says_requires_grad(node)
    ]


def _says_requires_grad(call: cst.Call) -> bool:
    return any(arg.keyword is not None and arg.keyword.value == "requires_grad" for arg in call.args)


def _requiring_grad(call: cst.Call) -> cst.Call:
    args = list(call.args)
    if args:
        args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    flag = cst.Arg(
        keyword=cst.Name("requires_grad"),
        value=cst.Name("True"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return call.with_changes(args=[*args, flag])
