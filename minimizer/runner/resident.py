"""Resident workers: one process with CUDA started runs candidate after candidate, each in a clean state.

A forked candidate pays for its CUDA context: 0.2-0.4 s alone on an H100 host, about 1 s when eight start at
once (the driver creates contexts one after another). A resident worker is forked ahead like a spare
(``candidate_process.Spares``), starts CUDA once, then runs each job it is handed in its own process the way a
fresh candidate would: the job's folder, output files and environment; the seeds fixed; and afterwards
everything a script can leave behind that we know of put back (``JobState``): environment, working folder,
``sys.path`` and ``sys.argv``, the modules imported from the run folder, Dynamo's caches, the compiler configs,
torch's global switches, the CUDA allocator's statistics and the process's peak-memory mark.

That is isolation by care, not by construction, so it is only used where a script cannot easily reach past it
(``may_run_resident``) and it is checked: the parent re-runs in a fresh process every answer that would change
the reduction and a sample of the others (``minimizer.runs``), and goes back to fresh processes for good at the
first disagreement. A worker whose CUDA context broke, or that ran ``MOST_JOBS``, leaves after its answer.
"""

from __future__ import annotations

import contextlib
import gc
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any, Iterator

MOST_JOBS = 64  # a worker's jobs before it leaves: what leaks past JobState stays bounded

# What makes a script change state a later job would see and JobState does not put back: registering
# operators, backends or lowerings (a second registration of the same name fails), patching imported modules,
# handlers and threads that outlive the script, loading native libraries. (Changing the environment or forking
# already keeps a script from spares, see ``prelude.may_start_cuda_ahead``.) Mentioned anywhere in the script or
# a module beside it: fresh processes only.
_LEAKY = re.compile(
    r"torch\.library|custom_op|triton_op|register_(backend|lowering|fake|kernel|autograd|decomposition|meta)"
    r"|load_library|load_inline|cpp_extension|atexit|signal\.|threading|Thread\(|sys\.modules|setattr\("
    # Assigning into an imported module, but the configs and switches JobState puts back.
    r"|^\s*(torch|F|nn|np|numpy|math|triton)\.(?!(_inductor|_dynamo|_functorch)\.config\.|backends\.)[\w.]+\s*=[^=]",
    re.MULTILINE,
)


def may_run_resident(texts: list[str]) -> bool:
    """Whether jobs of a script made of ``texts`` (the script and the modules it imports from beside it) may
    run one after another in one resident worker."""

    return not any(_LEAKY.search(text) for text in texts)


@dataclass
class JobState:
    """What a job may change in the worker's process and the worker puts back after it."""

    environ: dict[str, str]
    cwd: str
    path: list[str]
    argv: list[str]
    modules: set[str]
    torch_switches: dict[str, Any] = field(default_factory=dict)
    configs: dict[str, dict] = field(default_factory=dict)

    @classmethod
    def taken(cls) -> JobState:
        import torch

        return cls(
            environ=dict(os.environ),
            cwd=os.getcwd(),
            path=list(sys.path),
            argv=list(sys.argv),
            modules=set(sys.modules),
            torch_switches={name: read() for name, (read, _write) in _switches(torch).items()},
            configs={name: module.get_config_copy() for name, module in _configs().items()},
        )

    def restore(self, run_folder: str) -> None:
        import torch

        torch._dynamo.reset()
        for name, module in _configs().items():
            module.load_config(self.configs[name])
        for name, (_read, write) in _switches(torch).items():
            with contextlib.suppress(Exception):
                write(self.torch_switches[name])
        _forget_modules_of(run_folder, sys.modules.keys() - self.modules)
        sys.path[:] = self.path
        sys.argv[:] = self.argv
        os.chdir(self.cwd)
        os.environ.clear()
        os.environ.update(self.environ)
        gc.collect()


