"""Names that only stand for a value, resolved: a tuple assignment written one name per line, sizes the source
already states (`rows, cols = x.shape`), a second name for the same thing, a variable read once.

The binding goes and its reads read the value (split, each name can go on its own). The first three come before
statement ddmin, which then has fewer lines to try (BINDINGS); inlining variables read once comes later in the
round, after the signature and item passes (`inline_single_use_variables`). The kernel stages also inline from
here (`inline.inline_literal_names`, `inline.inline_kernel_temporaries`).
"""

from minimizer.source.passes.names.aliases import remove_name_aliases
from minimizer.source.passes.names.inline import inline_single_use_variables
from minimizer.source.passes.names.known_shapes import fold_known_shapes
from minimizer.source.passes.names.tuples import split_tuple_assignments

BINDINGS = [split_tuple_assignments, fold_known_shapes, remove_name_aliases]
PASSES = [*BINDINGS, inline_single_use_variables]
