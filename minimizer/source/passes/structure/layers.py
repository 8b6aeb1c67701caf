"""Drop a layer: `self.NAME = Layer(...)` in a module class's `__init__` (or an element of its `nn.Sequential`), or
a name bound to a layer, with every call of it turned into its input: `self.norm(h)` -> `h`, `head(out)` -> `out`.

A model is built of layers, and its bug lives in one or two of them. Taken whole, a layer goes in one step with
its binding and all its calls, on every side of a check at once: a layer applied to both compared values can go
from both, never from one.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import RemovalRepairingTransformer, remove_node
from minimizer.source.passes.expressions.bypass import imported_names
from minimizer.source.substitution import substitute_expression
from minimizer.source.traversal import find_all

__all__ = ["remove_layers", "remove_named_layers"]

_SEQUENTIAL = m.Call(func=m.Name("Sequential") | m.Attribute(attr=m.Name("Sequential")))


def remove_layers(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one layer of a module class removed, in source order.

    A layer is `self.NAME = <call>(...)` in a class's `__init__`: the candidate drops that assignment, replaces
    each `self.NAME(h, ...)` in the class by `h`, and drops statements that become `x = x`. A layer that is an
    element of an `nn.Sequential(...)` call in `__init__` is dropped from the argument list instead. Layers whose
    `self.NAME` is used other than by calling it with a first positional argument are skipped.
    """
    return distinct_candidates(module, _layer_removals(module))


def _layer_removals(module: cst.Module) -> Iterator[cst.Module | None]:
    for class_def in find_all(module, m.ClassDef()):
        for init in m.findall(class_def.body, m.FunctionDef(name=m.Name("__init__"))):
            for node in _layer_sites(init):
                if m.matches(node, m.Arg()):
                    yield lambda: remove_node(module, node)
                elif _only_called_with_input(class_def, _layer_name(node)):
                    yield lambda: module.visit(_LayerRemover(class_def, node, _layer_call(_layer_name(node))))


def _layer_sites(init: cst.FunctionDef) -> Iterator[cst.Assign | cst.Arg]:
    """`self.NAME = call(...)` statements and positional arguments of `Sequential(...)` calls, in source order."""
    layer = m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name("self")))], value=m.Call())
    for node in m.findall(init.body, layer | _SEQUENTIAL):
        if m.matches(node, m.Assign()):
            yield node
        else:
            yield from (arg for arg in node.args if arg.keyword is None and not arg.star)


def _layer_name(assign: cst.Assign) -> str:
    return assign.targets[0].target.attr.value


def _layer_call(name: str) -> m.Call:
    return m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name(name)))


def _only_called_with_input(class_def: cst.ClassDef, name: str) -> bool:
    uses = m.findall(class_def, m.Attribute(value=m.Name("self"), attr=m.Name(name)))
    calls = m.findall(class_def, _layer_call(name))
    callable_with_input = all(call.args and not call.args[0].star and call.args[0].keyword is None for call in calls)
    # Every use is either a call's function or the assignment target itself.
    return callable_with_input and len(uses) <= len(calls) + 1


def remove_named_layers(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one layer bound to a name removed, in source order: `head = nn.Linear(2, 1)` (alone on
    its line, the only binding of `head` in the script), every read of `head` a call with an input first
    (`head(h)`); the candidate drops the binding and turns every call into its input, on every side of a check at
    once (`allclose(head(out), head(ref))` -> `allclose(out, ref)`): a layer applied to both compared values
    can go from both, never from one (``oracles.layers``)."""

    return distinct_candidates(module, _named_layer_removals(module))


def _named_layer_removals(module: cst.Module) -> Iterator[cst.Module | None]:
    binding = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call())])
    imported = imported_names(module)
    for statement in find_all(module, binding):
        assign = statement.body[0]
        name = assign.targets[0].target.value
        call = m.Call(func=m.Name(name))
        calls = find_all(module, call)
        reads = [n for n in find_all(module, m.Name(name)) if n is not assign.targets[0].target]
        bound = find_all(module, m.AssignTarget(target=m.Name(name)) | m.Param(name=m.Name(name)))
        if len(bound) == 1 and name not in imported and len(reads) == len(calls) and calls and all(
            _called_with_input(c) for c in calls
        ):
            yield lambda a=assign, c=call: module.visit(_LayerRemover(module, a, c))


def _called_with_input(call: cst.Call) -> bool:
    return bool(call.args) and not call.args[0].star and call.args[0].keyword is None


class _LayerRemover(RemovalRepairingTransformer):
    """Inside ``within`` (a class, or the module): drop one layer's assignment, turn its calls into their input,
    drop `x = x` leftovers."""

    def __init__(self, within: cst.CSTNode, assignment: cst.Assign, call: m.Call) -> None:
        super().__init__()
        self._within = within
        self._assignment = assignment
        self._call = call
        self._inside = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._inside = self._inside or node is self._within
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        if original_node is self._within:
            self._inside = False
        return super().on_leave(original_node, updated_node)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if original_node is self._assignment:
            return cst.RemovalSentinel.REMOVE
        if self._inside and _is_self_assignment(updated_node) and not updated_node.deep_equals(original_node):
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if self._inside and m.matches(updated_node, self._call):
            return substitute_expression(updated_node, updated_node.args[0].value)
        return super().leave_Call(original_node, updated_node)


def _is_self_assignment(assign: cst.Assign) -> bool:
    # `x = x` left where `x = self.layer(x)` stood.
    value = assign.value
    return m.matches(value, m.Name()) and all(
        m.matches(target.target, m.Name(value.value)) for target in assign.targets
    )
