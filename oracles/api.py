"""The oracle API: what a run of a candidate records, and what an oracle answers.

Everything here is plain data so that oracles can be unit-tested on hand-made records, without running a
script. Tensors appear only in ``SideResult.outputs`` / ``SideResult.grads`` and are never serialized: oracles
run inside the candidate's process, and only their ``Verdict`` crosses the process boundary.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

from oracles.bug import Bug


@dataclass(frozen=True)
class ExceptionInfo:
    """An exception, reduced to what a signature needs.

    ``type`` is the qualified class name (``RuntimeError``, ``torch._dynamo.exc.BackendCompilerFailed``),
    ``assert_text`` the source of the failing ``assert`` test when the exception is an assertion from the
    script, ``stage`` the compiler stage it arose in when that can be told (see ``oracles.stages``),
    ``operands`` what the assert's test read, where that names what failed.
    """

    type: str
    message: str
    assert_text: str | None = None
    stage: str | None = None
    traceback_tail: str = ""
    # For a failed assert of the script: the names its test reads whose values say *what* failed (strings and
    # collections of strings, such as the losses a parity check found mismatched), as ``name=value``.
    operands: str | None = None
    # For a failed comparison of a Triton kernel's output: where each compared operand comes from (see
    # ``oracles.compared``), e.g. ``kernel row_softmax_kernel, softmax``.
    compared: str | None = None
    # For such a comparison, a digest of the values compared (see ``oracles.compared.compared_values``).
    compared_values: str | None = None
    # And a digest of how they differ, element by element (see ``oracles.comparison.difference_digest``).
    compared_difference: str | None = None
    # For such a comparison, the script's module-level tensors: (name, shape, dtype, device, requires_grad) each.
    module_tensors: tuple = ()
    # For a failed check of the script (an assert, a raise, an exit, a library check): the comparison of values
    # from the suspect that failed it (``oracles.evidence.Comparison.signature``, e.g. ``allclose of compiled,
    # other``), and the same for people (its ``describe()``); ``None`` where no such comparison fails it.
    evidence: str | None = None
    evidence_detail: str | None = None
    # ... its kind (``allclose``), each operand's origin, and the largest difference it saw, as fields.
    evidence_kind: str | None = None
    evidence_origins: tuple = ()
    evidence_difference: float | None = None
    # The script's kernels each launched on one grid of one axis: (kernel, programs) pairs (see
    # ``oracles.kernel_launches.KernelLaunches.one_grids``).
    launch_grids: tuple = ()
    # Whether the exception is the script's own check failing (an ``assert``, a ``raise`` or exit of the script, a
    # checker's assertion; ``oracles.capture.failed_a_check``), not something crashing.
    check: bool = False
    # For a raise or an assert of the script whose message is formatted (an f-string, ``str.format``, ``%``): the
    # message as the script spells it, each formatted value as ``{}`` (``oracles.capture.message_template``).
    message_template: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "type": self.type,
            "message": self.message,
            "assert_text": self.assert_text,
            "stage": self.stage,
            "traceback_tail": self.traceback_tail,
            "operands": self.operands,
            "compared": self.compared,
            "compared_values": self.compared_values,
            "compared_difference": self.compared_difference,
            "module_tensors": [list(t) for t in self.module_tensors],
            "evidence": self.evidence,
            "evidence_detail": self.evidence_detail,
            "evidence_kind": self.evidence_kind,
            "evidence_origins": list(self.evidence_origins),
            "evidence_difference": self.evidence_difference,
            "launch_grids": [list(g) for g in self.launch_grids],
            "check": self.check,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> ExceptionInfo | None:
        if data is None:
            return None
        return cls(**(data | {"evidence_origins": tuple(data.get("evidence_origins", ()))}))


@dataclass
class SideResult:
    """One side of a compiled call: eager, compiled, or the float64 eager reference.

    ``outputs`` are the call's outputs flattened in pytree order (tensors and other leaves); ``grads`` are the
    gradients of the call's tensor inputs and parameters (in a fixed order, ``None`` where there is none) of a
    fixed scalar loss, when an oracle asked for them. Stored tensors are detached copies, so ``requires_grad``
    and ``has_grad_fn`` say, per output, what the live output had (``None`` for a leaf that is not a tensor).
    """

    outputs: list[Any] | None = None
    exception: ExceptionInfo | None = None
    grads: list[Any] | None = None
    grad_exception: ExceptionInfo | None = None
    requires_grad: list[bool | None] | None = None
    has_grad_fn: list[bool | None] | None = None
    # The containers the outputs came in (the pytree spec, as text): a list where eager returns a tensor is a
    # different result, whatever its values.
    structure: str | None = None


@dataclass
class CallRecord:
    """One call of a function or module that the script passed to ``torch.compile``.

    ``grad_names`` names the entries of each side's ``grads``: ``input:<i>`` (the i-th tensor leaf of the
    call's arguments) or ``parameter:<name>``.
    """

    index: int
    target: str
    eager: SideResult
    compiled: SideResult
    reference: SideResult | None = None
    grad_names: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class InplaceViolation:
    """A tensor saved for backward whose contents changed while its version counter did not."""

    grad_fn: str
    detail: str


@dataclass
class RecordedRun:
    """What one run of a candidate script recorded.

    ``exception`` escaped the script (``None`` when it ran to the end). ``used_compile`` tells whether the script
    called ``torch.compile``; ``eager_rerun_exception`` is what escaped a second run with ``torch.compile``
    replaced by the identity (only recorded when an oracle asked for it and the first run failed).
    """

    exception: ExceptionInfo | None = None
    used_compile: bool = False
    eager_rerun_exception: ExceptionInfo | None = None
    eager_rerun_done: bool = False
    calls: list[CallRecord] = field(default_factory=list)
    inplace_violations: list[InplaceViolation] = field(default_factory=list)
    # Names of the script's own Triton kernels launched (``kernel[grid](...)``), in order of first launch.
    kernels: list[str] = field(default_factory=list)
    # What those kernels read or wrote outside every tensor a launch gave them, seen under Triton's interpreter:
    # ``rms_norm_kernel reads 1 past weight_ptr, 1 past x_ptr`` (see ``oracles.kernel_memory``).
    kernel_strays: list[str] = field(default_factory=list)
    # Where the run replayed the original's first launch of a compared kernel (``oracles.kernel_replay``), how
    # the candidate's kernel wrote otherwise: ``row_kernel writes other values into out_ptr than ...``.
    kernel_replays: list[str] = field(default_factory=list)
    # The one compiled target the run compiled (every other ran eagerly), when the run was asked to (see
    # ``oracles.harness.Harness.only_compile``).
    only_compile: str | None = None


@dataclass(frozen=True)
class Verdict:
    """An oracle's answer. ``bug`` is what it found (``oracles.bug``; ``oracles.bug.same_bug`` says whether two
    runs show the same one); ``signature`` is that bug's identity written out. An oracle may give either: a
    plug-in's signature alone is a bug whose failure is that text."""

    fires: bool
    signature: str = ""
    detail: str = ""
    # Set when the oracle itself raised: ``"ValueError: bad at my_oracle.py:12"``, and the full traceback.
    error: str = ""
    traceback: str = ""
    bug: Bug | None = None

    def __post_init__(self) -> None:
        if self.bug is None and self.signature:
            object.__setattr__(self, "bug", Bug(self.signature))
        elif self.bug is not None and not self.signature:
            object.__setattr__(self, "signature", self.bug.signature)

    @property
    def found(self) -> Bug:
        """The bug, or an empty one where the oracle found none."""

        return self.bug if self.bug is not None else Bug("")

    def to_json(self) -> dict[str, Any]:
        data = {"fires": self.fires, "signature": self.signature, "detail": self.detail}
        data |= {"bug": self.bug.to_json()} if self.bug is not None else {}
        return data | ({"error": self.error, "traceback": self.traceback} if self.error else {})

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Verdict:
        return cls(
            bool(data["fires"]),
            data.get("signature", ""),
            data.get("detail", ""),
            data.get("error", ""),
            data.get("traceback", ""),
            Bug.from_json(data["bug"]) if data.get("bug") else None,
        )

    @classmethod
    def of_error(cls, exc: BaseException) -> Verdict:
        """The verdict of an oracle that raised ``exc``: it does not fire, and says what it raised where."""

        import traceback

        frames = traceback.extract_tb(exc.__traceback__)
        where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
        error = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}".rstrip(": ")
        return cls(
            False,
            detail=f"oracle error: {type(exc).__name__}: {exc}",
            error=error + where,
            traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        )


