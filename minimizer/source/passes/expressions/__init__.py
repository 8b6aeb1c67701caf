"""Expressions made smaller inside the statements that hold them: an operation replaced by one of its operands, a
condition by one of its tests, a tensor attribute by its receiver, a layer or a torch function by cheap arithmetic
on its input; a subscript made shorter.

Deleting statements cannot do this: it takes the whole line. The bypasses come after statement ddmin (BYPASSES);
shrinking subscripts later in the round (`shrink_subscripts`).
"""

from minimizer.source.passes.expressions.arithmetic import operators_to_arithmetic
from minimizer.source.passes.expressions.bypass import bypass_attributes, bypass_operators
from minimizer.source.passes.expressions.conditions import shorten_conditions
from minimizer.source.passes.expressions.leaves import layers_to_leaves
from minimizer.source.passes.expressions.subscripts import shrink_subscripts

BYPASSES = [
    bypass_operators,
    shorten_conditions,
    bypass_attributes,
    layers_to_leaves,
    operators_to_arithmetic,
]
PASSES = [*BYPASSES, shrink_subscripts]
