"""Benchmark minimizer against shrinkray and pysource-minimize, in one run, with the same interestingness test.

For each example: pin the bug with ``minimizer check`` (oracle and signature), reduce it with ``minimizer
reduce`` and with shrinkray (driven by ``python -m minimizer.interestingness``, so both keep exactly the same
bug), then measure both results the same way. Run it with the project's Python (it drives the project's CLI and
imports ``minimizer.metrics``):

    python bench/run.py [--jobs J] [--max-seconds S] [--examples a.py,b.py] [--tools minimizer,shrinkray]
    python bench/run.py --examples corpus/cases/X/program.py,... --tools minimizer,shrinkray,pysource-minimize \
        --parallel 15 --max-seconds 240     # every (case, tool) at once, on a machine with the cores for it

See bench/README.md for what is measured and how the two tools differ.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import glob
import json
import os
import platform
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BENCH = REPO / "bench"
SHRINKRAY_VENV = BENCH / ".venv-shrinkray"
DEFAULT_EXAMPLES = (
    "examples/skew_requires_grad.py",
    "examples/planted_crash.py",
    "examples/planted_miscompile.py",
    "examples/triton_inplace_grad.py",
    "examples/imported_model_miscompile.py",  # only if present
)
TOOLS = ("minimizer", "shrinkray", "pysource-minimize")
DEFAULT_TOOLS = ("minimizer", "shrinkray")
BASELINES = ("shrinkray", "pysource-minimize")
# Per-call time limit, derived from the original's run time as `minimizer reduce` does by default.
MIN_CALL_TIMEOUT = 30.0
CALL_TIMEOUT_FACTOR = 3.0
CALL_TIMEOUT_SLACK = 10.0
STOP_GRACE_SECONDS = 30.0


class BenchError(Exception):
    """Something the benchmark needs is missing (a Python for shrinkray, a failed install); one line."""


@dataclass(frozen=True)
class Bug:
    """The bug pinned on the original: both tools must keep this oracle firing with this signature."""

    example: Path
    oracle: str
    signature: str
    call_timeout: float

    def interestingness_command(self, *, count_file: Path | None = None) -> list[str]:
        """The exit-code test (without the candidate argument): 0 iff the same bug, 1 otherwise."""

        command = [sys.executable, "-m", "minimizer.interestingness", "--oracle", self.oracle]
        command += ["--signature", self.signature, "--origin-dir", str(self.example.parent)]
        command += ["--filename", self.example.name, "--timeout", str(self.call_timeout)]
        if count_file is not None:
            command += ["--count-file", str(count_file)]
        return command

    def holds_in(self, candidate: Path) -> bool:
        """Whether ``candidate`` still shows this bug (one cold run of the interestingness test)."""

        run = subprocess.run([*self.interestingness_command(), str(candidate)], capture_output=True)
        return run.returncode == 0


@dataclass
class Row:
    """One tool on one example."""

    example: str
    tool: str
    oracle_calls: int | None = None
    wall_seconds: float | None = None
    tokens: int | None = None
    torch_ops: int | None = None
    lines: int | None = None
    same_bug: bool | None = None
    capped: bool = False
    error: str = ""
    extra: dict = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------------- pinning


def pin_bug(example: Path) -> tuple[Bug, dict]:
    """Run ``minimizer check --oracle auto`` on the example; the pinned oracle and its signature."""

    run = subprocess.run(
        [sys.executable, "-m", "minimizer", "check", str(example), "--json", "--oracle", "auto"],
        capture_output=True,
        text=True,
    )
    if run.returncode != 0:
        raise BenchError(f"minimizer check {example} failed: {(run.stdout + run.stderr).strip()[-300:]}")
    report = json.loads(run.stdout)
    pinned = report["pinned"]
    if pinned is None:
        raise BenchError(f"minimizer check pinned no oracle on {example}")
    finding = next(f for f in report["oracles"] if f["oracle"] == pinned)
    seconds = max(report["run_seconds"])
    timeout = max(MIN_CALL_TIMEOUT, CALL_TIMEOUT_FACTOR * seconds + CALL_TIMEOUT_SLACK)
    return Bug(example, pinned, finding["signature"], timeout), report


# ---------------------------------------------------------------------------------------------------- the tools


def measure_into(row: Row, bug: Bug, result: Path) -> None:
    from minimizer.metrics import measure

    size = measure(result.read_text())
    row.tokens, row.torch_ops, row.lines = size.tokens, size.torch_ops, size.lines
    row.same_bug = bug.holds_in(result)


def run_minimizer(bug: Bug, jobs: int, max_seconds: float, scratch: Path) -> Row:
    row = Row(str(bug.example), "minimizer")
    output, report = scratch / bug.example.name, scratch / "report.json"
    command = [sys.executable, "-m", "minimizer", "reduce", str(bug.example), "-o", str(output)]
    command += ["--report", str(report), "--oracle", bug.oracle, "--jobs", str(jobs), "-q"]
    command += ["--max-time", str(max_seconds)]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    row.wall_seconds = round(time.monotonic() - started, 1)
    if run.returncode != 0 or not report.exists():
        row.error = f"exit {run.returncode}: {(run.stdout + run.stderr).strip()[-300:]}"
        return row
    data = json.loads(report.read_text())
    row.oracle_calls = data["oracle_calls"]
    row.capped = bool(data["stopped_early"])
    row.extra = {"cache_hits": data["cache_hits"], "reduce_seconds": data["seconds"], "signature": data["signature"],
                 "trajectory": data.get("trajectory", []), "stated_tokens": data.get("stated_tokens")}
    measure_into(row, bug, output)
    row.extra["output"] = output.read_text()
    return row


def run_shrinkray(
    bug: Bug, jobs: int, max_seconds: float, scratch: Path, shrinkray: Path, extra_args: list[str]
) -> Row:
    row = Row(str(bug.example), "shrinkray")
    # A copy in a folder of its own: shrinkray rewrites its input in place. The candidate is passed as a path;
    # the origin dir stays the example's folder, so `_planted` and `library_model` import as in the original.
    candidate = scratch / bug.example.name
    shutil.copy(bug.example, candidate)
    count_file = scratch / "calls"
    test = scratch / "interesting.sh"
    test.write_text(f"#!/bin/sh\nexec {shlex.join(bug.interestingness_command(count_file=count_file))} \"$1\"\n")
    test.chmod(0o755)
    command = [str(shrinkray), "--parallelism", str(jobs), "--timeout", str(bug.call_timeout + 30)]
    # --no-llm: the default LLM passes would download a 2.7 GB model and run it on the CPU; we compare the
    # classic (and Python-aware) passes. Extra arguments come last so that they can override these.
    no_llm = ["--no-llm"] if "--no-llm" in _shrinkray_help(shrinkray) else []  # releases before the LLM passes lack it
    command += ["--input-type", "arg", "--ui", "basic", *no_llm, *extra_args, str(test), str(candidate)]
    log = scratch / "shrinkray.log"
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=scratch, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            row.capped = True
            _stop(process)
    # Capped: the wall time is the cap; the seconds shrinkray took to stop are not reduction time.
    elapsed = time.monotonic() - started
    row.wall_seconds = round(min(elapsed, max_seconds) if row.capped else elapsed, 1)
    row.oracle_calls = len(count_file.read_text().splitlines()) if count_file.exists() else 0
    row.extra = {"returncode": process.returncode, "log_tail": log.read_text()[-2000:]}
    if process.returncode not in (0, None) and not row.capped:
        row.error = f"shrinkray exit {process.returncode}: {log.read_text().strip()[-300:]}"
    # Stopped by SIGKILL, shrinkray may not have written its best to the file; its history has every step.
    if row.capped and (latest := _latest_in_history(scratch, candidate.name)) is not None:
        if len(latest.read_text()) < len(candidate.read_text()):
            shutil.copy(latest, candidate)
    measure_into(row, bug, candidate)
    row.extra["output"] = candidate.read_text()
    return row


def run_pysource_minimize(bug: Bug, max_seconds: float, scratch: Path) -> Row:
    """pysource-minimize through bench/pysource_driver.py (it has no time limit: stopped at the cap, its best
    so far is on disk)."""

    row = Row(str(bug.example), "pysource-minimize")
    best, count_file, log = scratch / bug.example.name, scratch / "calls", scratch / "pysource.log"
    command = [sys.executable, str(BENCH / "pysource_driver.py"), str(bug.example), str(best), str(count_file), "--"]
    command += bug.interestingness_command()
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(command, cwd=scratch, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            process.wait(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            row.capped = True
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    elapsed = time.monotonic() - started
    row.wall_seconds = round(min(elapsed, max_seconds) if row.capped else elapsed, 1)
    row.oracle_calls = len(count_file.read_text().splitlines()) if count_file.exists() else 0
    row.extra = {"returncode": process.returncode, "log_tail": log.read_text()[-2000:]}
    if not best.exists():
        row.error = f"pysource-minimize wrote nothing: {log.read_text().strip()[-300:]}"
        return row
    if process.returncode not in (0, None) and not row.capped:
        row.error = f"pysource-minimize exit {process.returncode}: {log.read_text().strip()[-300:]}"
    measure_into(row, bug, best)
    row.extra["output"] = best.read_text()
    return row


@functools.lru_cache(maxsize=None)
def _shrinkray_help(shrinkray: Path) -> str:
    return subprocess.run([str(shrinkray), "--help"], capture_output=True, text=True).stdout


def _latest_in_history(scratch: Path, name: str) -> Path | None:
    """shrinkray's last recorded reduction (``.shrinkray/<run>/reductions/NNNN/<name>``), if any."""

    steps = sorted(scratch.glob(f".shrinkray/*/reductions/*/{name}"), key=lambda path: path.parent.name)
    return steps[-1] if steps else None


