"""Under Triton's interpreter, the memory a launch touched is known exactly (``oracles.kernel_memory``).

Each check runs in its own interpreter: ``TRITON_INTERPRET`` must be set before triton is first imported."""

import json
import subprocess
import sys

import pytest

pytest.importorskip("triton")

PRELUDE = '''
import json, os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl
from oracles.kernel_launches import _bytes_of, _unchanged
from oracles.kernel_memory import InterpretedAccesses, out_of_bounds, stored_elements


@triton.jit
def store_zeros(out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.zeros([BLOCK], dtype=tl.float32), mask=offsets < n)


@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=offsets < n), mask=offsets < n)


def launch_noting(out, n, interpreted=True, kernel=None, *more):
    accesses = InterpretedAccesses()
    accesses.install()
    try:
        with accesses.recording(interpreted) as log:
            (kernel or store_zeros)[(1,)](*more, out, n, BLOCK=4)
    finally:
        accesses.uninstall()
    return log


def mask(m):
    return None if m is None else m.tolist()
'''


def run(tmp_path, body):
    script = tmp_path / "stores.py"
    script.write_text(PRELUDE + body)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_store_of_the_bytes_already_there_counts_as_written(tmp_path):
    # Zeros stored into zeros: comparing bytes alone, the launch wrote nothing.
    body = (
        "out = torch.zeros(4)\nbefore = _bytes_of(out).clone()\nlog = launch_noting(out, 2)\n"
        "print(json.dumps([mask(stored_elements(out, log)), mask(_unchanged(out, before)),"
        " mask(_unchanged(out, before, stored_elements(out, log)))]))\n"
    )
    stored, by_bytes, unchanged = run(tmp_path, body)
    assert stored == [True, True, False, False]
    assert by_bytes is None
    assert unchanged == [False, False, True, True]


def test_stores_into_a_view_are_told_per_element_of_the_view(tmp_path):
    body = (
        "storage = torch.ones(8)\nview = storage[3:7]\nlog = launch_noting(view, 3)\n"
        "print(json.dumps([mask(stored_elements(view, log)), mask(stored_elements(storage, log))]))\n"
    )
    of_view, of_storage = run(tmp_path, body)
    assert of_view == [True, True, True, False]
    assert of_storage == [False] * 3 + [True] * 3 + [False] * 2


def test_nothing_is_noted_for_a_launch_not_interpreted(tmp_path):
    body = "log = launch_noting(torch.ones(4), 2, interpreted=False)\nprint(json.dumps(log))\n"
    assert run(tmp_path, body) is None


def test_reads_and_writes_past_the_tensors_a_launch_was_given_are_named_by_parameter(tmp_path):
    # n = 3 within tensors of 3: nothing strays; n = 4: the load reads one element past x, the store writes one
    # past out.
    body = (
        "x, out = torch.ones(3), torch.zeros(3)\n"
        "def strays(n):\n"
        "    log = launch_noting(out, n, True, copy, x)\n"
        "    return sorted(out_of_bounds(log, {'x_ptr': x, 'out_ptr': out}).items())\n"
        "print(json.dumps([strays(3), strays(4)]))\n"
    )
    within, past = run(tmp_path, body)
    assert within == []
    assert past == [[["reads", "x_ptr"], [1, 0]], [["writes", "out_ptr"], [1, 0]]]


def test_a_fenced_launch_reads_zeros_past_its_tensors(tmp_path):
    # x is 3 elements of a buffer of sevens: the fourth lane reads past x (a seven, unfenced); fenced, it reads
    # zero, as a fresh process's memory would give, so no failure can hang on what lies past a tensor.
    body = (
        "import array\n"
        "buffer = array.array('f', [7.0] * 8)\n"
        "x = torch.frombuffer(buffer, dtype=torch.float32, count=3)\n"
        "def copied(fenced):\n"
        "    out = torch.zeros(8)[:4]\n"
        "    accesses = InterpretedAccesses()\n"
        "    accesses.install()\n"
        "    try:\n"
        "        with accesses.recording(True, [x, out] if fenced else []):\n"
        "            copy[(1,)](x, out, 4, BLOCK=4)\n"
        "    finally:\n"
        "        accesses.uninstall()\n"
        "    return out.tolist()\n"
        "print(json.dumps([copied(False), copied(True)]))\n"
    )
    unfenced, fenced = run(tmp_path, body)
    assert unfenced == [7.0, 7.0, 7.0, 7.0]
    assert fenced == [7.0, 7.0, 7.0, 0.0]
