"""One line per saved run of bench/jobs_speedup.py: what a candidate's launch cost and what resident workers did.

    python bench/resident_summary.py RUN.json...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def summary(path: Path) -> str:
    run = json.loads(path.read_text())
    report = run["report"]
    candidates = report.get("candidates", {})
    parts = candidates.get("median_parts") or {}
    launch = {kind: (parts.get(kind) or {}).get("launch and exit") for kind in ("shows the bug", "does not")}
    resident = candidates.get("resident_workers") or {}
    runs = candidates.get("runs") or 0
    first = next((p["seconds"] for p in report.get("trajectory", []) if p.get("oracle_calls")), None)
    return (
        f"{path.parent.name}: {run['wall_seconds']:.1f} s wall, {report['before']['tokens']} -> {report['after']['tokens']} "
        f"tokens, {report['oracle_calls']} oracle calls, {runs} runs ({candidates.get('cancelled', 0)} cancelled, "
        f"{(candidates.get('cancelled', 0) / runs if runs else 0):.0%}), median run {candidates.get('median_seconds')} s, "
        f"launch and exit (shows / does not) {launch['shows the bug']} / {launch['does not']} s, "
        f"first step at {first} s, residents {resident}"
    )


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(summary(Path(name)))