def _stop(process: subprocess.Popen) -> None:
    """Stop shrinkray: SIGINT (it then stops its tests and keeps its best so far), SIGKILL after a grace period.

    shrinkray starts each test in a session of its own, so a test left behind by the SIGKILL is not reached
    here; it ends by itself within its per-call timeout.
    """

    try:
        os.killpg(process.pid, signal.SIGINT)
        process.wait(timeout=STOP_GRACE_SECONDS)
    except ProcessLookupError:
        return
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


# ---------------------------------------------------------------------------------------------------- shrinkray


def find_python_312(explicit: str | None) -> str:
    """A Python >= 3.12 for shrinkray: ``--shrinkray-python``, python3.13/3.12 on PATH, or pyenv's 3.12/3.13."""

    candidates = [explicit] if explicit else []
    candidates += [shutil.which(name) for name in ("python3.13", "python3.12")]
    candidates += sorted(glob.glob("/root/.pyenv/versions/3.1[23]*/bin/python3"), reverse=True)
    for candidate in filter(None, candidates):
        # A pyenv shim is on PATH even when its version is not active; only running it tells.
        probe = subprocess.run(
            [candidate, "-c", "import sys; sys.exit(sys.version_info < (3, 12))"], capture_output=True
        )
        if probe.returncode == 0:
            return candidate
        if candidate == explicit:
            raise BenchError(f"--shrinkray-python {explicit} is not a working Python >= 3.12")
    raise BenchError("no Python >= 3.12 found for shrinkray; pass --shrinkray-python")


