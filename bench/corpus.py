"""Reduce every case of corpus/ with default options and check that each output is the same bug.

Each case is a realistic program with a bug buried in it (``program.py``), its hand-minimal repro (``hand.py``)
and ``case.json`` (the torch release it fires on, where it comes from, and where it must pass). A case runs in
a venv of its torch release, with the project installed there:

    python bench/corpus.py                                  # every case; venvs found or named below
    python bench/corpus.py --cases planted_fusion_pass --max-time 600    # one limit for every case named
    python bench/corpus.py --venv 2.5.1=/path/to/venv/bin/python

For each case it writes tokens, oracle calls and seconds, and the same-bug checks of the output, to
``bench/results/<date>-corpus-<host>.json``:

- ``fails``: ``python out.py`` (beside the case's other files) fails as the original or the hand-minimal repro
  does (same exception type);
- ``identity_passes``: with ``torch.compile`` replaced by the identity, ``out.py`` exits 0 (cases whose bug is
  the compiler's; a Triton-kernel case has no compile);
- ``identity_fails_earlier``: for a compiled call that runs where eager raises, the repro calls eager after it;
  with the identity, the compiled call itself raises, on an earlier line;
- ``passes_on``: ``out.py`` exits 0 on the release named in ``case.json`` (the fix, or before a regression);
- ``compares_the_suspect``: for a case whose ``case.json`` says so (the check shapes of issue 46), the failing
  check of ``out.py`` compares a value of the compiled call or kernel (``minimizer check --oracle script``
  names the comparison: its bug's ``comparison`` field), as the program's does;
- ``passes_fixed``: for a case with no compile and no release to pass on (a hand-written Triton kernel),
  ``case.json``'s ``fix`` ([old, new] text) applied to ``out.py`` makes it exit 0; an output without the
  text no longer holds the buggy code and fails the check.

Apart from those, ``layer_named``: where ``case.json`` knows the compiler layer of the bug (``layer``: where it
was planted), whether the report's ``culprit`` names it (``minimizer.stages.culprit``); with ``--subsystem``,
``subsystem_named``: where ``case.json`` knows Inductor's subsystem (``subsystem``: the planted post-grad pass is in
``post_grad_passes``), whether the bisected subsystem is it. And ``beyond_its_smallest_step``: the tokens the
repro has past the smallest step the reduction accepted and the statement's tokens (issue 47: a repro handed
back from an earlier, larger step); the summary lists the cases with any.

A case whose ``case.json`` ``needs`` a package its interpreter lacks (``transformers``, ``diffusers``: the
``[models]`` extra) is skipped, saying so. A case on an older torch pins the library release of its time
(``libraries``: ``["transformers==4.46.3"]``); ``--create-venvs`` installs the pins with torch pinned beside them.

Each case gets ``--max-time`` from its ``case.json`` (``max_time``: 600 for the library programs, whose runs cost
seconds each) or 300, unless ``--max-time`` sets one for all.

The tool is never told which case it runs: it gets the program, as a user would give it.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# The reductions this bench starts run this checkout's minimizer, not whichever one the interpreter has installed
# (a bench run from a worktree of another commit measured the installed one).
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))

from minimizer.metrics import measure  # noqa: E402
from minimizer.regression_check import UNDER_THE_IDENTITY  # noqa: E402
from minimizer.runner.plain import run_plain  # noqa: E402
from minimizer.runner.process import Limits  # noqa: E402

CASES = REPO / "corpus" / "cases"
VENVS = REPO / "corpus" / ".venvs"
CHECK_TIMEOUT = 600.0
DEFAULT_MAX_TIME = 300.0


@dataclass
class CaseResult:
    case: str
    kind: str
    torch: str
    upstream: str | None
    original_tokens: int
    hand_tokens: int
    output_tokens: int | None = None
    ratio: float | None = None
    oracle: str | None = None
    signature: str | None = None
    oracle_calls: int | None = None
    seconds: float | None = None
    exit_code: int | None = None
    error: str | None = None
    checks: dict = field(default_factory=dict)
    output: str | None = None  # the reduced program, to read what is left
    reducers: list = field(default_factory=list)  # which reducers made the repro, in order (the report's)
    cost: dict = field(default_factory=dict)  # plain-python seconds and peak memory, original and repro
    time: dict = field(default_factory=dict)  # the report's seconds per stage and runs of the original
    passes: list = field(default_factory=list)  # per pass: proposed, accepted, size removed, per proposal
    libraries: dict = field(default_factory=dict)  # the release of each library the case needs, as installed
    max_time: float | None = None  # the --max-time it was reduced under (0: none)
    # The compiler layer the repro's report names and the one the case says the bug lives in (``layer`` in
    # case.json, where it is known); not a same-bug check: a wrong name is the culprit's error, not the repro's.
    culprit: dict = field(default_factory=dict)
    layer_known: str | None = None
    subsystem_known: str | None = None  # ``subsystem`` in case.json; compared only where it was bisected
    # The smallest step the reduction accepted and the tokens its statement added (the report's trajectory and
    # ``stated_tokens``): a repro larger than both together was handed back from an earlier, larger step.
    smallest_step: int | None = None
    stated_tokens: int = 0

    @property
    def beyond_its_smallest_step(self) -> int | None:
        """How many tokens the repro has past its smallest step and its statement (0 where none; ``None``
        where not reduced)."""

        if self.output_tokens is None or self.smallest_step is None:
            return None
        return max(0, self.output_tokens - self.smallest_step - self.stated_tokens)

    @property
    def layer_named(self) -> bool | None:
        return None if self.layer_known is None else self.culprit.get("layer") == self.layer_known

    @property
    def subsystem_named(self) -> bool | None:
        """Whether the bisected subsystem (``post_grad_passes, application 1 (...)``) is the one the case names;
        ``None`` where the case names none, none was asked for, or its torch predates the bisector (2.6)."""

        bisected = self.culprit.get("subsystem") or ""
        asked = bisected or self.culprit.get("detail")
        if self.subsystem_known is None or not asked or tuple(map(int, self.torch.split(".")[:2])) < (2, 6):
            return None
        return bisected.split(",")[0].strip() == self.subsystem_known

    @property
    def same_bug(self) -> bool:
        return bool(self.checks) and all(self.checks.values())


def torch_version(python: str) -> str | None:
    try:
        out = subprocess.run(
            [python, "-c", "import torch; print(torch.__version__.split('+')[0])"],
            capture_output=True,
            text=True,
            timeout=300,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None


def find_python(version: str, named: dict[str, str]) -> str | None:
    """The interpreter for a torch release: named on the command line, this one, or corpus/.venvs/torch-V."""

    if version in named:
        return named[version]
    if torch_version(sys.executable) == version:
        return sys.executable
    candidate = VENVS / f"torch-{version}" / "bin" / "python"
    return str(candidate) if candidate.exists() else None


def create_venv(version: str, libraries: list[str]) -> str:
    """corpus/.venvs/torch-V with torch V, the library releases its cases pin (``case.json``'s ``libraries``,
    installed with torch pinned: a library may pull a torch of its own) and the project."""

    venv = VENVS / f"torch-{version}"
    python = venv / "bin" / "python"
    if not python.exists():
        print(f"creating {venv} (torch=={version}; a CUDA build is several GB)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", f"torch=={version}", *libraries], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "-e", str(REPO)], check=True)
    return str(python)


def fails_like(python: str, folder: Path, script: str, wanted_types: set[str]) -> tuple[bool, str | None]:
    run = run_plain((folder / script).read_text(), script, str(folder), Limits(timeout=CHECK_TIMEOUT), python=python)
    failure_type = run.failure.split(":", 1)[0] if run.failure else None
    return run.fails and (not wanted_types or failure_type in wanted_types), run.failure


def failing_line(python: str, folder: Path, script: str, identity: bool = False) -> tuple[int, ...] | None:
    """Where in ``script`` its run raised: the lines of its frames, outermost first (a call inside a function
    the script defines raises in that function's line either way; the module-level line that called it tells
    the compiled call from the eager one), or None if it did not raise."""

    run = _run(python, folder, script, identity)
    frames = re.findall(rf'File "[^"]*{re.escape(script)}", line (\d+)', run.stderr_tail)
    return tuple(int(line) for line in frames) if run.fails and frames else None


def exits_zero(python: str, folder: Path, script: str, identity: bool = False) -> bool:
    return _run(python, folder, script, identity).returncode == 0


def compares_the_suspect(python: str, folder: Path, script: str) -> bool:
    """Whether ``script``'s failing check compares a value of the compiled call or kernel, as the harness recorded
    it (``oracles.evidence``)."""

    done = subprocess.run(
        [python, "-m", "minimizer", "check", script, "--oracle", "script", "--json"],
        cwd=folder, capture_output=True, text=True, timeout=CHECK_TIMEOUT,
    )
    try:
        verdicts = json.loads(done.stdout)["oracles"]
    except (ValueError, KeyError):
        return False
    return any(v["oracle"] == "script" and (v.get("bug") or {}).get("comparison") for v in verdicts)


def _exits_zero_fixed(python: str, folder: Path, fixed: str) -> bool:
    (folder / "fixed.py").write_text(fixed)
    return exits_zero(python, folder, "fixed.py")


def _run(python: str, folder: Path, script: str, identity: bool):
    source = (folder / script).read_text()
    if identity:
        name = "_identity_run.py"
        (folder / name).write_text(UNDER_THE_IDENTITY.format(script=str(folder / script)))
        source, script = (folder / name).read_text(), name
    return run_plain(source, script, str(folder), Limits(timeout=CHECK_TIMEOUT), python=python)


def _release(python: str, package: str) -> str:
    done = subprocess.run([python, "-c", f"import {package}; print({package}.__version__)"], capture_output=True, text=True)
    return done.stdout.strip()


def _imports(python: str, package: str) -> bool:
    return subprocess.run([python, "-c", f"import {package}"], capture_output=True).returncode == 0


def run_case(name: str, pythons: dict[str, str], args: argparse.Namespace, case_dir: Path | None = None) -> CaseResult:
    """Reduce the case ``name`` (of corpus/cases, or in ``case_dir``) and check its output (see above)."""

    case_dir = case_dir or CASES / name
    meta = json.loads((case_dir / "case.json").read_text())
    program = (case_dir / "program.py").read_text()
    result = CaseResult(
        case=name,
        kind=meta["kind"],
        torch=meta["torch"],
        upstream=meta.get("upstream"),
        original_tokens=measure(program).tokens,
        hand_tokens=measure((case_dir / "hand.py").read_text()).tokens,
    )
    python = pythons.get(meta["torch"])
    if python is None:
        result.error = f"no interpreter with torch {meta['torch']} (--venv {meta['torch']}=PYTHON or --create-venvs)"
        return result
    missing = [package for package in meta.get("needs", []) if not _imports(python, package)]
    if missing:
        pins = " ".join(meta.get("libraries", []))
        how = f"pip install torch=={meta['torch']} {pins}" if pins else "pip install '.[models]'"
        result.error = f"skipped: needs {', '.join(missing)} ({how})"
        return result
    result.libraries = {package: _release(python, package) for package in meta.get("needs", [])}
    scratch = Path(tempfile.mkdtemp(prefix=f"corpus-{name}-"))
    try:
        work = scratch / "case"
        shutil.copytree(case_dir, work, ignore=shutil.ignore_patterns("hand.py", "case.json", "__pycache__"))
        # The output fails as the original does, or as the hand-minimal repro does (which states the bug directly
        # where the program checks it in its own way, e.g. catches eager's error and asserts on the outcomes).
        shutil.copy(case_dir / "hand.py", work / "hand.py")
        wanted_types = set()
        for script in ("program.py", "hand.py"):
            _, failure = fails_like(python, work, script, set())
            wanted_types |= {failure.split(":", 1)[0]} if failure else set()
        report = scratch / "report.json"
        command = [python, "-m", "minimizer", "reduce", "program.py", "-o", str(scratch / "out.py"), "-q"]
        command += ["--report", str(report), "-j", str(args.jobs)] + (["--subsystem"] if getattr(args, "subsystem", False) else [])
        result.max_time = args.max_time if args.max_time is not None else meta.get("max_time", DEFAULT_MAX_TIME)
        if result.max_time:
            command += ["--max-time", str(result.max_time)]
        started = time.monotonic()
        done = subprocess.run(command, cwd=work, capture_output=True, text=True)
        result.seconds = round(time.monotonic() - started, 1)
        result.exit_code = done.returncode
        if done.returncode not in (0, 1) or not (scratch / "out.py").exists():
            result.error = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
            return result
        data = json.loads(report.read_text())
        result.oracle, result.signature = data["oracle"], data["signature"]
        result.oracle_calls, result.passes = data["oracle_calls"], data.get("passes", [])
        result.reducers, result.cost = data.get("reducers", []), data.get("cost", {})
        result.time = data.get("time", {})
        result.culprit, result.layer_known = data.get("culprit", {}), meta.get("layer")
        result.subsystem_known = meta.get("subsystem")
        steps = [point["tokens"] for point in data.get("trajectory", [])]
        result.smallest_step, result.stated_tokens = min(steps, default=None), data.get("stated_tokens", 0)
        output = (scratch / "out.py").read_text()
        result.output, result.output_tokens = output, measure(output).tokens
        result.ratio = round(result.output_tokens / result.hand_tokens, 2)
        shutil.copy(scratch / "out.py", work / "out.py")
        result.checks["fails"], _ = fails_like(python, work, "out.py", wanted_types)
        if meta.get("identity_passes"):
            result.checks["identity_passes"] = exits_zero(python, work, "out.py", identity=True)
        if meta.get("identity_fails_earlier"):
            # Eager raises where the compiled call does not: with torch.compile as the identity, the compiled
            # call itself raises, before the line that fails with the compiler.
            compiled, identity = (failing_line(python, work, "out.py", identity=flag) for flag in (False, True))
            result.checks["identity_fails_earlier"] = None not in (compiled, identity) and identity < compiled
        if meta.get("compares_the_suspect"):
            result.checks["compares_the_suspect"] = compares_the_suspect(python, work, "out.py")
        if meta.get("fix"):
            old, new = meta["fix"]
            result.checks["passes_fixed"] = old in output and _exits_zero_fixed(python, work, output.replace(old, new))
        passes_on = meta.get("passes_on")
        if passes_on:
            other = pythons.get(passes_on)
            if other is not None:
                result.checks[f"passes_on_{passes_on}"] = exits_zero(other, work, "out.py")
        if args.keep:
            print(f"  kept {scratch}")
        return result
    finally:
        if not args.keep:
            shutil.rmtree(scratch, ignore_errors=True)


def _pinned_libraries(names: list[str], version: str) -> list[str]:
    """The library releases the cases of torch ``version`` among ``names`` pin, each once."""

    metas = [json.loads((CASES / n / "case.json").read_text()) for n in names]
    return sorted({pin for meta in metas if meta["torch"] == version for pin in meta.get("libraries", [])})


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="comma-separated case names (default: all)")
    parser.add_argument("--venv", action="append", default=[], help="VERSION=PYTHON, an interpreter with that torch")
    parser.add_argument("--create-venvs", action="store_true", help="create corpus/.venvs/torch-V where missing")
    parser.add_argument(
        "--max-time", type=float, default=None,
        help=f"passed to minimizer reduce for every case (0: none; default: the case's max_time, else {DEFAULT_MAX_TIME:.0f})",
    )
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--subsystem", action="store_true", help="reduce with --subsystem (Inductor's subsystem bisected)")
    parser.add_argument("--json-out", default="")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args()

    names = [n for n in args.cases.split(",") if n] or sorted(p.name for p in CASES.iterdir() if p.is_dir())
    named = dict(item.split("=", 1) for item in args.venv)
    versions = sorted({json.loads((CASES / n / "case.json").read_text())["torch"] for n in names})
    versions += sorted(
        {v for n in names if (v := json.loads((CASES / n / "case.json").read_text()).get("passes_on"))} - set(versions)
    )
    pythons: dict[str, str] = {}
    for version in versions:
        python = find_python(version, named)
        if python is None and args.create_venvs:
            python = create_venv(version, _pinned_libraries(names, version))
        if python is not None:
            pythons[version] = python
    out = Path(args.json_out) if args.json_out else (
        REPO / "bench" / "results" / f"{dt.date.today().isoformat()}-corpus-{socket.gethostname()}.json"
    )
    results: list[CaseResult] = []
    for name in names:
        print(f"{name}: reducing", flush=True)
        result = run_case(name, pythons, args)
        results.append(result)
        status = result.error or (
            f"{result.original_tokens} -> {result.output_tokens} tokens (hand {result.hand_tokens}, "
            f"{result.ratio}x), {result.oracle_calls} calls, {result.seconds} s, oracle {result.oracle}, "
            f"checks {result.checks}"
            + (f", layer {'named' if result.layer_named else 'NOT named'} ({result.culprit.get('layer')})" if result.layer_known else "")
            + (f", subsystem {_told(result.subsystem_named)} ({result.culprit.get('subsystem') or result.culprit.get('detail') or 'none'})" if args.subsystem else "")
            + (f", {result.beyond_its_smallest_step} tokens past its smallest step" if result.beyond_its_smallest_step else "")
        )
        print(f"{name}: {status}", flush=True)
        write_results(out, results, pythons, args)  # after each case: a long run stopped keeps what is done
    print(f"wrote {out}")


def _told(named: bool | None) -> str:
    return {True: "named", False: "NOT named", None: "not checked"}[named]


def _host(pythons: dict[str, str]) -> dict:
    """The processor and, per torch, the vector instructions its CPU kernels use: a CPU-codegen bug may fire on one
    host and not another (``today_uint8_abs_invert_tile`` passed on an AVX2 host)."""

    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), "") if Path("/proc/cpuinfo").exists() else ""
    probe = "import torch; print(torch.backends.cpu.get_cpu_capability())"
    capability = {
        version: subprocess.run([python, "-c", probe], capture_output=True, text=True).stdout.strip()
        for version, python in pythons.items()
    }
    return {"cpu": model, "cpu_capability": capability}


def write_results(out: Path, results: list[CaseResult], pythons: dict[str, str], args: argparse.Namespace) -> None:
    ratios = [r.ratio for r in results if r.ratio is not None]
    summary = {
        "cases": len(results),
        "reduced": len(ratios),
        "same_bug": sum(r.same_bug for r in results),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "max_ratio": max(ratios) if ratios else None,
        "layer_named": f"{sum(r.layer_named is True for r in results)}/{sum(r.layer_named is not None for r in results)}",
        "subsystem_named": f"{sum(r.subsystem_named is True for r in results)}/"
        f"{sum(r.subsystem_named is not None for r in results)}",
        "beyond_smallest_step": [r.case for r in results if r.beyond_its_smallest_step],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "commit": subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip(),
        "options": {"jobs": args.jobs, "max_time": args.max_time if args.max_time is not None else "per case"},
        "pythons": pythons,
        "host": _host(pythons),
        "summary": summary,
        "results": [
            asdict(r) | {"same_bug": r.same_bug, "layer_named": r.layer_named, "subsystem_named": r.subsystem_named,
                         "beyond_its_smallest_step": r.beyond_its_smallest_step}
            for r in results
        ],
    }
    partial = out.with_suffix(".part")
    partial.write_text(json.dumps(payload, indent=2) + "\n")
    partial.replace(out)


if __name__ == "__main__":
    main()
