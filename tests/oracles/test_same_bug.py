"""``same_bug`` on recorded runs: what a reduction may change around a failing check and what makes it another bug.

Each program runs in this process under the harness, whose ``torch.compile`` adds 0.5 to what the compiled
callable returns (``tests.oracles.wrong_compile``); the ``script`` oracle's bug of one program is compared with
another's, as the reducer compares a candidate's with the pinned one. Each program also runs with
``torch.compile`` as the identity: the counterfactual that tells a check the compiled call fails from one that
fails whatever it computes (a constant reference).
"""

from __future__ import annotations

import pytest

from oracles.api import RecordedRun
from oracles.bug import Bug, same_bug
from oracles.capture import exception_info
from oracles.script import script as script_oracle
from tests.oracles.test_evidence import KERNEL_ON
from tests.oracles.wrong_compile import failing_run

HELPER = """
def matches(a, b):
    return torch.allclose(a, b, atol=1e-4)
assert matches(g(x), f(x)), "compiled differs"
"""

TRAINED = """
model = torch.nn.Linear(4, 4)
compiled = torch.compile(model)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
{training}
def matches(a, b):
    return torch.allclose(a, b, atol=1e-4)
assert matches(compiled(x), model(x)), "compiled differs"
"""
TRAINING = """
for step in range(3):
    opt.zero_grad()
    loss = ((compiled(x) - 1.0) ** 2).mean()
    loss.backward()
    opt.step()
"""

PROBLEMS = """
problems = []
for case, scale in (("small", 1.0), ("large", 3.0)):
    got, want = g(x * scale), f(x * scale)
    if not torch.allclose(got, want):
        problems.append({message})
assert not problems, problems
"""


def _bug(tmp_path, body: str) -> Bug:
    """The ``script`` oracle's bug of ``body`` run with the wrong compile, its counterfactual run with
    ``torch.compile`` as the identity."""

    with failing_run(tmp_path, body) as (harness, escaped, path):
        exception = exception_info(escaped, path, harness.kernel_writes, harness.evidence)
    with failing_run(tmp_path, body, compiled=lambda model, kwargs: model, must_fail=False) as (harness, escaped, path):
        rerun = exception_info(escaped, path, harness.kernel_writes, harness.evidence) if escaped is not None else None
    run = RecordedRun(exception=exception, used_compile=True, eager_rerun_exception=rerun, eager_rerun_done=True)
    verdict = script_oracle(run)
    assert verdict.fires
    return verdict.found


def test_a_gutted_check_a_constant_reference_and_a_literal_are_other_bugs(tmp_path):
    pinned = _bug(tmp_path, HELPER)
    assert pinned.comparison == "allclose of compiled, other"
    gutted = HELPER.replace("    return torch.allclose(a, b, atol=1e-4)", "    torch.allclose(a, b, atol=1e-4)")
    constant = HELPER.replace("matches(g(x), f(x))", "matches(g(x), torch.zeros(4))")
    literal = "torch.allclose(g(x), f(x))\nassert False, 'compiled differs'\n"
    for body in (gutted, constant, literal):
        assert not same_bug(pinned, _bug(tmp_path, body)), body


def test_training_before_the_check_is_no_part_of_the_bug(tmp_path):
    trained = _bug(tmp_path, TRAINED.format(training=TRAINING))
    untrained = _bug(tmp_path, TRAINED.format(training=""))
    assert trained.comparison == "allclose of compiled, other"
    assert same_bug(trained, untrained)


def test_a_problem_message_reworded_is_the_same_bug(tmp_path):
    pinned = _bug(tmp_path, PROBLEMS.format(message='f"{case}: got {got.tolist()} want {want.tolist()}"'))
    reworded = _bug(tmp_path, PROBLEMS.format(message='case'))
    assert pinned.operands != reworded.operands  # what the check read differs ...
    assert same_bug(pinned, reworded)  # ... and the comparison that failed it is the same


def test_another_comparison_kind_is_another_bug(tmp_path):
    pinned = _bug(tmp_path, HELPER)
    equal = HELPER.replace("torch.allclose(a, b, atol=1e-4)", "torch.equal(a, b)")
    assert not same_bug(pinned, _bug(tmp_path, equal))