def ensure_shrinkray(explicit_python: str | None) -> Path:
    """Install the newest shrinkray from PyPI into bench/.venv-shrinkray (once); the path of its command."""

    command = SHRINKRAY_VENV / "bin" / "shrinkray"
    if command.exists():
        return command
    python = find_python_312(explicit_python)
    print(f"installing shrinkray into {SHRINKRAY_VENV} with {python} ...", file=sys.stderr)
    subprocess.run([python, "-m", "venv", str(SHRINKRAY_VENV)], check=True)
    pip = subprocess.run(
        [str(SHRINKRAY_VENV / "bin" / "pip"), "install", "-q", "--upgrade", "shrinkray"], capture_output=True, text=True
    )
    if pip.returncode != 0 or not command.exists():
        raise BenchError(f"pip install shrinkray failed: {pip.stderr.strip()[-500:]}")
    return command


def shrinkray_version() -> str:
    python = SHRINKRAY_VENV / "bin" / "python"
    if not python.exists():
        return ""
    run = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('shrinkray'))"],
        capture_output=True,
        text=True,
    )
    return run.stdout.strip()


# ---------------------------------------------------------------------------------------------------- reporting


def _installed_version(distribution: str) -> str:
    import importlib.metadata

    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return ""


def machine_info() -> dict:
    import torch

    cpu_model = ""
    try:
        cpu_model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        cpu_model = platform.processor()
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cores": os.cpu_count(),
        "cpu_model": cpu_model,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "torch": torch.__version__,
        "gpu": gpu,
        "shrinkray": shrinkray_version(),
        "pysource_minimize": _installed_version("pysource-minimize"),
    }


COLUMNS = ("example", "tool", "oracle calls", "wall s", "final tokens", "final torch ops", "same bug")


