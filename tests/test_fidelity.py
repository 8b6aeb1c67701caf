"""Plain `python script.py` is the judge: what minimizer pins is what python shows, every repro fails under
plain python, and scripts minimizer cannot reduce faithfully get one honest line.

The scripts use planted backends (labelled as such) instead of Inductor, so each run takes seconds.
"""

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from minimizer.cli import app
from minimizer.runner.plain import run_plain
from minimizer.runner.run_types import Limits
from tests.processes import alive, descendants

runner = CliRunner()

TRITON_SCRIPT = '''import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl

BLOCK = 16


@triton.jit
def positive_peak_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask, other=-1.0)
    peak = tl.max(x, axis=0)
    # Planted bug: the masked-out lanes should add 0, they add 1.
    positive = tl.sum(tl.where(x > 0, x, 1.0), axis=0)
    tl.store(out_ptr, peak + positive)


def reference(x):
    return x.max() + x.clamp(min=0).sum()


def log(message):
    print(f"[check] {message}")


x = torch.arange(-4.0, 4.0)
scale = torch.ones(8) * 2
out = torch.empty(1)
positive_peak_kernel[(1,)](x, out, x.numel(), BLOCK=BLOCK)
log(f"kernel {out.item()} reference {reference(x).item()}")
assert torch.allclose(out, reference(x)), "kernel disagrees with torch"
'''

# A stand-in for a compiler bug that only shows with a flag read from the environment at import: it lives in a
# module beside the script (as a library would), out of the reducer's reach.
PLANTED_COMPILER = '''import torch._inductor.config as config


def planted_backend(gm, example_inputs):
    # Planted: results off by one when Inductor's freezing flag (read from the environment when Inductor's
    # config is first imported) is on.
    if config.freezing:
        return lambda *args: [t + 1 for t in gm(*args)]
    return gm
'''

FREEZING_SCRIPT = '''import os

os.environ["TORCHINDUCTOR_FREEZING"] = "1"

import torch

from planted_compiler import planted_backend


def model(x, w):
    h = x @ w
    return torch.relu(h) * 2


x = torch.ones(4, 4)
w = torch.ones(4, 4)
extra = torch.zeros(3)
out = torch.compile(model, backend=planted_backend)(x, w)
print(out.sum())
'''

INPUTS_SCRIPT = '''import os

import torch

here = os.path.dirname(__file__)
data = torch.load(os.path.join(here, "inputs.pt"))
weights = torch.load("weights.pt")


def planted_backend(gm, example_inputs):
    # Planted: wrong wherever an input holds a negative number.
    def run(*args):
        outs = gm(*args)
        return [o * 2 if (args[0] < 0).any() else o for o in outs]
    return run


def f(x, w):
    return (x * w).sum(dim=0)


x = data["x"]
out = torch.compile(f, backend=planted_backend)(x, weights)
assert torch.allclose(out, f(x, weights)), "compiled and eager disagree"
'''


# A parity suite that compiles three losses and asserts once on the worst gap. Planted backend (labelled): the
# losses named in SKEWED come out 1.5x too large under torch.compile.
PARITY_SCRIPT = '''import torch

SKEWED = {skewed}


def skewing_backend(name):
    def backend(gm, example_inputs):
        if name not in SKEWED:
            return gm.forward
        return lambda *args: [out * 1.5 for out in gm(*args)]
    return backend


def focal_loss(logits):
    p = logits.sigmoid()
    return ((1 - p) ** 2 * p.log()).mean()


def kl_loss(logits):
    return (logits.softmax(-1) * logits.log_softmax(-1)).sum()


def dice_loss(logits):
    p = logits.sigmoid()
    return 1 - 2 * (p * p).sum() / (p.sum() + p.sum())


losses = {{"focal": focal_loss, "kl": kl_loss, "dice": dice_loss}}
compiled = {{name: torch.compile(fn, backend=skewing_backend(name)) for name, fn in losses.items()}}
logits = torch.randn(4, 8)
worst = 0.0
for name, fn in losses.items():
    worst = max(worst, (compiled[name](logits) - fn(logits)).abs().item())
assert worst < 1e-5, "compiled losses differ from eager"
'''


