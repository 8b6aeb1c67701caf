"""The process boundary: every way a candidate can end is recorded, none takes the reducer down."""

import json
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from minimizer.runner.process import supervise

from minimizer.runner.run_types import Limits, RunSettings
from minimizer.runner.process import run_candidate as run_cold
from minimizer.runner.warm import ForkServerLauncher
from tests.processes import LingeringHandle, alive, descendants


@pytest.fixture(scope="module")
def warm_launcher():
    launcher = ForkServerLauncher()
    yield launcher
    launcher.close()


@pytest.fixture(params=["cold", "warm"])
def run_candidate(request, warm_launcher):
    if request.param == "cold":
        return run_cold
    return lambda source, settings, **options: run_cold(source, settings, launcher=warm_launcher, **options)


def settings(tmp_path, **limits):
    return RunSettings("bug.py", str(tmp_path), ("script",), Limits(**limits) if limits else Limits())


def test_failure_is_recorded_with_exception_and_verdict(tmp_path, run_candidate):
    result = run_candidate("import torch\nraise ValueError('bad value 3')\n", settings(tmp_path))
    assert result.completed
    assert result.exception.type == "ValueError"
    assert result.verdicts["script"].fires
    assert result.verdicts["script"].signature == "ValueError: bad value N"


def test_clean_run_does_not_fire(tmp_path, run_candidate):
    result = run_candidate("import torch\nprint('fine')\n", settings(tmp_path))
    assert result.completed and not result.verdicts["script"].fires
    assert "fine" in result.stdout_tail


def test_hanging_candidate_is_killed_at_the_timeout_and_says_where_it_was(tmp_path, run_candidate):
    source = "import time\n\ndef wait_forever():\n    while True:\n        time.sleep(1)\n\nwait_forever()\n"
    # A fresh interpreter imports torch before the script starts: 3-4 s here, longer on a loaded machine.
    result = run_candidate(source, settings(tmp_path, timeout=10 if run_candidate is run_cold else 4))
    assert result.timed_out and not result.completed
    assert result.seconds < 30  # the limit, plus a warm server's start for the first candidate
    assert 'in wait_forever' in result.stacks and "bug.py" in result.stacks


def test_segfault_is_recorded_as_a_signal(tmp_path, run_candidate):
    result = run_candidate("import ctypes\nctypes.string_at(0)\n", settings(tmp_path))
    assert result.signal == "SIGSEGV" and not result.completed


def test_memory_hog_is_killed(tmp_path, run_candidate):
    hog = "import time\nx = bytearray(3 * 2**30)\nx[::4096] = b'1' * len(x[::4096])\ntime.sleep(30)\n"
    result = run_candidate(hog, settings(tmp_path, timeout=60, memory_mb=1000))
    assert result.memory_exceeded and not result.completed


def test_candidate_runs_in_its_own_directory_with_the_origin_on_sys_path(tmp_path, run_candidate):
    (tmp_path / "helper_mod.py").write_text("VALUE = 41\n")
    source = "import os, helper_mod\nassert os.getcwd() != %r\nraise RuntimeError(helper_mod.VALUE + 1)\n" % str(tmp_path)
    result = run_candidate(source, settings(tmp_path))
    assert result.exception.message == "42"
    assert list(tmp_path.iterdir()) == [tmp_path / "helper_mod.py"]  # nothing written beside the original


OMP_SEEN = "import os\nraise ValueError(repr([os.environ.get('OMP_WAIT_POLICY'), os.environ.get('MINIMIZER_SET_OMP_WAIT_POLICY')]))\n"


@pytest.mark.parametrize("users", [None, "ACTIVE"])
def test_candidates_threads_sleep_while_they_wait_and_the_script_sees_only_the_users_setting(
    tmp_path, run_candidate, monkeypatch, users
):
    from minimizer.runner.run_folder import child_env

    if users is None:
        monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    else:
        monkeypatch.setenv("OMP_WAIT_POLICY", users)
    assert child_env(settings(tmp_path))["OMP_WAIT_POLICY"] == (users or "PASSIVE")  # what torch loads OpenMP with
    result = run_candidate(OMP_SEEN, settings(tmp_path))
    assert result.exception.message == repr([users, None])


def test_seeds_are_fixed(tmp_path, run_candidate):
    source = "import random, torch\nraise RuntimeError(f'{random.random()} {torch.rand(1).item()}')\n"
    first = run_candidate(source, settings(tmp_path))
    second = run_candidate(source, settings(tmp_path))
    assert first.exception.message == second.exception.message




