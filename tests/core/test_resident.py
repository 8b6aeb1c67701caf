"""Resident workers: candidate after candidate in one process, each seeing what a fresh process sees, and
checked in fresh processes where it matters."""

import threading
import time

from minimizer.options import Options
from minimizer.progress import make_progress
from minimizer.runner.process import RESIDENT_CANCEL_GRACE_SECONDS, supervise
from minimizer.runner.run_types import Limits, RunSettings
from minimizer.runner.process import run_candidate as run
from minimizer.runner.resident import may_run_resident
from minimizer.runner.resident_trust import SAMPLE, SHOWN_SAMPLE, TRUST_AFTER, ResidentTrust
from minimizer.runner.warm import ForkServerLauncher
from minimizer.runs import Runs
from tests.processes import LingeringHandle

# What a job sees as it starts, then changes: a later job in the same worker must see it as the first did.
_LOOKS_AND_CHANGES = """\
import os, sys, torch
from helper import STATE
device = 'cuda' if torch.cuda.is_available() else 'cpu'
seen = [os.path.basename(os.getcwd()) == os.path.basename(os.path.dirname(sys.argv[0])), torch.get_default_dtype(), torch.is_grad_enabled(),
        torch._inductor.config.max_autotune, sys.path.count('/nowhere'), sys.argv[1:], STATE,
        round(torch.rand(1).item(), 6), torch.get_float32_matmul_precision()]
os.chdir('/')
torch.set_default_dtype(torch.float64)
torch.set_grad_enabled(False)
torch._inductor.config.max_autotune = True
sys.path.append('/nowhere')
sys.argv.append('extra')
STATE.append(1)
torch.set_float32_matmul_precision('medium')
raise ValueError(repr(seen))
"""


def test_a_resident_worker_runs_job_after_job_each_seeing_what_the_first_saw(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "helper.py").write_text("STATE = []\n")
    launcher = ForkServerLauncher()
    try:
        settings = RunSettings("s.py", str(origin), ("script",), resident=True)
        results = [run(_LOOKS_AND_CHANGES, settings, launcher=launcher) for _ in range(5)]
    finally:
        launcher.close()
    assert len({r.exception.message for r in results}) == 1, [r.exception.message for r in results]
    # The first was forked for its job, the next went to workers forked ahead (one or two, as the server's
    # replies raced), which took the rest.
    jobs_before = [r.resident_jobs_before for r in results]
    assert jobs_before[0] is None and None not in jobs_before[1:] and max(jobs_before[1:]) >= 1, jobs_before