# One compiled call computes every loss; its backend skews the graph output at index SKEWED.
ONE_CALL_PARITY_SCRIPT = """import torch

SKEWED = {skewed}


def skewing_backend(gm, example_inputs):
    return lambda *args: [out * 1.5 if i == SKEWED else out for i, out in enumerate(gm(*args))]


def all_losses(logits):
    p = logits.sigmoid()
    focal = ((1 - p) ** 2 * p.log()).mean()
    kl = (logits.softmax(-1) * logits.log_softmax(-1)).sum()
    dice = 1 - 2 * (p * p).sum() / (p.sum() + p.sum())
    return focal, kl, dice


logits = torch.randn(4, 8)
compiled, eager = torch.compile(all_losses, backend=skewing_backend)(logits), all_losses(logits)
worst = max((c - e).abs().item() for c, e in zip(compiled, eager))
assert worst < 1e-5, "compiled losses differ from eager"
"""


@pytest.fixture(scope="module")
def warm_launcher():
    from minimizer.runner.warm import ForkServerLauncher

    launcher = ForkServerLauncher()
    yield launcher
    launcher.close()


def invoke(*args):
    # The culprit's ladder (four more runs) and the cheaper backend's (three) are tested on their own
    # (tests/core/test_culprit.py, one end-to-end test).
    words = [str(a) for a in args]
    if words and words[0] in ("reduce", "check"):
        at = words.index("--") if "--" in words else len(words)
        words[at:at] = ["--no-culprit"] + (["--script-backend"] if words[0] == "reduce" else [])
    return runner.invoke(app, words, catch_exceptions=False)


def check_json(path, *options):
    result = invoke("check", path, "--json", "--confirm", "1", *options)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def plain_failure(path: Path) -> str | None:
    """How ``python path`` fails, in its own folder (the judge)."""

    run = run_plain(path.read_text(), path.name, str(path.parent), Limits(timeout=120))
    return run.failure


def fails_in_a_fresh_folder(repro: Path, beside: list[Path], tmp_path: Path) -> str | None:
    """How the repro fails under plain python in a new folder holding only it and the files it needs."""

    fresh = tmp_path / "fresh"
    fresh.mkdir()
    shutil.copy(repro, fresh / repro.name)
    for path in beside:
        shutil.copy(path, fresh / path.name)
    return plain_failure(fresh / repro.name)


def test_triton_kernel_under_a_script_set_interpreter_is_reduced_to_the_failure_python_shows(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(TRITON_SCRIPT)
    python_says = plain_failure(path)
    assert python_says == "AssertionError: assert torch.allclose(_, _) -- kernel disagrees with torch"
    data = check_json(path)
    assert data["problem"] is None and data["pinned"] == "script"
    pinned = next(o for o in data["oracles"] if o["oracle"] == "script")
    # No torch.compile here, so no compile marker; the kernel that ran before the assert is part of the bug, and
    # so is what the assert compares: the kernel's output with the reference's sum, as the run recorded it, with
    # what the reference's operations were told (clamp's min).
    recorded = "kernel positive_peak_kernel, add+clamp(min=0)+max+sum"
    # With the comparison recorded, the message and the test's spelling leave the signature (the comparison
    # tells the check; the test, given no tolerance, leaves nothing else to decide).
    assert pinned["signature"] == (
        "AssertionError: assert _"
        f" [kernels: positive_peak_kernel] [compared: {recorded}] [evidence: allclose of {recorded}]"
    )

    report = tmp_path / "report.json"
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1", "--report", report)
    assert result.exit_code == 0, result.output
    repro = tmp_path / "kernel.min.py"
    assert 'os.environ["TRITON_INTERPRET"] = "1"' in repro.read_text()
    assert "log(" not in repro.read_text() and "scale" not in repro.read_text()
    assert "positive_peak_kernel[" in repro.read_text()
    # With the values compared held, the kernel shrank too, around its planted line and its mask; `peak` stays:
    # it is 0 only on the shrunk inputs, and an edit must compute what the kernel computed on the original's
    # launch (oracles.kernel_replay).
    assert "tl.where(x > 0, x, 1.0)" in repro.read_text() and "peak = tl.max(x" in repro.read_text()
    assert "mask = offsets < n" in repro.read_text() and "mask=mask, other=-1.0" in repro.read_text()  # lines stay lines
    assert fails_in_a_fresh_folder(repro, [], tmp_path) == python_says
    assert json.loads(report.read_text())["python"]["fails_as_claimed"]


def test_environment_set_by_the_script_is_seen_when_torch_is_imported(tmp_path):
    path = tmp_path / "frozen.py"
    path.write_text(FREEZING_SCRIPT)
    (tmp_path / "planted_compiler.py").write_text(PLANTED_COMPILER)
    assert plain_failure(path) is None  # silent: only the oracles see it

    report = tmp_path.parent / f"{tmp_path.name}-report.json"
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1", "--report", report)
    assert result.exit_code == 0, result.output
    assert json.loads(report.read_text())["oracle"] == "numerical"
    repro = tmp_path / "frozen.min.py"
    text = repro.read_text()
    assert 'os.environ["TORCHINDUCTOR_FREEZING"] = "1"' in text and "extra" not in text
    # The repro states the bug, so plain python fails with it.
    beside = [tmp_path / "planted_compiler.py"]
    assert fails_in_a_fresh_folder(repro, beside, tmp_path).startswith("AssertionError: Tensor-likes are not close!")


def test_files_beside_the_script_are_found_and_the_repro_fails_beside_them(tmp_path):
    import torch

    torch.save({"x": torch.tensor([[1.0, -2.0], [3.0, 4.0]])}, tmp_path / "inputs.pt")
    torch.save(torch.ones(2, 2), tmp_path / "weights.pt")
    path = tmp_path / "load.py"
    path.write_text(INPUTS_SCRIPT)
    python_says = plain_failure(path)
    assert python_says == "AssertionError: assert torch.allclose(_, _) -- compiled and eager disagree"
    data = check_json(path)
    # Under the harness the script finds its files and fails as under python (else check names the mismatch).
    assert data["problem"] is None and data["pinned"] in ("numerical", "script")
    assert data["python"]["runs"][0]["failure"] == python_says
    before = sorted(os.listdir(tmp_path))

    report = tmp_path.parent / f"{tmp_path.name}-report.json"
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1", "--report", report)
    assert result.exit_code == 0, result.output
    repro = tmp_path / "load.min.py"
    assert "inputs.pt" in repro.read_text()
    claimed = json.loads(report.read_text())["python"]["failure"]
    assert claimed.startswith("AssertionError")
    # Nothing was written into the user's folder but the repro.
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["load.min.py"])
    assert fails_in_a_fresh_folder(repro, [tmp_path / "inputs.pt", tmp_path / "weights.pt"], tmp_path) == claimed


