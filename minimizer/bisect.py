"""Which torch releases have the bug: the repro run under plain python in a cached venv per release.

A release is one of: fails (with what), passes, cannot install, cannot import. The boundary between the
releases that pass and those that fail names the last good and first bad release (a regression) or the
release that fixed it. Venvs live in ``<venv dir>/torch-<release>`` and are reused across runs; they are
made with uv where it is on PATH, else with ``python -m venv`` and pip, from whatever registry the machine
reaches.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from minimizer.runner.plain import run_plain
from minimizer.runner.run_types import Limits

FAILS, PASSES, FLAKY, CANNOT_INSTALL, CANNOT_IMPORT = "fails", "passes", "flaky", "cannot install", "cannot import"
INSTALL_TIMEOUT = 3600.0
DEFAULT_VENV_DIR = Path.home() / ".cache" / "minimizer" / "venvs"


@dataclass
class ReleaseResult:
    release: str
    status: str
    failure: str | None = None  # what the repro failed with (the first failing run), or why it could not run
    runs: int = 0
    failed_runs: int = 0
    python: str | None = None

    def to_json(self) -> dict:
        return {
            "release": self.release,
            "status": self.status,
            "failure": self.failure,
            "runs": self.runs,
            "failed_runs": self.failed_runs,
        }


@dataclass
class Bisection:
    results: list[ReleaseResult] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        """One line: the boundary between good and bad releases, in release order."""

        known = [r for r in self.results if r.status in (FAILS, PASSES)]
        if not known:
            return "no release could run the repro"
        if all(r.status == FAILS for r in known):
            return f"fails on every release that ran ({known[0].release} to {known[-1].release})"
        if all(r.status == PASSES for r in known):
            return f"passes on every release that ran ({known[0].release} to {known[-1].release})"
        changes = [(a, b) for a, b in zip(known, known[1:]) if a.status != b.status]
        first, second = changes[0]
        if len(changes) > 1:
            steps = ", ".join(f"{a.release} {a.status} -> {b.release} {b.status}" for a, b in changes)
            return f"goes back and forth: {steps}"
        if first.status == PASSES:
            return f"regression: last good {first.release}, first bad {second.release}"
        return f"fixed in {second.release} (last bad {first.release})"

    def to_json(self) -> dict:
        return {"verdict": self.verdict, "releases": [r.to_json() for r in self.results]}

    @classmethod
    def from_json(cls, data: dict) -> Bisection:
        """A table written by ``to_json`` (``minimizer bisect --json``)."""

        return cls([
            ReleaseResult(r["release"], r["status"], r.get("failure"), r.get("runs", 0), r.get("failed_runs", 0))
            for r in data["releases"]
        ])

    def markdown(self) -> str:
        lines = ["| torch | result | failure |", "| --- | --- | --- |"]
        for r in self.results:
            failure = (r.failure or "").replace("|", "\\|").replace("\n", " ")
            rate = f" ({r.failed_runs} of {r.runs} runs)" if r.status in (FAILS, FLAKY) else ""
            lines.append(f"| {r.release} | {r.status}{rate} | {failure} |")
        return "\n".join(lines) + f"\n\n{self.verdict}\n"


def release_key(release: str) -> tuple:
    """Sort key for a release string like ``2.5.1`` (a local tag such as ``+cpu`` is ignored)."""

    return tuple(int(part) if part.isdigit() else 0 for part in re.split(r"[.+]", release)[:3])


def releases_in_range(spec: str, available: Sequence[str]) -> list[str]:
    """``2.4:2.9`` -> the newest patch release of each minor version from 2.4 to 2.9 among ``available``."""

    low, _, high = spec.partition(":")
    lo, hi = release_key(low)[:2], release_key(high or low)[:2]
    newest: dict[tuple, str] = {}
    for release in available:
        if "+" in release or not re.fullmatch(r"\d+\.\d+(\.\d+)?", release):
            continue
        minor = release_key(release)[:2]
        if lo <= minor <= hi and (minor not in newest or release_key(release) > release_key(newest[minor])):
            newest[minor] = release
    return sorted(newest.values(), key=release_key)


def available_releases(python: str = sys.executable) -> list[str]:
    """torch releases the registry offers (``pip index versions torch``); [] when it cannot be asked."""

    try:
        out = subprocess.run(
            [python, "-m", "pip", "index", "versions", "torch"], capture_output=True, text=True, timeout=120
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return []
    match = re.search(r"Available versions: (.*)", out)
    return [v.strip() for v in match.group(1).split(",")] if match else []


def venv_python(venv_dir: Path, release: str) -> Path:
    return venv_dir / f"torch-{release}" / "bin" / "python"


def ensure_venv(venv_dir: Path, release: str, say: Callable[[str], None]) -> tuple[Path | None, str | None]:
    """The venv's python for ``release`` (made if missing), or ``(None, one-line reason)``."""

    python = venv_python(venv_dir, release)
    marker = python.parent.parent / ".minimizer-torch-installed"
    if python.exists() and marker.exists():
        return python, None
    venv = python.parent.parent
    if python.exists():
        say(f"torch {release}: checking torch=={release} in {venv}")
    else:
        say(f"torch {release}: building {venv} (a CUDA build of torch is several GB; this is done once)")
    uv = shutil.which("uv")
    try:
        if uv:
            _run([uv, "venv", "--python", sys.executable, str(venv)])
            _run([uv, "pip", "install", "--python", str(python), f"torch=={release}"])
        else:
            if not python.exists():
                _run([sys.executable, "-m", "venv", str(venv)])
            _run([str(python), "-m", "pip", "install", "-q", f"torch=={release}"])
    except _InstallFailed as failed:
        return None, str(failed)
    marker.write_text(release + "\n")
    return python, None