# What the in-process harness must record for an oracle. Recording costs time, so a run records only what its
# oracles need.
NEEDS_CALLS = "calls"  # eager and compiled results of each compiled call
NEEDS_REFERENCE = "reference"  # a float64 eager reference of each compiled call
NEEDS_GRADS = "grads"  # gradients of each side of each compiled call
NEEDS_SAVED_TENSORS = "saved_tensors"  # fingerprints of tensors saved for backward
NEEDS_EAGER_RERUN = "eager_rerun"  # a second run with torch.compile disabled
NEEDS_KERNELS = "kernels"  # which of the script's own Triton kernels it launched
NEEDS_EVIDENCE = "evidence"  # what the script's failing check compared, and where its operands came from
ALL_NEEDS = frozenset(
    {NEEDS_CALLS, NEEDS_REFERENCE, NEEDS_GRADS, NEEDS_SAVED_TENSORS, NEEDS_EAGER_RERUN, NEEDS_KERNELS, NEEDS_EVIDENCE}
)
# Needs whose comparisons of compiled and eager results hold only where random operators draw alike: a run
# with any of them has Inductor run its random operators eagerly (``fallback_random``). A run without them
# leaves the compiler as the script sets it, as plain python does (a bug in a random operator's lowering shows).
DRAWS_ALIKE = frozenset({NEEDS_CALLS, NEEDS_REFERENCE, NEEDS_GRADS})