def print_table(rows: list[Row], originals: dict[str, dict]) -> None:
    def shown(value) -> str:
        return "-" if value is None else str(value)

    def cells(row: Row) -> list[str]:
        wall = "-" if row.wall_seconds is None else f"{row.wall_seconds:.0f}" + (" (capped)" if row.capped else "")
        same = {True: "yes", False: "NO", None: "?"}[row.same_bug] + (f" ({row.error})" if row.error else "")
        return [row.example, row.tool, shown(row.oracle_calls), wall, shown(row.tokens), shown(row.torch_ops), same]

    table = [list(COLUMNS)]
    for example, original in originals.items():
        table.append([example, "(original)", "", "", str(original["tokens"]), str(original["torch_ops"]), ""])
        if original.get("hand_minimal_tokens") is not None:
            table.append([example, "(hand-minimal)", "", "", str(original["hand_minimal_tokens"]),
                          str(original["hand_minimal_torch_ops"]), ""])
        table += [cells(row) for row in rows if row.example == example]
    print_aligned(table)


def print_aligned(table: list[list[str]]) -> None:
    """Columns padded to their widest cell, the first line as the header."""

    widths = [max(len(line[i]) for line in table) for i in range(len(table[0]))]
    for i, line in enumerate(table):
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths)).rstrip())
        if i == 0:
            print("  ".join("-" * width for width in widths))


def cost_to_reach(minimizer: Row, tokens: int) -> tuple[int, float] | None:
    """minimizer's oracle calls and seconds until its repro was first no larger than ``tokens``, from its
    report's trajectory; None if it never got there.

    The trajectory measures the reduced script before the bug is stated at its end; what stating it added to
    the final repro (the report's ``stated_tokens``) is added to every point, so the comparison never flatters
    minimizer. Reports without that field: the final size minus the trajectory's last point.
    """

    trajectory = minimizer.extra.get("trajectory") or []
    if not trajectory or minimizer.tokens is None:
        return None
    stated = minimizer.extra.get("stated_tokens")
    if stated is None:
        stated = max(0, minimizer.tokens - trajectory[-1]["tokens"])
    for point in trajectory:
        if point["tokens"] + stated <= tokens:
            return point["oracle_calls"], point["seconds"]
    return None


def print_matched(rows: list[Row]) -> None:
    """Each baseline's final size, with its calls and seconds, beside what minimizer spent to first reach it."""

    for baseline in BASELINES:
        table = [["example", f"{baseline} tokens", "its calls", "its s", "minimizer calls", "minimizer s",
                  "calls ratio", "time ratio"]]
        for theirs in (r for r in rows if r.tool == baseline and r.tokens is not None and r.same_bug):
            ours = next((r for r in rows if r.tool == "minimizer" and r.example == theirs.example and r.same_bug), None)
            reached = cost_to_reach(ours, theirs.tokens) if ours else None
            head = [theirs.example, str(theirs.tokens), str(theirs.oracle_calls), f"{theirs.wall_seconds:.0f}"]
            if reached is None:
                table.append(head + ["not reached", "", "", ""])
                continue
            calls, seconds = reached
            table.append(head + [str(calls), f"{seconds:.0f}", f"{calls / max(1, theirs.oracle_calls):.2f}",
                                 f"{seconds / max(1e-9, theirs.wall_seconds):.2f}"])
        if len(table) > 1:
            print(f"\nAt {baseline}'s final size: what minimizer spent to first get its repro that small")
            print_aligned(table)


