"""Passes that simplify constants: float literals and integer arithmetic on literals.

Float constants such as `1e-5` or `0.7071` seldom matter to a compiler bug; `0.0`, `1.0` and `0.5` read as
"any number". Integer arithmetic on literals (`2 * 3 + 1`, `triton.next_power_of_2(3)`) is what a shape or
launch computation leaves once its names were inlined; computed, it is one literal.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst
import libcst.matchers as m
from libcst.helpers import get_full_name_for_node

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.kernels.memory import KERNEL
from minimizer.source.passes.values.literals import INTEGER_LITERAL
from minimizer.source.traversal import find_all

__all__ = ["fold_integer_arithmetic", "simplify_float_constants"]

_SIMPLE_FLOATS = ("0.0", "1.0", "0.5")


def simplify_float_constants(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with float literals replaced by `0.0`, `1.0`, then `0.5`.

    Literals already equal to 0.0, 1.0 or 0.5 are left alone. First every occurrence of a value at once (values in
    order of first appearance), then, for values that occur more than once, each occurrence alone.
    """
    return distinct_candidates(module, _float_candidates(module))


def _float_candidates(module: cst.Module) -> Iterator[cst.Module]:
    by_value: dict[float, list[cst.Float]] = {}
    for node in find_all(module, m.Float()):
        if node.evaluated_value not in (0.0, 1.0, 0.5):
            by_value.setdefault(node.evaluated_value, []).append(node)
    for nodes in by_value.values():
        for target in _SIMPLE_FLOATS:
            yield _with_float_value(module, nodes, target)
    for nodes in by_value.values():
        if len(nodes) > 1:
            for node in nodes:
                for target in _SIMPLE_FLOATS:
                    yield _with_float_value(module, [node], target)


def _with_float_value(module: cst.Module, nodes: Sequence[cst.Float], value: str) -> cst.Module:
    return replace_nodes(module, {node: node.with_changes(value=value) for node in nodes})


_FOLDED = {
    cst.Add: lambda a, b: a + b,
    cst.Subtract: lambda a, b: a - b,
    cst.Multiply: lambda a, b: a * b,
    cst.FloorDivide: lambda a, b: a // b if b else None,
    cst.Modulo: lambda a, b: a % b if b else None,
    cst.Power: lambda a, b: a**b if 0 <= b <= 64 else None,
}
# Integer functions a shape or launch computation calls on what became literals (`triton.next_power_of_2(cols)`
# once `cols` is `3`), by the name the script calls them through.
_FUNCTIONS = {
    "max": lambda *v: max(v) if len(v) > 1 else None,
    "min": lambda *v: min(v) if len(v) > 1 else None,
    "abs": lambda *v: abs(v[0]) if len(v) == 1 else None,
    "triton.next_power_of_2": lambda *v: 1 << (v[0] - 1).bit_length() if len(v) == 1 and v[0] >= 1 else None,
    "triton.cdiv": lambda *v: -(-v[0] // v[1]) if len(v) == 2 and v[1] else None,
}


def fold_integer_arithmetic(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with integer arithmetic on literals computed (`-10 + 1` -> `-9`, `2 * 3 + 1` -> `7`,
    `triton.next_power_of_2(3)` -> `4`): one candidate, every foldable operation at once. `+`, `-`, `*`, `//`,
    `%` and `**` on small integer literals, and `max`, `min`, `abs`, `triton.next_power_of_2` and `triton.cdiv`
    of them (unless the script binds such a name itself); inside a Triton kernel, an operation that gives back an
    operand (`0 + offs`, `offs * 1`): what a shape or index computation leaves once its names were inlined (a
    row of a one-program launch is `0`); the value is the same, only shorter."""

    rebound = _names_the_script_binds(module)
    folded = module.visit(_IntegerFolder({name for name in _FUNCTIONS if name.split(".")[0] not in rebound}))
    return distinct_candidates(module, [folded] if not folded.deep_equals(module) else [])


def _names_the_script_binds(module: cst.Module) -> set[str]:
    """Names the script gives a meaning of its own anywhere: defined, assigned, imported from somewhere or under
    another name (`def max`, `from numpy import max`, `import numpy as triton`); `import triton` is not one."""

    bound = {n.name.value for n in find_all(module, m.FunctionDef() | m.ClassDef())}
    bound |= {n.value for target in find_all(module, m.AssignTarget()) for n in find_all(target, m.Name())}
    from_imports = [a for node in find_all(module, m.ImportFrom()) if isinstance(node.names, Sequence) for a in node.names]
    renamed = [a for node in find_all(module, m.Import()) for a in node.names if a.asname is not None]
    for alias in from_imports + renamed:
        bound |= {n.value for n in find_all(alias.asname.name if alias.asname else alias.name, m.Name())}
    return bound


# Operations that give back one operand unchanged: `0 + offs`, `offs - 0`, `1 * x`, `x // 1`. Folded only inside a
# Triton kernel, whose values are never aliased: outside one, `out = x * 1` is a copy the script may write into.
_IDENTITIES = {
    cst.Add: ("0", "0"),
    cst.Subtract: (None, "0"),
    cst.Multiply: ("1", "1"),
    cst.FloorDivide: (None, "1"),
}


class _IntegerFolder(cst.CSTTransformer):
    def __init__(self, functions: set[str]):
        super().__init__()
        self.functions = functions
        self.kernel_depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.kernel_depth += m.matches(node, KERNEL)

    def leave_FunctionDef(self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef) -> cst.FunctionDef:
        self.kernel_depth -= m.matches(original_node, KERNEL)
        return updated_node

    def leave_BinaryOperation(self, original_node: cst.BinaryOperation, updated_node: cst.BinaryOperation):
        left, right = updated_node.left, updated_node.right
        operate = _FOLDED.get(type(updated_node.operator))
        if operate is not None and m.matches(left, INTEGER_LITERAL) and m.matches(right, INTEGER_LITERAL):
            return _literal(operate(_integer(left), _integer(right)), updated_node)
        if self.kernel_depth:
            return _without_identity(updated_node)
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        name = get_full_name_for_node(updated_node.func)
        if name not in self.functions or not updated_node.args:
            return updated_node
        if any(arg.keyword or arg.star or not m.matches(arg.value, INTEGER_LITERAL) for arg in updated_node.args):
            return updated_node
        return _literal(_FUNCTIONS[name](*(_integer(arg.value) for arg in updated_node.args)), updated_node)


def _without_identity(node: cst.BinaryOperation) -> cst.BaseExpression:
    left_identity, right_identity = _IDENTITIES.get(type(node.operator), (None, None))
    for identity, literal, kept in ((right_identity, node.right, node.left), (left_identity, node.left, node.right)):
        if identity is not None and m.matches(literal, cst.Integer(value=identity)):
            return kept.with_changes(lpar=[*node.lpar, *kept.lpar], rpar=[*kept.rpar, *node.rpar])
    return node


def _literal(value: int | None, node: cst.BaseExpression) -> cst.BaseExpression:
    if value is None or abs(value) > 2**31:
        return node
    literal = cst.Integer(str(abs(value)))
    result = literal if value >= 0 else cst.UnaryOperation(operator=cst.Minus(), expression=literal)
    # The operation's own parentheses stay (`(1 + 2).bit_length()` needs them); the layout drops the rest.
    return result.with_changes(lpar=node.lpar, rpar=node.rpar)


def _integer(node: cst.BaseExpression) -> int:
    if isinstance(node, cst.UnaryOperation):
        return -int(node.expression.value, 0)
    return int(node.value, 0)
