"""Structure taken apart: the layers, classes and functions between the script and the code it runs, made that
code.

A layer goes with its calls; a class that only delegates, is only a `forward`, is an autograd `Function` with only
a `forward`, is built once for one method, or is a `TestCase`, becomes functions and statements, and a flag
attribute switched between calls a parameter (CLASSES). Then helpers are inlined where they are called, with
what keeps a call from that taken first: a partial, an assert around it, a decorator (FUNCTIONS). A function
that only forwards its parameters to another callable goes later in the round, after statement ddmin
(`bypass_wrapper_functions`). What several of them need to put a body where it is called is in `bodies`.
"""

from minimizer.source.passes.structure.asserts import asserts_to_their_calls, drop_assert_messages
from minimizer.source.passes.structure.attribute_flags import attribute_flags_to_parameters
from minimizer.source.passes.structure.autograd_functions import autograd_functions_to_functions
from minimizer.source.passes.structure.decorators import drop_decorators
from minimizer.source.passes.structure.delegating import collapse_delegating_modules
from minimizer.source.passes.structure.flags import inline_flag_calls
from minimizer.source.passes.structure.inline_calls import inline_single_call_functions
from minimizer.source.passes.structure.instances import single_instances_to_functions
from minimizer.source.passes.structure.layers import remove_layers, remove_named_layers
from minimizer.source.passes.structure.modules import module_classes_to_functions
from minimizer.source.passes.structure.partials import partial_calls_to_calls
from minimizer.source.passes.structure.unittest_cases import unittest_cases_to_statements
from minimizer.source.passes.structure.wrappers import bypass_wrapper_functions, inline_expression_functions

CLASSES = [
    remove_layers,
    remove_named_layers,
    collapse_delegating_modules,
    module_classes_to_functions,
    autograd_functions_to_functions,
    attribute_flags_to_parameters,
    single_instances_to_functions,
    unittest_cases_to_statements,
]
FUNCTIONS = [
    inline_expression_functions,
    inline_flag_calls,
    partial_calls_to_calls,
    asserts_to_their_calls,
    drop_assert_messages,
    drop_decorators,
    inline_single_call_functions,
]
PASSES = [*CLASSES, *FUNCTIONS, bypass_wrapper_functions]
