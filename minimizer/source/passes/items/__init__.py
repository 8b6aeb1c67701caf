"""Collections cut down to the items the bug needs: an entry of a display, an item a loop or an assignment unpacks
and nothing reads, a one-item list passed as its item (DROPPED); then a collection of one item made that item: a
comprehension or a loop over one, a list appended to once, a module list of one module (SINGLE).

Scripts build tables of cases and lists of layers or checks; once the bug needs one entry, the list and the loop
over it only hide that the script computes one value.
"""

from minimizer.source.passes.items.appends import appended_lists_to_displays
from minimizer.source.passes.items.comprehensions import collapse_single_item_comprehensions, loops_over_one_item
from minimizer.source.passes.items.elements import delete_collection_elements, unwrap_single_item_list_arguments
from minimizer.source.passes.items.module_lists import unwrap_single_module_lists
from minimizer.source.passes.items.unpacked import drop_unread_assigned_items, drop_unread_loop_items

DROPPED = [
    delete_collection_elements,
    drop_unread_loop_items,
    drop_unread_assigned_items,
    unwrap_single_item_list_arguments,
]
SINGLE = [
    collapse_single_item_comprehensions,
    loops_over_one_item,
    appended_lists_to_displays,
    unwrap_single_module_lists,
]
PASSES = [*DROPPED, *SINGLE]
