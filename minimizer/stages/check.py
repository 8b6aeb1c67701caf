"""Stage 1, check: run the original under plain python and under the oracles; is there a bug to pin?

Plain ``python script.py`` is the ground truth (``minimizer.runner.plain``). The oracles' runs must agree with
it: a script that fails one way under python and another way (or not at all) under minimizer's harness would
be reduced towards the wrong failure, so that is reported instead of reduced. ``diagnose`` turns every way a
script can be unfit for reduction into one line.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from dataclasses import dataclass, field
from importlib import metadata
from typing import TYPE_CHECKING, Callable

from minimizer.errors import MinimizerError
from minimizer.options import ORIGINAL_TIMEOUT
from minimizer.progress import Progress
from minimizer.runner.plain import PlainRun
from minimizer.runner.run_types import RunResult
from oracles.api import Verdict, draws_alike
from oracles.registry import AUTO_PRIORITY, OracleNotFound, canonical_spec, load_oracle
from oracles.bug import ALSO_WITHOUT_COMPILE, Bug, same_bug

if TYPE_CHECKING:
    from minimizer.runs import Runs

# How the lines of ``diagnose`` that triage tells apart begin or read (minimizer.triage classifies by them).
NOTHING_TO_MINIMIZE = "nothing to minimize"
FLAKY = "fails differently from run to run"
# Failures that mean the script cannot start on this machine, when they happen before any compiled call.
_CANNOT_START = ("ModuleNotFoundError", "ImportError", "FileNotFoundError")


@dataclass
class OracleFinding:
    """One oracle's verdicts over the confirmation runs of the original."""

    spec: str
    verdicts: list[Verdict]

    @property
    def fired(self) -> int:
        return sum(v.fires for v in self.verdicts)

    @property
    def signatures(self) -> list[str]:
        return [v.signature for v in self.verdicts if v.fires]

    @property
    def steady(self) -> bool:
        """Fired in every run, always with the same bug."""

        fired = [v.found for v in self.verdicts if v.fires]
        return bool(fired) and self.fired == len(self.verdicts) and all(same_bug(fired[0], bug) for bug in fired)

    @property
    def bug(self) -> Bug:
        """The bug of the first run that fired (an empty one where none did)."""

        return next((v.found for v in self.verdicts if v.fires), Bug(""))

    @property
    def signature(self) -> str:
        return self.bug.signature

    @property
    def detail(self) -> str:
        fired = [v for v in self.verdicts if v.fires]
        return (fired or self.verdicts)[0].detail if self.verdicts else ""


@dataclass
class CheckReport:
    """The original's runs: under the oracles (run ``i`` with seed ``seed + i``) and under plain python."""

    findings: list[OracleFinding]
    runs: list[RunResult]
    plain: list[PlainRun] = field(default_factory=list)
    pinned: OracleFinding | None = None
    seeds: list[int] = field(default_factory=list)

    @property
    def device(self) -> str:
        return next((r.device for r in self.runs if r.completed), "unknown (no run finished)")

    @property
    def torch_version(self) -> str:
        found = next((r.torch_version for r in self.runs if r.completed), None)
        if found is None:
            try:
                found = metadata.version("torch")
            except metadata.PackageNotFoundError:
                found = "unknown"
        return found

    @property
    def plain_failure(self) -> str | None:
        """What plain python showed, when every plain run showed the same; ``None`` if none failed."""

        failures = {run.failure for run in self.plain}
        return next(iter(failures)) if len(failures) == 1 else None

    def plain_summary(self) -> str:
        """One line for people: what plain python did over its runs."""

        if not self.plain:
            return "not run"
        failing = [run for run in self.plain if run.fails or run.timed_out]
        if not failing:
            return f"passes ({len(self.plain)} of {len(self.plain)} runs)"
        kinds = {run.describe() for run in failing}
        rate = f"{len(failing)} of {len(self.plain)} runs"
        return f"fails ({rate}): {' / '.join(sorted(kinds))}"

    def to_json(self) -> dict:
        return {
            "pinned": self.pinned.spec if self.pinned else None,
            "device": self.device,
            "torch": self.torch_version,
            "run_seconds": [round(r.seconds, 2) for r in self.runs],
            "seeds": self.seeds,
            "python": {"summary": self.plain_summary(), "runs": [run.to_json() for run in self.plain]},
            "oracles": [
                {
                    "oracle": f.spec,
                    "fires": f.steady,
                    "fired_runs": f.fired,
                    "runs": len(f.verdicts),
                    "signature": f.signature,
                    "fails": f.bug.in_words() if f.fired else "",
                    "bug": f.bug.to_json() if f.fired else None,
                    "detail": f.detail,
                }
                for f in self.findings
            ],
        }