def test_a_failure_that_depends_on_the_random_numbers_is_reported_as_flaky(tmp_path):
    path = tmp_path / "rng.py"
    path.write_text(
        "import torch\n\n\n"
        "def planted_backend(gm, example_inputs):\n"
        "    # Planted: wrong when an input holds a value above 1.\n"
        "    return lambda *args: [o + 1 if args[0].max() > 1 else o for o in gm(*args)]\n\n\n"
        "x = torch.randn(1)\n"  # 1.54 with seed 0, 0.66 with seed 1
        "out = torch.compile(torch.sin, backend=planted_backend)(x)\n"
        "torch.testing.assert_close(out, torch.sin(x))\n"
    )
    result = invoke("reduce", path, "-q", "-j", "2")  # two runs, with seeds 0 and 1
    assert result.exit_code == 2
    assert "differently from run to run" in result.output and "random numbers" in result.output


def test_a_failure_without_torch_compile_is_not_a_compiler_bug(tmp_path):
    path = tmp_path / "plain_bug.py"
    path.write_text(
        "import torch\n\nout = torch.compile(lambda x: x + 1, backend='eager')(torch.ones(3))\n"
        "assert out.sum() < 0, 'the sum should be negative'\n"
    )
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1")
    assert result.exit_code == 2
    assert "also without torch.compile: not a compiler bug" in result.output
    assert "AssertionError: the sum should be negative" in result.output
    assert "--oracle script" in result.output
    # Asked for explicitly, it is reduced, and the repro fails as python does.
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1", "--oracle", "script")
    assert result.exit_code == 0, result.output
    assert plain_failure(tmp_path / "plain_bug.min.py") == plain_failure(path)


def test_a_script_that_cannot_start_here_names_what_is_missing(tmp_path):
    path = tmp_path / "needs_helper.py"
    path.write_text("import torch\nimport _helpers_not_here\n\nprint(torch.compile(torch.sin)(torch.ones(2)))\n")
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1")
    assert result.exit_code == 2
    assert "cannot run here" in result.output and "No module named '_helpers_not_here'" in result.output
    assert "Traceback" not in result.output


HANGING = '''import torch


def stuck_backend(gm, example_inputs):
    # Planted: a compiler that never returns.
    while True:
        pass


x = torch.ones(3)
print(torch.compile(torch.cos, backend=stuck_backend)(x))
'''


def test_a_compiler_hang_is_pinned_by_the_hang_oracle(tmp_path):
    path = tmp_path / "hang.py"
    path.write_text(HANGING)
    data = check_json(path, "--timeout", "20")  # long enough to reach the compiled call on a loaded CI
    assert data["pinned"] == "hang" and data["problem"] is None
    assert data["python"]["runs"][0]["timed_out"]
    hang = next(o for o in data["oracles"] if o["oracle"] == "hang")
    assert hang["signature"].endswith("[backend stuck_backend]")