def draws_alike(needs: frozenset[str] | set[str]) -> bool:
    """Whether a run with ``needs`` must have compiled random operators draw as eager ones (see ``DRAWS_ALIKE``)."""

    return bool(set(needs) & DRAWS_ALIKE)


@runtime_checkable
class Oracle(Protocol):
    name: str
    needs: frozenset[str]

    def __call__(self, run: RecordedRun) -> Verdict: ...


class _NamedOracle:
    def __init__(
        self, fn: Callable[[RecordedRun], Verdict], name: str, needs: frozenset[str], summary: str, reads_only_calls: bool
    ):
        self._fn = fn
        self.name = name
        self.needs = needs
        self.summary = summary
        self.reads_only_calls = reads_only_calls
        self.__doc__ = fn.__doc__

    def __call__(self, run: RecordedRun) -> Verdict:
        return self._fn(run)

    def __repr__(self) -> str:
        return f"<oracle {self.name}>"


def oracle(
    name: str, *, needs: set[str] | frozenset[str] = frozenset(), summary: str = "", reads_only_calls: bool = False
):
    """Turn ``fn(run: RecordedRun) -> Verdict`` into an oracle called ``name``.

    ``needs`` names what the harness must record for it (``NEEDS_*`` above); ``summary`` is the one line that
    ``minimizer oracles`` prints (defaults to the docstring's first line). ``reads_only_calls`` promises that
    the verdict depends on ``run.calls`` alone, so that runs with the same compiled calls may share a verdict
    (see ``oracles.fingerprint``).
    """

    unknown = set(needs) - ALL_NEEDS
    if unknown:
        raise ValueError(f"unknown oracle needs: {sorted(unknown)}")

    def wrap(fn: Callable[[RecordedRun], Verdict]) -> _NamedOracle:
        line = summary or (fn.__doc__ or "").strip().splitlines()[0] if (summary or fn.__doc__) else ""
        return _NamedOracle(fn, name, frozenset(needs), line, reads_only_calls)

    return wrap