def test_without_being_asked_a_spare_runs_one_job_only(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    (origin / "helper.py").write_text("STATE = []\n")
    launcher = ForkServerLauncher()
    try:
        results = [run(_LOOKS_AND_CHANGES, RunSettings("s.py", str(origin), ("script",)), launcher=launcher) for _ in range(3)]
    finally:
        launcher.close()
    assert [r.resident_jobs_before for r in results] == [None, None, None]


def test_a_resident_worker_that_is_killed_mid_job_is_replaced(tmp_path):
    origin = tmp_path / "origin"
    origin.mkdir()
    script = "import os, signal, sys, torch\ndevice = 'cuda'\nif len(sys.argv) == 1 and os.path.exists('{flag}'):\n    os.kill(os.getpid(), 9)\nraise ValueError('ran')\n"
    flag = tmp_path / "kill"
    launcher = ForkServerLauncher()
    try:
        settings = RunSettings("s.py", str(origin), ("script",), resident=True)
        first = [run(script.format(flag=flag), settings, launcher=launcher) for _ in range(2)]
        flag.write_text("")
        killed = run(script.format(flag=flag), settings, launcher=launcher)
        flag.unlink()
        after = run(script.format(flag=flag), settings, launcher=launcher)
    finally:
        launcher.close()
    assert [r.exception.message for r in first] == ["ran", "ran"]
    assert not killed.completed and killed.signal == "SIGKILL"
    assert after.exception.message == "ran"


def test_scripts_that_reach_past_what_a_worker_puts_back_run_in_fresh_processes():
    assert may_run_resident(["import torch\nx = torch.ones(2, device='cuda')\n"])
    for leaky in (
        "@torch.library.custom_op('mylib::f', mutates_args=())\ndef f(x): ...\n",
        "from torch._dynamo import register_backend\n",
        "import threading\n",
        "torch.nn.functional.gelu = lambda x: x\n",
        "import atexit\n",
    ):
        assert not may_run_resident(["import torch\n", leaky]), leaky


def test_answers_that_show_the_bug_and_a_sample_of_the_others_are_checked():
    trust = ResidentTrust(wanted=True)
    assert not trust.to_check(None, True, "x")  # its own process
    assert not trust.to_check(0, True, "x")  # a worker's first job: as any process forked ahead
    assert not trust.to_check(3, None, "x")  # cancelled
    assert trust.to_check(3, True, "x")
    texts = [f"candidate {i}" for i in range(400)]
    sampled = sum(trust.to_check(3, False, text) for text in texts)
    assert 400 / SAMPLE / 2 < sampled < 400 / SAMPLE * 2
    assert [trust.to_check(3, False, text) for text in texts[:20]] == [trust.to_check(5, False, text) for text in texts[:20]]
    for _ in range(TRUST_AFTER):  # once enough answers that show the bug agreed, those are sampled too
        trust.compare(True, True, "k")
    shown_checked = sum(trust.to_check(3, True, text) for text in texts)
    assert 400 / SHOWN_SAMPLE / 2 < shown_checked < 400 / SHOWN_SAMPLE * 2


def test_the_first_disagreement_gives_the_residents_up():
    trust = ResidentTrust(wanted=True)
    assert trust.compare(True, True, "a") is None and trust.in_use
    said = trust.compare(True, False, "b")
    assert "candidate b" in said and not trust.in_use
    assert trust.compare(False, True, "c") is None  # said once
    assert trust.to_json()["checked_in_fresh_processes"] == 3


class _ShowsUnlessFirst:
    """A bug that 'shows' when the script saw earlier jobs' state: only a leaky worker shows it."""

    def shown_by(self, result, text=""):
        return result.exception is not None and result.exception.message != "1"


def test_a_worker_that_leaks_state_is_caught_and_fresh_processes_take_over(tmp_path):
    script = tmp_path / "s.py"
    # builtins keeps its attributes from job to job: a leak JobState does not put back, on purpose.
    leaky = "import builtins, torch\ndevice = 'cuda'\nbuiltins.n = getattr(builtins, 'n', 0) + 1\nraise ValueError(str(builtins.n))\n"
    script.write_text(leaky)
    runs = Runs(Options(script=script, resident="always"), make_progress(quiet=True), leaky)
    try:
        settings = runs.settings(("script",), 60)
        answers = [runs.still_fails(leaky, settings, _ShowsUnlessFirst(), threading.Event()) for _ in range(4)]
    finally:
        runs.close()
    assert answers == [False, False, False, False]  # every answer that showed the bug was a fresh one's
    assert not runs.residents.in_use and runs.residents.to_json()["given_up"]


def test_a_cancelled_job_in_a_resident_worker_may_finish_in_its_grace_before_the_worker_is_killed():
    cancel = threading.Event()
    cancel.set()
    quick, slow = LingeringHandle(resident=True), LingeringHandle(resident=True)
    started = time.monotonic()
    assert supervise(quick, Limits(timeout=5), cancel, answered=lambda: time.monotonic() - started > 0.2) == (False, False, True)
    assert not quick.killed  # it goes on to its next job
    assert supervise(slow, Limits(timeout=5), cancel, answered=lambda: False) == (False, False, True)
    assert slow.killed and time.monotonic() - started < 0.2 + RESIDENT_CANCEL_GRACE_SECONDS * 2 + 0.5