# ---------------------------------------------------------------------------------------------------- main


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="minimizer vs shrinkray on the examples, side by side.")
    parser.add_argument("--jobs", "-j", type=int, default=1, help="parallel candidates for both tools (default 1)")
    parser.add_argument("--max-seconds", type=float, default=1800.0, help="wall-time cap per tool and example")
    parser.add_argument("--examples", help="comma-separated example paths (default: the planted + Triton ones)")
    parser.add_argument("--tools", default=",".join(DEFAULT_TOOLS), help=f"comma-separated, of: {','.join(TOOLS)}")
    parser.add_argument("--parallel", type=int, default=1, help="(example, tool) runs at once (default 1)")
    parser.add_argument("--json-out", type=Path, help="default: bench/results/<date>-<host>.json")
    parser.add_argument("--shrinkray-python", help="a Python >= 3.12 for shrinkray's venv")
    parser.add_argument("--shrinkray-args", default="", help="extra shrinkray options, e.g. '--llm'")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders (paths in the JSON)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    if unknown := set(tools) - set(TOOLS):
        print(f"error: unknown tools {sorted(unknown)}; choose from {', '.join(TOOLS)}", file=sys.stderr)
        return 2
    if args.examples:
        examples = [Path(e).resolve() for e in args.examples.split(",") if e.strip()]
        if missing := [str(e) for e in examples if not e.exists()]:
            print(f"error: no such example: {', '.join(missing)}", file=sys.stderr)
            return 2
    else:
        examples = [REPO / e for e in DEFAULT_EXAMPLES if (REPO / e).exists()]
    try:
        shrinkray = ensure_shrinkray(args.shrinkray_python) if "shrinkray" in tools else None
    except (BenchError, subprocess.CalledProcessError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from minimizer.metrics import measure

    info = machine_info()
    rows: list[Row] = []
    originals: dict[str, dict] = {}
    scratch_root = Path(tempfile.mkdtemp(prefix="minimizer-bench-"))
    out = args.json_out or BENCH / "results" / f"{dt.date.today().isoformat()}-{info['host']}.json"
    settings = {"jobs": args.jobs, "max_seconds": args.max_seconds, "tools": tools, "shrinkray_args": args.shrinkray_args,
                "parallel": args.parallel}

    def save() -> None:
        # After every row: a long run that is stopped keeps what it measured.
        result = {"machine": info, "settings": settings, "originals": originals, "rows": [asdict(r) for r in rows]}
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_suffix(".tmp")
        tmp.write_text(json.dumps(result, indent=2) + "\n")
        tmp.replace(out)
    def pin(example: Path):
        name = str(example.relative_to(REPO)) if example.is_relative_to(REPO) else str(example)
        print(f"== {name}: pinning the bug", file=sys.stderr)
        try:
            bug, check = pin_bug(example)
        except BenchError as exc:
            return name, None, str(exc)
        size = measure(example.read_text())
        # An example's hand-minimal repro is examples/hand_minimal/NAME; a corpus case's is hand.py beside it.
        hand = next((h for h in (example.parent / "hand_minimal" / example.name, example.parent / "hand.py")
                     if h.exists() and h != example), None)
        hand_size = measure(hand.read_text()) if hand else None
        originals[name] = {
            **size.to_json(),
            "oracle": bug.oracle,
            "signature": bug.signature,
            "call_timeout": bug.call_timeout,
            "run_seconds": check["run_seconds"],
            "hand_minimal_tokens": hand_size.tokens if hand_size else None,
            "hand_minimal_torch_ops": hand_size.torch_ops if hand_size else None,
        }
        return name, bug, ""

    def reduce_with(name: str, bug: Bug, tool: str) -> Row:
        print(f"== {name}: {tool} (oracle {bug.oracle}, jobs {args.jobs})", file=sys.stderr)
        scratch = scratch_root / name.replace("/", "_") / tool
        scratch.mkdir(parents=True)
        if tool == "minimizer":
            row = run_minimizer(bug, args.jobs, args.max_seconds, scratch)
        elif tool == "shrinkray":
            row = run_shrinkray(bug, args.jobs, args.max_seconds, scratch, shrinkray, shlex.split(args.shrinkray_args))
        else:
            row = run_pysource_minimize(bug, args.max_seconds, scratch)
        row.example = name
        print(f"   {name} {tool}: {row.oracle_calls} calls, {row.wall_seconds} s, {row.tokens} tokens, "
              f"same bug {row.same_bug}", file=sys.stderr)
        return row

    # Every tool on a case runs under the same load: with --parallel, all (case, tool) runs go at once.
    with ThreadPoolExecutor(max(1, args.parallel)) as pool:
        pinned = list(pool.map(pin, examples))
        for name, _, error in pinned:
            if error:
                rows.append(Row(name, "(check)", error=error))
                originals[name] = {"tokens": "-", "torch_ops": "-"}
        runs = [pool.submit(reduce_with, name, bug, tool) for name, bug, _ in pinned if bug for tool in tools]
        for future in as_completed(runs):
            rows.append(future.result())
            save()

    print_table(rows, originals)
    print_matched(rows)
    save()
    print(f"\nwrote {out}")
    if args.keep:
        print(f"scratch kept in {scratch_root}")
    else:
        shutil.rmtree(scratch_root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