@pytest.mark.skipif(sys.platform != "linux", reason="/proc and signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_termination_leaves_no_process_of_the_run(tmp_path, sig):
    path = tmp_path / "hang.py"
    path.write_text(HANGING)
    proc = subprocess.Popen(
        [sys.executable, "-m", "minimizer", "reduce", str(path), "-j", "2", "--timeout", "300"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # Wait until the original runs under python and under the oracles (fork server and candidate), then
        # stop the run.
        deadline = time.monotonic() + 120
        seen: set[int] = set()
        while time.monotonic() < deadline:
            seen |= descendants(proc.pid)
            if len(seen) >= 3:
                break
            time.sleep(0.5)
        time.sleep(3)
        seen |= descendants(proc.pid)
        assert len(seen) >= 3, "the run never started its processes"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(alive(pid) for pid in seen):
        time.sleep(0.2)
    assert not [pid for pid in seen if alive(pid)], "processes of the run outlived it"


def test_a_generic_assert_over_several_compiled_calls_is_held_to_the_one_that_fails_it(tmp_path, warm_launcher):
    """Item 8 of the fidelity issue: the assert reads only a number, so its signature cannot tell the focal loss's
    mismatch from the KL loss's; with only focal_loss compiled, a candidate where KL misbehaves instead passes."""

    from minimizer.runner.process import run_candidate

    from minimizer.runner.run_types import RunSettings

    settings = RunSettings("parity.py", str(tmp_path), ("script",), Limits(timeout=120))
    focal, kl = PARITY_SCRIPT.format(skewed='{"focal"}'), PARITY_SCRIPT.format(skewed='{"kl"}')
    every = [run_candidate(text, settings, launcher=warm_launcher).verdict("script") for text in (focal, kl)]
    assert every[0].fires and every[0].signature == every[1].signature  # the slip, with every target compiled
    alone = dataclasses.replace(settings, only_compile="focal_loss")
    held = [run_candidate(text, alone, launcher=warm_launcher).verdict("script") for text in (focal, kl)]
    assert held[0].fires and "[with only focal_loss compiled]" in held[0].signature
    assert not held[1].fires

    path = tmp_path / "parity.py"
    path.write_text(focal)
    python_says = plain_failure(path)
    assert check_json(path, "--oracle", "script")["held_to"] == "focal_loss"  # check shows what reduce holds to
    report = tmp_path / "report.json"
    result = invoke("reduce", path, "-q", "-j", "2", "--confirm", "1", "--oracle", "script", "--report", report)
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert "[with only focal_loss compiled]" in data["signature"]
    repro = tmp_path / "parity.min.py"
    assert "focal" in repro.read_text() and "kl_loss" not in repro.read_text()
    # The focal loss's call, lifted out of the dict of compiled losses (its backend made by the script's factory),
    # compared with eager: the lifted comparison stands for the script's assert.
    assert python_says.startswith("AssertionError") and "torch.testing.assert_close(" in repro.read_text()
    assert fails_in_a_fresh_folder(repro, [], tmp_path).startswith("AssertionError: Tensor-likes are not close!")


def test_a_generic_assert_over_the_outputs_of_one_compiled_call_is_held_to_the_output_that_fails_it(
    tmp_path, warm_launcher
):
    """Item 8 within one compiled call: one function returns every loss, the assert reads only a number; with
    that output alone taken from the compiled call (the others from its eager twin), a candidate where another
    output misbehaves passes."""

    from minimizer.runner.process import run_candidate

    from minimizer.runner.run_types import RunSettings

    first, second = ONE_CALL_PARITY_SCRIPT.format(skewed=0), ONE_CALL_PARITY_SCRIPT.format(skewed=1)
    path = tmp_path / "parity.py"
    path.write_text(first)
    held_to = check_json(path, "--oracle", "script")["held_to"]
    assert held_to and held_to.startswith("all_losses output [")
    settings = RunSettings("parity.py", str(tmp_path), ("script",), Limits(timeout=120))
    every = [run_candidate(text, settings, launcher=warm_launcher).verdict("script") for text in (first, second)]
    assert every[0].fires and every[0].signature == every[1].signature  # the slip, with the whole call compiled
    alone = dataclasses.replace(settings, only_compile=held_to)
    held = [run_candidate(text, alone, launcher=warm_launcher).verdict("script") for text in (first, second)]
    assert held[0].fires and f"[with only {held_to} compiled]" in held[0].signature
    assert not held[1].fires
