"""Entry point of a candidate's process: ``python -m minimizer.runner.child REQUEST.json``.

Runs the candidate script once (twice when an oracle needs an eager re-run) under the oracles' harness,
evaluates every requested oracle on the recording, and writes the verdicts as JSON. This is the only place
that executes user code; the reducer sees nothing but the JSON.
"""

from __future__ import annotations

import dataclasses
import json
import os
import random
import runpy
import signal
import sys
import time
from pathlib import Path
from typing import Any

# Sent by the parent to a candidate about to be killed at its time limit: the candidate writes every thread's
# stack, so the report can say where it was stuck. A real-time signal: scripts don't handle those.
STACKS_SIGNAL = signal.SIGRTMIN + 3
# Set by the warm server in a candidate's process forked ahead of its job, and where it started CUDA then
# (minimizer.runner.candidate_process.Spares).
FORKED_AHEAD = False
CUDA_STARTED_AHEAD = False
# Set by a resident worker (minimizer.runner.resident): the jobs it ran before this one; None in a process of
# one candidate.
RESIDENT_JOBS_BEFORE: int | None = None
# The harness installed for the job under way, so that a resident worker can take it out afterwards.
_HARNESS: Any = None
# A resident worker holds each answer back until it is ready for the next job (``deliver_held_answer``): the
# parent hands out the next job as soon as it reads an answer.
HOLD_ANSWER = False
_HELD: tuple[Path, Path] | None = None


def fix_seeds(seed: int) -> None:
    """Seed Python, NumPy (when installed) and torch so every candidate draws the same numbers."""

    random.seed(seed)
    try:
        import numpy

        numpy.random.seed(seed)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


def run_script(path: str, seed: int) -> BaseException | None:
    """Run ``path`` as ``__main__``; return what escaped it (``None`` when it ran to the end)."""

    fix_seeds(seed)
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        return None if exc.code in (None, 0) else exc
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's failure is the data we want
        return exc
    return None


class EagerPrecheckFailed(Exception):
    """The candidate raised with torch.compile disabled: compiling it is pointless."""

    def __init__(self, info: Any):
        super().__init__(f"{info.type}: {info.message}")
        self.info = info


class SharedVerdictFound(Exception):
    """An earlier candidate ran the same compiled calls as this one would: its verdicts stand."""

    def __init__(self, key: str, verdicts: dict[str, Any]):
        super().__init__("verdicts shared by an earlier candidate")
        self.key = key
        self.verdicts = verdicts


def _record(
    harness: Any,
    script: str,
    seed: int,
    *,
    eager_precheck: bool,
    needs: frozenset[str],
    captured: dict[str, int],
    shared: Any = None,
) -> tuple[Any, str | None]:
    """Run the script under the harness; return the RecordedRun and the fingerprint of its compiled calls (or
    ``None``). Raises ``EagerPrecheckFailed``, or ``SharedVerdictFound`` when ``shared`` (a SharedVerdicts)
    knows the fingerprint. ``captured`` gets the operators Dynamo captured while tracing for the fingerprint
    and in the real run, under those names.

    With ``eager_precheck`` the script first runs without compiling (cheap). If that raises, the candidate is
    broken in eager mode or fails without the compiler, so compiling it is pointless. If the script never called
    torch.compile, that eager run is already the real run.
    """

    from oracles.api import NEEDS_EAGER_RERUN, RecordedRun
    from oracles.capture import exception_info

    def info(exc: BaseException | None) -> Any:
        return None if exc is None else exception_info(exc, script, harness.kernel_writes, harness.evidence)

    key = None
    if eager_precheck:
        eager_run, key = _eager_precheck(harness, script, seed, info, captured, shared)
        if eager_run is not None:
            return eager_run, None

    before, started = _operators_captured(), time.monotonic()
    escaped = run_script(script, seed)
    took = time.monotonic() - started
    captured["run"] = _operators_captured() - before
    run = RecordedRun(
        exception=info(escaped),
        used_compile=harness.used_compile,
        calls=harness.calls,
        inplace_violations=harness.inplace_violations,
        kernels=list(harness.kernels),
        kernel_strays=harness.strays(),
        kernel_replays=harness.replay_differences(),
        only_compile=harness.only_compile,
    )
    _with_launch_grids(harness, run)
    _unless_the_comparison_decides(harness, script, seed, escaped, run, took)
    if eager_precheck:
        run.eager_rerun_done = True  # it ran first, without an exception
    elif NEEDS_EAGER_RERUN in needs and escaped is not None and harness.used_compile:
        with harness.compile_disabled():
            rerun = run_script(script, seed)
        run.eager_rerun_done = True
        run.eager_rerun_exception = info(rerun)
    return run, key


