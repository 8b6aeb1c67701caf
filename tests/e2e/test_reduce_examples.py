"""End to end: `minimizer reduce` on examples with real torch.compile, checked like a user would.

These take a minute or two each on a 2-core CPU; they are the only tests that compile for real.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from minimizer.metrics import count_tokens

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
pytestmark = pytest.mark.e2e


def _culprit(extra: tuple[str, ...]) -> list[str]:
    """The culprit's ladder costs four more runs, the cheaper backend's three: only where a test asks for them."""

    return ([] if "--culprit" in extra else ["--no-culprit"]) + ([] if "--cheaper-backend" in extra else ["--script-backend"])


def reduce_example(tmp_path: Path, name: str, *extra: str) -> tuple[dict, str, subprocess.CompletedProcess]:
    for helper in ("_planted.py", name):
        shutil.copy(EXAMPLES / helper, tmp_path / helper)
    script = tmp_path / name
    original = script.read_text()
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "minimizer", "reduce", str(script), "--report", str(report), "-j", "2", *extra, *_culprit(extra)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert script.read_text() == original
    repro = script.with_name(script.stem + ".min.py")
    alone = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    return json.loads(report.read_text()), repro.read_text(), alone


def hand_minimal_tokens(name: str) -> int:
    return count_tokens((EXAMPLES / "hand_minimal" / name).read_text())


def test_lost_requires_grad_reduces_to_within_1_5x_of_hand_minimal(tmp_path):
    report, repro, alone = reduce_example(tmp_path, "skew_requires_grad.py", "--confirm", "1")
    assert report["oracle"] == "requires-grad"
    assert report["signature"] == "requires-grad: eager=True compiled=False"
    assert report["final_confirmations"]["fired"] == report["final_confirmations"]["runs"]
    assert report["after"]["tokens"] <= 1.5 * hand_minimal_tokens("skew_requires_grad.py")
    # The repro fails on its own, with plain python.
    assert alone.returncode != 0 and "AssertionError" in alone.stderr


def test_planted_inductor_crash_keeps_its_signature(tmp_path):
    # Capped: every candidate compiles; how small it gets is the benchmark's business (README, Results). The cap
    # covers the whole command: on a 2-core host shared with the other tests every run takes twice as long or
    # more (a CI run once spent a 75 s cap without a step; alone the first step comes at 12 s).
    report, repro, alone = reduce_example(tmp_path, "planted_crash.py", "--confirm", "1", "--max-time", "100")
    assert report["oracle"] == "crash"
    assert "planted inductor bug: cannot lower amax feeding sub" in report["signature"]
    assert report["after"]["tokens"] < report["before"]["tokens"]
    assert alone.returncode != 0 and "planted inductor bug" in alone.stderr


def test_triton_kernel_corrupting_a_saved_tensor_is_found_without_a_reference(tmp_path):
    report, repro, alone = reduce_example(tmp_path, "triton_inplace_grad.py", "--confirm", "1", "--culprit")
    assert report["culprit"]["layer"] == "not told" and report["culprit"]["ladder"] == []  # nothing compiled, nothing run
    assert report["oracle"] == "inplace"
    assert report["signature"] == "inplace: TanhBackward0"
    assert report["final_confirmations"]["fired"] == report["final_confirmations"]["runs"]
    assert report["after"]["tokens"] <= 1.5 * hand_minimal_tokens("triton_inplace_grad.py")
    assert "a tensor saved for backward was modified in place" in alone.stderr
