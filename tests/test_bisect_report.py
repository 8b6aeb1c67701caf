"""bisect and report without downloads: "releases" are venv folders whose python is this interpreter, and the
repro behaves differently by the folder it runs from (as a bug that comes and goes across releases would)."""

import json
import os
import sys
from pathlib import Path

from typer.testing import CliRunner

from minimizer.bisect import CANNOT_INSTALL, FAILS, PASSES, Bisection, ReleaseResult, bisect, releases_in_range
from minimizer.cli import app
from minimizer.report import issue_body, read_header
from minimizer.runner.plain import PlainRun

runner = CliRunner()

# Fails on releases 2.5.x and 2.6.x (by the venv it runs in), passes elsewhere.
REPRO = '''import os

release = os.environ["FAKE_TORCH_RELEASE"]
assert not release.startswith(("2.5", "2.6")), "compiled output differs from eager"
'''


def fake_venvs(root: Path, releases: list[str]) -> Path:
    for release in releases:
        bin_dir = root / f"torch-{release}" / "bin"
        bin_dir.mkdir(parents=True)
        python = bin_dir / "python"
        python.write_text(f'#!/bin/sh\nFAKE_TORCH_RELEASE={release} exec "{sys.executable}" "$@"\n')
        python.chmod(0o755)
        (root / f"torch-{release}" / ".minimizer-torch-installed").write_text(release)
    return root


def test_bisect_names_the_fix_and_keeps_going_past_a_release_that_cannot_install(tmp_path, monkeypatch):
    venvs = fake_venvs(tmp_path / "venvs", ["2.4.1", "2.5.1", "2.6.0", "2.7.1"])
    # 9.9.9 has no venv and cannot be installed: one line, and the rest still run.
    monkeypatch.setattr("minimizer.bisect.ensure_venv", lambda d, r, say: (
        (d / f"torch-{r}" / "bin" / "python", None) if (d / f"torch-{r}").exists() else (None, "no such release")))
    outcome = bisect(REPRO, "repro.py", None, ["2.7.1", "2.5.1", "9.9.9", "2.6.0"], venv_dir=venvs, confirm=2)
    assert [(r.release, r.status) for r in outcome.results] == [
        ("2.5.1", FAILS), ("2.6.0", FAILS), ("2.7.1", PASSES), ("9.9.9", CANNOT_INSTALL)
    ]
    assert outcome.results[0].failure == "AssertionError: compiled output differs from eager"
    assert outcome.verdict == "fixed in 2.7.1 (last bad 2.6.0)"
    outcome = bisect(REPRO, "repro.py", None, ["2.4.1", "2.5.1"], venv_dir=venvs)
    assert outcome.verdict == "regression: last good 2.4.1, first bad 2.5.1"


def test_verdicts_on_hand_made_tables():
    def table(*statuses):
        return Bisection([ReleaseResult(f"2.{i}.0", s) for i, s in enumerate(statuses)])

    assert table(FAILS, FAILS).verdict.startswith("fails on every release")
    assert table(PASSES, FAILS, PASSES).verdict.startswith("goes back and forth")
    assert table(CANNOT_INSTALL).verdict == "no release could run the repro"


def test_a_range_takes_the_newest_patch_of_each_minor():
    offered = ["2.9.1", "2.9.0", "2.6.0", "2.5.1", "2.5.0", "2.4.1", "2.13.0+cpu", "2.3.1"]
    assert releases_in_range("2.4:2.9", offered) == ["2.4.1", "2.5.1", "2.6.0", "2.9.1"]


def test_bisect_command_prints_the_table_and_writes_json(tmp_path):
    venvs = fake_venvs(tmp_path / "venvs", ["2.5.1", "2.7.1"])
    repro = tmp_path / "repro.py"
    repro.write_text(REPRO)
    out = tmp_path / "bisect.json"
    result = runner.invoke(app, ["bisect", str(repro), "--torch", "2.5.1,2.7.1", "--venv-dir", str(venvs),
                                 "--confirm", "1", "--json", str(out)])
    assert result.exit_code == 0, result.output
    assert "fixed in 2.7.1" in result.output
    assert json.loads(out.read_text())["verdict"] == "fixed in 2.7.1 (last bad 2.5.1)"


HEADED = '''# Minimized by minimizer 0.1.0 from train.py
# torch 2.5.1 on cpu; oracle: numerical
# fails: compiled outputs differ from eager (wrong values, float32) at call 0 of f, output 0: max abs diff 1
# culprit: Inductor (eager no, aot_eager no, aot_eager_decomp_partition no, inductor yes)
# size: 654 -> 54 tokens, 71 -> 8 lines, 23 -> 3 torch ops
# work: 222 oracle calls (91 cache hits), 66 s

import torch

x = torch.ones(1)
torch.testing.assert_close(x + 1, x)
'''


def test_the_issue_body_has_what_a_maintainer_needs(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text(HEADED)
    assert read_header(HEADED).oracle == "numerical"
    table = Bisection([ReleaseResult("2.5.1", FAILS, "AssertionError: Tensor-likes are not close!", 1, 1),
                       ReleaseResult("2.6.0", PASSES, None, 1, 0)])
    body = issue_body(repro, bisection=table, command="minimizer reduce train.py", environment="PyTorch version: 2.5.1")
    assert body.startswith("# [torch.compile] compiled outputs differ from eager (wrong values, float32) at call 0 of f")
    assert "```python\nimport torch\n" in body and "# Minimized by" not in body
    assert "AssertionError: Tensor-likes are not close!" in body  # what plain python printed, run here
    assert 'File "repro.py", line' in body  # not the temporary folder it ran in
    assert "**Expected:**" in body and "**Actual:**" in body
    assert "| 2.6.0 | passes |" in body and "fixed in 2.6.0" in body
    assert "PyTorch version: 2.5.1" in body and "`minimizer reduce train.py`" in body
    assert "**Layer:** Inductor" in body and "| `aot_eager` | no |" in body and "| `inductor` | yes |" in body


def test_report_of_a_script_that_passes_here_says_so(tmp_path):
    repro = tmp_path / "fine.py"
    repro.write_text("print('ok')\n")
    body = issue_body(repro, plain=PlainRun(returncode=0, seconds=0.1), environment="env")
    assert "did not fail on this machine" in body


def test_a_table_read_back_from_json_is_the_same_table():
    table = Bisection([ReleaseResult("2.5.1", FAILS, "AssertionError: x", 2, 2), ReleaseResult("2.6.0", PASSES, None, 2, 0)])
    again = Bisection.from_json(json.loads(json.dumps(table.to_json())))
    assert again.markdown() == table.markdown() and again.verdict == table.verdict
