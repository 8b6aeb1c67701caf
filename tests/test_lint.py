"""pyflakes over the product's code: an unused import is noise, an undefined name is a bug waiting for its
path (a graph-capture warning once raised NameError because `sys` was not imported)."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_pyflakes_finds_nothing_in_minimizer_and_oracles():
    found = subprocess.run(
        [sys.executable, "-m", "pyflakes", str(ROOT / "minimizer"), str(ROOT / "oracles")],
        capture_output=True,
        text=True,
    )
    assert found.returncode == 0, found.stdout + found.stderr