def diagnose(report: CheckReport, *, explicit_oracle: bool) -> str | None:
    """Why the original cannot be reduced, in one line; ``None`` when ``report.pinned`` is a bug to reduce.

    ``explicit_oracle``: the user named the oracle, so a failure that is not a compiler bug (or a script that
    cannot start here) is theirs to reduce.
    """

    plain = report.plain
    failures = [run.failure for run in plain]
    if plain and len(set(failures)) > 1:
        failing = sum(f is not None for f in failures)
        seen = next(run.describe() for run in plain if run.fails)
        return (
            f"the script {FLAKY} under plain python ({seen} in {failing} of "
            f"{len(plain)} runs); if its failure depends on random numbers, seed them in the script"
        )
    escaped = {seed: run.failure for seed, run in zip(report.seeds, report.runs)}
    if len(set(escaped.values())) > 1:
        seen = ", ".join(f"{_short(failure) if failure else 'passes'} with seed {seed}" for seed, failure in escaped.items())
        return f"the script {FLAKY} under minimizer ({seen}): it depends on the random numbers"
    python_failure = report.plain_failure
    if _exits_before_compiling(report) and any(f.bug.kernels for f in report.findings):
        return (
            f"the script exits ({python_failure}) whatever its Triton kernels compute: no comparison of their "
            "outputs decides it (its check fails on None or a literal, or the same with every comparison made to hold)"
        )
    if _exits_before_compiling(report):
        return (
            f"the script exits ({python_failure}) before any compiled call, as a script does when its arguments are "
            "missing or wrong: pass them after --, as in `minimizer reduce script.py -- --steps 2`"
        )
    if python_failure is not None and not explicit_oracle:
        first = plain[0]
        cannot_start = python_failure.startswith(_CANNOT_START) and all(r.compiled_calls == 0 for r in report.runs)
        if cannot_start:
            return (
                f"the script cannot run here: {first.describe()} (under plain python, before any compiled call); "
                "use --oracle script to minimize it anyway"
            )
    if plain:
        mismatch = _first_mismatch(report)
        if mismatch is not None:
            return mismatch
    if report.pinned is not None:
        if report.pinned.bug.under_compile == ALSO_WITHOUT_COMPILE and not explicit_oracle:
            what = plain[0].describe() if python_failure else report.pinned.signature
            return (
                f"the script fails ({what}) also without torch.compile: not a compiler bug; "
                "use --oracle script to minimize it anyway"
            )
        return None
    unsteady = next((f for f in report.findings if f.fired), None)
    if unsteady is not None:
        return _unsteady(unsteady, report.seeds)
    names = ", ".join(f.spec for f in report.findings)
    if python_failure is not None:
        return f"no oracle ({names}) shows the failure plain python shows: {plain[0].describe()}"
    return f"{NOTHING_TO_MINIMIZE}: the script passes under plain python and no oracle fires ({names})"


def _unsteady(f: OracleFinding, seeds: list[int]) -> str:
    kinds = len(set(f.signatures))
    why = (
        f"fired in {f.fired} of {len(f.verdicts)} runs ({100 * f.fired // len(f.verdicts)}%)"
        if f.fired < len(f.verdicts)
        else f"gave {kinds} different signatures in {len(f.verdicts)} runs"
    )
    with_seeds = f" with seeds {', '.join(map(str, seeds))}" if len(set(seeds)) > 1 else ""
    return f"the script {FLAKY}: oracle {f.spec} {why}{with_seeds}"


def _exits_before_compiling(report: CheckReport) -> bool:
    """Every plain run ended by ``sys.exit`` with an error status (argparse's usage error is ``exit status 2``)
    and no oracle run reached a compiled call, nor exited because a comparison of a kernel's output failed
    (``sys.exit(1)`` after a kernel's check: the evidence the run recorded)."""

    failure = report.plain_failure
    return (
        failure is not None
        and failure.startswith("exit status")
        and all(
            run.compiled_calls == 0 and not run.used_compile and not (run.exception and run.exception.evidence)
            for run in report.runs
        )
    )


def _first_mismatch(report: CheckReport) -> str | None:
    """A run where the script, under the oracles' harness, ended differently from plain python."""

    for harness_run, plain_run in zip(report.runs, report.plain):
        seen_here = harness_run.failure
        if seen_here == plain_run.failure:
            continue
        python_says = plain_run.describe() if plain_run.fails else "passes"
        here = "passes" if seen_here is None else seen_here
        return (
            f"under minimizer the script ends differently than under plain python (python: {python_says}; "
            f"minimizer: {here}); minimizer cannot reproduce the script's own run"
        )
    return None


def _short(failure: str, limit: int = 80) -> str:
    return failure if len(failure) <= limit else failure[: limit - 3].rstrip() + "..."