def _with_launch_grids(harness: Any, run: Any) -> None:
    """The grids the script's kernels were launched on, with the failure (the launch stage writes them down)."""

    grids = harness.launches.one_grids()
    if grids and run.exception is not None:
        run.exception = dataclasses.replace(run.exception, launch_grids=grids)


def _unless_the_comparison_decides(
    harness: Any, script: str, seed: int, escaped: BaseException | None, run: Any, took: float
) -> None:
    """Where the script compiles nothing and its failing comparison of a kernel's output may not be what fails
    it, run it again with its comparisons held (``oracles.deciding``), for twice as long as its run ``took`` and a
    second: if it fails the same way, ``run`` shows no evidence (a helper emptied to return nothing fails the
    script whatever the kernel computed)."""

    from oracles.deciding import fails_anyway, needs_a_held_run

    evidence = harness.evidence
    if evidence is None or escaped is None or harness.used_compile or run.exception is None or not run.exception.evidence:
        return
    if not needs_a_held_run(evidence, escaped):
        return
    run.calls, run.inplace_violations = list(run.calls), list(run.inplace_violations)  # kept from the clear
    harness.clear()
    if fails_anyway(evidence, escaped, lambda: run_script(script, seed), seconds=2 * took + 1.0):
        run.exception = dataclasses.replace(run.exception, evidence=None, evidence_detail=None)


def _eager_precheck(
    harness: Any, script: str, seed: int, info: Any, captured: dict[str, int], shared: Any
) -> tuple[Any, str | None]:
    """The script run first without compiling: the RecordedRun where it never called torch.compile (that was
    the real run), else ``None``; and the fingerprint of its compiled calls. Raises as ``_record`` says."""

    from oracles.api import RecordedRun

    before, started = _operators_captured(), time.monotonic()
    eager_first, key = _precheck(harness, script, seed, fingerprint=shared is not None)
    took = time.monotonic() - started
    captured["tracing"] = _operators_captured() - before
    if not harness.used_compile:
        run = RecordedRun(
            exception=info(eager_first),
            inplace_violations=harness.inplace_violations,
            kernels=list(harness.kernels),
            kernel_strays=harness.strays(),
            kernel_replays=harness.replay_differences(),
            only_compile=harness.only_compile,
        )
        _with_launch_grids(harness, run)
        _unless_the_comparison_decides(harness, script, seed, eager_first, run, took)
        return run, None
    if eager_first is not None:
        raise EagerPrecheckFailed(info(eager_first))
    known = shared.get(key) if shared is not None and key is not None else None
    if known is not None:
        raise SharedVerdictFound(key, known)
    harness.clear()
    return None, key


def _precheck(harness: Any, script: str, seed: int, *, fingerprint: bool) -> tuple[BaseException | None, str | None]:
    """Run the script without compiling: what escaped it, and the fingerprint of its compiled calls.

    With ``fingerprint`` dynamo traces each compiled function (the graphs run eagerly), so the fingerprint can
    hash the graphs. If that run raises, or gives no fingerprint (nothing to share, so the graphs' eager run
    stood in for the script's own for nothing), a plain eager run decides instead: Dynamo itself may be what
    failed, or what hid a failure of the script's code.
    """

    import torch

    if fingerprint:
        started = time.monotonic()
        with harness.tracing_only():
            escaped = run_script(script, seed)
        harness.fingerprint.tracing_seconds = time.monotonic() - started
        key = harness.fingerprint.key() if escaped is None else None
        harness.stop_fingerprinting()
        torch._dynamo.reset()  # the real run must compile with the script's own backend, not reuse these
        if escaped is None and key is not None or not harness.used_compile:
            return escaped, key
        harness.clear()
    with harness.compile_disabled():
        return run_script(script, seed), None


