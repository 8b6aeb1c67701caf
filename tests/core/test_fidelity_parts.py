"""The parts that keep candidates faithful to ``python script.py``, on text and hand-made runs (no torch runs)."""

import os
import sys
from tests.bugs import ALSO, check_failed
from pathlib import Path
from types import SimpleNamespace

import pytest

from minimizer.stages.check import CheckReport, OracleFinding, diagnose
from minimizer.runner.plain import PlainRun, exception_from_stderr, run_plain
from minimizer.runner.prelude import PreludeCache, Prelude, may_start_cuda_ahead, preimports, setup_block
from minimizer.runner.run_types import Limits, RunResult
from minimizer.runner.workspace import Workspace
from minimizer.source.statement import seed_like_the_harness
from oracles.api import ExceptionInfo, Verdict
from oracles.signature import exception_signature


# --- the setup block -------------------------------------------------------------------------------------------


def test_setup_block_ends_at_the_first_statement_that_is_not_setup():
    source = (
        '"""doc"""\nimport os\nos.environ["TRITON_INTERPRET"] = "1"\nimport torch\n'
        "x = torch.ones(2)\nos.environ['LATE'] = '1'\n"
    )
    prefix, key = setup_block(source)
    assert prefix.endswith("import torch\n") and "LATE" not in prefix
    # Imports do not decide what the block sets: candidates differing only in imports share a probe.
    assert key == 'os.environ["TRITON_INTERPRET"] = "1"\n'


def test_setup_block_takes_if_and_try_made_of_setup():
    source = (
        "import os, sys\n"
        "if 'A' not in os.environ:\n    os.environ.setdefault('A', '1')\n"
        "try:\n    import numpy\nexcept ImportError:\n    pass\n"
        "sys.path.insert(0, 'lib')\n"
        "import torch\n"
    )
    prefix, key = setup_block(source)
    assert prefix == source
    assert "setdefault" in key and "sys.path.insert" in key


def test_preimports_take_installed_libraries_under_top_level_if_and_try(tmp_path):
    # The liger example's shape: a CUDA check, then the library's import in a try, after the setup block.
    (tmp_path / "helpers.py").write_text("")
    source = (
        "import sys\nimport torch\nimport helpers\n"
        "if not torch.cuda.is_available():\n    sys.exit(0)\n"
        "try:\n    from liger_kernel.transformers.functional import liger_cross_entropy\n"
        "except ImportError:\n    import fallback_lib\n"
        "def main():\n    import inside_function\n"
    )
    assert preimports(source, str(tmp_path)) == ["liger_kernel.transformers.functional", "fallback_lib"]


def test_cuda_starts_ahead_only_for_a_script_that_uses_it_and_leaves_the_environment_alone(tmp_path):
    uses = "import torch\nx = torch.ones(2, device='cuda')\n"
    assert may_start_cuda_ahead(uses, None)
    assert not may_start_cuda_ahead("import torch\nx = torch.ones(2)\n", None)  # never asks for CUDA
    # What the setup block sets, every candidate gets before CUDA could start: that may stay.
    assert may_start_cuda_ahead("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '1'\n" + uses, None)
    # Set later, it is read by CUDA's start only where that start comes after it.
    assert not may_start_cuda_ahead(uses + "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n", None)
    for later in ("import multiprocessing\n", "loader = DataLoader(data, num_workers=2)\n", "print(torch.cuda.is_initialized())\n"):
        assert not may_start_cuda_ahead(uses + later, None), later
    # A module beside the script counts as its code: it may use CUDA, or set what CUDA reads.
    (tmp_path / "model.py").write_text("import torch\nDEVICE = 'cuda'\n")
    (tmp_path / "setup_env.py").write_text("import os\nos.environ['CUDA_VISIBLE_DEVICES'] = '0'\n")
    assert may_start_cuda_ahead("import torch\nfrom model import DEVICE\nx = torch.ones(2, device=DEVICE)\n", str(tmp_path))
    assert not may_start_cuda_ahead("import setup_env\n" + uses, str(tmp_path))


