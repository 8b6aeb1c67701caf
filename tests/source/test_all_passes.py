"""Every source pass, on programs it was not written for: its candidates parse, differ and never grow.

The corpus programs are realistic scripts (configs, nested modules, helpers, training loops); a pass that
raises or builds invalid code on one of them would stop a user's reduction.
"""

from pathlib import Path

import pytest

from minimizer.source.passes import SOURCE_PASSES
from tests.source.helpers import check_candidates_are_valid_and_not_larger

CASES = Path(__file__).resolve().parents[2] / "corpus" / "cases"
PROGRAMS = ["gradient_penalty_latents", "linear_half_input", "planted_gelu_lowering", "triton_ce_zloss"]


@pytest.mark.parametrize("program", PROGRAMS)
def test_every_pass_builds_valid_candidates_on_a_corpus_program(program):
    code = (CASES / program / "program.py").read_text()
    for reduction_pass in SOURCE_PASSES:
        check_candidates_are_valid_and_not_larger(code, reduction_pass, limit=8)