def test_what_is_said_for_people_is_no_part_of_the_identity():
    bug = Bug("AssertionError: assert _", exception="AssertionError", comparison="allclose of compiled, other")
    assert same_bug(bug, bug.with_(words="other words"))


def test_the_header_line_is_one_line_of_words():
    long = Bug("x", words="allclose fails: " + "the output of kernel k " * 20)
    assert len(long.in_words()) <= 160 and "\n" not in long.in_words()


TRAINED_KERNEL = KERNEL_ON.split("x = torch.arange(4.0)")[0] + '''w = torch.arange(4.0)
for step in range({steps}):  # "training": the kernel's output updates the weights it reads next
    w.add_(shifted(w) * 0.01)
h = w * 2
torch.testing.assert_close(shifted(h), h + 2)
'''


def test_launches_before_the_check_are_no_part_of_a_kernels_bug(tmp_path):
    # After its first launches a kernel's later ones count as writing only through the parameters it wrote
    # through (here `out_ptr`): `h`, which the check's launch only reads, is the reference's input, not the
    # kernel's output, and the weights trained through the kernel are history (oracles.events).
    pytest.importorskip("triton")
    from minimizer.runner.process import run_candidate
    from minimizer.runner.run_types import Limits, RunSettings

    settings = RunSettings("check.py", str(tmp_path), ("script",), Limits(timeout=120))
    trained, untrained = (run_candidate(TRAINED_KERNEL.format(steps=n), settings).verdict("script") for n in (12, 0))
    assert trained.fires and untrained.fires
    assert untrained.found.comparison == "assert_close of kernel shift_kernel, add(other=2)"
    assert same_bug(trained.found, untrained.found), trained.signature


def test_which_call_of_its_target_a_bug_showed_in_is_not_the_bug():
    # Removing the calls before it moves the failing call; where it happens is for the lift, not the identity.
    assert same_bug(Bug("numerical: float32 nan", call=2), Bug("numerical: float32 nan", call=0))
    assert not same_bug(Bug("numerical: float32 nan", call=2), Bug("numerical: float32 value", call=2))



LISTED = """
bad = []
for size in {sizes}:
    if g(torch.ones(size)).tolist() != [2.0] * size:
        bad.append(f"size {{size}}")
if bad:
    raise AssertionError({message})
"""


def test_values_formatted_into_a_checks_message_are_no_part_of_the_bug(tmp_path):
    # A check the run does not follow as a comparison of the suspect's values (a list's equality): its message
    # tells the check, and the cases formatted into it (which shrink with the program) do not.
    import ast

    from oracles.capture import message_template

    spelled = 'f"broken for {sorted(bad)}: expects {2.0}"'
    pinned = _bug(tmp_path, LISTED.format(sizes="(8, 16)", message=spelled))
    fewer = _bug(tmp_path, LISTED.format(sizes="(2,)", message=spelled))
    assert pinned.comparison is None and pinned.under_compile == "only"
    assert same_bug(pinned, fewer)
    assert not same_bug(pinned, _bug(tmp_path, LISTED.format(sizes="(2,)", message='f"shapes broken: {bad}"')))
    parsed = {text: ast.parse(text).body[0] for text in ('raise E("at %d" % i)', 'assert a, "{} b".format(c)', "raise E(m)")}
    assert [message_template(statement) for statement in parsed.values()] == ["at %d", "{} b", None]


CAUGHT = """
mismatches = []
try:
    torch.testing.assert_close(g(x), f(x))
except AssertionError as err:
    mismatches.append(("case", err))
assert not mismatches
"""


def test_a_raising_check_caught_and_reported_is_the_same_bug_as_it_raising(tmp_path):
    pinned = _bug(tmp_path, CAUGHT)
    assert pinned.comparison_kind == "assert_close"
    assert same_bug(pinned, _bug(tmp_path, "torch.testing.assert_close(g(x), f(x))\n"))
    # ... but a check that fails whatever was compared is not (holding the comparison, it still fails)
    caught_then_failed = CAUGHT.replace("assert not mismatches", "assert False")
    assert not same_bug(pinned, _bug(tmp_path, caught_then_failed))
