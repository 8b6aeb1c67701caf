"""The source passes, grouped by what they reduce, and the order of the first round.

Each folder holds one kind of pass, its `__init__` listing them in their order and saying what they share:
`statements`, `devices`, `structure`, `configs`, `names`, `expressions`, `kernels`, `signatures`, `items`, `values`.
Beside them, what the passes of every kind use: `candidates` (a pass's candidates, filtered), `edit` (a module
edited by node identity), `scopes` (its scopes, computed once); and `library_sizes`, which `configs` and
`signatures` share. The first round takes the kinds in turns, some twice: structural passes that take whole layers,
classes and wrappers in a few proposals go first, statement ddmin (hundreds of proposals on a large script) after
them; literal tensors become factories early (they can be most of a lifted call's tokens); value shrinking
(integer literals, dtypes, constants), which keeps the token count but makes the repro smaller to run
and read, goes last. The corpus figures are measured with this order, to the token. From the second round on the
scheduler orders passes by what they removed per proposal so far.
"""

from minimizer.source.passes import (
    configs,
    devices,
    expressions,
    items,
    kernels,
    names,
    signatures,
    statements,
    structure,
    values,
)

SOURCE_PASSES = [
    *statements.CLEARING,  # output, dead definitions, idle statements, the blocks around the work
    *values.LITERALS,  # tensors spelled element by element written as factories
    devices.moves_to_default_device,  # `Block().to(D)` made `Block()`, an instance the class passes read
    *structure.CLASSES,  # layers, then classes made functions and statements
    *structure.FUNCTIONS,  # helpers inlined where they are called
    *configs.PASSES,  # a library model's sizes shrunk, config fields and options read as their defaults
    *names.BINDINGS,  # one name per line, sizes the source states, aliases
    *statements.DELETION,  # statement ddmin
    structure.bypass_wrapper_functions,
    devices.autocast_to_dtypes,  # the dtype made explicit: the operator that produced it can be bypassed next
    *expressions.BYPASSES,  # operations replaced by an operand, conditions by a test
    *kernels.PASSES,
    *signatures.INTERFACES,  # parameters, returned values, arguments
    *items.DROPPED,  # entries and unpacked items nobody reads
    names.inline_single_use_variables,
    expressions.shrink_subscripts,
    *items.SINGLE,  # collections of one item made that item
    *values.SHRINKING,  # the same tokens, a smaller repro to run and read
    signatures.keywords_to_positional,
]

# Tried right after every accepted step (see Reducer's follow_up).
FOLLOW_UP = statements.FOLLOW_UP

GROUPS = [statements, devices, structure, configs, names, expressions, kernels, signatures, items, values]

__all__ = ["FOLLOW_UP", "GROUPS", "SOURCE_PASSES"]