def test_no_probe_when_the_block_cannot_set_anything():
    assert setup_block("import torch\nx = torch.ones(1)\n") is None
    assert setup_block("def f(:\n") is None


def test_prelude_probe_sees_what_the_block_sets_and_removes(tmp_path):
    source = (
        "import os, sys\n"
        'os.environ["MINIMIZER_TEST_SET"] = "yes"\n'
        'os.environ.pop("MINIMIZER_TEST_GONE", None)\n'
        'sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))\n'
        "import torch\n"
    )
    env = dict(os.environ, MINIMIZER_TEST_GONE="1")
    prelude = PreludeCache().prelude_of(source, "s.py", None, env)
    applied = prelude.apply(env)
    assert applied["MINIMIZER_TEST_SET"] == "yes" and "MINIMIZER_TEST_GONE" not in applied
    # The probe ran in its own folder: the sys.path entry is relative to the script's folder there.
    assert [Path(p).name for p in prelude.sys_path] == ["lib"]


def test_prelude_cache_probes_a_block_once(monkeypatch):
    probes = []

    def fake_probe(prefix, filename, beside, env):
        probes.append(prefix)
        return Prelude(env=(("A", "1"),))

    monkeypatch.setattr("minimizer.runner.prelude.probe", fake_probe)
    cache = PreludeCache()
    one = cache.prelude_of("import os\nos.environ['A'] = '1'\nimport torch\nx = 1\n", "s.py", None, {})
    two = cache.prelude_of("import os\nos.environ['A'] = '1'\nimport torch, math\ny = 2\n", "s.py", None, {})
    assert one == two and len(probes) == 1


# --- files beside ----------------------------------------------------------------------------------------------


def test_workspace_copies_small_entries_links_large_ones_and_leaves_out_the_script(tmp_path):
    user = tmp_path / "user"
    (user / "data").mkdir(parents=True)
    (user / "bug.py").write_text("x = 1\n")
    (user / "bug.min.py").write_text("x = 1\n")
    (user / "inputs.pt").write_bytes(b"0" * 100)
    (user / "big.bin").write_bytes(b"0" * 5000)
    (user / "data" / "a.txt").write_text("a")
    (user / "__pycache__").mkdir()
    space = Workspace(user, leave_out={"bug.py"}, budget=1000)
    try:
        assert sorted(os.listdir(space.folder)) == ["big.bin", "data", "inputs.pt"]
        assert space.linked_to_origin == ["big.bin"]
        assert not (space.folder / "inputs.pt").is_symlink()  # a copy: later edits of the user's don't leak in
        run = tmp_path / "run"
        run.mkdir()
        (run / "inputs.pt").write_text("the run's own")
        space.populate(run)
        assert (run / "inputs.pt").read_text() == "the run's own"
        assert (run / "data" / "a.txt").read_text() == "a"
    finally:
        space.close()
    assert not space.folder.exists()


# --- plain python ----------------------------------------------------------------------------------------------


