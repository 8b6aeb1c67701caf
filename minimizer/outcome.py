"""What one reduction did: the report ``--report`` writes (see README, The report)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from minimizer.metrics import Size
from minimizer.runner.run_types import CompileCacheStats
from oracles.bug import Bug


@dataclass
class Outcome:
    output: Path
    oracle: str
    bug: Bug
    before: Size
    after: Size
    oracle_calls: int
    cache_hits: int
    screened_out: int
    seconds: float
    accepted_steps: int
    stopped_early: bool
    final_fire_rate: tuple[int, int]
    passes: list[dict] = field(default_factory=list)
    compile_cache: CompileCacheStats = field(default_factory=CompileCacheStats)
    # One point per step that made the best repro smaller: what it cost to get that small.
    trajectory: list[dict] = field(default_factory=list)
    # Tokens the repro has past the step it was made from (``Statement.step``): the statement of the bug (see
    # minimizer.source.statement) and the seed line that makes plain python draw what the oracles drew.
    stated_tokens: int = 0
    jobs: int = 1
    gpus: int = 0  # GPUs the candidates were spread over (see minimizer.runner.gpus)
    sharing: dict = field(default_factory=dict)
    # CPU seconds of minimizer's own process (proposing, screening, scheduling), the candidates' not counted.
    parent_cpu_seconds: float = 0.0
    # CPU seconds of the helper processes that screened candidates for the parent (-j above 1).
    screen_cpu_seconds: float = 0.0
    # The repro under plain python: whether every run failed as the oracles' runs did, and the runs.
    python: dict = field(default_factory=dict)
    # Where candidates ran: {"backend": "local"} or Ray's {"backend": "ray", "nodes", "cpus", "gpus"}.
    backend: dict = field(default_factory=lambda: {"backend": "local"})
    # What the candidates' runs cost (see minimizer.candidate_log).
    candidates: dict = field(default_factory=dict)
    # False in the report written as the reduction stops, before the repro is stated and confirmed.
    final: bool = True
    # What a plain python run of the original and of the repro cost: {"original"|"repro": {"seconds", "peak_mb"}}.
    cost: dict = field(default_factory=dict)
    # The reducers that made the repro, in order: "graph" (the lift or the graph stage), "source".
    reducers: list[str] = field(default_factory=list)
    # What the repro's failing check compares, as its confirmation runs recorded it (``oracles.evidence``):
    # ``allclose: compares the output of the compiled call (float32 [8]) with ...``; "" for a crash.
    compares: str = ""
    # The compiler layer the bug lives in (``minimizer.stages.culprit.Culprit.to_json``); {} before it is named.
    culprit: dict = field(default_factory=dict)
    # The backend candidates compiled with, where a cheaper one than the script's showed the bug ("": the script's).
    reduced_with: str = ""
    # Where the time went: seconds per stage, runs of the whole original (``minimizer.stage_clock``).
    time: dict = field(default_factory=dict)

    @property
    def signature(self) -> str:
        return self.bug.signature

    def to_json(self) -> dict:
        return {
            "final": self.final,
            "output": str(self.output),
            "oracle": self.oracle,
            "signature": self.signature,
            "fails": self.bug.in_words(),
            "bug": self.bug.to_json(),
            "compares": self.compares,
            "culprit": self.culprit,
            "reducers": self.reducers,
            "reduced_with": self.reduced_with,
            "oracle_calls": self.oracle_calls,
            "cache_hits": self.cache_hits,
            "screened_out": self.screened_out,
            "seconds": round(self.seconds, 2),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "accepted_steps": self.accepted_steps,
            "stopped_early": self.stopped_early,
            "final_confirmations": {"fired": self.final_fire_rate[0], "runs": self.final_fire_rate[1]},
            "compile_cache": self.compile_cache.to_json(),
            "passes": self.passes,
            "trajectory": self.trajectory,
            "stated_tokens": self.stated_tokens,
            "jobs": self.jobs,
            "gpus": self.gpus,
            "sharing": self.sharing,
            "parent_cpu_seconds": round(self.parent_cpu_seconds, 2),
            "screen_cpu_seconds": round(self.screen_cpu_seconds, 2),
            **self.backend,
            "python": self.python,
            "cost": self.cost,
            "candidates": self.candidates,
            "time": self.time,
        }