def test_killing_pid_zero_never_kills_our_own_group():
    from minimizer.runner.process import kill_process_group

    kill_process_group(0)  # a candidate lost before it was forked has pid 0
    kill_process_group(-1)


def test_candidates_of_one_run_share_the_compile_cache_folder(tmp_path, run_candidate):
    cache = tmp_path / "compile-cache"
    probe = "from torch._inductor.runtime.cache_dir_utils import cache_dir\nprint('CACHE', cache_dir())\n"
    result = run_candidate(probe, RunSettings("bug.py", str(tmp_path), ("script",), compile_cache=str(cache)))
    assert f"CACHE {cache / 'inductor'}" in result.stdout_tail


def test_a_graph_compiled_by_an_earlier_candidate_is_a_cache_hit(tmp_path, warm_launcher):
    compiled = "import torch\nprint(torch.compile(lambda x: x.sin() + 1)(torch.ones(3)))\n"
    run_settings = RunSettings("bug.py", str(tmp_path), ("script",), compile_cache=str(tmp_path / "cache"))
    first = run_cold(compiled, run_settings, launcher=warm_launcher)
    second = run_cold("# a comment the compiler never sees\n" + compiled, run_settings, launcher=warm_launcher)
    assert (first.compile_cache.hits, first.compile_cache.misses) == (0, 1)
    assert (second.compile_cache.hits, second.compile_cache.misses) == (1, 0)



def test_a_candidate_sees_its_leased_gpu_first_and_the_others_after_it(tmp_path, run_candidate):
    from minimizer.runner.gpus import GpuPool

    pool = GpuPool(("3", "5"))
    show = "import os\nprint('visible', os.environ.get('CUDA_VISIBLE_DEVICES'))\n"
    with pool.lease():  # GPU 3 is busy, so the candidate gets GPU 5
        result = run_candidate(show, settings(tmp_path), gpus=pool)
    assert "visible 5,3" in result.stdout_tail


SHARED_SCRIPT = """import torch
torch.manual_seed(0)
{before}
def f(x):
    return x.{op}() + 1
x = torch.randn(8)
print(torch.compile(f, backend="aot_eager")(x))
"""


def test_candidates_with_the_same_compiled_calls_share_a_verdict(tmp_path, warm_launcher):
    run_settings = RunSettings(
        "bug.py", str(tmp_path), ("numerical",), compile_cache=str(tmp_path / "cache"), eager_precheck=True, share_verdicts=True
    )

    def run(**parts):
        return run_cold(SHARED_SCRIPT.format(**{"before": "", "op": "sin", **parts}), run_settings, launcher=warm_launcher)

    first = run()
    same_calls = run(before="unused = [1, 2, 3]\nprint('eager code the compiler never sees')")
    other_op = run(op="cos")
    other_setting = run(before="torch._dynamo.config.cache_size_limit = 3")
    assert first.fingerprint is not None and not first.shared_verdict
    assert same_calls.shared_verdict and same_calls.verdicts == first.verdicts
    assert same_calls.fingerprint == first.fingerprint
    assert not other_op.shared_verdict and other_op.fingerprint != first.fingerprint
    assert not other_setting.shared_verdict and other_setting.fingerprint != first.fingerprint
    # Dynamo's count of the graph's operators (sin, add), from the real run and from the tracing that shared.
    assert first.operators_captured == same_calls.operators_captured == 2


def test_verdicts_are_shared_only_when_asked_and_only_for_oracles_that_read_only_calls(tmp_path, warm_launcher):
    script = SHARED_SCRIPT.format(before="", op="sin")
    cache = str(tmp_path / "cache")
    for oracles, share in ((("numerical",), False), (("crash",), True)):
        run_settings = RunSettings("bug.py", str(tmp_path), oracles, compile_cache=cache, eager_precheck=True, share_verdicts=share)
        results = [run_cold(script, run_settings, launcher=warm_launcher) for _ in range(2)]
        assert not any(r.shared_verdict or r.fingerprint for r in results)
        assert all(r.completed for r in results)


def test_a_cache_folder_torch_wrote_into_our_environment_does_not_replace_the_runs(tmp_path, monkeypatch):
    from minimizer.runner.run_folder import job_env

    # What Inductor's cache_dir() does in any process that copies its config.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "/tmp/torchinductor_someone")
    env = job_env(RunSettings("bug.py", str(tmp_path), ("script",), compile_cache=str(tmp_path / "cache")))
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "cache" / "inductor")


