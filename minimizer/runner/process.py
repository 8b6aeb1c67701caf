"""Run one candidate in its own process and temporary directory, under a wall-time and a memory limit."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol

from minimizer.runner.child import STACKS_SIGNAL
from minimizer.runner.gpus import NO_GPUS, GpuPool
from minimizer.runner.run_folder import job_env, prepare_run_folder
from minimizer.runner.run_types import CompileCacheStats, Limits, RunResult, RunSettings
from oracles.api import ExceptionInfo, Verdict


_TAIL_CHARS = 4000
# The environment the user started us with, for runs that must see exactly it (minimizer.runner.plain).
USER_ENV = dict(os.environ)
# Every running candidate has a thread in the parent that wakes this often (to see a cancellation; a forked
# candidate's end wakes it at once): at -j 8 the wake-ups and /proc reads were a tenth of the parent's CPU.
_POLL_SECONDS = 0.05
_MEMORY_CHECK_SECONDS = 0.25
_STACKS_WAIT_SECONDS = 1.0
# A cancelled run in a resident worker may finish this long before the worker is killed (see _wait).
RESIDENT_CANCEL_GRACE_SECONDS = 0.5

# Candidates run in their own sessions, so a Ctrl-C at the terminal does not reach them: we kill them.
_LIVE: set[Handle] = set()
_LIVE_LOCK = threading.Lock()


# Set once the run is stopping: a candidate whose launch was already under way (its warm server still starting,
# say) is killed as soon as it is supervised, instead of holding its thread until its time limit.
_STOPPING = threading.Event()


def kill_all_candidates() -> None:
    """Kill every candidate process still running, and any launched from now on (on Ctrl-C, a time limit, or a
    crash of the reducer), until ``allow_candidates``."""

    _STOPPING.set()
    with _LIVE_LOCK:
        live = list(_LIVE)
    for handle in live:
        handle.kill()


def allow_candidates() -> None:
    """A new run in this process may launch candidates again (after an earlier one was stopped)."""

    _STOPPING.clear()


def run_candidate(
    source: str,
    settings: RunSettings,
    *,
    launcher: Launcher | None = None,
    cancel: threading.Event | None = None,
    gpus: GpuPool = NO_GPUS,
) -> RunResult:
    """Write ``source`` into a fresh temporary directory and run it there in a new process.

    The process gets its own session (so a hang is killed with all its children), the limits of
    ``settings.limits``, and fixed seeds. ``launcher`` starts the process: a fresh interpreter by default, or a
    fork of a warm server (``ForkServerLauncher``). ``gpus`` lends the candidate the least busy GPU while it
    runs. Setting ``cancel`` kills the candidate (``cancelled`` is then set on the result). Never raises for
    anything the candidate does.
    """

    with tempfile.TemporaryDirectory(prefix="minimizer-") as workdir:
        work = Path(workdir)
        script, own, base_env, set_by_script = prepare_run_folder(source, settings, work)
        (own / "request.json").write_text(json.dumps(_request(script, own, settings)))
        started = time.monotonic()
        with gpus.lease() as gpu_env:
            handle = (launcher or SUBPROCESS).launch(
                Job(
                    request=str(own / "request.json"),
                    cwd=str(work),
                    stdout=str(own / "stdout"),
                    stderr=str(own / "stderr"),
                    env={k: v for k, v in {**gpu_env, **job_env(settings)}.items() if k not in set_by_script},
                    base_env=base_env,
                    fresh=settings.fresh,
                )
            )
            result_file = own / "result.json"
            timed_out, memory_exceeded, cancelled = supervise(
                handle,
                settings.limits,
                cancel,
                before_timeout_kill=lambda: _dump_stacks(handle, own / "stacks"),
                answered=result_file.exists,
            )
        if isinstance(handle, _PopenHandle):
            handle.proc.wait()  # killed with its group once it answered: reap it (a fork server reaps its own)
        # A candidate lost with the warm server has no answer, like a cancelled one.
        cancelled = cancelled or getattr(handle, "lost", False)
        return _result(own, handle, time.monotonic() - started, timed_out, memory_exceeded, cancelled)


def _result(own: Path, handle: Handle, seconds: float, timed_out: bool, memory_exceeded: bool, cancelled: bool) -> RunResult:
    """What a candidate's run shows, read from its folder ``own`` once its process ended."""

    result_file = own / "result.json"
    stopped = timed_out or memory_exceeded or cancelled
    answered = result_file.exists() and not stopped
    # A process that wrote its result ended well, whatever the kill of its group that followed reads as.
    returncode = 0 if answered else handle.returncode
    result = RunResult(
        seconds=seconds,
        returncode=returncode,
        signal=None if stopped else _signal_name(returncode),
        timed_out=timed_out,
        memory_exceeded=memory_exceeded,
        cancelled=cancelled,
        stdout_tail=_tail(own / "stdout"),
        stderr_tail=_tail(own / "stderr"),
        phase=_tail(own / "phase") if timed_out else "",
        stacks=_head(own / "stacks") if timed_out else "",
    )
    if answered:
        _read_answer(json.loads(result_file.read_text()), result)
    return result


