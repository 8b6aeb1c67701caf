"""The command line end to end on tiny scripts (no compiler involved, so each run takes seconds)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from minimizer.cli import app

runner = CliRunner()

FAILING = '''import torch

a = torch.ones(3)
b = a * 2
c = b + 1
unused = torch.zeros(5)
print(c)
raise ValueError(f"boom {c.sum().item()}")
'''


def invoke(*args):
    # The culprit's ladder (four more runs) and the cheaper backend's (three) are tested on their own
    # (tests/core/test_culprit.py, one end-to-end test).
    words = [str(a) for a in args]
    if words and words[0] in ("reduce", "check"):
        at = words.index("--") if "--" in words else len(words)
        words[at:at] = ["--no-culprit"] + (["--script-backend"] if words[0] == "reduce" else [])
    return runner.invoke(app, words)


def test_missing_file_is_one_line_and_exit_2(tmp_path):
    result = invoke("reduce", tmp_path / "nope.py")
    assert result.exit_code == 2
    assert "no such file" in result.output and "Traceback" not in result.output


def test_not_a_python_file(tmp_path):
    path = tmp_path / "bug.txt"
    path.write_text("print(1)\n")
    result = invoke("reduce", path)
    assert result.exit_code == 2 and "not a Python file" in result.output


def test_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "bug.py"
    path.write_text("x = 1\ndef broken(:\n")
    result = invoke("reduce", path)
    assert result.exit_code == 2 and "syntax error" in result.output and "line 2" in result.output


def test_script_that_does_not_fail_has_nothing_to_minimize(tmp_path):
    path = tmp_path / "fine.py"
    path.write_text("import torch\nprint(torch.ones(2).sum())\n")
    result = invoke("reduce", path, "--oracle", "script", "--confirm", "1")
    assert result.exit_code == 2 and "nothing to minimize" in result.output


def test_flaky_script_is_reported_with_its_fire_rate(tmp_path):
    counter = tmp_path / "count"
    path = tmp_path / "flaky.py"
    path.write_text(
        "import pathlib\n"
        f"p = pathlib.Path({str(counter)!r})\n"
        "n = int(p.read_text()) if p.exists() else 0\n"
        "p.write_text(str(n + 1))\n"
        "assert n % 4 >= 2, 'odd run'\n"
    )
    result = invoke("reduce", path, "--oracle", "script", "--confirm", "2", "-j", "1")
    assert result.exit_code == 2
    assert "fails differently from run to run" in result.output and "1 of 2" in result.output


def test_the_report_is_on_disk_as_the_reduction_stops_before_the_repro_is_confirmed(tmp_path, monkeypatch):
    """Stating and confirming the repro runs it under plain python (minutes where imports are slow): a run
    stopped then still leaves what the reduction did."""

    from minimizer.stages import state as stage

    path = tmp_path / "bug.py"
    path.write_text(FAILING)
    report = tmp_path / "report.json"
    seen = []
    state_the_bug = stage.state_the_bug

    def state_bug_after_looking(*args, **kwargs):
        seen.append(json.loads(report.read_text()))
        return state_the_bug(*args, **kwargs)

    monkeypatch.setattr(stage, "state_the_bug", state_bug_after_looking)
    result = invoke("reduce", path, "--report", report, "-q", "-j", "1")
    assert result.exit_code == 0, result.output
    interim, final = seen[0], json.loads(report.read_text())
    assert interim["final"] is False and final["final"] is True
    assert interim["python"] == {} and final["python"]["fails_as_claimed"]
    assert interim["trajectory"] == final["trajectory"] and interim["after"]["tokens"] < interim["before"]["tokens"]


def test_unknown_oracle(tmp_path):
    path = tmp_path / "bug.py"
    path.write_text(FAILING)
    result = invoke("reduce", path, "--oracle", "no-such-oracle")
    assert result.exit_code == 2 and "unknown oracle" in result.output


def test_reduce_writes_repro_and_report_and_leaves_input_alone(tmp_path):
    path = tmp_path / "bug.py"
    path.write_text(FAILING)
    report = tmp_path / "report.json"
    result = invoke("reduce", path, "--report", report, "-q", "-j", "2")
    assert result.exit_code == 0, result.output
    assert path.read_text() == FAILING
    repro = (tmp_path / "bug.min.py").read_text()
    assert repro.startswith("# Minimized by minimizer")
    assert "unused" not in repro and "print" not in repro
    data = json.loads(report.read_text())
    assert data["oracle"] == "script"
    assert data["signature"] == "ValueError: boom {}"  # the message as the script spells it
    assert data["after"]["tokens"] < data["before"]["tokens"]
    # The sizes reported are those of the file as written (formatted; the header is comments).
    from minimizer.metrics import measure

    assert data["after"] == measure(repro).to_json()
    assert set(data["before"]) == {"lines", "tokens", "torch_ops"}
    assert data["oracle_calls"] > 0 and data["final_confirmations"]["fired"] == 2
    # The trajectory starts at the original and goes down to the result, never costing fewer calls later.
    trajectory = data["trajectory"]
    assert trajectory[0] == {"oracle_calls": 0, "seconds": 0.0, "tokens": data["before"]["tokens"]}
    assert trajectory[-1]["tokens"] == data["after"]["tokens"]
    assert all(a["tokens"] > b["tokens"] and a["oracle_calls"] <= b["oracle_calls"]
               for a, b in zip(trajectory, trajectory[1:]))
    # The repro fails on its own with the same error.
    run = subprocess.run([sys.executable, str(tmp_path / "bug.min.py")], capture_output=True, text=True)
    assert "ValueError: boom" in run.stderr


def test_check_prints_json(tmp_path):
    path = tmp_path / "bug.py"
    path.write_text(FAILING)
    result = invoke("check", path, "--oracle", "script", "--json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["pinned"] == "script" and data["oracles"][0]["signature"] == "ValueError: boom {}"


def test_oracles_lists_the_built_ins():
    result = invoke("oracles")
    assert result.exit_code == 0
    for name in ("crash", "numerical", "requires-grad", "gradient", "inplace", "script"):
        assert name in result.output


@pytest.mark.skipif(sys.platform != "linux", reason="signals")
def test_ctrl_c_keeps_the_best_repro_so_far(tmp_path):
    # Every candidate that shows the bug sleeps 2 s (the sleep is part of the message, so no step can drop it):
    # after the first step (all 60 unread assignments at once) the signal lands in a run even on a loaded machine.
    body = "".join(f"v{i} = torch.ones({i + 1})\n" for i in range(60))
    path = tmp_path / "bug.py"
    path.write_text("import time\nimport torch\n" + body + "raise ValueError(f'boom {time.sleep(2.0)}')\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "minimizer", "reduce", str(path), "--oracle", "script", "-j", "1", "--confirm", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As from a terminal: Ctrl-C's default action, whatever the test runner's process inherited.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    output = tmp_path / "bug.min.py"
    deadline = time.monotonic() + 120
    while not output.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "best repro so far" in err
    assert output.read_text().startswith("# Minimized by minimizer")
    assert "in progress" in output.read_text().splitlines()[0]
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]
    # What the interruption left is a repro: plain python fails with it as with the original.
    left = subprocess.run([sys.executable, str(output)], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert left.returncode == 1 and "ValueError: boom" in left.stderr


def test_help_prints_the_defaults_it_describes():
    shown = runner.invoke(app, ["reduce", "--help"], env={"COLUMNS": "250"})
    assert "[default: SCRIPT.min.py]" in shown.output
    assert "[default: half the cores" in shown.output


def test_the_scripts_own_arguments_go_after_a_double_dash_and_the_repro_needs_none(tmp_path):
    path = tmp_path / "train.py"
    path.write_text(
        "import argparse\nimport torch\n\nparser = argparse.ArgumentParser()\n"
        "parser.add_argument('--scale', type=float, required=True)\nargs = parser.parse_args()\n"
        "a = torch.ones(3) * args.scale\nunused = torch.zeros(5)\n"
        "if args.scale > 1:\n    raise ValueError(f'boom {a.sum().item()}')\n"
    )
    result = invoke("reduce", path, "-q", "-j", "1", "--confirm", "1", "--", "--scale", "2")
    assert result.exit_code == 0, result.output
    repro = tmp_path / "train.min.py"
    assert "unused" not in repro.read_text()
    plain = subprocess.run([sys.executable, str(repro)], capture_output=True, text=True, cwd=tmp_path)
    assert plain.returncode == 1 and "ValueError: boom" in plain.stderr


def test_verbose_shows_a_raising_plug_in_oracles_traceback(tmp_path):
    path = tmp_path / "bug.py"
    path.write_text(FAILING)
    (tmp_path / "plug.py").write_text("def broken(run):\n    raise ValueError('my oracle is broken')\n")
    result = invoke("check", path, "--oracle", f"{tmp_path / 'plug.py'}:broken", "-v")
    assert result.exit_code == 2
    assert "raised ValueError: my oracle is broken at" in result.output
    assert 'plug.py", line 2, in broken' in result.output