def _environment() -> dict[str, str]:
    import torch

    # The device the script used: asking a process that never touched CUDA would create a context (tenths of
    # a second per candidate on a GPU host) only to report a GPU the script did not use. Where the warm server
    # started CUDA ahead, only memory the script took says it used the GPU.
    device = "cpu"
    if torch.cuda.is_initialized() and (not CUDA_STARTED_AHEAD or torch.cuda.max_memory_reserved() > 0):
        device = f"cuda ({torch.cuda.get_device_name()})"
    return {
        "device": device,
        "torch_version": torch.__version__,
        "forked_ahead": FORKED_AHEAD,
        "cuda_started_ahead": CUDA_STARTED_AHEAD,
        "resident_jobs_before": RESIDENT_JOBS_BEFORE,
    }


def _peak_mb() -> float | None:
    """This process's peak resident memory (``VmHWM``; a forked candidate's counts from its warm parent's)."""

    try:
        with open("/proc/self/status") as status:
            return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmHWM:"))
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _operators_captured() -> int:
    """Operators Dynamo has put into graphs in this process so far (its own count, summed over graphs)."""

    if "torch._dynamo.utils" not in sys.modules:
        return 0  # dynamo never ran here
    from torch._dynamo.utils import counters

    return int(counters["stats"]["calls_captured"])


def _compile_cache_stats() -> dict[str, int]:
    from torch._dynamo.utils import counters

    return {"hits": counters["inductor"]["fxgraph_cache_hit"], "misses": counters["inductor"]["fxgraph_cache_miss"]}


def enter_script_folder(script: str) -> None:
    """Like `python script.py`: the script's folder first on ``sys.path`` (its run folder, which links the
    files that lie beside the original), then what the script's prelude put there; ``sys.argv`` as python
    sets it. Called before torch is imported."""

    from minimizer.runner.prelude import (
        OMP_WAIT_POLICY_SET_VARIABLE,
        PREIMPORT_VARIABLE,
        PREINIT_CUDA_VARIABLE,
        RESIDENT_VARIABLE,
        SETTLE_VEC_ISA_VARIABLE,
        WARM_INDUCTOR_VARIABLE,
        apply_sys_path,
    )

    for variable in (
        PREIMPORT_VARIABLE,
        SETTLE_VEC_ISA_VARIABLE,
        WARM_INDUCTOR_VARIABLE,
        PREINIT_CUDA_VARIABLE,
        RESIDENT_VARIABLE,
    ):
        os.environ.pop(variable, None)  # for the warm server only: the script must not see them
    if os.environ.pop(OMP_WAIT_POLICY_SET_VARIABLE, None):
        os.environ.pop("OMP_WAIT_POLICY", None)  # ours, read when torch loaded OpenMP (run_folder.child_env)

    apply_sys_path()
    sys.path.insert(0, str(Path(script).parent))
    sys.argv = [script]


def _dump_stacks_on_signal(path: str | None) -> None:
    """Write every thread's stack to ``path`` when the parent, at the time limit, sends ``STACKS_SIGNAL``."""

    if path is None:
        return
    import faulthandler

    # Kept open for the process's life: faulthandler writes to the file descriptor from the signal handler.
    faulthandler.register(STACKS_SIGNAL, file=open(path, "w"), all_threads=True)  # noqa: SIM115


def main(request_path: str) -> None:
    answer(request_path)
    # Skip interpreter teardown: compile workers and CUDA contexts can make it slow or hang.
    os._exit(0)


