"""The source passes, in first-round order.

Structural passes that take whole layers, classes and wrappers in a few proposals go first, statement ddmin
(hundreds of proposals on a large script) after them; value shrinking (literals, dtypes, constants), which
keeps the token count but makes the repro smaller to run and read, goes last. From the second round on the
scheduler orders passes by what they removed per proposal so far.
"""

from minimizer.source.passes.aliases import remove_name_aliases
from minimizer.source.passes.appends import appended_lists_to_displays
from minimizer.source.passes.asserts import asserts_to_their_calls, drop_assert_messages
from minimizer.source.passes.arguments import delete_arguments, keywords_to_positional
from minimizer.source.passes.autocast import autocast_to_dtypes
from minimizer.source.passes.autograd_functions import autograd_functions_to_functions
from minimizer.source.passes.arithmetic import operators_to_arithmetic
from minimizer.source.passes.bypass import bypass_attributes, bypass_operators, remove_layers, remove_named_layers
from minimizer.source.passes.conditions import shorten_conditions
from minimizer.source.passes.comprehensions import collapse_single_item_comprehensions, loops_over_one_item
from minimizer.source.passes.configs import inline_argument_defaults, inline_config_defaults
from minimizer.source.passes.constants import (
    fold_integer_arithmetic,
    remove_prints_and_logging,
    simplify_float_constants,
)
from minimizer.source.passes.dead_code import (
    keep_effects_of_unused_assignments,
    remove_unused_definitions,
)
from minimizer.source.passes.decorators import drop_decorators
from minimizer.source.passes.delegating import collapse_delegating_modules
from minimizer.source.passes.delete_statements import delete_statements
from minimizer.source.passes.devices import moves_to_default_device
from minimizer.source.passes.factories import constant_tensors_to_factories
from minimizer.source.passes.flags import inline_flag_calls
from minimizer.source.passes.elements import delete_collection_elements, unwrap_single_item_list_arguments
from minimizer.source.passes.unpacked import drop_unread_assigned_items, drop_unread_loop_items
from minimizer.source.passes.effectless import remove_effectless_statements, split_tuple_assignments
from minimizer.source.passes.dtypes import simplify_dtypes
from minimizer.source.passes.inline import inline_single_use_variables
from minimizer.source.passes.inline_calls import inline_single_call_functions
from minimizer.source.passes.instances import single_instances_to_functions
from minimizer.source.passes.attribute_flags import attribute_flags_to_parameters
from minimizer.source.passes.kernels import constant_kernel_loads, drop_kernel_masks, one_element_blocks_as_scalars
from minimizer.source.passes.known_shapes import fold_known_shapes
from minimizer.source.passes.library_configs import shrink_library_configs
from minimizer.source.passes.leaves import layers_to_leaves
from minimizer.source.passes.leftovers import remove_what_the_step_left
from minimizer.source.passes.module_lists import unwrap_single_module_lists
from minimizer.source.passes.modules import module_classes_to_functions
from minimizer.source.passes.launches import single_program_launches
from minimizer.source.passes.literals import shrink_int_literals, shrink_shapes
from minimizer.source.passes.partials import partial_calls_to_calls
from minimizer.source.passes.parameters import bind_constant_parameters, remove_unused_parameters
from minimizer.source.passes.random_inputs import random_inputs_to_ones
from minimizer.source.passes.returns import drop_unread_returned_values, return_one_of_the_values, return_the_element_read
from minimizer.source.passes.subscripts import shrink_subscripts
from minimizer.source.passes.unittest_cases import unittest_cases_to_statements
from minimizer.source.passes.unwrap import unwrap_compound_statements
from minimizer.source.passes.wrappers import bypass_wrapper_functions, inline_expression_functions

SOURCE_PASSES = [
    remove_prints_and_logging,
    remove_unused_definitions,
    remove_effectless_statements,
    unwrap_compound_statements,
    moves_to_default_device,
    remove_layers,
    remove_named_layers,
    collapse_delegating_modules,
    module_classes_to_functions,
    autograd_functions_to_functions,
    attribute_flags_to_parameters,
    single_instances_to_functions,
    unittest_cases_to_statements,
    inline_expression_functions,
    inline_flag_calls,
    partial_calls_to_calls,
    asserts_to_their_calls,
    drop_assert_messages,
    drop_decorators,
    inline_single_call_functions,
    shrink_library_configs,
    inline_config_defaults,
    inline_argument_defaults,
    split_tuple_assignments,
    fold_known_shapes,
    remove_name_aliases,
    delete_statements,
    keep_effects_of_unused_assignments,
    bypass_wrapper_functions,
    autocast_to_dtypes,
    bypass_operators,
    shorten_conditions,
    bypass_attributes,
    layers_to_leaves,
    operators_to_arithmetic,
    constant_kernel_loads,
    drop_kernel_masks,
    single_program_launches,
    one_element_blocks_as_scalars,
    remove_unused_parameters,
    bind_constant_parameters,
    drop_unread_returned_values,
    return_the_element_read,
    return_one_of_the_values,
    delete_arguments,
    delete_collection_elements,
    drop_unread_loop_items,
    drop_unread_assigned_items,
    unwrap_single_item_list_arguments,
    inline_single_use_variables,
    shrink_subscripts,
    collapse_single_item_comprehensions,
    loops_over_one_item,
    appended_lists_to_displays,
    unwrap_single_module_lists,
    fold_integer_arithmetic,
    shrink_int_literals,
    shrink_shapes,
    random_inputs_to_ones,
    constant_tensors_to_factories,
    simplify_dtypes,
    simplify_float_constants,
    keywords_to_positional,
]

# Tried right after every accepted step (see Reducer's follow_up).
FOLLOW_UP = remove_what_the_step_left

__all__ = ["FOLLOW_UP", "SOURCE_PASSES"]
