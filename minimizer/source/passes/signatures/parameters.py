"""Remove parameters that a function never reads, together with the matching argument at its call sites.

After other passes have emptied a function, its signature still asks every caller for values it ignores
(`def rotate(v, points): return skew(v).T`), and those arguments keep their own definitions alive. A parameter
goes only when every call site can be matched: calls by name (`f(a, b)`), calls through `torch.compile(f)`
(`torch.compile(f)(a, b)`, `g = torch.compile(f); g(a, b)`) or a `torch.func` transform that passes the
arguments on (`torch.func.grad(f)(a, b)`, also inside `torch.compile`), launches of a `@triton.jit` kernel
(`kernel[grid](a, b, BLOCK=4)`), and for methods calls by attribute (`obj.m(a)`). A `torch.library`
custom op loses a parameter that neither it nor its registered fake or kernels read, in all of them at once. A
function referenced in any other way (passed as a value, decorated by anything else) keeps its required
parameters, because we cannot see how it is called; an unread one with a default may go (`def step(tokens,
targets=None)` handed to `torch.compile` and a training loop): a caller that passes it fails with a TypeError,
which the oracle turns down.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import metadata
from minimizer.source.patterns import TORCH_COMPILE
from minimizer.source.traversal import find_all, parent_map

__all__ = ["bind_constant_parameters", "given_parameters", "remove_unused_parameters"]

_TRITON_JIT = m.Attribute(value=m.Name("triton"), attr=m.Name("jit"))
# torch.compile and triton.jit keep the signature and leave every call visible (`triton.autotune` does not:
# its configs name parameters).
_SIGNATURE_KEEPING_DECORATOR = m.Decorator(
    decorator=TORCH_COMPILE | m.Call(func=TORCH_COMPILE) | _TRITON_JIT | m.Call(func=_TRITON_JIT)
)
# `@torch.library.custom_op("ns::name", ...)`: torch calls the functions registered for the op with its arguments.
_CUSTOM_OP = m.Attribute(attr=m.Name("custom_op")) | m.Name("custom_op")
# torch.func's transforms whose result is called with the function's own arguments (`grad(f)(x, y)`).
_TRANSFORM_NAMES = m.Name("grad") | m.Name("grad_and_value") | m.Name("vmap") | m.Name("jacrev") | m.Name("jacfwd") | m.Name("hessian")
_ARGUMENT_PASSING_TRANSFORM = m.Attribute(
    value=m.Attribute(value=m.Name("torch"), attr=m.Name("func")) | m.Name("torch") | m.Name("functorch"), attr=_TRANSFORM_NAMES
)
# Methods the framework calls for us (`m(x)` runs `forward`); their call sites are not in the script.
_FRAMEWORK_METHODS = frozenset({"forward", "backward", "setup_context", "jvp", "vmap"})


@dataclass(frozen=True)
class _CallSite:
    call: cst.Call
    shift: int  # how many leading parameters the call does not pass positionally (`self` through `obj.m(...)`)


def remove_unused_parameters(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one unread parameter of a function or method removed, with its arguments.

    One candidate per (function, parameter), functions and parameters in source order. Functions are those at
    module level and methods of module-level classes, `__init__` included (its call sites are the class's
    constructions, `Block(config)`); `self`/`cls` (a method's first parameter), `*args` and
    `**kwargs` are never removed. A call site's argument matches by position, or by keyword name; a function
    with a call site using `*` or `**` arguments is skipped. Where the callers are not all known, only unread
    parameters with a default are proposed, without touching any call.
    """
    return distinct_candidates(module, _removals(module))


