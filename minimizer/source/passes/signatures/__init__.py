"""What passes between a function and its callers: a parameter nobody reads, or that every call gives the same
constant, and a returned value nobody reads, each taken out of the definition and every call at once; arguments
deleted from a call, or passed by position.

The parameter, return and argument passes come after the expression and kernel passes (INTERFACES); passing a
keyword by position, a token or two each, comes last in the round (`keywords_to_positional`).
"""

from minimizer.source.passes.signatures.arguments import delete_arguments, keywords_to_positional
from minimizer.source.passes.signatures.parameters import bind_constant_parameters, remove_unused_parameters
from minimizer.source.passes.signatures.returns import (
    drop_unread_returned_values,
    return_one_of_the_values,
    return_the_element_read,
)

INTERFACES = [
    remove_unused_parameters,
    bind_constant_parameters,
    drop_unread_returned_values,
    return_the_element_read,
    return_one_of_the_values,
    delete_arguments,
]
PASSES = [*INTERFACES, keywords_to_positional]