def test_the_last_traceback_names_the_failure_and_the_assert(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("x = 1\nassert x == 2, 'x is not two'\n")
    stderr = (
        "Traceback (most recent call last):\n  File \"/elsewhere/other.py\", line 3, in f\nValueError: first\n\n"
        "During handling of the above exception, another exception occurred:\n\n"
        f'Traceback (most recent call last):\n  File "{script}", line 2, in <module>\n'
        "    assert x == 2, 'x is not two'\nAssertionError: x is not two\n"
    )
    found = exception_from_stderr(stderr, script)
    assert found.type == "AssertionError" and found.message == "x is not two"
    assert found.assert_text == "x == 2"
    assert exception_from_stderr("some warning\n", script) is None


def test_plain_run_names_a_failure_whose_traceback_is_long(tmp_path):
    # Dynamo's errors carry pages of context after the traceback's first line; the verdict must still name them.
    source = "import sys\nprint('log line\\n' * 2000, file=sys.stderr)\nraise RuntimeError('fake call\\n' + 'x' * 9000)\n"
    run = run_plain(source, "s.py", str(tmp_path), Limits(timeout=60))
    assert run.failure.startswith("RuntimeError") and run.message == "fake call"
    assert len(run.stderr_tail) <= 4000


def test_plain_run_sees_its_folder_and_main(tmp_path):
    beside = tmp_path / "beside"
    beside.mkdir()
    (beside / "helper.py").write_text("VALUE = 3\n")
    source = (
        "import os, sys\nfrom helper import VALUE\n"
        "assert __name__ == '__main__'\n"
        "assert os.path.exists('helper.py') and os.path.exists(os.path.join(os.path.dirname(__file__), 'helper.py'))\n"
        "raise SystemExit(VALUE)\n"
    )
    run = run_plain(source, "s.py", str(beside), Limits(timeout=60))
    assert run.failure == "exit status 3"
    run = run_plain("import sys\nraise KeyError('k')\n", "s.py", None, Limits(timeout=60))
    assert run.failure.startswith("KeyError") and run.describe().startswith("KeyError")


def test_plain_run_is_killed_at_its_limit():
    run = run_plain("while True:\n    pass\n", "s.py", None, Limits(timeout=1))
    assert run.timed_out and run.fails


# --- seeding the repro -----------------------------------------------------------------------------------------


def test_seeds_follow_the_import_block_that_brings_each_module():
    source = "import random\nimport numpy as np\nimport torch\n\nx = torch.randn(2)\n"
    seeded = seed_like_the_harness(source, 7)
    assert seeded == (
        "import random\nimport numpy as np\nimport torch\nrandom.seed(7)\nnp.random.seed(7)\ntorch.manual_seed(7)\n"
        "\nx = torch.randn(2)\n"
    )
    assert seed_like_the_harness("import math\nx = math.pi\n", 0) == "import math\nx = math.pi\n"


def test_a_script_that_draws_nothing_from_torch_gets_no_torch_seed():
    fixed = "import torch\n\nx = torch.ones(2)\nprint(torch.compile(torch.sin)(x))\n"
    assert seed_like_the_harness(fixed, 0) == fixed
    for draws in [
        "x = torch.ones(2).uniform_()\n", "m = torch.nn.Linear(1, 1)\n", "y = F.dropout(x)\n", "import transformers\n",
        "y = torch.nn.functional.rrelu(x, training=True)\n", "y = torch.nn.functional.gumbel_softmax(x)\n",
    ]:
        assert "torch.manual_seed(0)" in seed_like_the_harness(fixed + draws, 0), draws
    functional = fixed + "y = torch.nn.functional.gelu(x)\n"
    assert seed_like_the_harness(functional, 0) == functional
    # The standard library draws nothing from torch: a unittest or logging import is no reason to seed.
    standard = "import logging\nimport unittest\n" + fixed
    assert seed_like_the_harness(standard, 0) == standard


def test_a_script_that_imports_numpy_for_its_testing_gets_no_numpy_seed():
    checked = "import numpy as np\nimport torch\n\nx = torch.randn(2)\nnp.testing.assert_allclose(x, x)\n"
    assert "np.random.seed" not in seed_like_the_harness(checked, 0) and "torch.manual_seed(0)" in seed_like_the_harness(checked, 0)
    for draws in ["y = np.random.rand(2)\n", "rng = np.random.default_rng()\n", "import transformers\n"]:
        assert "np.random.seed(0)" in seed_like_the_harness(checked + draws, 0), draws


def test_a_backend_beside_the_script_is_read_for_draws(tmp_path):
    fixed = "import torch\nimport my_backend\n\nx = torch.ones(2)\n"
    (tmp_path / "my_backend.py").write_text("import torch\nfrom functorch.compile import make_boxed_func\nimport helper\n")
    (tmp_path / "helper.py").write_text("import my_backend\n")  # a cycle reads each module once
    assert seed_like_the_harness(fixed, 0, str(tmp_path)) == fixed
    assert "torch.manual_seed(0)" in seed_like_the_harness(fixed, 0)  # not found: it may draw
    (tmp_path / "helper.py").write_text("import torch\nNOISE = torch.randn(3)\n")
    assert "torch.manual_seed(0)" in seed_like_the_harness(fixed, 0, str(tmp_path))


# --- diagnose --------------------------------------------------------------------------------------------------


def _plain(failure, message=""):
    return PlainRun(returncode=1 if failure else 0, seconds=1.0, failure=failure, message=message)


def _harness(exception=None, compiled_calls=1, **verdicts):
    return RunResult(seconds=1.0, exception=exception, compiled_calls=compiled_calls, verdicts=verdicts or {"x": Verdict(False)})


ASSERT = ExceptionInfo(type="AssertionError", message="bad", assert_text="a == b")
ASSERT_FAILURE = exception_signature(ASSERT)


def _report(plain, runs, findings, pinned=None):
    return CheckReport(findings=findings, runs=runs, plain=plain, pinned=pinned, seeds=list(range(len(runs))))


def test_diagnose_accepts_a_steady_compiler_bug():
    finding = OracleFinding("script", [Verdict(True, ASSERT_FAILURE + " [only under torch.compile]")] * 2)
    report = _report([_plain(ASSERT_FAILURE, "bad")] * 2, [_harness(ASSERT)] * 2, [finding], pinned=finding)
    assert report.plain_failure == ASSERT_FAILURE
    assert diagnose(report, explicit_oracle=False) is None


def test_diagnose_names_each_problem_in_one_line():
    quiet = OracleFinding("numerical", [Verdict(False)] * 2)
    flaky_python = _report([_plain(ASSERT_FAILURE, "bad"), _plain(None)], [_harness()] * 2, [quiet])
    assert "differently from run to run under plain python" in diagnose(flaky_python, explicit_oracle=False)

    seeds = _report([_plain(None)] * 2, [_harness(ASSERT), _harness()], [quiet])
    assert "depends on the random numbers" in diagnose(seeds, explicit_oracle=False)

    missing = ExceptionInfo(type="ModuleNotFoundError", message="No module named 'helpers'")
    cannot = _report(
        [_plain("ModuleNotFoundError: No module named 'helpers'", "No module named 'helpers'")] * 2,
        [_harness(missing, compiled_calls=0)] * 2,
        [quiet],
    )
    line = diagnose(cannot, explicit_oracle=False)
    assert line.startswith("the script cannot run here: ModuleNotFoundError: No module named 'helpers'")

    also = OracleFinding("script", [Verdict(True, bug=check_failed(ASSERT_FAILURE, under=ALSO))] * 2)
    not_compiler = _report([_plain(ASSERT_FAILURE, "bad")] * 2, [_harness(ASSERT)] * 2, [also], pinned=also)
    assert "also without torch.compile: not a compiler bug" in diagnose(not_compiler, explicit_oracle=False)
    assert diagnose(not_compiler, explicit_oracle=True) is None

    mismatch = _report([_plain(None)] * 2, [_harness(ASSERT)] * 2, [quiet])
    assert "ends differently than under plain python" in diagnose(mismatch, explicit_oracle=False)

    nothing = _report([_plain(None)] * 2, [_harness()] * 2, [quiet])
    assert diagnose(nothing, explicit_oracle=False).startswith("nothing to minimize")

    half = OracleFinding("numerical", [Verdict(True, "numerical: float32 value"), Verdict(False)])
    unsteady = _report([_plain(None)] * 2, [_harness()] * 2, [half])
    assert "fired in 1 of 2 runs (50%)" in diagnose(unsteady, explicit_oracle=False)

    # A kernel's script whose exit no comparison of the kernel's output decides (oracles.deciding).
    exit_ = ExceptionInfo(type="SystemExit", message="disagrees")
    exits = [_harness(exit_, compiled_calls=0)] * 2
    kernels = OracleFinding("script", [Verdict(True, bug=check_failed("SystemExit: disagrees", kernels=("k",)))] * 2)
    undecided = _report([_plain("exit status 1")] * 2, exits, [kernels], pinned=kernels)
    assert "whatever its Triton kernels compute" in diagnose(undecided, explicit_oracle=False)
    arguments = OracleFinding("script", [Verdict(True, "SystemExit: disagrees")] * 2)
    usage = _report([_plain("exit status 1")] * 2, exits, [arguments], pinned=arguments)
    assert "pass them after --" in diagnose(usage, explicit_oracle=False)


def test_an_earlier_step_is_stated_when_the_last_has_no_place_for_the_statement(monkeypatch):
    from minimizer.stages import state as stage
    from minimizer.stages.pin import Target

    stateable = "import torch\nx = torch.ones(1)\ntorch.compile(torch.sin)(x)\n"
    hidden = "import torch\ndef main():\n    torch.compile(torch.sin)(torch.ones(1))\nmain()\n"
    runs = []

    def state(_runs, text, target, settings):
        runs.append(text)
        return text + "# stated\n", True

    monkeypatch.setattr(stage, "state_the_bug", state)
    fake = SimpleNamespace(progress=SimpleNamespace(message=lambda _: None))
    target = Target("numerical", "numerical: float32 value")
    text, stated, step = stage.state_an_earlier_step(fake, ["original", stateable, hidden], hidden, target, None)
    assert stated and text == stateable + "# stated\n" and step == stateable
    assert runs == [stateable]  # steps where no statement can be written cost no run


def test_a_repro_is_seeded_first_only_where_its_bug_is_about_values():
    from minimizer.stages.confirm import may_depend_on_the_draw as _may_depend_on_the_draw
    from minimizer.stages.pin import Target as _Target

    assert _may_depend_on_the_draw(_Target("numerical", "numerical: float32 value"))
    assert _may_depend_on_the_draw(_Target("script", check_failed("AssertionError: assert x -- Tensor-likes are not close!")))
    assert not _may_depend_on_the_draw(_Target("script", "RuntimeError: One of the differentiated Tensors ..."))
    assert not _may_depend_on_the_draw(_Target("crash", "crash: compiled raised: RuntimeError: x"))


def test_a_script_that_seeds_after_its_imports_gets_no_second_seed():
    source = "import torch\ntorch.manual_seed(0)\nx = torch.randn(2)\n"
    assert seed_like_the_harness(source, 0) == source
    assert seed_like_the_harness(source, 3).count("manual_seed") == 2  # another seed: the harness's goes first


def test_the_check_runs_the_scripts_own_oracles_again_where_the_comparing_ones_changed_its_end(monkeypatch):
    # Under the comparing oracles Inductor draws random numbers as eager does (fallback_random), which hides a bug
    # in a random operator's lowering: plain python fails, that run passes. The oracles that watch the script
    # alone run again with the compiler as the script has it, and that run is the one pinned.
    from minimizer.runner.run_types import RunSettings
    from minimizer.stages.check import check_original

    fires = Verdict(True, ASSERT_FAILURE + " [only under torch.compile]")
    settings = RunSettings(filename="s.py", origin_dir=".", oracles=("numerical", "script"), limits=Limits(timeout=9))
    asked = []

    def run(source, settings):
        asked.append(settings.oracles)
        if "numerical" in settings.oracles:
            return _harness(None, numerical=Verdict(False), script=Verdict(False))
        return _harness(ASSERT, script=fires)

    runs = SimpleNamespace(
        options=SimpleNamespace(oracle="auto", timeout=9, seed=0, confirm=2, memory_mb=100, script_args=()),
        settings=lambda specs, timeout: settings,
        plain=lambda *args: _plain(ASSERT_FAILURE, "bad"),
        run=run,
        call_all=lambda calls: [call() for call in calls],
        progress=SimpleNamespace(message=lambda text: None),
        original="s.py",
        source="",
    )
    monkeypatch.setattr("minimizer.stages.check.oracle_specs", lambda oracle: ["numerical", "script"])
    report = check_original(runs)
    assert asked == [("numerical", "script")] * 2 + [("script",)] * 2
    assert report.pinned is not None and report.pinned.spec == "script"
    assert diagnose(report, explicit_oracle=False) is None
