"""The source passes' folders and the first round's order: every pass of the round belongs to one group, each group
lists its own passes in the round's order, and each is defined in its group's folder."""

from minimizer.source.passes import FOLLOW_UP, GROUPS, SOURCE_PASSES


def test_every_pass_of_the_first_round_is_in_one_group_and_each_group_lists_its_own_in_the_rounds_order():
    assert len(set(SOURCE_PASSES)) == len(SOURCE_PASSES)
    grouped = [reduction_pass for group in GROUPS for reduction_pass in group.PASSES]
    assert sorted(grouped, key=SOURCE_PASSES.index) == SOURCE_PASSES  # each once, none outside the round
    for group in GROUPS:
        assert group.PASSES == [p for p in SOURCE_PASSES if p in group.PASSES], group.__name__


def test_each_pass_is_defined_in_its_groups_folder():
    for group in GROUPS:
        for reduction_pass in group.PASSES:
            assert reduction_pass.__module__.startswith(group.__name__ + "."), (reduction_pass.__name__, group.__name__)
    assert FOLLOW_UP.__module__.startswith("minimizer.source.passes.statements.")
