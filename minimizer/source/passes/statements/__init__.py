"""Statements taken out: what only prints, definitions nothing reads, statements that do nothing, the `if`, `with`,
`for` or `try` around a body; then chunks of statements, delta-debugging style.

Their unit is the statement: a candidate is the module with statements gone, or one made less (a compound
statement without its header, an unread assignment without its name). The passes that name what can go come
first in the round (CLEARING); statement ddmin, hundreds of proposals on a large script, once classes, functions
and names are down (DELETION). The reducer's follow-up, tried after every accepted step, is here too
(`remove_what_the_step_left`: what the step left doing nothing or unread).
"""

from minimizer.source.passes.statements.dead_code import keep_effects_of_unused_assignments, remove_unused_definitions
from minimizer.source.passes.statements.delete_statements import delete_statements
from minimizer.source.passes.statements.effectless import remove_effectless_statements
from minimizer.source.passes.statements.leftovers import remove_what_the_step_left
from minimizer.source.passes.statements.output import remove_prints_and_logging
from minimizer.source.passes.statements.unwrap import unwrap_compound_statements

CLEARING = [
    remove_prints_and_logging,
    remove_unused_definitions,
    remove_effectless_statements,
    unwrap_compound_statements,
]
DELETION = [delete_statements, keep_effects_of_unused_assignments]
PASSES = [*CLEARING, *DELETION]
FOLLOW_UP = remove_what_the_step_left