class _InstallFailed(Exception):
    pass


def _run(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise _InstallFailed(f"{Path(command[0]).name} took over {INSTALL_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
        errors = [line for line in lines if "error" in line.lower()] or lines
        raise _InstallFailed(errors[-1].strip()[:200] if errors else f"exit status {done.returncode}")


def imports_torch(python: Path) -> str | None:
    """``None`` when ``python`` imports torch, else the last line of why not."""

    try:
        done = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)[:200]
    if done.returncode == 0:
        return None
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    return (lines[-1] if lines else f"exit status {done.returncode}")[:200]


def run_release(
    release: str, python: Path, source: str, filename: str, beside: str | None, confirm: int, limits: Limits
) -> ReleaseResult:
    """The repro ``confirm`` times under plain python in ``python``'s venv."""

    why = imports_torch(python)
    if why is not None:
        return ReleaseResult(release, CANNOT_IMPORT, why, python=str(python))
    runs = [run_plain(source, filename, beside, limits, python=str(python)) for _ in range(max(1, confirm))]
    failing = [run for run in runs if run.fails]
    if not failing:
        status = PASSES
    elif len(failing) == len(runs) and len({run.failure for run in failing}) == 1:
        status = FAILS
    else:
        status = FLAKY
    failure = failing[0].describe() if failing else None
    return ReleaseResult(release, status, failure, len(runs), len(failing), str(python))


def bisect(
    source: str,
    filename: str,
    beside: str | None,
    releases: Sequence[str],
    *,
    venv_dir: Path = DEFAULT_VENV_DIR,
    confirm: int = 1,
    limits: Limits | None = None,
    pythons: dict[str, Path] | None = None,
    say: Callable[[str], None] = lambda _: None,
) -> Bisection:
    """Run the repro on each release, in release order. ``pythons`` names ready interpreters for some releases
    (no venv is made for those)."""

    limits = limits or Limits(timeout=600)
    pythons = pythons or {}
    outcome = Bisection()
    for release in sorted(releases, key=release_key):
        python = pythons.get(release)
        if python is None:
            python, why = ensure_venv(venv_dir, release, say)
            if python is None:
                outcome.results.append(ReleaseResult(release, CANNOT_INSTALL, why))
                say(f"torch {release}: cannot install ({why})")
                continue
        say(f"torch {release}: running the repro {max(1, confirm)} time(s)")
        result = run_release(release, python, source, filename, beside, confirm, limits)
        say(f"torch {release}: {result.status}" + (f" ({result.failure})" if result.failure else ""))
        outcome.results.append(result)
    return outcome
