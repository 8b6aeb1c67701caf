"""Warm workers: a server process that has imported torch once and forks a fresh child per candidate.

Importing torch costs seconds; forking a process that already has it costs milliseconds. Isolation is kept:
the server itself never runs user code and never initializes CUDA (a CUDA context does not survive fork),
so every candidate starts from the same clean, warm state, in its own session and directory.

Protocol, one JSON object per line. Parent -> server: ``{"id", "request", "cwd", "stdout", "stderr", "env"}``.
Server -> parent: ``{"id", "pid"}`` once forked, then ``{"id", "status"}`` (a wait status) when the child ends.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import json
import os
import select
import signal
import sys

# torch.cuda.is_available() / device_count() count devices through NVML when this is set, without starting
# the CUDA runtime (which would leave every later fork unable to use the GPU).
_NVML_CHECK = "PYTORCH_NVML_BASED_CUDA_CHECK"


def _preload() -> None:
    # What every candidate imports, once here (by name: nothing here uses them).
    for name in ("torch", "torch._dynamo", "torch._inductor.config", "minimizer.runner.child", "oracles.harness"):
        importlib.import_module(name)
    try:
        importlib.import_module("triton")
    except ImportError:
        pass
    from oracles.registry import BUILTINS, load_oracle

    for name in BUILTINS:
        try:
            load_oracle(name)
        except Exception:  # an oracle that fails here fails again, with a message, in the child
            pass


def _warm_inductor() -> None:
    """Import Inductor's compiler and hash torch's and Triton's sources (both hashes are cached per process), once
    here instead of in every candidate that compiles: measured on the GPU host, the import alone was over half of
    a small candidate's run (5.5 s; its interpreter compiled Inductor's sources anew each time), and on the VM
    the three cost 1.5 s of 2.5 s. A forked trial goes first: the server follows only if it succeeded and a
    fork can still use CUDA afterwards (only where there is a GPU: elsewhere nothing can spoil a fork). Only where
    the parent asks (``WARM_INDUCTOR_VARIABLE``, for a script that compiles): a script that never compiles keeps
    the modules plain python would give it."""

    from minimizer.runner.prelude import WARM_INDUCTOR_VARIABLE

    if not os.environ.pop(WARM_INDUCTOR_VARIABLE, None):
        return

    def warm() -> int:
        with _output_discarded(), _nvml_based_cuda_check():
            importlib.import_module("torch._inductor.compile_fx")
            for hashed in _source_hashes():
                with contextlib.suppress(Exception):
                    hashed()
        return 0

    try:
        if not _gpu_present() or _exit_status(lambda: warm() or _cuda_usable_in_a_fork()) == 0:
            warm()
    except Exception:  # noqa: BLE001 - candidates import and hash for themselves, as before
        pass


def _source_hashes() -> list:
    """The per-process cached hashes of torch's and Triton's sources that Inductor's caches key on, where this
    release has them (their homes moved between releases)."""

    found = []
    for module, name in (
        ("torch._inductor.codecache", "torch_key"),
        ("torch._inductor.codecache", "triton_key"),
        ("torch._inductor.runtime.triton_compat", "triton_key"),
        ("triton.compiler.compiler", "triton_key"),
    ):
        with contextlib.suppress(Exception):
            found.append(getattr(importlib.import_module(module), name))
    return found


def _settle_cpu_vec_isa() -> None:
    """Let Inductor find out, once, which CPU vector instructions work, so that forked candidates don't
    (``vec_isa.settle_vec_isa``; 2 s per candidate that compiles for the CPU on torch 2.13, 4 s on 2.5.1, 30 s
    on the GPU machine's host). The parent asks for this only where the script does not set ``vec_isa_ok``
    (``SETTLE_VEC_ISA_VARIABLE``), on a GPU host only for a script that does not mention CUDA
    (``settle_vec_isa_value``; for one that does, a candidate that asks gets the host's recorded answers,
    ``vec_isa.replay_when_asked``). It runs with torch's NVML-based CUDA check: with the runtime check the probe
    left a GPU host's server unable to fork candidates that use CUDA."""

    from minimizer.runner.prelude import SETTLE_VEC_ISA_VARIABLE, SETTLE_WITHOUT_GPU

    where = os.environ.pop(SETTLE_VEC_ISA_VARIABLE, None)
    if not where:
        return
    from minimizer.runner.vec_isa import replay_when_asked, settle_vec_isa

    if where == SETTLE_WITHOUT_GPU and _gpu_present():
        replay_when_asked()
        return
    with _nvml_based_cuda_check():
        settle_vec_isa()


def _spares_asked() -> bool:
    from minimizer.runner.prelude import PREINIT_CUDA_VARIABLE

    return bool(os.environ.pop(PREINIT_CUDA_VARIABLE, None))


@functools.cache  # asked by the warm-up and by the probe's settle, once per server
def _gpu_present() -> bool:
    import torch

    with _nvml_based_cuda_check():
        return torch.cuda.is_available()


def _preimport_script_modules() -> list[str]:
    """Import the script's installed libraries (``PREIMPORT_VARIABLE``, set from its top-level imports) once,
    so that candidates fork with them loaded. A library may ask at import whether CUDA is there (liger-kernel
    does); torch's runtime check would then make every fork unable to use the GPU, so the imports run with
    torch's NVML-based check, which leaves the runtime alone. A forked trial imports them first and forks
    once more: the server follows only if that grandchild can still use CUDA (or there is none) and the
    imports succeeded. Their output goes nowhere (stdout is our protocol channel)."""

    from minimizer.runner.prelude import PREIMPORT_VARIABLE

    names = [n for n in os.environ.pop(PREIMPORT_VARIABLE, "").split(",") if n]
    if not names:
        return []
    if _exit_status(lambda: _import_then(names, _cuda_usable_in_a_fork)) != 0:
        return []
    _quietly_import(names)
    return names


def _exit_status(body) -> int:
    """Run ``body`` (returning an exit code) in a forked child; its exit code, or -1 if it did not exit."""

    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = body()
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def _import_then(names: list[str], check) -> int:
    _quietly_import(names)
    return check()


def _cuda_usable_in_a_fork() -> int:
    def use_cuda() -> int:
        import torch

        if not torch.cuda.is_available():
            return 0
        return 0 if (torch.ones(1, device="cuda") + 1).item() == 2 else 3

    return _exit_status(use_cuda)


def _quietly_import(names: list[str]) -> None:
    with _output_discarded(), _nvml_based_cuda_check():
        for name in names:
            try:
                importlib.import_module(name)
            except BaseException:  # noqa: BLE001 - the candidate imports it again and shows what goes wrong
                pass


@contextlib.contextmanager
def _nvml_based_cuda_check():
    """torch's CUDA checks meanwhile ask NVML, which leaves the CUDA runtime (and so later forks) alone."""

    nvml_check = os.environ.get(_NVML_CHECK)
    os.environ[_NVML_CHECK] = "1"
    try:
        yield
    finally:
        if nvml_check is None:
            os.environ.pop(_NVML_CHECK)
        else:
            os.environ[_NVML_CHECK] = nvml_check


@contextlib.contextmanager
def _output_discarded():
    """Standard output (ours and our children's) goes nowhere meanwhile: it is the protocol channel."""

    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _fork_candidate(job: dict, spares: _Spares) -> int:
    pid = _fork_child(spares)
    if pid:
        return pid
    try:
        _enter_job(job)
    finally:
        os._exit(1)
    return 0  # unreachable


def _fork_child(spares: _Spares) -> int:
    """Fork a process that will run one candidate: in the child, its own session and default signals."""

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        spares.forget_in_child()
        for number in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)
        os.setsid()
    return pid