def test_the_scripts_installed_libraries_are_imported_once_per_warm_server(tmp_path, monkeypatch):
    # A library outside the script's folder (as site-packages would be) that counts its imports.
    lib = tmp_path / "lib"
    lib.mkdir()
    counter = tmp_path / "imports.txt"
    (lib / "heavylib.py").write_text(f"with open({str(counter)!r}, 'a') as f:\n    f.write('x')\nprint('noise')\n")
    monkeypatch.setenv("PYTHONPATH", str(lib))
    origin = tmp_path / "origin"
    origin.mkdir()
    script = (
        "import os\nimport heavylib\nimport torch\n"
        "assert 'MINIMIZER_PREIMPORT' not in os.environ\n"
        "raise ValueError('ran')\n"
    )
    launcher = ForkServerLauncher()
    try:
        results = [run_cold(script, RunSettings("bug.py", str(origin), ("script",)), launcher=launcher) for _ in range(3)]
    finally:
        launcher.close()
    assert all(r.exception is not None and r.exception.type == "ValueError" for r in results)
    # Once in the server's forked trial (does it touch CUDA?) and once in the server: not once per candidate.
    assert counter.read_text() == "xx"


# Reads Inductor's pick without the words the settle looks for, so that the server settles the probe for it.
PICKED_ISA = (
    "import importlib\nimport torch\n{config}probe = importlib.import_module('torch._inductor.cpu_vec' + '_isa')\n"
    "torch.compile\nraise RuntimeError('picked ' + str(getattr(probe, 'pick_vec' + '_isa')()))\n"
)


def test_warm_candidates_pick_the_cpu_vector_instructions_plain_python_picks(tmp_path, warm_launcher):
    """The warm server settles Inductor's CPU vector-instruction probe once; candidates see the same answer, and
    a script that overrides the probe (``vec_isa_ok``) still gets its own."""

    from minimizer.runner.vec_isa import VEC_ISA_PROBE_CACHE
    from minimizer.runner.prelude import may_settle_vec_isa

    picked = []
    for config in ("", "torch._inductor.config.cpp.vec_isa_ok = False\n"):
        source = PICKED_ISA.format(config=config)
        assert may_settle_vec_isa(source) == (config == "")
        plain = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True)
        expected = plain.stderr.strip().splitlines()[-1].removeprefix("RuntimeError: ")
        result = run_cold(source, settings(tmp_path), launcher=warm_launcher)
        assert result.exception.message == expected
        picked.append(expected)
        if config == "":
            assert any(VEC_ISA_PROBE_CACHE.iterdir())  # the server did build the probe
    assert picked[0] != picked[1]  # the override mattered (the CI's x86 CPUs have vector instructions)


def test_the_vector_instruction_probe_is_settled_only_for_scripts_that_compile_and_leave_it_alone():
    from minimizer.runner.prelude import may_settle_vec_isa

    assert may_settle_vec_isa("import torch\ntorch.compile(f)(x)\n")
    assert not may_settle_vec_isa("import triton\nkernel[(1,)](x)\n")  # never asks; a new server would pay
    assert not may_settle_vec_isa("torch._inductor.config.cpp.vec_isa_ok = False\ntorch.compile(f)(x)\n")
    from minimizer.runner.prelude import SETTLE_ON_ANY_HOST, SETTLE_WITHOUT_GPU, settle_vec_isa_value

    # A GPU host's server settles it only for scripts that compile for the CPU there.
    assert settle_vec_isa_value("import torch\ntorch.compile(f)(x)\n") == SETTLE_ON_ANY_HOST
    assert settle_vec_isa_value("import torch\ntorch.compile(f)(x.cuda())\n") == SETTLE_WITHOUT_GPU


def test_every_candidate_of_a_reduction_starts_from_the_server_its_original_decides(tmp_path):
    """Whether the server settles the CPU probe is read off the original, not the candidate: a candidate that
    lost its "cuda" (or its torch.compile) would otherwise need a server of its own, and on a GPU host that
    server's probe held every launch for most of a minute."""

    from minimizer.runner.run_folder import prepare_run_folder

    original = "import torch\ntorch.compile(f)(x.cuda())\n"
    envs = []
    for number, source in enumerate((original, "import torch\ntorch.compile(f)(x)\n", "import torch\nf(x)\n")):
        work = tmp_path / str(number)
        work.mkdir()
        run = RunSettings(filename="s.py", origin_dir=str(tmp_path), oracles=("crash",), settle_from=original)
        envs.append(prepare_run_folder(source, run, work)[2])
    assert envs[0] == envs[1] == envs[2]


