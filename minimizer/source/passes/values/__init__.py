"""Values made smaller or plainer: literal tensors written as factories, integer arithmetic on literals computed,
integer literals and shapes shrunk, random inputs made fixed, dtypes dropped, float constants made plain.

Most keep the token count, or nearly, but make the repro smaller to run and read, so they come at the end of the
round. `LITERALS` come early instead: a tensor spelled element by element (a lifted call's recorded inputs) is
often most of a repro's tokens, and its factory takes them in one step. `recorded` (a tensor written as a factory
of what the run recorded) is a pass the reduce stage runs, not one of the first round.
"""

from minimizer.source.passes.values.constants import fold_integer_arithmetic, simplify_float_constants
from minimizer.source.passes.values.dtypes import simplify_dtypes
from minimizer.source.passes.values.factories import constant_tensors_to_factories, literal_tensors_to_draws
from minimizer.source.passes.values.literals import shrink_int_literals, shrink_shapes
from minimizer.source.passes.values.random_inputs import random_inputs_to_ones

LITERALS = [constant_tensors_to_factories, literal_tensors_to_draws]

SHRINKING = [
    fold_integer_arithmetic,
    shrink_int_literals,
    shrink_shapes,
    random_inputs_to_ones,
    simplify_dtypes,
    simplify_float_constants,
]

PASSES = [*LITERALS, *SHRINKING]
