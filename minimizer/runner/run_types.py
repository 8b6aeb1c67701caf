"""What running a candidate takes and gives: its limits and settings, and what happened to it. Plain data shared
by the runner (which runs candidates) and the stages (which read what they did); it imports nothing of either."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from oracles.api import ExceptionInfo, Verdict
from oracles.eager_ops import EAGER_OPS_VARIABLE
from oracles.hang import verdict_of_timeout
from oracles.signature import exception_signature

DID_NOT_FINISH = "did not finish within the time limit"


@dataclass(frozen=True)
class Limits:
    """``timeout`` in seconds of wall time; ``memory_mb`` of resident memory of the candidate's process."""

    timeout: float = 300.0
    memory_mb: int = 16_000


@dataclass(frozen=True)
class RunSettings:
    """How every candidate of one reduction runs: which oracles to evaluate, where, with what environment."""

    filename: str  # the script's file name inside the candidate's directory (tracebacks then read naturally)
    origin_dir: str  # the original script's folder
    oracles: tuple[str, ...]
    limits: Limits = field(default_factory=Limits)
    seed: int = 0
    env: tuple[tuple[str, str], ...] = ()
    # Run the script eagerly first and skip compiling when that already fails (see child._record).
    eager_precheck: bool = False
    # A folder for Inductor's and Triton's on-disk caches, shared by every candidate of one reduction.
    compile_cache: str | None = None
    # Let candidates whose compiled calls will be the same share one verdict (see oracles.fingerprint); needs
    # compile_cache (the verdicts live beside the compiled kernels) and eager_precheck (which tells the
    # fingerprint before compiling).
    share_verdicts: bool = False
    # A folder whose entries every run's folder links to, so files beside the script are found as under
    # `python script.py` (see minimizer.runner.workspace); ``None``: the script's own folder.
    beside: str | None = None
    # Compile only the target of this name, run every other eagerly (see oracles.harness.Harness.only_compile).
    only_compile: str | None = None
    # The script whose text decides whether and where the warm server settles Inductor's CPU probe (see
    # ``prelude.settle_vec_isa_value``): the original, for every candidate of a reduction, so that a candidate
    # that lost its ``"cuda"`` or its ``torch.compile`` does not need a server of its own (starting one costs
    # seconds, and on a GPU host a probe of half a minute). ``None``: the candidate's own text.
    settle_from: str | None = None
    # Let the warm server keep workers that run candidate after candidate where the script allows it
    # (minimizer.runner.resident); ``fresh``: this run in a process of its own all the same.
    resident: bool = False
    fresh: bool = False


def with_operators_eager(settings: RunSettings, operators: list[str] | tuple[str, ...]) -> RunSettings:
    """``settings`` with ``operators`` run by their eager kernels inside Inductor (``oracles.eager_ops``): in a
    process of its own (the fallback changes Inductor's tables for the rest of the process), sharing no verdict
    (its compiled code is not the candidate's)."""

    env = (*settings.env, (EAGER_OPS_VARIABLE, ",".join(operators)))
    return dataclasses.replace(settings, env=env, fresh=True, share_verdicts=False)


def mended_with_operators_eager(
    run: Callable[..., RunResult],
    text: str,
    settings: RunSettings,
    operators: list[str] | tuple[str, ...],
    shows_bug: Callable[[RunResult], bool],
    cancel: threading.Event | None = None,
) -> bool | None:
    """The counterfactual of a bug held to its operator (``stages.operator``), the one test the source reducer,
    the graph reducer and the culprit share: ``text`` run with ``operators`` eager completes without the bug
    (``shows_bug`` of its result); ``None`` where the run was cancelled first."""

    result = run(text, with_operators_eager(settings, operators), cancel=cancel)
    if result.cancelled:
        return None
    return result.completed and not shows_bug(result)


@dataclass
class CompileCacheStats:
    """Inductor FX-graph cache lookups: a hit skips a compile."""

    hits: int = 0
    misses: int = 0

    def add(self, other: CompileCacheStats) -> None:
        self.hits += other.hits
        self.misses += other.misses

    def to_json(self) -> dict:
        return {"hits": self.hits, "misses": self.misses}