def _switches(torch: Any) -> dict[str, tuple]:
    """torch's process-wide switches a script may flip: name -> (read, write)."""

    backends = torch.backends

    def attribute(owner: Any, name: str) -> tuple:
        return (lambda: getattr(owner, name), lambda value: setattr(owner, name, value))

    return {
        "grad": (torch.is_grad_enabled, torch.set_grad_enabled),
        "default_dtype": (torch.get_default_dtype, torch.set_default_dtype),
        "default_device": (torch.get_default_device, torch.set_default_device),
        "deterministic": (
            lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()),
            lambda both: torch.use_deterministic_algorithms(both[0], warn_only=both[1]),
        ),
        "matmul_precision": (torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
        "anomaly": (torch.is_anomaly_enabled, torch.set_anomaly_enabled),
        "threads": (torch.get_num_threads, torch.set_num_threads),
        "cuda_matmul_tf32": attribute(backends.cuda.matmul, "allow_tf32"),
        "cuda_fp16_reduction": attribute(backends.cuda.matmul, "allow_fp16_reduced_precision_reduction"),
        "cuda_bf16_reduction": attribute(backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"),
        "cudnn_tf32": attribute(backends.cudnn, "allow_tf32"),
        "cudnn_deterministic": attribute(backends.cudnn, "deterministic"),
        "cudnn_benchmark": attribute(backends.cudnn, "benchmark"),
        "cudnn_enabled": attribute(backends.cudnn, "enabled"),
    }


def _configs() -> dict[str, Any]:
    import torch._dynamo.config
    import torch._functorch.config
    import torch._inductor.config

    return {"dynamo": torch._dynamo.config, "inductor": torch._inductor.config, "functorch": torch._functorch.config}


def _forget_modules_of(run_folder: str, names: set[str]) -> None:
    """Drop the modules the job imported from its run folder (the script's own modules beside it): the next
    job's folder has its own. Libraries it imported stay, as a warm server's preimports do."""

    # As imported: the run folder links the files beside the script, so a resolved path leads out of it.
    inside = tuple({os.path.abspath(run_folder) + os.sep, os.path.realpath(run_folder) + os.sep})
    for name in names:
        module = sys.modules.get(name)
        places = [getattr(module, "__file__", None) or "", *(getattr(module, "__path__", None) or [])]
        if any(os.path.abspath(place).startswith(inside) for place in places if place):
            sys.modules.pop(name, None)


def cuda_healthy() -> bool:
    """Whether this process's CUDA context (if any) still works: after a device-side assert or an illegal
    address every later CUDA call fails, so the worker must leave. Frees the allocator's cache and clears its
    peak statistics for the next job."""

    import torch

    if not torch.cuda.is_initialized():
        return True
    try:
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
        return True
    except Exception:  # noqa: BLE001 - any failure here means the context is gone
        return False


def reset_peak_memory_mark() -> None:
    """Start the process's peak resident memory (``VmHWM``, reported as a run's ``peak_mb``) anew."""

    with contextlib.suppress(OSError), open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")


@contextlib.contextmanager
def job_output(stdout: str, stderr: str) -> Iterator[None]:
    """The job's output files on descriptors 1 and 2 meanwhile; nowhere afterwards (a thread the script left
    must not write into the next job's files)."""

    for descriptor, path in ((1, stdout), (2, stderr)):
        opened = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(opened, descriptor)
        os.close(opened)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.close(devnull)


def serve_jobs(next_job: Any, done: int) -> None:
    """The worker's loop: run each job ``next_job()`` hands over (``None``: the server is gone) and write one
    byte to ``done`` after its answer; leave after ``MOST_JOBS`` or once CUDA broke."""

    from minimizer.runner import child

    child.HOLD_ANSWER = True
    for count in range(MOST_JOBS):
        job = next_job()
        if job is None:
            return
        child.RESIDENT_JOBS_BEFORE = count
        stays = run_job(job) and count + 1 < MOST_JOBS
        # Done, then the answer: the server knows this worker is free before the parent can send another job.
        os.write(done, b"d" if stays else b"x")
        child.deliver_held_answer()
        if not stays:
            return


def run_job(job: dict) -> bool:
    """Run one job in this process and put its state back; whether the worker may take another."""

    from minimizer.runner import child

    state = JobState.taken()
    reset_peak_memory_mark()
    try:
        with job_output(job["stdout"], job["stderr"]):
            os.chdir(job["cwd"])
            os.environ.update(job["env"])
            child.answer(job["request"])
    except BaseException:  # noqa: BLE001 - the job went wrong in a way the child did not catch: leave
        return False
    finally:
        with contextlib.suppress(Exception):
            child.forget_job()
        state.restore(job["cwd"])
    return cuda_healthy()