@pytest.fixture
def recorder_at_work():
    """A process that looks, to /proc, like the background recorder at work: its process number."""

    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)  # record_answers"])
    yield process.pid
    process.kill()
    process.wait()


def _a_finished_process_id() -> int:
    done = subprocess.Popen(["true"])
    done.wait()
    return done.pid


def test_a_gpu_hosts_candidates_replay_the_recorded_probe_answers(tmp_path, monkeypatch):
    """On a GPU host, for a script that compiles for the GPU, the server does not probe; a candidate that asks
    probes once per instruction set and host, later ones (of this server or the next) replay the answer, and
    the answers are recorded in the background once."""

    from torch._inductor import cpu_vec_isa

    from minimizer.runner import vec_isa

    monkeypatch.setattr(vec_isa, "VEC_ISA_PROBE_CACHE", tmp_path)
    probed, started = [], []
    monkeypatch.setattr(cpu_vec_isa.VecISA, "check_build", lambda isa, code: probed.append(code) or True)

    def recorder_that_finishes(*args, **kwargs):
        started.append(args)
        vec_isa._complete(vec_isa._record()).write_text("")
        return SimpleNamespace(pid=1)

    monkeypatch.setattr(vec_isa.subprocess, "Popen", recorder_that_finishes)
    vec_isa.replay_when_asked()
    isa = cpu_vec_isa.VecAVX2()
    assert cpu_vec_isa.VecISA.check_build(isa, "probe code") is True
    assert cpu_vec_isa.VecISA.check_build(isa, "probe code") is True
    assert probed == ["probe code"]
    vec_isa.replay_when_asked()  # a later server: wraps the real probe again
    assert cpu_vec_isa.VecISA.check_build(isa, "probe code") is True
    assert probed == ["probe code"] and len(started) == 1


def test_a_partial_record_is_recorded_again_unless_its_recorder_is_at_work(tmp_path, monkeypatch, recorder_at_work):
    """A recorder killed part way (its marker names a process gone, or one that is no recorder) leaves the
    recording to the next server; one at work is left to finish."""

    from minimizer.runner import vec_isa

    monkeypatch.setattr(vec_isa, "VEC_ISA_PROBE_CACHE", tmp_path)
    record = vec_isa._record()
    record.write_text(json.dumps({"avx512 0123": True}))  # what it answered before it was killed
    marker = vec_isa._marker(record)
    started = []
    for named, records in ((_a_finished_process_id(), True), (os.getpid(), True), (recorder_at_work, False)):
        marker.write_text(str(named))
        monkeypatch.setattr(vec_isa.subprocess, "Popen", lambda *a, **k: started.append(a) or SimpleNamespace(pid=named))
        vec_isa.replay_when_asked()
        assert (len(started) == 1) == records
        started.clear()


def test_a_candidate_awaits_the_recorder_at_work_instead_of_probing(tmp_path, recorder_at_work):
    """While the host's recorder runs, a candidate that asks gets its answer when it lands, with no probe."""

    import threading

    from minimizer.runner import vec_isa

    record = tmp_path / "answers.json"
    vec_isa._marker(record).write_text(str(recorder_at_work))
    probed = []
    replayed = vec_isa._replaying(lambda isa, code: probed.append(code) or False, record)
    key = vec_isa._answer_key("avx2", "probe code")
    threading.Timer(0.3, lambda: record.write_text(json.dumps({key: True}))).start()
    assert replayed("avx2", "probe code") is True and probed == []


