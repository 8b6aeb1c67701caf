"""The script oracle pins what a generic assertion was about, read from the values its test reads."""

import runpy

import pytest

from oracles.capture import exception_info

PARITY = '''
LOSSES = {{"focal": {focal}, "kl": {kl}, "dice": 0.0}}
mismatched = [name for name, error in LOSSES.items() if error > 1e-3]
info = {{"attached": True, "mean": 0.5}}
count = len(mismatched)
assert {test}, "compiled losses differ from eager"
'''


def failure_of(tmp_path, **values):
    script = tmp_path / "parity.py"
    script.write_text(PARITY.format(**values))
    with pytest.raises(AssertionError) as caught:
        runpy.run_path(str(script), run_name="__main__")
    return exception_info(caught.value, str(script))


def test_the_names_a_generic_assert_reads_say_which_check_failed(tmp_path):
    focal = failure_of(tmp_path, focal=0.5, kl=0.0, test="not mismatched")
    kl = failure_of(tmp_path, focal=0.0, kl=0.25, test="not mismatched")
    assert focal.operands == "mismatched=['focal']" and kl.operands == "mismatched=['kl']"
    assert focal.message == kl.message  # the message alone cannot tell them apart


def test_numbers_and_containers_read_only_through_a_subscript_are_not_operands(tmp_path):
    assert failure_of(tmp_path, focal=0.5, kl=0.0, test="count == 0").operands is None
    assert failure_of(tmp_path, focal=0.5, kl=0.0, test='not info["attached"]').operands is None