def oracle_specs(oracle: str) -> list[str]:
    """The oracles the check runs: every built-in in priority order for ``auto``, else the one named."""

    if oracle == "auto":
        return list(AUTO_PRIORITY)
    spec = canonical_spec(oracle)
    try:
        load_oracle(spec)
    except OracleNotFound as exc:
        raise MinimizerError(str(exc)) from None
    except Exception as exc:
        failed = Verdict.of_error(exc)
        raise MinimizerError(f"oracle {oracle!r} fails to load: {failed.error}", failed.traceback) from None
    return [spec]


def check_original(runs: Runs) -> CheckReport:
    """Run the original ``confirm`` times under plain python and under the oracles (run ``i`` with seed
    ``seed + i``, so a failure that hangs on the random numbers shows as flaky); pin the first oracle that
    fires steadily. A run that cannot finish (time or memory limit, killed) is refused with one line."""

    options = runs.options
    specs = oracle_specs(options.oracle)
    timeout = options.timeout or ORIGINAL_TIMEOUT
    settings = runs.settings(tuple(specs), timeout)
    seeds = [options.seed + i for i in range(max(1, options.confirm))]
    runs.progress.message(
        f"running the original {len(seeds)} time(s) under plain python and under: {', '.join(specs)}"
    )
    # Plain and harness runs alternate, so that with few jobs both kinds start at once (a hang then costs one
    # time limit, not two).
    calls: list[Callable[[], object]] = []
    for seed in seeds:
        calls.append(lambda: runs.plain(runs.original, settings.limits, options.script_args))
        calls.append(lambda seed=seed: runs.run(runs.source, dataclasses.replace(settings, seed=seed)))
    with Ticker(runs.progress, "the original", timeout):
        done = runs.call_all(calls)
    report = _report(specs, done[1::2], done[0::2], seeds, timeout, options.memory_mb)
    own_draws = [spec for spec in specs if not draws_alike(load_oracle(spec).needs)]
    if _first_mismatch(report) is not None and 0 < len(own_draws) < len(specs):
        # The comparing oracles had the compiler draw random numbers as eager does: the script's own run may
        # differ from plain python's only by that (a bug in a random operator's lowering). Its own oracles again.
        runs.progress.message(f"again under {', '.join(own_draws)}, with random operators compiled as the script has them")
        alone = dataclasses.replace(settings, oracles=tuple(own_draws))
        with Ticker(runs.progress, "the original", timeout):
            again = runs.call_all([lambda seed=seed: runs.run(runs.source, dataclasses.replace(alone, seed=seed)) for seed in seeds])
        retried = _report(own_draws, again, report.plain, seeds, timeout, options.memory_mb)
        if _first_mismatch(retried) is None:
            report = retried
    _refuse_raising_oracles(report, explicit=options.oracle != "auto")
    return report


def _report(
    specs: list[str], oracle_runs: list[RunResult], plain: list[PlainRun], seeds: list[int], timeout: float, memory_mb: int
) -> CheckReport:
    for run in oracle_runs:
        _refuse_unfinished(run, specs, timeout, memory_mb)
    findings = [OracleFinding(spec, [run.verdict(spec) for run in oracle_runs]) for spec in specs]
    report = CheckReport(findings, oracle_runs, plain=plain, seeds=seeds)
    report.pinned = next((f for f in findings if f.steady), None)
    return report


def _refuse_raising_oracles(report: CheckReport, *, explicit: bool) -> None:
    """An oracle that raised (a plug-in's bug, usually) is named with what it raised where, and the traceback is
    kept for ``--verbose``: where the user named it, or where no oracle could be pinned without it."""

    if report.pinned is not None and not explicit:
        return
    for finding in report.findings:
        failed = next((v for v in finding.verdicts if v.error), None)
        if failed is not None:
            raise MinimizerError(f"oracle {finding.spec} raised {failed.error}", failed.traceback)


def _refuse_unfinished(run: RunResult, specs: list[str], timeout: float, memory_mb: int) -> None:
    if run.timed_out and not (run.verdict("hang").fires and "hang" in specs):
        raise MinimizerError(
            f"the script did not finish within {timeout:.0f} s, outside any compiled call (raise --timeout)"
        )
    if run.memory_exceeded:
        raise MinimizerError(f"the script exceeded the memory limit of {memory_mb} MB")
    if not run.completed and not run.signal and not run.timed_out:
        raise MinimizerError(
            f"the script's process {run.describe_end()}: {run.stderr_tail.strip().splitlines()[-1:] or ''}"
        )


class Ticker:
    """Says every ``every`` seconds that something long is still running (a hang shows as a clock, not silence)."""

    def __init__(self, progress: Progress, what: str, limit: float, every: float = 30.0):
        self.progress, self.what, self.limit, self.every = progress, what, limit, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        started = time.monotonic()
        while not self._stop.wait(self.every):
            elapsed = time.monotonic() - started
            self.progress.message(f"still running {self.what}: {elapsed:.0f} s of at most {self.limit:.0f} s")

    def __enter__(self) -> Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
