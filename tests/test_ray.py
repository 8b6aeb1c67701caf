"""--ray local gives the repro that local workers give (the steps are the same for any number of workers)."""

import json

import pytest
from typer.testing import CliRunner

from minimizer.cli import app

pytest.importorskip("ray")
runner = CliRunner()

SCRIPT = '''import torch


def planted_backend(gm, example_inputs):
    # Planted: every output off by one.
    return lambda *args: [t + 1 for t in gm(*args)]


x = torch.ones(2)
unused = torch.zeros(3) + 5
print(torch.compile(torch.relu, backend=planted_backend)(x * 2).sum())
'''


def body(path):
    return "".join(line for line in path.read_text().splitlines(keepends=True) if not line.startswith("#"))


def test_ray_local_gives_the_same_repro_as_local_workers(tmp_path):
    script = tmp_path / "bug.py"
    script.write_text(SCRIPT)
    one = runner.invoke(app, ["reduce", str(script), "-q", "-j", "2", "--confirm", "1", "--no-culprit", "--script-backend", "-o", str(tmp_path / "one.py")])
    assert one.exit_code == 0, one.output
    report = tmp_path / "ray.json"
    ray = runner.invoke(app, ["reduce", str(script), "-q", "--ray", "local", "--confirm", "1", "--no-culprit", "--script-backend", "-o", str(tmp_path / "ray.py"),
                              "--report", str(report)])
    assert ray.exit_code == 0, ray.output
    assert body(tmp_path / "ray.py") == body(tmp_path / "one.py")
    data = json.loads(report.read_text())
    assert data["backend"] == "ray" and data["cpus"] >= 1 and data["nodes"] == 1


def test_joining_a_cluster_that_is_not_there_is_one_line(tmp_path):
    script = tmp_path / "bug.py"
    script.write_text(SCRIPT)
    result = runner.invoke(app, ["reduce", str(script), "-q", "--ray", "127.0.0.1:1"])
    assert result.exit_code == 2 and "cannot start or join Ray" in result.output
    assert "Traceback" not in result.output
