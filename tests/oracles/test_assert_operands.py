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


def test_names_that_differ_only_in_their_numbers_name_one_thing(tmp_path):
    # Never-seen seed 425: `problems == ["step0", "step1"]` and, with one step, `["step0"]`: the same check of
    # the same kernel failing, once per step; a count of steps is no name of what failed.
    script = tmp_path / "steps.py"
    runs = {}
    for steps in (1, 2):
        script.write_text(f"problems = [f'step{{i}}' for i in range({steps})]\nassert not problems\n")
        with pytest.raises(AssertionError) as caught:
            runpy.run_path(str(script), run_name="__main__")
        runs[steps] = exception_info(caught.value, str(script)).operands
    assert runs[1] == runs[2] == "problems=['stepN']"


def test_numbers_and_containers_read_only_through_a_subscript_are_not_operands(tmp_path):
    assert failure_of(tmp_path, focal=0.5, kl=0.0, test="count == 0").operands is None
    assert failure_of(tmp_path, focal=0.5, kl=0.0, test='not info["attached"]').operands is None


HELPER = '''import math


def close(a, b):
    """Whether two numbers agree."""
    return math.isclose(a, b, rel_tol=1e-3)


def loose(a, b, tol=0.5):
    return math.isclose(a, b, rel_tol=tol)


out, ref = 1.0, 3.0
assert {test}
'''


def test_an_assert_that_calls_a_helper_returning_a_comparison_reads_as_that_comparison(tmp_path):
    # A reduction inlines the helper (`assert math.isclose(out, ref, rel_tol=0.001)`): the same check, read alike.
    from minimizer.runner.plain import run_plain
    from minimizer.runner.run_types import Limits
    from oracles.signature import exception_signature

    def read(test):
        script = tmp_path / "check.py"
        script.write_text(HELPER.format(test=test))
        with pytest.raises(AssertionError) as caught:
            runpy.run_path(str(script), run_name="__main__")
        run = exception_info(caught.value, str(script))
        plain = run_plain(script.read_text(), script.name, str(tmp_path), Limits(timeout=60))
        assert plain.failure == exception_signature(run)  # plain python's failure reads alike
        return plain.failure

    assert read("close(out, ref)") == read("math.isclose(out, ref, rel_tol=1e-3)")
    assert read("close(out, ref)") == "AssertionError: assert math.isclose(out, ref, rel_tol=0.001)"
    assert read("loose(out, ref)") == "AssertionError: assert loose(out, ref)"  # a default it leaves: read as written


def test_a_raise_or_an_assert_of_the_script_is_its_check_a_crash_in_what_it_calls_is_not(tmp_path):
    script = tmp_path / "checks.py"
    for body, expected in (
        ("stats = {'detached': False}\nif not stats['detached']:\n    raise RuntimeError('targets require grad')\n", True),
        ("assert 1 > 2\n", True),
        ("import math\nmath.sqrt(-1)\n", False),
    ):
        script.write_text(body)
        with pytest.raises(Exception) as caught:
            runpy.run_path(str(script), run_name="__main__")
        assert exception_info(caught.value, str(script)).check is expected, body
