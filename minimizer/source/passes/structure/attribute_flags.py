"""An instance's flag attribute, switched between its calls, passed to each call instead:

    class Block(nn.Module):
        def __init__(self):
            self.fused = True
        def forward(self, x):
            if self.fused:
                ...  # launch the kernel
            return reference(x)

    blocks = Block()
    fused = blocks(x)
    blocks.fused = False
    assert torch.allclose(fused, blocks(x))

becomes `def forward(self, x, fused=True)` reading `fused`, and `blocks(x, False)` where the script had set it
False. A check that runs a model fused and then unfused switches it this way; as a parameter, the flags pass
decides it at each call (``source.passes.structure.flags``), which it cannot do for state.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.structure.modules import top_level_classes
from minimizer.source.traversal import find_all, names_of, parent_map

__all__ = ["attribute_flags_to_parameters"]

_FLAG = m.Name("True") | m.Name("False")
_CALLED = ("forward", "__call__")


def attribute_flags_to_parameters(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one flag attribute of a class made a parameter of the method that reads it.

    The class is built once, bound to a name at module level (`blocks = Block()`); its `__init__` sets the flag to
    `True` or `False` (`self.fused = True`) and nothing else in the class sets it; one method reads it, `forward`
    or `__call__`, which the script calls as `blocks(...)`. Every use of the name is such a call or a setting of the
    flag to a literal (`blocks.fused = False`), each in a statement of the module's own body, so that which value
    each call sees is plain from their order. The method gets the parameter (its `__init__` value as default), the
    calls that saw another value pass it, and the settings go.
    """

    return distinct_candidates(module, _conversions(module))


def _conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    parents = parent_map(module)
    for cls, uses, _ in top_level_classes(module):
        methods = {f.name.value: f for f in cls.body.body if isinstance(f, cst.FunctionDef)}
        init, called = methods.get("__init__"), [methods[name] for name in _CALLED if name in methods]
        if init is None or len(called) != 1 or len(uses) != 1 or not init.params.params:
            continue
        instance = _instance_name(module, uses[0], parents)
        if instance is None:
            continue
        for flag, setting in _flags_set_by(init).items():
            yield _converted(module, cls, setting, called[0], instance, flag)


def _instance_name(module: cst.Module, use: cst.CSTNode, parents) -> str | None:
    """`blocks` of the module-level `blocks = Block()` that is the class's one use."""

    call = parents.get(use)
    statement = parents.get(parents.get(call)) if call is not None else None
    pattern = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call(func=m.Name()))])
    if statement not in module.body or not m.matches(statement, pattern) or statement.body[0].value is not call:
        return None
    return statement.body[0].targets[0].target.value


def _flags_set_by(init: cst.FunctionDef) -> dict[str, cst.SimpleStatementLine]:
    """Each attribute ``init`` sets to `True` or `False` in a line of its own body, by that line."""

    self_name = init.params.params[0].name.value
    found = {}
    for line in init.body.body:
        if m.matches(line, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name(self_name)))], value=_FLAG)])):
            found[line.body[0].targets[0].target.attr.value] = line
    return found


def _converted(
    module: cst.Module, cls: cst.ClassDef, setting: cst.SimpleStatementLine, method: cst.FunctionDef, instance: str, flag: str
) -> cst.Module | None:
    params = method.params
    if not params.params or params.star_arg is not cst.MaybeSentinel.DEFAULT or params.kwonly_params or params.star_kwarg:
        return None
    self_name = params.params[0].name.value
    reads = find_all(method, m.Attribute(value=m.Name(self_name), attr=m.Name(flag)))
    stored = {id(t.target) for t in find_all(module, m.AssignTarget() | m.AugAssign() | m.AnnAssign())}
    if any(id(read) in stored for read in reads):
        return None  # the method sets it itself
    settings = _settings(module, instance, flag)
    elsewhere = [a for a in find_all(module, m.Attribute(attr=m.Name(flag))) if a not in reads]
    if not reads or names_of(method, flag) or len(elsewhere) != 1 + len(settings):
        return None  # read or set where the order of calls does not tell it (the one other is `__init__`'s)
    default = setting.body[0].value
    calls = _calls_in_order(module, instance, settings, default)
    if calls is None:
        return None
    replacements: dict = {setting: cst.RemovalSentinel.REMOVE, **{line: cst.RemovalSentinel.REMOVE for line in settings}}
    replacements |= {read: cst.Name(flag) for read in reads}
    for call, value in calls:
        if value.value != default.value:
            replacements[call] = call.with_changes(args=[*call.args, cst.Arg(value, keyword=None if all(a.keyword is None for a in call.args) else cst.Name(flag))])
    parameter = cst.Param(cst.Name(flag), default=default, equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")))
    last = params.params[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
    replacements[params] = params.with_changes(params=[*params.params[:-1], last, parameter])
    return replace_nodes(module, replacements)


def _settings(module: cst.Module, instance: str, flag: str) -> list[cst.SimpleStatementLine]:
    pattern = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name(instance), attr=m.Name(flag)))], value=_FLAG)])
    return [line for line in module.body if m.matches(line, pattern)]


def _calls_in_order(
    module: cst.Module, instance: str, settings: list[cst.SimpleStatementLine], default: cst.Name
) -> list[tuple[cst.Call, cst.Name]] | None:
    """Each call of the instance with the flag's value it sees (``settings``: the lines that set it), in the
    module's order; None where the instance is used otherwise, or inside a function, a loop or a branch."""

    uses = len(find_all(module, m.Name(instance)))
    value, calls, seen = default, [], 1 + len(settings)  # its binding and its settings
    for statement in module.body:
        if statement in settings:
            value = statement.body[0].value
            continue
        here = find_all(statement, m.Call(func=m.Name(instance))) if isinstance(statement, cst.SimpleStatementLine) else []
        calls += [(call, value) for call in here]
        seen += len(here)
    if seen != uses or not calls:
        return None
    return calls
