"""A script run in this process under the harness, whose ``torch.compile`` returns a callable that adds 0.5 to
the function's result: a compiled call that gives wrong numbers, without compiling anything."""

from __future__ import annotations

import contextlib
import textwrap
from typing import Callable, Iterator

from minimizer.runner.child import run_script
from oracles.api import NEEDS_EAGER_RERUN, NEEDS_EVIDENCE, NEEDS_KERNELS
from oracles.harness import Harness

PRELUDE = """
import math
import sys
import torch

def f(x):
    return x * 2

g = torch.compile(f)
x = torch.arange(4.0)
"""


def _wrong(model, kwargs):
    return lambda *args, **kw: model(*args, **kw) + 0.5


@contextlib.contextmanager
def failing_run(
    tmp_path, body: str, compiled: Callable = _wrong, must_fail: bool = True
) -> Iterator[tuple[Harness, BaseException, str]]:
    """``PRELUDE`` and ``body`` run as a script under the harness: the harness (installed for the block), what
    escaped the script (it must fail, unless ``must_fail`` is false), and the script's path. ``compiled`` makes
    what ``torch.compile`` returns (by default, the wrong compile)."""

    path = tmp_path / "check.py"
    path.write_text(PRELUDE + textwrap.dedent(body))
    harness = Harness(frozenset({NEEDS_EVIDENCE, NEEDS_KERNELS, NEEDS_EAGER_RERUN}), script_path=str(path))
    harness._compiled_call = compiled  # type: ignore[method-assign]
    harness.install()
    try:
        escaped = run_script(str(path), 0)
        assert escaped is not None or not must_fail, "the check did not fail"
        yield harness, escaped, str(path)
    finally:
        harness.uninstall()
