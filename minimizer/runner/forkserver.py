"""Warm workers: a server process that has imported torch once and forks a fresh child per candidate.

Importing torch costs seconds; forking a process that already has it costs milliseconds. Isolation is kept:
the server itself never runs user code and never initializes CUDA (a CUDA context does not survive fork),
so every candidate starts from the same clean, warm state, in its own session and directory.

Protocol, one JSON object per line. Parent -> server: ``{"id", "request", "cwd", "stdout", "stderr", "env",
"fresh"}`` (``fresh``: a process of its own, never a resident worker).
Server -> parent: ``{"id", "pid", "resident"}`` once forked or handed over, then ``{"id", "status"}`` (a wait
status) when the child ends, or ``{"id", "done"}`` when a resident worker (which goes on) is done with the job.
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
from typing import TextIO

from minimizer.runner.candidate_process import Spares, fork_candidate

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


def _residents_asked() -> bool:
    from minimizer.runner.prelude import RESIDENT_VARIABLE

    return bool(os.environ.pop(RESIDENT_VARIABLE, None))


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


def _kill_candidates_and_exit(jobs_by_pid: dict[int, int], spares: Spares) -> None:
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

    jobs_by_pid: dict[int, int] = {}
    spares = Spares(enabled=False, start_cuda=False)
    # Asked to stop, or the reducer gone (even killed by SIGKILL: we are then reparented), the candidates go
    # too. Closing our stdin is the gentle stop: running candidates finish first.
    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, lambda _n, _f: _kill_candidates_and_exit(jobs_by_pid, spares))
    parent = os.getppid()
    _warm_up(spares)
    out = sys.stdout
    out.write(json.dumps({"ready": True}) + "\n")
    out.flush()
    buffer = b""
    stdin_fd = sys.stdin.fileno()
    open_input = True
    while open_input or jobs_by_pid:
        if os.getppid() != parent:
            _kill_candidates_and_exit(jobs_by_pid, spares)
        done_pipes = spares.done_pipes()
        readable, _, _ = select.select([stdin_fd] * open_input + list(done_pipes), [], [], 0.01)
        for pipe in set(readable) & done_pipes.keys():
            _report_done(done_pipes[pipe], jobs_by_pid, spares, out)
        if open_input and not readable and spares.replenish_one():
            continue  # a job may have come meanwhile
        if stdin_fd in readable:
            chunk = os.read(stdin_fd, 65536)
            if not chunk:
                open_input = False
                spares.kill_all()
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                _start_job(json.loads(line), jobs_by_pid, spares, out, handing_over=open_input)
        _report_ended(jobs_by_pid, spares, out)


def _warm_up(spares: Spares) -> None:
    """Everything the candidates would otherwise each do first, done once before they fork."""

    from minimizer.runner.bytecode import own_bytecode
    from minimizer.runner.prelude import apply_sys_path

    apply_sys_path()  # the script's prelude, before torch is imported
    with own_bytecode():  # candidates fork after it: they get the interpreter's own settings
        _preload()
        _warm_inductor()
        _settle_cpu_vec_isa()
        _preimport_script_modules()
    spares.enabled = _spares_asked()
    spares.start_cuda = spares.enabled and _gpu_present()
    spares.resident = spares.enabled and _residents_asked()
    # What the server built stays out of the candidates' collections: a collection that walks the inherited
    # objects writes to each one's header, copying every page of them into the candidate (and eight candidates
    # at once copy in each other's way). The script's own objects are collected as under plain python.
    gc.collect()
    gc.freeze()


def _start_job(job: dict, jobs_by_pid: dict[int, int], spares: Spares, out: TextIO, *, handing_over: bool) -> None:
    pid = spares.hand_over(job) or fork_candidate(job, spares)
    jobs_by_pid[pid] = job["id"]
    out.write(json.dumps({"id": job["id"], "pid": pid, "resident": spares.is_resident(pid)}) + "\n")
    out.flush()
    if handing_over:
        spares.started(job, pid)


def _report_done(pid: int, jobs_by_pid: dict[int, int], spares: Spares, out: TextIO) -> None:
    """A resident worker's job is done (its process goes on, its answer follows at once); one that died is
    reported when reaped."""

    if spares.job_done(pid):
        job_id = jobs_by_pid.pop(pid, None)
        if job_id is not None:
            out.write(json.dumps({"id": job_id, "done": True}) + "\n")
            out.flush()


def _report_ended(jobs_by_pid: dict[int, int], spares: Spares, out: TextIO) -> None:
    """Reap the candidates that ended and say so, without waiting for any."""

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