def _enter_job(job: dict, env_applied: bool = False) -> None:
    os.chdir(job["cwd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(os.open(job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    if not env_applied:
        os.environ.update(job["env"])
    from minimizer.runner.child import main

    main(job["request"])


class _Spares:
    """Candidates' processes forked ahead of their jobs, each with CUDA already started, one waiting per
    candidate that runs at once (per job environment: a job's ``CUDA_VISIBLE_DEVICES`` is part of it).

    Starting CUDA costs a candidate 0.2-0.4 s alone on an H100 host and about 1 s when eight start at once
    (``bench/cuda_context.py``); a spare pays it while the earlier candidates run. Only where the parent asks
    (``PREINIT_CUDA_VARIABLE``: the script uses CUDA and nothing after its imports changes the environment or
    forks, see ``minimizer.runner.prelude.may_start_cuda_ahead``), so the script computes what it would have:
    starting CUDA reads the environment the job gives, as the script's first CUDA call would. On a host
    without a GPU the spares are forked ahead all the same (nothing to start), which keeps this path tested.
    """

    MOST_WAITING = 8  # per job environment

    def __init__(self, enabled: bool, start_cuda: bool) -> None:
        self.enabled = enabled
        self.start_cuda = start_cuda
        self._waiting: dict[frozenset, list[tuple[int, int]]] = {}  # job env -> (pid, write end of its pipe)
        self._running: dict[frozenset, set[int]] = {}
        self._peak: dict[frozenset, int] = {}
        self._env: dict[frozenset, dict[str, str]] = {}

    def hand_over(self, job: dict) -> int | None:
        """Give ``job`` to a spare forked for its environment; the spare's pid, or ``None`` if none waits."""

        if not self.enabled:
            return None
        key = frozenset(job["env"].items())
        waiting = self._waiting.get(key, [])
        while waiting:
            pid, write_end = waiting.pop(0)
            try:
                os.write(write_end, (json.dumps(job) + "\n").encode())
            except OSError:  # it died waiting (reaped below as no job's)
                continue
            finally:
                os.close(write_end)
            return pid
        return None

    def started(self, job: dict, pid: int) -> None:
        """``job`` runs as ``pid``: keep as many spares for its environment as candidates of it run at once."""

        if not self.enabled:
            return
        key = frozenset(job["env"].items())
        running = self._running.setdefault(key, set())
        running.add(pid)
        self._peak[key] = min(self.MOST_WAITING, max(self._peak.get(key, 0), len(running)))
        self._env[key] = job["env"]

    def replenish_one(self) -> bool:
        """Fork one spare where fewer wait than are wanted; whether one was forked. One at a time, between
        reading jobs: a fork of the server takes tenths of a second, which a job that came meanwhile must not
        wait for (it is forked for at once instead)."""

        for key, wanted in self._peak.items():
            if self.enabled and len(self._waiting.get(key, [])) < wanted:
                self._fork_spare(key, self._env[key])
                return True
        return False

    def ended(self, pid: int) -> None:
        for running in self._running.values():
            running.discard(pid)
        for waiting in self._waiting.values():
            for entry in [entry for entry in waiting if entry[0] == pid]:  # a spare that died waiting
                waiting.remove(entry)
                with contextlib.suppress(OSError):
                    os.close(entry[1])

    def kill_all(self) -> None:
        for waiting in self._waiting.values():
            for pid, write_end in waiting:
                with contextlib.suppress(OSError):
                    os.close(write_end)
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
        self._waiting = {}

    def forget_in_child(self) -> None:
        """In a forked child: the other spares' pipes are not ours (holding them would keep them from seeing
        the server go)."""

        for waiting in self._waiting.values():
            for _pid, write_end in waiting:
                with contextlib.suppress(OSError):
                    os.close(write_end)
        self._waiting = {}
        self.enabled = False

    def _fork_spare(self, key: frozenset, env: dict[str, str]) -> None:
        read_end, write_end = os.pipe()
        server = os.getpid()
        pid = _fork_child(self)
        if pid:
            os.close(read_end)
            self._waiting.setdefault(key, []).append((pid, write_end))
            return
        try:
            os.close(write_end)
            # The protocol's pipes are the server's: a spare holding them would keep the parent from seeing the
            # server's end.
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.environ.update(env)
            if self.start_cuda:
                _start_cuda()
            job = _await_job(read_end, server)
            if job is not None:
                from minimizer.runner import child

                child.FORKED_AHEAD = True
                _enter_job(job, env_applied=True)
        finally:
            os._exit(1)


def _start_cuda() -> None:
    """Create the CUDA context now, without allocating (the script's memory statistics stay its own)."""

    from minimizer.runner import child

    try:
        import torch

        torch.cuda.init()
        torch.cuda.synchronize()
        child.CUDA_STARTED_AHEAD = True
    except Exception:  # noqa: BLE001 - the script's own first CUDA call meets the same trouble and shows it
        pass


def _await_job(read_end: int, server: int) -> dict | None:
    """The job the server hands this spare; ``None`` once the server is gone."""

    buffer = b""
    while b"\n" not in buffer:
        readable, _, _ = select.select([read_end], [], [], 1.0)
        if os.getppid() != server:
            return None
        if readable:
            chunk = os.read(read_end, 65536)
            if not chunk:
                return None
            buffer += chunk
    os.close(read_end)
    return json.loads(buffer.split(b"\n", 1)[0])


def _kill_candidates_and_exit(jobs_by_pid: dict[int, int], spares: _Spares) -> None:
    """Each candidate leads its own session: kill each session whole (compile workers included), then go."""

    spares.kill_all()
    for pid in list(jobs_by_pid):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(0)


def serve() -> None:
    """Read jobs from stdin, fork one child each, report pids and exit statuses on stdout."""

    from minimizer.runner.bytecode import own_bytecode
    from minimizer.runner.prelude import apply_sys_path

    jobs_by_pid: dict[int, int] = {}
    spares = _Spares(enabled=False, start_cuda=False)
    # Asked to stop, or the reducer gone (even killed by SIGKILL: we are then reparented), the candidates go
    # too. Closing our stdin is the gentle stop: running candidates finish first.
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda _n, _f: _kill_candidates_and_exit(jobs_by_pid, spares))
    parent = os.getppid()
    apply_sys_path()  # the script's prelude, before torch is imported
    with own_bytecode():  # candidates fork after it: they get the interpreter's own settings
        _preload()
        _warm_inductor()
        _settle_cpu_vec_isa()
        _preimport_script_modules()
    spares.enabled = _spares_asked()
    spares.start_cuda = spares.enabled and _gpu_present()
    # What the server built stays out of the candidates' collections: a collection that walks the inherited
    # objects writes to each one's header, copying every page of them into the candidate (and eight candidates
    # at once copy in each other's way). The script's own objects are collected as under plain python.
    gc.collect()
    gc.freeze()
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    buffer = b""
    stdin_fd = sys.stdin.fileno()
    open_input = True
    while open_input or jobs_by_pid:
        if os.getppid() != parent:
            _kill_candidates_and_exit(jobs_by_pid, spares)
        if open_input:
            readable, _, _ = select.select([stdin_fd], [], [], 0.01)
            if not readable and spares.replenish_one():
                continue  # a job may have come meanwhile
        else:
            readable = []
            select.select([], [], [], 0.01)
        if readable:
            chunk = os.read(stdin_fd, 65536)
            if not chunk:
                open_input = False
                spares.kill_all()
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                job = json.loads(line)
                pid = spares.hand_over(job) or _fork_candidate(job, spares)
                jobs_by_pid[pid] = job["id"]
                out.write(json.dumps({"id": job["id"], "pid": pid}) + "\n")
                out.flush()
                if open_input:
                    spares.started(job, pid)
        while jobs_by_pid:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            spares.ended(pid)
            job_id = jobs_by_pid.pop(pid, None)
            if job_id is not None:
                out.write(json.dumps({"id": job_id, "status": status}) + "\n")
                out.flush()


if __name__ == "__main__":
    serve()