def _removals(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    scopes, parents = _scopes_and_parents(module)
    for function, first_removable, call_sites in _functions(module, scopes, parents):
        if call_sites is None:
            # Callers we cannot see (the function passed as a value, `forward`): one that passes the parameter
            # gets a TypeError, and the oracle turns the candidate down.
            for param in _unread_parameters(function, first_removable, scopes):
                if param.default is not None:
                    yield lambda: _remove_parameter(module, function, param, [])
            continue
        if _unpacks_arguments(call_sites):
            continue
        for param in _unread_parameters(function, first_removable, scopes):
            yield lambda: _remove_parameter(module, function, param, call_sites)
    for op, companions, call_sites in _custom_ops(module, scopes, parents):
        unread = set.intersection(*(_unread_positions(f, scopes) for f in [op, *companions]))
        for index in sorted(unread):
            yield lambda i=index: _remove_op_parameter(module, op, companions, i, call_sites)


def given_parameters(module: cst.Module, given: m.BaseMatcherNode) -> list[tuple[cst.FunctionDef, cst.Param, dict]]:
    """(function, parameter, the replacements that take it and its arguments out) for each parameter of a
    module-level function whose callers are all known, as for ``remove_unused_parameters`` (calls through
    `torch.compile(f)` included), and every one of them gives an argument matching ``given`` (a fresh config
    `Cfg()`, a fresh layer `nn.Linear(1, 1)`: a method lifted out of its class keeps `self`)."""

    scopes, parents = _scopes_and_parents(module)
    found = []
    for function, first_removable, call_sites in _functions(module, scopes, parents):
        if first_removable or not call_sites or _unpacks_arguments(call_sites):
            continue  # a method, or callers not all known
        for param in function.params.params:
            index, keyword = _position_and_keyword(function, param)
            arguments = [_matching_argument(site, index, keyword) for site in call_sites]
            if all(arg is not None and m.matches(arg.value, given) for arg in arguments):
                found.append((function, param, _parameter_removal(function, param, call_sites)))
    return found


# A value that reads the same wherever it is written (an immutable literal).
_CONSTANT = (
    m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.Name("None")
    | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())
)


