"""Every command over a table of bad inputs: one line, exit status 2, never a traceback of minimizer's own."""

import pytest
from typer.testing import CliRunner

from minimizer.cli import app

FAILING = "import torch\nraise ValueError(f'boom {torch.ones(2).sum().item()}')\n"
USAGE = (
    "import argparse\nimport torch\nparser = argparse.ArgumentParser()\n"
    "parser.add_argument('--scale', type=float, required=True)\nargs = parser.parse_args()\n"
    "raise ValueError(f'boom {torch.ones(2).sum().item() * args.scale}')\n"
)
RAISING_ORACLE = "def broken(run):\n    raise ValueError('my oracle is broken')\n"
NOT_LOADING_ORACLE = "import no_such_module_here\n\ndef oracle(run):\n    return None\n"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "bug.py").write_text(FAILING)
    (tmp_path / "usage.py").write_text(USAGE)
    (tmp_path / "notes.txt").write_text("print(1)\n")
    (tmp_path / "latin1.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    (tmp_path / "raising.py").write_text(RAISING_ORACLE)
    (tmp_path / "notloading.py").write_text(NOT_LOADING_ORACLE)
    (tmp_path / "fuzzed").mkdir()
    (tmp_path / "table.json").write_text("{not json")
    return tmp_path


# (command line with {d} for the folder, what the one line must say); runs that get as far as the check are
# quiet (-q), so that their progress lines do not count
BAD = [
    ("reduce {d}/nope.py", "no such file"),
    ("reduce {d}/notes.txt", "not a Python file"),
    ("reduce {d}/latin1.py", "not valid UTF-8"),
    ("reduce {d}/broken.py", "syntax error"),
    ("reduce {d}/bug.py -o {d}/bug.py/out.py", "is a file, not a folder"),
    ("reduce {d}/bug.py -o {d}/bug.py", "is the input script"),
    ("reduce {d}/bug.py -o {d}", "it is a folder"),
    ("reduce {d}/bug.py --report {d}/bug.py/r.json", "cannot write --report"),
    ("reduce {d}/bug.py --issue {d}/notes.txt/i.md", "cannot write --issue"),
    ("reduce {d}/bug.py --oracle no-such-oracle", "unknown oracle"),
    ("reduce {d}/bug.py --oracle {d}/raising.py:nothing", "raising.py"),
    ("reduce {d}/bug.py --oracle {d}/notloading.py:oracle", "fails to load: ModuleNotFoundError"),
    ("reduce {d}/bug.py -q --oracle {d}/raising.py:broken --confirm 1", "raised ValueError: my oracle is broken at"),
    ("check {d}/bug.py --oracle {d}/raising.py:broken", "raised ValueError: my oracle is broken at"),
    ("reduce {d}/usage.py -q --confirm 1", "pass them after --"),
    ("reduce {d}/bug.py --fixed-in {d}/notes.txt", "not an executable file"),
    ("check {d}/nope.py", "no such file"),
    ("triage {d}/nope -o {d}/out", "not a folder"),
    ("triage {d}/fuzzed -o {d}/bug.py", "it is a file, not a folder"),
    ("bisect {d}/nope.py --torch 2.5.1", "no such file"),
    ("bisect {d}/bug.py", "name the releases"),
    ("report {d}/nope.py", "no such file"),
    ("report {d}/bug.py --bisect {d}/table.json", "cannot read the bisect table"),
]


@pytest.mark.parametrize("command, says", BAD, ids=[command.split(" {d}")[0] + ": " + says for command, says in BAD])
def test_a_bad_input_is_one_line_and_exit_2(folder, command, says):
    result = CliRunner().invoke(app, command.format(d=folder).split())
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.exit_code == 2, result.output
    assert len(lines) == 1 and says in lines[0], result.output
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