def _request(script: Path, own: Path, settings: RunSettings) -> dict:
    """What the candidate's process is asked to do (``runner.child`` reads it), and where it answers."""

    return {
        "script": str(script),
        "origin_dir": settings.origin_dir,
        "oracles": list(settings.oracles),
        "seed": settings.seed,
        "eager_precheck": settings.eager_precheck,
        "shared_verdicts": str(Path(settings.compile_cache) / "verdicts")
        if settings.share_verdicts and settings.compile_cache
        else None,
        "result": str(own / "result.json"),
        "phase": str(own / "phase"),
        "stacks": str(own / "stacks"),
        "only_compile": settings.only_compile,
    }


def _read_answer(data: dict, result: RunResult) -> None:
    """Fill ``result`` from the answer the candidate's process wrote (``runner.child``)."""

    result.exception = ExceptionInfo.from_json(data["exception"])
    result.used_compile = data["used_compile"]
    result.compiled_calls = data.get("compiled_calls", 0)
    result.compiled_targets = list(data.get("compiled_targets", []))
    result.compiled_outputs = list(data.get("compiled_outputs", []))
    result.operators_captured = data.get("operators_captured")
    result.verdicts = {k: Verdict.from_json(v) for k, v in data["verdicts"].items()}
    result.device = data.get("device", "")
    result.torch_version = data.get("torch_version", "")
    result.phase_seconds = dict(data.get("phase_seconds") or {})
    result.peak_mb = data.get("peak_mb")
    result.forked_ahead = bool(data.get("forked_ahead"))
    result.cuda_started_ahead = bool(data.get("cuda_started_ahead"))
    result.resident_jobs_before = data.get("resident_jobs_before")
    result.compile_cache = CompileCacheStats(**data.get("compile_cache", {}))
    fingerprint = data.get("fingerprint") or {}
    result.fingerprint = fingerprint.get("key")
    result.fingerprint_why_not = fingerprint.get("why_not")
    result.shared_verdict = bool(fingerprint.get("shared"))
    result.tracing_seconds = float(fingerprint.get("tracing_seconds") or 0.0)


class Handle(Protocol):
    pid: int
    resident: bool  # the process is a resident worker: it goes on after its answer (runner.resident)

    @property
    def returncode(self) -> int | None: ...

    def poll(self) -> int | None: ...

    def wait_briefly(self, seconds: float) -> None:
        """Return after ``seconds``, or sooner once the candidate has ended."""

    def kill(self) -> None: ...


@dataclass(frozen=True)
class Job:
    """A candidate's process to start: its request file, run folder and output files; the environment its
    process starts from (``base_env``) and what the job adds (``env``); ``fresh``: a process of its own, never
    a resident worker."""

    request: str
    cwd: str
    stdout: str
    stderr: str
    env: dict[str, str]
    base_env: dict[str, str]
    fresh: bool = False


class Launcher(Protocol):
    def launch(self, job: Job) -> Handle: ...


class _PopenHandle:
    resident = False

    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self.pid = proc.pid

    @property
    def returncode(self) -> int | None:
        return self.proc.returncode

    def poll(self) -> int | None:
        return self.proc.poll()

    def wait_briefly(self, seconds: float) -> None:
        time.sleep(seconds)  # Popen.wait(timeout) would poll in a loop of its own

    def kill(self) -> None:
        kill_process_group(self.pid)
        self.proc.wait()