def test_the_recorder_probes_instead_of_waiting_for_itself(tmp_path):
    """The recorder's own probes go through the same replaying wrapper: its marker names itself, and it must
    probe at once, not wait for answers only it can give."""

    code = (
        "import json, os, sys, time\n"
        "from pathlib import Path\n"
        "from minimizer.runner import vec_isa\n"
        "record = Path(sys.argv[1])\n"
        "vec_isa._marker(record).write_text(str(os.getpid()))\n"
        "started = time.monotonic()\n"
        "answer = vec_isa._replaying(lambda isa, code: True, record, most_wait=30)('avx2', 'probe code')\n"
        "print(json.dumps([answer, time.monotonic() - started]))\n"
        "# record_answers: this process is the recorder\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "answers.json")], capture_output=True, text=True)
    answer, seconds = json.loads(done.stdout)
    assert answer is True and seconds < 10


def test_the_warm_server_imports_inductors_compiler_only_for_a_script_that_compiles(tmp_path):
    """A script that never compiles keeps the modules plain python would have; one that does finds the compiler
    imported already (the import was most of a small candidate's time on the GPU host)."""

    origin = tmp_path / "origin"
    origin.mkdir()
    tell = "import sys\nraise ValueError(str('torch._inductor.comp' + 'ile_fx' in sys.modules))\n"
    launcher = ForkServerLauncher()
    try:
        seen = [
            run_cold(script, RunSettings("s.py", str(origin), ("script",)), launcher=launcher).exception.message
            for script in ("import torch\n" + tell, "import torch\ntorch.compile\n" + tell)
        ]
    finally:
        launcher.close()
    assert seen == ["False", "True"]


def _forkserver_processes() -> set[int]:
    """This test process's warm servers and their spares (other tests may run servers beside it)."""

    found = subprocess.run(["pgrep", "-f", "minimizer.runner.forkserver"], capture_output=True, text=True).stdout
    return {int(pid) for pid in found.split()} & descendants(os.getpid())


def test_candidates_of_a_cuda_script_run_in_processes_forked_ahead_that_see_what_a_fresh_one_sees(tmp_path):
    """Where the script uses CUDA and leaves the environment alone, the warm server forks each candidate's process
    ahead of its job (and starts CUDA in it where there is a GPU); the script must find the folder, argv,
    environment and modules a process forked for it finds. The spares go with their server."""

    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "helper.py").write_text("VALUE = 7\n")
    script = (
        "import os, sys, torch\nfrom helper import VALUE\n"
        "device = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
        "seen = [os.path.basename(os.getcwd()) == os.path.basename(os.path.dirname(sys.argv[0])), sys.argv[0].endswith('s.py'),\n"
        "        os.getenv('MINIMIZER_START_CUDA_AHEAD'), VALUE, torch.ones(2, device=device).sum().item()]\n"
        "raise ValueError(repr(seen))\n"
    )
    before = _forkserver_processes()
    launcher = ForkServerLauncher()
    results, seen = [], set()
    try:
        for _ in range(3):
            results.append(run_cold(script, RunSettings("s.py", str(origin), ("script",)), launcher=launcher))
            _wait_until(lambda: len(_forkserver_processes() - before) >= 2)  # the server and a spare
            seen |= _forkserver_processes() - before
        assert {r.exception.message for r in results} == {"[True, True, None, 7, 2.0]"}
        assert [r.forked_ahead for r in results] == [False, True, True]
    finally:
        launcher.close()
    # By process id: a spare that outlived its server is no longer this process's descendant.
    assert len(seen) >= 2
    _wait_until(lambda: not any(alive(pid) for pid in seen))
    assert not [pid for pid in seen if alive(pid)]


def _wait_until(condition, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)


def test_a_process_that_wrote_its_result_is_not_waited_for_to_exit():
    """Tearing down a CUDA context takes a candidate tenths of a second after its answer: the answer ends the run."""

    handle = LingeringHandle()  # a process whose exit never comes
    started = time.monotonic()
    ended = supervise(handle, Limits(timeout=5), answered=lambda: time.monotonic() - started > 0.2)
    assert ended == (False, False, False) and time.monotonic() - started < 2 and not handle.killed


DROPPED_BACKWARD = """import torch
class Identity(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return x
{context}
def loss(x):
    return Identity.apply(x).sum()
x = torch.randn(4)
print(torch.compile(torch.func.grad(loss), backend="eager")(x))
"""
SETUP_CONTEXT = """
    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad * 0
"""


def test_a_candidate_whose_own_code_fails_eagerly_is_not_passed_by_the_graph_dynamo_traced(tmp_path, warm_launcher):
    # Without setup_context torch.func refuses the Function in eager; Dynamo inlines its forward and traces a
    # graph that runs. The pre-check must run the script's own code, and no verdict may be shared by graph.
    run_settings = RunSettings(
        "bug.py", str(tmp_path), ("numerical",), compile_cache=str(tmp_path / "cache"), eager_precheck=True, share_verdicts=True
    )
    whole = run_cold(DROPPED_BACKWARD.format(context=SETUP_CONTEXT), run_settings, launcher=warm_launcher)
    gutted = run_cold(DROPPED_BACKWARD.format(context=""), run_settings, launcher=warm_launcher)
    assert whole.completed and whole.fingerprint is None
    assert not gutted.shared_verdict
    assert not gutted.verdicts["numerical"].fires
    assert "eager pre-check" in gutted.verdicts["numerical"].detail