def answer(request_path: str) -> None:
    """Run the candidate ``request_path`` asks for and write its result (last: the parent takes the result as
    the end of the run)."""

    request = json.loads(Path(request_path).read_text())
    started = time.monotonic()
    _dump_stacks_on_signal(request.get("stacks"))
    script = request["script"]
    enter_script_folder(script)

    from oracles.registry import load_oracle

    oracles = [load_oracle(spec) for spec in request["oracles"]]
    needs = frozenset().union(*(o.needs for o in oracles)) if oracles else frozenset()
    eager_precheck = request.get("eager_precheck", False)
    harness, shared, fingerprint = _installed_harness(request, oracles, needs, script)
    key, reused, captured = None, None, {}
    phases = {"start": time.monotonic() - started}
    try:
        run, key = _record(
            harness, script, request["seed"], eager_precheck=eager_precheck, needs=needs, shared=shared, captured=captured
        )
        rejected = ""
    except EagerPrecheckFailed as failed:
        run, rejected = None, f"fails without torch.compile (eager pre-check): {failed}"
    except SharedVerdictFound as found:
        run, key, reused = None, found.key, found.verdicts
    verdicts = dict(reused) if reused is not None else _verdicts(request["oracles"], oracles, run, rejected)
    if shared is not None and key is not None and run is not None:
        shared.put(key, verdicts)
    phases["compiled calls"] = harness.compiled_seconds
    phases["their eager sides"] = harness.eager_sides_seconds
    phases["the rest (script, pre-check, oracles)"] = time.monotonic() - started - sum(phases.values())
    result = {
        "exception": None if run is None or run.exception is None else run.exception.to_json(),
        "used_compile": harness.used_compile,
        "compiled_calls": len(harness.calls),
        "compiled_targets": harness.compiled_targets,
        "compiled_outputs": harness.compiled_outputs,
        # Tracing and the real run capture the same graphs: either count bounds the largest graph.
        "operators_captured": max(captured.values(), default=0),
        "verdicts": verdicts,
        "seconds": time.monotonic() - started,
        "phase_seconds": {name: round(seconds, 3) for name, seconds in phases.items()},
        "peak_mb": _peak_mb(),
        "compile_cache": _compile_cache_stats(),
        "fingerprint": None
        if fingerprint is None
        else {
            "key": key,
            "why_not": fingerprint.why_not,
            "shared": reused is not None,
            "tracing_seconds": fingerprint.tracing_seconds,
        },
        **_environment(),
    }
    _write_answer(Path(request["result"]), result)


def forget_job() -> None:
    """In a resident worker after a job: take out what ``answer`` installed in this process."""

    global _HARNESS
    if _HARNESS is not None:
        _HARNESS.uninstall()
        _HARNESS = None
    import faulthandler

    faulthandler.unregister(STACKS_SIGNAL)
    if "torch._dynamo.utils" in sys.modules:
        from torch._dynamo.utils import counters

        counters.clear()  # the next job's compile-cache statistics and captured operators are its own


def _installed_harness(request: dict, oracles: list, needs: frozenset[str], script: str) -> tuple[Any, Any, Any]:
    """The harness the oracles need, installed; where verdicts can be shared, their store and the fingerprint
    of the compiled calls (the harness lets go of it once the real run starts)."""

    from oracles.harness import Harness

    shared, fingerprint = None, None
    # Only verdicts read off the compiled calls alone can be shared, and only the pre-check can tell the
    # fingerprint before compiling.
    eager_precheck = request.get("eager_precheck", False)
    if request.get("shared_verdicts") and eager_precheck and all(getattr(o, "reads_only_calls", False) for o in oracles):
        from minimizer.runner.shared_verdicts import SharedVerdicts
        from oracles.fingerprint import CallFingerprint

        shared = SharedVerdicts(request["shared_verdicts"], request["oracles"], request["seed"])
        fingerprint = CallFingerprint()
    harness = Harness(
        needs,
        seed=request["seed"],
        script_path=script,
        fingerprint=fingerprint,
        phase_file=request.get("phase"),
        only_compile=request.get("only_compile"),
    )
    harness.install()
    global _HARNESS
    _HARNESS = harness
    return harness, shared, fingerprint


def _verdicts(specs: list[str], oracles: list, run: Any, rejected: str) -> dict[str, Any]:
    """Each oracle's verdict on the run (``None``: rejected before it, for the reason ``rejected``)."""

    from oracles.api import Verdict

    verdicts: dict[str, Any] = {}
    for spec, found in zip(specs, oracles):
        if run is None:
            verdicts[spec] = {"fires": False, "signature": "", "detail": rejected}
            continue
        try:
            verdicts[spec] = found(run).to_json()
        except Exception as exc:  # noqa: BLE001 - a broken oracle is reported, not fatal
            verdicts[spec] = Verdict.of_error(exc).to_json()
    return verdicts


def _write_answer(target: Path, result: dict) -> None:
    # Output first: the parent takes the result as the end of the run and reads the output then.
    sys.stdout.flush()
    sys.stderr.flush()
    global _HELD
    tmp = target.with_suffix(".tmp")
    tmp.write_text(json.dumps(result))
    if HOLD_ANSWER:
        _HELD = (tmp, target)
    else:
        os.replace(tmp, target)


def deliver_held_answer() -> None:
    global _HELD
    if _HELD is not None:
        os.replace(*_HELD)
        _HELD = None


if __name__ == "__main__":
    main(sys.argv[1])
