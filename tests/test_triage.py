"""minimizer triage on a small folder: two bugs (one in two scripts of different size), a passing script, a
syntax error and a script that cannot start here. Planted backends (labelled) keep each run to seconds."""

import json

from typer.testing import CliRunner

from minimizer.cli import app
from minimizer.runner.plain import run_plain
from minimizer.runner.run_types import Limits

runner = CliRunner()

OFF_BY_ONE = '''import torch


def planted_backend(gm, example_inputs):
    # Planted: every output off by one.
    return lambda *args: [t + 1 for t in gm(*args)]


'''

SMALL_A = OFF_BY_ONE + "print(torch.compile(torch.sin, backend=planted_backend)(torch.ones(3)))\n"
LARGE_A = OFF_BY_ONE + '''
def model(x, w):
    h = torch.relu(x @ w)
    return h * 2 + 1


x = torch.ones(4, 4)
w = torch.ones(4, 4)
unused = torch.zeros(3) + 5
print(torch.compile(model, backend=planted_backend)(x, w).sum())
'''
CRASH_B = '''import torch


def planted_backend(gm, example_inputs):
    # Planted: the compiler rejects every graph.
    raise RuntimeError("planted compiler rejects the graph")


print(torch.compile(torch.cos, backend=planted_backend)(torch.ones(2)))
'''
PASSING = "import torch\nprint(torch.compile(torch.sin, backend='eager')(torch.ones(2)))\n"


def test_triage_groups_bugs_minimizes_one_each_and_resumes(tmp_path):
    folder = tmp_path / "fuzzed"
    folder.mkdir()
    (folder / "a_small.py").write_text(SMALL_A)
    (folder / "a_large.py").write_text(LARGE_A)
    (folder / "b_crash.py").write_text(CRASH_B)
    (folder / "ok.py").write_text(PASSING)
    (folder / "broken.py").write_text("def f(:\n")
    (folder / "needs_module.py").write_text("import torch\nimport not_here_module\n")
    out = tmp_path / "out"
    result = runner.invoke(app, ["triage", str(folder), "-o", str(out), "-j", "2", "--confirm", "1", "--timeout", "120"])
    assert result.exit_code == 0, result.output
    index = json.loads((out / "index.json").read_text())
    bugs = {bug["oracle"]: bug for bug in index["bugs"]}
    assert len(index["bugs"]) == 2 and set(bugs) == {"numerical", "crash"}
    assert bugs["numerical"]["scripts"] == ["a_large.py", "a_small.py"]
    assert bugs["crash"]["scripts"] == ["b_crash.py"]
    assert index["passing"] == ["ok.py"]
    assert sorted(entry["script"] for entry in index["invalid"]) == ["broken.py", "needs_module.py"]
    for bug in index["bugs"]:
        repro = out / bug["repro"]
        run = run_plain(repro.read_text(), repro.name, str(repro.parent), Limits(timeout=120))
        assert run.fails, bug
    assert "| 1 |" in (out / "index.md").read_text()

    again = runner.invoke(app, ["triage", str(folder), "-o", str(out), "-j", "2", "--confirm", "1"])
    assert again.exit_code == 0, again.output
    assert "6 known from an earlier run, 0 to check" in again.output
    rerun = json.loads((out / "index.json").read_text())
    assert rerun.pop("timing")["scripts_checked"] == 0 and index.pop("timing")["scripts_checked"] == 6
    assert rerun == index