def bind_constant_parameters(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one parameter that every call gives the same constant removed, its reads reading the
    constant: `def __init__(self, blocks=1)` built only as `Net()` reads `1` where it read `blocks`, and
    `batches(16)` called twice with `16` loses `batch_size`.

    A user's model and helpers take options the script never varies; bound, they stop holding the shapes and
    loops apart from the literal and comprehension passes (`range(blocks)` becomes `range(1)`). The same call
    sites as for unread parameters (see `remove_unused_parameters`); a parameter the function binds again, or one
    some call leaves without a constant (an argument that is not one, no default), stays.
    """
    return distinct_candidates(module, _bindings(module))


def _bindings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    scopes, parents = _scopes_and_parents(module)
    for function, first_removable, call_sites in _functions(module, scopes, parents):
        if not call_sites or _unpacks_arguments(call_sites):
            continue
        scope = scopes.get(function.body)
        if scope is None:
            continue
        positional = [*function.params.posonly_params, *function.params.params]
        for param in [*positional[first_removable:], *function.params.kwonly_params]:
            value = _the_one_constant(module, function, param, call_sites)
            reads = [] if value is None else _reads_of(scope, param)
            if reads:
                yield lambda param=param, value=value, reads=reads: _bind(module, function, param, value, reads, call_sites)


def _the_one_constant(
    module: cst.Module, function: cst.FunctionDef, param: cst.Param, call_sites: Sequence[_CallSite]
) -> Optional[cst.BaseExpression]:
    """The constant every call gives ``param`` (its argument, else the default), or None."""

    index, keyword = _position_and_keyword(function, param)
    found, code = None, None
    for site in call_sites:
        arg = _matching_argument(site, index, keyword)
        value = param.default if arg is None else arg.value
        if value is None or not m.matches(value, _CONSTANT):
            return None
        if code is None:
            found, code = value, module.code_for_node(value)
        elif module.code_for_node(value) != code:
            return None
    return found


def _reads_of(scope, param: cst.Param) -> list[cst.CSTNode]:
    """The reads of ``param``'s name in the function, or none if the function binds the name anywhere else."""

    binding = _sole_binding(scope, param.name.value, param)
    if binding is None:
        return []
    return [access.node for access in binding.references if isinstance(access.node, cst.Name)]


def _bind(module, function, param, value, reads, call_sites) -> cst.Module:
    replacements: dict = {read: value.deep_clone() for read in reads}
    replacements.update(_parameter_removal(function, param, call_sites))
    return replace_nodes(module, replacements)


def _scopes_and_parents(module: cst.Module):
    wrapper = metadata(module)
    return wrapper.resolve(ScopeProvider), parent_map(wrapper.module)


def _unpacks_arguments(call_sites: Sequence[_CallSite]) -> bool:
    """Whether a call passes `*args` or `**kwargs`: which parameter gets what is then unknown."""

    return any(arg.star for site in call_sites for arg in site.call.args)


def _functions(module: cst.Module, scopes, parents):
    """(function, index of its first removable parameter, its call sites or None when not all are known)."""
    for statement in module.body:
        if m.matches(statement, m.FunctionDef()):
            yield statement, 0, _function_call_sites(statement, scopes, parents)
        elif m.matches(statement, m.ClassDef(body=m.IndentedBlock())):
            for method in statement.body.body:
                if m.matches(method, m.FunctionDef(name=m.Name("__init__"))):
                    yield method, 1, _constructor_call_sites(statement, method, scopes, parents)
                elif m.matches(method, m.FunctionDef()):
                    yield method, 1, _method_call_sites(module, statement, method)


def _custom_ops(module: cst.Module, scopes, parents):
    """A `torch.library.custom_op` function with the functions registered for it (`@op.register_fake`,
    `@op.register_kernel(...)`, which torch calls with the op's arguments) and its call sites; only where every
    reference to the op is one of those."""

    for function in module.body:
        if not m.matches(function, m.FunctionDef()) or len(function.decorators) != 1:
            continue
        if not m.matches(function.decorators[0].decorator, m.Call(func=_CUSTOM_OP)) or function.params.posonly_params:
            continue
        binding = _sole_binding(scopes[function], function.name.value, function)
        if binding is None:
            continue
        companions, sites = [], []
        for access in binding.references:
            parent = parents.get(access.node)
            if m.matches(parent, m.Call()) and parent.func is access.node:
                sites.append(_CallSite(parent, 0))
                continue
            companion = _registered_for(parent, parents)
            if companion is None:
                break
            companions.append(companion)
        else:
            yield function, companions, sites


def _registered_for(attribute: cst.CSTNode, parents) -> Optional[cst.FunctionDef]:
    """The function that `@op.register_fake` / `@op.register_kernel(...)` (here `attribute`) decorates."""

    if not m.matches(attribute, m.Attribute(attr=m.Name("register_fake") | m.Name("register_kernel"))):
        return None
    node = parents.get(attribute)
    if m.matches(node, m.Call()) and node.func is attribute:
        node = parents.get(node)
    function = parents.get(node) if m.matches(node, m.Decorator()) else None
    if not m.matches(function, m.FunctionDef()) or len(function.decorators) != 1 or function.params.posonly_params:
        return None
    return function


def _unread_positions(function: cst.FunctionDef, scopes) -> set[int]:
    unread = _unread_parameters(function, 0, scopes)
    return {i for i, param in enumerate(function.params.params) if param in unread}


def _remove_op_parameter(module, op, companions, index: int, call_sites) -> cst.Module:
    param = op.params.params[index]
    replacements: dict = {f.params: _without_parameter(f.params, f.params.params[index]) for f in [op, *companions]}
    for site in call_sites:
        arg = _matching_argument(site, index, param.name.value)
        if arg is not None:
            replacements[arg] = cst.RemovalSentinel.REMOVE
    return replace_nodes(module, replacements)


def _unread_parameters(function: cst.FunctionDef, first_removable: int, scopes) -> list[cst.Param]:
    positional = [*function.params.posonly_params, *function.params.params]
    candidates = [*positional[first_removable:], *function.params.kwonly_params]
    scope = scopes.get(function.body)
    if scope is None:
        return []
    unread = []
    for param in candidates:
        assignments = [a for a in scope.assignments[param.name.value] if getattr(a, "node", None) is param]
        if assignments and not any(a.references for a in assignments):
            unread.append(param)
    return unread


def _decorators_allowed(function: cst.FunctionDef) -> bool:
    return all(m.matches(decorator, _SIGNATURE_KEEPING_DECORATOR) for decorator in function.decorators)


def _function_call_sites(function: cst.FunctionDef, scopes, parents) -> Optional[list[_CallSite]]:
    if not _decorators_allowed(function):
        return None
    binding = _sole_binding(scopes[function], function.name.value, function)
    if binding is None:
        return None
    sites = []
    for access in binding.references:
        found = _call_sites_of_reference(access.node, scopes, parents)
        if found is None:
            return None
        sites.extend(found)
    return sites


def _sole_binding(scope, name: str, node: cst.CSTNode):
    assignments = list(scope.assignments[name])
    if len(assignments) != 1 or getattr(assignments[0], "node", None) is not node:
        return None
    return assignments[0]


def _call_sites_of_reference(name: cst.CSTNode, scopes, parents) -> Optional[list[_CallSite]]:
    """The calls a reference to a function leads to: the call it is the callee of, a kernel launch
    `name[grid](...)`, or the calls of the object `torch.compile(name)` returns. None when the reference is used
    any other way."""
    parent = parents.get(name)
    if m.matches(parent, m.Call()) and parent.func is name:
        return [_CallSite(parent, 0)]
    if m.matches(parent, m.Subscript()) and parent.value is name:
        launch = parents.get(parent)
        return [_CallSite(launch, 0)] if m.matches(launch, m.Call()) and launch.func is parent else None
    wrapper = _passing_wrapper(parent, parents)
    if wrapper is None:
        return None
    holder = parents.get(wrapper)
    if m.matches(holder, m.Assign(targets=[m.AssignTarget(target=m.Name())])):
        target = holder.targets[0].target
        binding = _sole_binding(scopes[holder], target.value, target)
        return None if binding is None else _calls_of(binding, parents, shift=0)
    return _call_sites_of_reference(wrapper, scopes, parents)  # its call, or a wrapper around it


def _passing_wrapper(argument: cst.CSTNode, parents) -> Optional[cst.Call]:
    """The call `torch.compile(f, ...)` or `torch.func.grad(f)` of which ``argument`` is the function: what it
    returns takes the same arguments in the same order. A transform given more (`argnums`, `in_dims`) says
    which argument is which by position, and is not one."""

    if not m.matches(argument, m.Arg(keyword=None, star="")):
        return None
    call = parents.get(argument)
    if not m.matches(call, m.Call()) or call.args[0] is not argument:
        return None
    if m.matches(call.func, TORCH_COMPILE):
        return call
    extra = [arg for arg in call.args[1:] if not m.matches(arg, m.Arg(keyword=m.Name("has_aux")))]
    return call if m.matches(call.func, _ARGUMENT_PASSING_TRANSFORM) and not extra else None


def _calls_of(binding, parents, *, shift: int) -> Optional[list[_CallSite]]:
    """The calls that each reference of ``binding`` is the callee of; None when a reference is anything else."""

    sites = []
    for access in binding.references:
        call = parents.get(access.node)
        if not (m.matches(call, m.Call()) and call.func is access.node):
            return None
        sites.append(_CallSite(call, shift))
    return sites


def _constructor_call_sites(class_def: cst.ClassDef, init: cst.FunctionDef, scopes, parents) -> Optional[list[_CallSite]]:
    """`Cls(...)` calls, which pass every `__init__` argument but `self`; None when the class is used any other
    way (a base class, whose subclasses call `super().__init__(...)`; a value passed around; a decorated class)."""

    if class_def.decorators or init.decorators:
        return None
    binding = _sole_binding(scopes[class_def], class_def.name.value, class_def)
    if binding is None or not binding.references:
        return None
    return _calls_of(binding, parents, shift=1)


def _method_call_sites(module: cst.Module, class_def: cst.ClassDef, method: cst.FunctionDef) -> Optional[list[_CallSite]]:
    name = method.name.value
    if name.startswith("__") or name in _FRAMEWORK_METHODS or method.decorators:
        return None
    # Another method of that name anywhere makes `obj.name(...)` ambiguous.
    if len(find_all(module, m.FunctionDef(name=m.Name(name)))) != 1:
        return None
    calls = find_all(module, m.Call(func=m.Attribute(attr=m.Name(name))))
    if not calls or len(find_all(module, m.Attribute(attr=m.Name(name)))) != len(calls):
        return None  # no visible caller (perhaps the framework calls it), or a use that is not a call
    # `ClassName.method(obj, a)` passes `self` positionally; `obj.method(a)` does not.
    return [_CallSite(call, 0 if m.matches(call.func.value, m.Name(class_def.name.value)) else 1) for call in calls]


def _remove_parameter(
    module: cst.Module, function: cst.FunctionDef, param: cst.Param, call_sites: Sequence[_CallSite]
) -> cst.Module:
    return replace_nodes(module, _parameter_removal(function, param, call_sites))


def _parameter_removal(function: cst.FunctionDef, param: cst.Param, call_sites: Sequence[_CallSite]) -> dict:
    """The replacements that take ``param`` out of ``function``'s signature and its argument out of every call."""

    replacements: dict = {function.params: _without_parameter(function.params, param)}
    index, keyword = _position_and_keyword(function, param)
    for site in call_sites:
        arg = _matching_argument(site, index, keyword)
        if arg is not None:
            replacements[arg] = cst.RemovalSentinel.REMOVE
    return replacements


def _position_and_keyword(function: cst.FunctionDef, param: cst.Param) -> tuple[Optional[int], Optional[str]]:
    """Where a call passes ``param`` by position (None for keyword-only), and by what keyword (None for
    positional-only)."""

    positional = [*function.params.posonly_params, *function.params.params]
    index = next((i for i, p in enumerate(positional) if p is param), None)
    return index, None if param in function.params.posonly_params else param.name.value


def _matching_argument(site: _CallSite, index: Optional[int], keyword: Optional[str]) -> Optional[cst.Arg]:
    positionals = [arg for arg in site.call.args if arg.keyword is None]
    if index is not None and 0 <= index - site.shift < len(positionals):
        return positionals[index - site.shift]
    return next((arg for arg in site.call.args if m.matches(arg.keyword, m.Name(keyword))), None)


def _without_parameter(parameters: cst.Parameters, param: cst.Param) -> cst.Parameters:
    def drop(params: Sequence[cst.Param]) -> list[cst.Param]:
        return [p for p in params if p is not param]

    changes = {
        "posonly_params": drop(parameters.posonly_params),
        "params": drop(parameters.params),
        "kwonly_params": drop(parameters.kwonly_params),
    }
    if not changes["kwonly_params"] and m.matches(parameters.star_arg, m.ParamStar()):
        changes["star_arg"] = cst.MaybeSentinel.DEFAULT  # a bare `*` needs a keyword-only parameter after it
    if not changes["posonly_params"] and parameters.posonly_params:
        changes["posonly_ind"] = cst.MaybeSentinel.DEFAULT
    updated = parameters.with_changes(**changes)
    return _without_trailing_comma(updated)


def _without_trailing_comma(parameters: cst.Parameters) -> cst.Parameters:
    # `def f(a, b)` minus `b` would keep `a`'s comma: `def f(a, )`.
    for field in ("star_kwarg", "kwonly_params", "star_arg", "params", "posonly_ind", "posonly_params"):
        value = getattr(parameters, field)
        if isinstance(value, (list, tuple)):
            if not value:
                continue
            last = value[-1]
            return parameters.with_changes(**{field: [*value[:-1], last.with_changes(comma=cst.MaybeSentinel.DEFAULT)]})
        if isinstance(value, (cst.Param, cst.ParamStar, cst.ParamSlash)):
            if isinstance(value, cst.ParamStar):
                return parameters  # a bare `*` is never last
            return parameters.with_changes(**{field: value.with_changes(comma=cst.MaybeSentinel.DEFAULT)})
    return parameters
