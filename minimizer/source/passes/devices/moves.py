"""Device moves replaced by one default device:

    DEVICE = "cuda"
    model = MLP().to(DEVICE)
    x = torch.randn(4, 8, device=DEVICE)

becomes

    DEVICE = "cuda"
    torch.set_default_device(DEVICE)
    model = MLP()
    x = torch.randn(4, 8)

A script that runs on the GPU moves every module and input there; the moves stay as long as the bug needs the
GPU, and they stand in the way of the passes that take a model apart (`blocks = Block()` is an instance the
instance and flag passes read, `blocks = Block().to(DEVICE)` is not). With the device as the default, the repro
reads as it would on the CPU, plus one line. Where the device is the CPU, the moves go without the line.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import RemovalRepairingTransformer
from minimizer.source.patterns import assigned_name
from minimizer.source.traversal import find_all, holds

__all__ = ["moves_to_default_device"]

_DEVICE_KINDS = ("cuda", "cpu", "xpu", "mps")
_TORCH_DEVICE = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name("device")), args=[m.Arg(keyword=None)])
_IMPORT = m.SimpleStatementLine(body=[m.Import() | m.ImportFrom()])
_IMPORT_TORCH = m.SimpleStatementLine(body=[m.Import(names=[m.ImportAlias(name=m.Name("torch"), asname=None)])])


def moves_to_default_device(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the moves to one device dropped and that device made the default, once per device
    the script moves to: `x.to(D)`, `x.to(device=D)` and `x.cuda()` become `x`, `device=D` arguments go, and
    `torch.set_default_device(D)` follows `import torch` (and D's binding, where D is a name). D is a device
    string (`"cuda"`, `torch.device("cuda:0")`) or a name the module binds once, at its top level, to one (or to
    a choice between two: `"cuda" if torch.cuda.is_available() else "cpu"`, also inside `torch.device(...)`)."""

    return distinct_candidates(module, _candidates(module))


def _candidates(module: cst.Module) -> Iterator[cst.Module]:
    bindings = _device_bindings(module)
    for device, moves in _moves_by_device(module, bindings).items():
        unmoved = module.visit(_Unmoved(moves))
        if _on_the_cpu(device, bindings):
            yield unmoved
            continue
        after = _default_line_after(module, moves, bindings.get(device))
        if after is not None:
            default = cst.parse_statement(f"torch.set_default_device({device})")
            yield unmoved.with_changes(body=[*unmoved.body[: after + 1], default, *unmoved.body[after + 1 :]])


def _default_line_after(module: cst.Module, moves: list[cst.CSTNode], binding: cst.CSTNode | None) -> int | None:
    """Where the default device is set: after the imports ahead of the first line that moves to it, and after
    its binding; None without `import torch` among those imports."""

    first = next(i for i, line in enumerate(module.body) if any(holds(line, move) for move in moves))
    imports = [i for i, line in enumerate(module.body[:first]) if m.matches(line, _IMPORT)]
    if not any(m.matches(module.body[i], _IMPORT_TORCH) for i in imports):
        return None
    return max(imports[-1], module.body.index(binding) if binding is not None else -1)


def _on_the_cpu(device: str, bindings: dict[str, cst.SimpleStatementLine]) -> bool:
    """Whether ``device`` (a key of ``_moves_by_device``) is the CPU: a device string is kept as `"cpu"`."""

    return (_device_named(bindings[device].body[0].value, {}) if device in bindings else device) == '"cpu"'


def _moves_by_device(module: cst.Module, bindings: dict[str, cst.SimpleStatementLine]) -> dict[str, list[cst.CSTNode]]:
    """The moves (`x.to(D)`, `x.to(device=D)`, `x.cuda()`, a `device=D` argument) by the device they name: the
    code of a device string (`"cuda:0"`) or the name bound to one."""

    by_device: dict[str, list[cst.CSTNode]] = defaultdict(list)
    own_arguments: set[cst.CSTNode] = set()  # `device=D` of `x.to(device=D)`: part of that move
    for call in find_all(module, m.Call(func=m.Attribute(attr=m.Name("to") | m.Name("cuda")))):
        if call.func.attr.value == "cuda":
            device = None if call.args else '"cuda"'
        elif len(call.args) == 1 and (call.args[0].keyword is None or call.args[0].keyword.value == "device"):
            device = _device_named(call.args[0].value, bindings)
        else:
            device = None
        if device is not None:
            by_device[device].append(call)
            own_arguments.update(call.args)
    for argument in find_all(module, m.Arg(keyword=m.Name("device"))):
        device = _device_named(argument.value, bindings)
        if device is not None and argument not in own_arguments:
            by_device[device].append(argument)
    return by_device


def _device_named(value: cst.BaseExpression, bindings: dict[str, cst.SimpleStatementLine]) -> str | None:
    """The code `torch.set_default_device` takes for the device ``value`` names (`"cuda"` for `"cuda"` and for
    `torch.device("cuda")`, `DEVICE` for a name in ``bindings``), or None where it names none."""

    if isinstance(value, cst.Name):
        return value.value if value.value in bindings else None
    if m.matches(value, _TORCH_DEVICE):
        value = value.args[0].value
    if not isinstance(value, cst.SimpleString) or value.prefix:
        return None
    text = value.evaluated_value
    return f'"{text}"' if isinstance(text, str) and text.split(":")[0] in _DEVICE_KINDS else None


def _device_bindings(module: cst.Module) -> dict[str, cst.SimpleStatementLine]:
    """The names the module binds once, at its top level, to a device (or to a choice between two), with the
    line that binds each."""

    found = {}
    for line in module.body:
        name = assigned_name(line)
        if name is not None and _is_device(line.body[0].value) and _bound_once(module, name):
            found[name] = line
    return found


def _is_device(value: cst.BaseExpression) -> bool:
    if m.matches(value, _TORCH_DEVICE):
        value = value.args[0].value
    if isinstance(value, cst.IfExp):
        return _is_device(value.body) and _is_device(value.orelse)
    return _device_named(value, {}) is not None


def _bound_once(module: cst.Module, name: str) -> bool:
    target = m.Name(name)
    bindings = m.AssignTarget(target=target) | m.AugAssign(target=target) | m.AnnAssign(target=target) | m.Param(name=target)
    bindings |= m.For(target=target) | m.CompFor(target=target) | m.AsName(name=target) | m.NamedExpr(target=target)
    return len(find_all(module, bindings)) == 1


class _Unmoved(RemovalRepairingTransformer):
    """Each of ``moves`` undone: a `.to`/`.cuda` call becomes its receiver, a `device=` argument goes."""

    def __init__(self, moves: list[cst.CSTNode]) -> None:
        self.moves = set(moves)

    def leave_Call(self, original_node, updated_node):
        if original_node in self.moves:
            return updated_node.func.value
        return super().leave_Call(original_node, updated_node)

    def leave_Arg(self, original_node, updated_node):
        return cst.RemovalSentinel.REMOVE if original_node in self.moves else updated_node
