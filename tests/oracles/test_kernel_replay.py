"""The original's first launch of a compared kernel, replayed on a candidate's kernel (oracles.kernel_replay).

Runs in its own interpreter: ``TRITON_INTERPRET`` must be set before triton is first imported."""

import json
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("triton")

# The original: a bias per column, read at `offs // n_cols` (the bug: one bias per row). Candidates below.
KERNEL = '''
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, b_ptr, out_ptr, n, n_cols, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(b_ptr + {index}, mask=mask), mask=mask)
'''
CANDIDATES = {
    "as it was": (KERNEL, "offs // n_cols"),
    # On one column `offs // n_cols` is `offs`: the same values there, not on the original's launch.
    "the buggy index simplified": (KERNEL, "offs"),
    # The first program's offset is 0: a repro of one program needs none.
    "the program offset dropped": (KERNEL.replace("tl.program_id(0) * BLOCK + ", ""), "offs // n_cols"),
    # A parameter the original was given but the kernel no longer reads.
    "an unread parameter removed": (KERNEL.replace("n_cols, scale", "n_cols"), "offs // n_cols"),
}

SCRIPT = '''
import importlib, json, os, sys
os.environ["TRITON_INTERPRET"] = "1"
import torch
from oracles.kernel_launches import KernelLaunches
from oracles.kernel_replay import asking

folder, names = sys.argv[1], json.loads(sys.argv[2])
sys.path.insert(0, folder)
record = os.path.join(folder, "launches.pt")


def launched(module, mode, rows, cols):
    os.environ.update([asking(mode, record, ["kernel"])])
    launches = KernelLaunches(os.path.join(folder, "script.py"))
    launches.install()
    try:
        kernel = importlib.import_module(module).kernel
        n = rows * cols
        x, b, out = torch.randn(n), torch.randn(cols), torch.empty(n)
        scale = (2.0,) if "scale" in open(os.path.join(folder, module + ".py")).read() else ()
        kernel[(triton_cdiv(n, 16),)](x, b, out, n, cols, *scale, BLOCK=16)
    finally:
        launches.uninstall()
    return launches.first_launches.differences


def triton_cdiv(a, b):
    return (a + b - 1) // b


launched("original", "record", 4, 8)
print(json.dumps({name: launched(name, "replay", 1, 1) for name in names}))
'''


def test_a_candidate_kernel_is_held_to_what_the_original_computed_on_its_first_launch(tmp_path):
    (tmp_path / "original.py").write_text(KERNEL.format(index="offs // n_cols"))
    modules = {}
    for i, (name, (text, index)) in enumerate(CANDIDATES.items()):
        modules[f"candidate{i}"] = name
        (tmp_path / f"candidate{i}.py").write_text(text.format(index=index))
    (tmp_path / "run.py").write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run(
        [sys.executable, str(tmp_path / "run.py"), str(tmp_path), json.dumps(list(modules))],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    differences = {modules[m]: found for m, found in json.loads(done.stdout.strip().splitlines()[-1]).items()}
    assert differences["as it was"] == []
    assert differences["the program offset dropped"] == []
    assert differences["an unread parameter removed"] == []
    assert differences["the buggy index simplified"] == [
        "kernel writes other values into out_ptr than the original did on its first launch"
    ]
