"""Where no statement can reach the compiled call, candidates keep the failure plain python showed the original."""

from minimizer.stages.check import CheckReport, OracleFinding
from minimizer.runner.plain import PlainRun
from minimizer.runner.run_types import RunResult
from minimizer.stages.pin import Target as _Target, own_failure_to_keep as _own_failure_to_keep
from oracles.api import ExceptionInfo, Verdict

SIGNATURE = "numerical: float32 value"
OWN = ExceptionInfo("AssertionError", "losses differ", assert_text="torch.allclose(a, b)")
OWN_FAILURE = "AssertionError: assert torch.allclose(_, _) -- losses differ"

# The compiled call sits in a function: no statement after it can reach its output.
HIDDEN = """import torch
def train(model, x):
    return torch.compile(model)(x)
out = train(torch.nn.functional.silu, torch.ones(2))
"""
# The compiled call at the top level: the bug can be stated after it.
REACHABLE = """import torch
out = torch.compile(torch.nn.functional.silu)(torch.ones(2))
"""


def _run(*, fires: bool = True, exception: ExceptionInfo | None = OWN) -> RunResult:
    return RunResult(seconds=1.0, exception=exception, verdicts={"numerical": Verdict(fires, SIGNATURE if fires else "")})


def _report(plain_failures=(OWN_FAILURE, OWN_FAILURE), run_exceptions=(OWN, OWN)) -> CheckReport:
    runs = [_run(exception=exception) for exception in run_exceptions]
    plain = [PlainRun(1 if failure else 0, 1.0, failure=failure) for failure in plain_failures]
    return CheckReport([], runs, plain=plain)


def test_the_failure_kept_is_the_one_every_plain_and_oracle_run_of_the_original_ended_with():
    numerical = OracleFinding("numerical", [Verdict(True, SIGNATURE)] * 2)
    assert _own_failure_to_keep(_report(), numerical) == OWN_FAILURE
    assert _own_failure_to_keep(_report(plain_failures=(OWN_FAILURE, None)), numerical) is None  # not steady
    assert _own_failure_to_keep(_report(plain_failures=(None, None)), numerical) is None  # plain python passes
    assert _own_failure_to_keep(_report(run_exceptions=(OWN, None)), numerical) is None  # the harness disagrees
    # A crash is its own failure; the in-place check is stated in every script.
    assert _own_failure_to_keep(_report(), OracleFinding("crash", [Verdict(True, "crash: compiled raised: X")])) is None
    assert _own_failure_to_keep(_report(), OracleFinding("inplace", [Verdict(True, "inplace: MulBackward0")])) is None


def test_a_candidate_whose_compiled_call_no_statement_reaches_must_keep_the_scripts_own_failure():
    target = _Target("numerical", SIGNATURE, OWN_FAILURE)
    assert target.shown_by(_run(), text=HIDDEN)
    assert not target.shown_by(_run(exception=None), text=HIDDEN)  # the oracle fires, the script's check passes
    assert target.shown_by(_run(exception=None), text=REACHABLE)  # the bug can be stated at the end instead
    assert not target.shown_by(_run(fires=False), text=HIDDEN)
    # Without the candidate's text (confirming a repro), or with nothing to keep, the oracle alone decides.
    assert target.shown_by(_run(exception=None))
    assert _Target("numerical", SIGNATURE).shown_by(_run(exception=None), text=HIDDEN)