@dataclass
class RunResult:
    """What happened to one candidate: how the process ended, what escaped the script, and the verdicts."""

    seconds: float
    returncode: int | None = None
    signal: str | None = None
    timed_out: bool = False
    memory_exceeded: bool = False
    cancelled: bool = False
    exception: ExceptionInfo | None = None
    used_compile: bool = False
    compiled_calls: int = 0  # calls of compiled functions the harness recorded
    compiled_targets: list[str] = field(default_factory=list)  # what the script passed to torch.compile, in order
    # Under ``only_compile``: the paths of the tensors the target's first call returned (``[0]``, ``['focal']``).
    compiled_outputs: list[str] = field(default_factory=list)
    # Operators Dynamo captured over all the run's graphs (its pre-check's tracing included): no graph it compiled
    # holds more, so the graph reducer cannot pay where the script already shows as many (session.py).
    operators_captured: int | None = None
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    stdout_tail: str = ""
    stderr_tail: str = ""
    device: str = ""
    torch_version: str = ""
    # Where the candidate's process spent its time: its start (before the script), the compiled calls, their
    # eager sides, the rest (the script's own code, the eager pre-check, the oracles); see minimizer.runner.child.
    phase_seconds: dict[str, float] = field(default_factory=dict)
    forked_ahead: bool = False  # the warm server forked its process before the job came (see candidate_process.Spares)
    cuda_started_ahead: bool = False  # ... and started CUDA in it then
    # A resident worker ran it after this many jobs of its own (minimizer.runner.resident); None: its own process.
    resident_jobs_before: int | None = None
    compile_cache: CompileCacheStats = field(default_factory=CompileCacheStats)
    # The hash of what the run's compiled calls depended on (oracles.fingerprint), when its oracles allow sharing.
    fingerprint: str | None = None
    fingerprint_why_not: str | None = None
    shared_verdict: bool = False  # the verdicts came from an earlier candidate with the same fingerprint
    tracing_seconds: float = 0.0  # the pre-check that traced the compiled calls for the fingerprint
    phase: str = ""  # of a run killed at its time limit: the harness's last mark (see oracles.hang)
    stacks: str = ""  # of a run killed at its time limit: where its threads were (Python stacks)
    peak_mb: float | None = None  # the candidate process's peak resident memory, as it reported it (VmHWM)

    @property
    def completed(self) -> bool:
        """The child wrote its verdicts (it was not killed, did not hang, did not crash the interpreter)."""

        return bool(self.verdicts)

    def verdict(self, spec: str) -> Verdict:
        """The oracle's verdict; a process killed by a signal counts as a crash for the crash-like oracles."""

        if self.completed:
            return self.verdicts.get(spec, Verdict(False, detail="oracle gave no verdict"))
        if self.timed_out and spec == "hang":
            return verdict_of_timeout(self.phase)
        if self.signal and spec in ("script", "crash"):
            return Verdict(True, f"process killed by {self.signal}", self.stderr_tail[-200:])
        return Verdict(False, detail=self.describe_end())

    @property
    def failure(self) -> str | None:
        """What ended the script, named as ``minimizer.runner.plain`` names a plain run's end (so the two
        compare); ``None`` when it ran to the end or did not report."""

        if self.signal:
            return f"killed by {self.signal}"
        if self.timed_out:
            return DID_NOT_FINISH
        if self.exception is None:
            return None
        if self.exception.type == "SystemExit":
            code = self.exception.message or "1"
            return f"exit status {code}" if code.lstrip("-").isdigit() else "exit status 1"
        return exception_signature(self.exception)

    def describe_end(self) -> str:
        if self.cancelled:
            return "cancelled"
        if self.timed_out:
            return f"timed out after {self.seconds:.1f}s"
        if self.memory_exceeded:
            return "exceeded the memory limit"
        if self.signal:
            return f"killed by {self.signal}"
        if not self.completed:
            return f"exited with status {self.returncode} before reporting"
        return "completed"