class SubprocessLauncher:
    """A fresh interpreter per candidate: slow (imports torch every time) but needs nothing running.

    ``module`` is the entry point run with ``python -m`` and the request file.
    """

    def __init__(self, module: str = "minimizer.runner.child"):
        self.module = module

    def launch(self, job: Job) -> Handle:
        with open(job.stdout, "wb") as out, open(job.stderr, "wb") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", self.module, job.request],
                cwd=job.cwd,
                stdout=out,
                stderr=err,
                stdin=subprocess.DEVNULL,
                env={**job.base_env, **job.env},
                start_new_session=True,
            )
        return _PopenHandle(proc)


SUBPROCESS = SubprocessLauncher()


def kill_process_group(pid: int) -> None:
    """SIGKILL the session a candidate leads (its compile workers too); the process alone if it has none yet."""

    if pid <= 0:  # killpg(0) would be our own group
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def supervise(
    handle: Handle,
    limits: Limits,
    cancel: threading.Event | None = None,
    *,
    before_timeout_kill: Callable[[], None] = lambda: None,
    answered: Callable[[], bool] = lambda: False,
) -> tuple[bool, bool, bool]:
    """Wait for a launched process under ``limits`` (killable by ``kill_all_candidates`` meanwhile); returns
    (timed out, memory exceeded, cancelled). ``before_timeout_kill`` runs when the time limit is reached, before
    the kill. Once ``answered`` says the process wrote its result, its exit is not waited for (it is killed with
    its group): tearing down a CUDA context takes a candidate tenths of a second, more when several exit at once."""

    with _LIVE_LOCK:
        _LIVE.add(handle)
    try:
        if _STOPPING.is_set():
            handle.kill()
            return False, False, True
        return _wait(handle, limits, cancel, before_timeout_kill, answered)
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(handle)


def _wait(
    handle: Handle,
    limits: Limits,
    cancel: threading.Event | None,
    before_timeout_kill: Callable[[], None],
    answered: Callable[[], bool],
) -> tuple[bool, bool, bool]:
    deadline = time.monotonic() + limits.timeout
    next_memory_check = 0.0
    cancelled_at = None
    while handle.poll() is None and not answered():
        now = time.monotonic()
        if now > deadline:
            before_timeout_kill()
            handle.kill()
            return True, False, False
        if now >= next_memory_check:
            next_memory_check = now + _MEMORY_CHECK_SECONDS
            if _rss_mb(handle.pid) > limits.memory_mb:
                handle.kill()
                return False, True, False
        if cancel is not None and cancel.is_set():
            cancelled_at = cancelled_at or now
            # A resident worker killed must be replaced, CUDA started anew; most of its jobs end sooner than that.
            if not handle.resident or now - cancelled_at > RESIDENT_CANCEL_GRACE_SECONDS:
                handle.kill()
                return False, False, True
        handle.wait_briefly(_POLL_SECONDS)
    if cancelled_at is not None:
        return False, False, True  # answered in its grace: the answer is not wanted
    # The child's own children (compile workers) must not outlive it. Only the group: the pid itself may be gone
    # and belong to someone else (a group id is not reused while any process of the group lives). A resident
    # worker goes on to its next job.
    if handle.pid > 0 and not handle.resident:
        try:
            os.killpg(handle.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    return False, False, False


def _dump_stacks(handle: Handle, path: Path) -> None:
    """Ask a candidate at its time limit to write its threads' stacks to ``path``; wait a moment for them."""

    if handle.pid <= 0:
        return
    try:
        os.kill(handle.pid, STACKS_SIGNAL)
    except (ProcessLookupError, PermissionError):
        return
    waited_until = time.monotonic() + _STACKS_WAIT_SECONDS
    size = -1
    while time.monotonic() < waited_until and handle.poll() is None:
        handle.wait_briefly(0.1)
        now_size = path.stat().st_size if path.exists() else 0
        if now_size and now_size == size:  # written, and no longer growing
            return
        size = now_size


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _head(path: Path, chars: int = _TAIL_CHARS) -> str:
    try:
        with open(path, "rb") as f:
            return f.read(chars).decode("utf-8", "replace")
    except OSError:
        return ""


def _tail(path: Path, chars: int = _TAIL_CHARS) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(max(0, f.seek(0, os.SEEK_END) - chars))
            data = f.read()
    except OSError:
        return ""
    return data.decode("utf-8", errors="replace")
