"""The command line: parse options, call the library, print results. No behaviour of its own."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import signal
import sys
from pathlib import Path
from typing import Any, List, NoReturn, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from minimizer.errors import MinimizerError, ReproDoesNotFail
from minimizer.files import refuse_unwritable
from minimizer.progress import QuietProgress, make_progress
from minimizer.runner.process import kill_all_candidates
from minimizer.stages.check import diagnose
from minimizer.outcome import Outcome
from minimizer.session import Options, Session

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Shrink a failing torch.compile / Triton script to the smallest script that shows the same bug.",
)
EXIT_USER_ERROR = 2


class Reducer(str, enum.Enum):
    auto = "auto"
    source = "source"
    graph = "graph"


class TestStyle(str, enum.Enum):
    pytorch = "pytorch"
    pytest = "pytest"


class Resident(str, enum.Enum):
    auto = "auto"
    always = "always"
    never = "never"


EXIT_INTERRUPTED = 130
EXIT_NOT_A_REPRO = 1


def _fail(error: str | MinimizerError, code: int = EXIT_USER_ERROR, *, verbose: bool = False) -> NoReturn:
    console = Console(stderr=True, soft_wrap=True)
    details = getattr(error, "details", "")
    hint = " (--verbose shows its traceback)" if details and not verbose else ""
    console.print(f"[bold red]error:[/] {escape(str(error) + hint)}", highlight=False, markup=True)
    if details and verbose:
        console.print(details.rstrip(), highlight=False, markup=False)
    raise typer.Exit(code)


def _interrupt_on_termination() -> None:
    """SIGTERM and SIGHUP (``timeout``, a closed terminal, a job scheduler) stop a run as Ctrl-C does: the best
    repro so far stays on disk and no process of the run is left behind."""

    def interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    for number in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(number, interrupt)


@app.command()
def reduce(
    script: Optional[Path] = typer.Argument(None, help="The failing script (it is never modified).", show_default=False),
    script_args: Optional[List[str]] = typer.Argument(None, help="The script's own arguments, after --.", show_default=False),
    from_trace: Optional[Path] = typer.Option(None, "--from-trace", help="Instead of SCRIPT: a TORCH_TRACE folder (or a folder of fx_graph_runnable programs) the failing job left; the first graph that fails alone here is reduced, the job is never run; the repro goes to DIR.min.py unless -o says."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Where to write the repro \\[default: SCRIPT.min.py]."),
    report: Optional[Path] = typer.Option(None, "--report", help="Also write a JSON report here."),
    oracle: str = typer.Option("auto", "--oracle", help="auto, a built-in name, file.py:name or package.module:name."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per candidate \\[default: from the original's run time]."),
    memory_mb: int = typer.Option(8000, "--memory-mb", help="Resident memory limit per candidate, in MB."),
    jobs: Optional[int] = typer.Option(
        None, "--jobs", "-j", min=1, help="Candidates evaluated at once \\[default: half the cores, at most 8 (more on hosts with more GPUs)]."
    ),
    confirm: int = typer.Option(2, "--confirm", help="Runs of the original (and of the result) that must all show the bug."),
    max_time: Optional[float] = typer.Option(None, "--max-time", help="Finish in about this many seconds with the best so far (the reduction stops early enough to state and confirm the repro)."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress output."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="With an error, also what lies behind it (a plug-in oracle's traceback)."),
    cold: bool = typer.Option(False, "--cold", help="Start a fresh interpreter per candidate (no warm workers)."),
    resident: Resident = typer.Option(Resident.auto, "--resident", help="auto, always or never: workers that start CUDA once and run candidate after candidate (auto: where a GPU is visible)."),
    share_verdicts: bool = typer.Option(
        True,
        "--share-verdicts/--no-share-verdicts",
        help="Candidates whose compiled calls will be the same (same graphs, inputs, settings) share one verdict.",
    ),
    reducer: Reducer = typer.Option(Reducer.auto, "--reducer", help="source, graph, or auto (source, then graph when the model lives outside the script)."),
    culprit: bool = typer.Option(True, "--culprit/--no-culprit", help="Name the compiler layer of the repro's bug: four more runs of the repro, one per backend."),
    subsystem: bool = typer.Option(True, "--subsystem/--no-subsystem", help="Where the layer is Inductor, name its subsystem and the application that breaks (torch's compiler bisector: some twenty plain runs of the repro)."),
    subsystem_seconds: float = typer.Option(120.0, "--subsystem-seconds", help="The bisector's time at most; not asked where twenty runs of the repro would not fit."),
    cheaper_backend: bool = typer.Option(True, "--cheaper-backend/--script-backend", help="Candidates compile with the cheapest backend below Inductor that shows the bug, where the script takes Inductor's default (three more runs of the original); the repro is confirmed with the script's own."),
    issue: Optional[Path] = typer.Option(None, "--issue", help="Also write an issue body for the PyTorch tracker here (Markdown)."),
    ray: Optional[str] = typer.Option(
        None, "--ray", envvar="MINIMIZER_RAY", help="Run candidates as Ray tasks: 'local' starts a Ray cluster here, else an address (or 'auto': RAY_ADDRESS)."
    ),
    fixed_in: Optional[Path] = typer.Option(None, "--fixed-in", help="An interpreter where the bug is fixed (a venv's python with the release that fixed it): the original must pass there, and so must the repro."),
    as_test: Optional[TestStyle] = typer.Option(None, "--as-test", help="Also write the repro as a regression test beside it (test_REPRO.py), in PyTorch's style or as a pytest function, checked to fail today and to pass with torch.compile as the identity."),
) -> None:
    """Minimize SCRIPT: write the smallest script that still shows the same bug. The script's own arguments
    go after --: `minimizer reduce train.py -- --steps 2`."""

    if (script is None) == (from_trace is None):
        _fail("give the failing script, or --from-trace DIR (a folder the failing job's TORCH_TRACE left), not both")
    if from_trace is not None:
        script, output = _program_from_trace(from_trace, output, timeout)
    options = Options(
        script=script, output=output, report=report, oracle=oracle, timeout=timeout, memory_mb=memory_mb,
        jobs=jobs, confirm=confirm, max_time=max_time, cold=cold, resident=resident.value,
        reducer=reducer.value,
        share_verdicts=share_verdicts,
        culprit=culprit, subsystem=subsystem, subsystem_seconds=subsystem_seconds,
        cheaper_backend=cheaper_backend,
        ray=ray,
        script_args=tuple(script_args or ()),
        fixed_in=fixed_in,
    )
    outcome = _reduce(options, make_progress(quiet), verbose, issue)
    if not quiet:
        _print_outcome(outcome)
    _test_and_issue(outcome, options, as_test, issue, quiet)


def _test_and_issue(outcome: Outcome, options: Options, as_test: Optional[TestStyle], issue: Optional[Path], quiet: bool) -> None:
    """After a reduction: the regression test (``--as-test``) and the issue body (``--issue``) of its repro."""

    test, test_problems = None, []
    if as_test is not None:
        beside = options.script.resolve().parent
        known = outcome.python.get("failure") if outcome.python.get("fails_as_claimed") else None
        test, test_problems = _write_regression_test(outcome.output, None, as_test, beside, options.timeout, known)
    if issue is not None:
        _write_issue(outcome.output, issue, command="minimizer " + " ".join(sys.argv[1:]), test=test)
        if not quiet:
            Console().print(f"issue body: {issue}", highlight=False)
    if test_problems:
        raise typer.Exit(EXIT_NOT_A_REPRO)


def _print_outcome(outcome: Outcome) -> None:
    console = Console()
    console.print(
        f"[bold]{outcome.output}[/]: {outcome.before.tokens} -> {outcome.after.tokens} tokens, "
        f"{outcome.before.torch_ops} -> {outcome.after.torch_ops} torch ops, "
        f"{outcome.oracle_calls} oracle calls, {outcome.seconds:.0f} s",
        highlight=False,
    )
    console.print(f"oracle {outcome.oracle}: {outcome.bug.in_words()}", highlight=False, markup=False)
    if outcome.time:
        stages = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in outcome.time["stages"].items())
        console.print(
            f"time: {stages}; {outcome.time['original_runs']} runs of the whole original "
            f"({outcome.time['original_run_seconds']:.0f} s of run time)",
            highlight=False, markup=False,
        )


def _reduce(options: Options, progress: Any, verbose: bool, issue: Optional[Path]) -> Outcome:
    """``Session.reduce`` with every way it can end told in one line and an exit status."""

    session = None
    _interrupt_on_termination()
    try:
        refuse_unwritable(("--issue", issue))
        session = Session(options, progress)
        return session.reduce()
    except MinimizerError as exc:
        progress.close()
        _fail(exc, EXIT_NOT_A_REPRO if isinstance(exc, ReproDoesNotFail) else EXIT_USER_ERROR, verbose=verbose)
    except KeyboardInterrupt:
        kill_all_candidates()
        progress.close()
        Console(stderr=True).print(f"interrupted; the best repro so far is in {options.output_path}")
        raise typer.Exit(EXIT_INTERRUPTED)
    except BaseException:
        kill_all_candidates()
        progress.close()
        if options.output_path.exists():
            Console(stderr=True).print(f"minimizer crashed; the best repro so far is in {options.output_path}")
        raise
    finally:
        if session is not None:
            session.close()
        progress.close()


@app.command()
def check(
    script: Path = typer.Argument(..., help="The script to check."),
    script_args: Optional[List[str]] = typer.Argument(None, help="The script's own arguments, after --.", show_default=False),
    oracle: str = typer.Option("auto", "--oracle", help="auto (every built-in) or one oracle spec."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds for the script to run."),
    confirm: int = typer.Option(1, "--confirm", help="How many runs."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    culprit: bool = typer.Option(True, "--culprit/--no-culprit", help="Name the compiler layer of the bug: four more runs, one per backend."),
    subsystem: bool = typer.Option(False, "--subsystem/--no-subsystem", help="Where the layer is Inductor, name its subsystem and the application that breaks (torch's compiler bisector on the original: some twenty plain runs, at most 90 s)."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="With an error, also what lies behind it (a plug-in oracle's traceback)."),
) -> None:
    """Run SCRIPT under the oracles and show which fire, with their signatures, and the compiler layer of the bug."""

    options = Options(
        script=script, oracle=oracle, timeout=timeout, confirm=confirm, cold=True, script_args=tuple(script_args or ()),
        subsystem=subsystem, subsystem_seconds=3600.0,  # asked for by name: as long as it takes, within an hour
    )
    session = None
    _interrupt_on_termination()
    try:
        session = Session(options, QuietProgress())
        report = session.check()
        problem = diagnose(report, explicit_oracle=oracle != "auto")
        # What `reduce` would hold the reduction to (a generic assert over several compiled targets).
        held = session.hold_to_one_compiled_target(report.pinned, report) if problem is None else None
        layer = session.culprit(held, report) if held is not None and culprit else None
    except MinimizerError as exc:
        _fail(exc, verbose=verbose)
    except KeyboardInterrupt:
        kill_all_candidates()
        raise typer.Exit(EXIT_INTERRUPTED)
    finally:
        if session is not None:
            session.close()
    held_to = session.only_compile if held is not None and held is not report.pinned else None
    if as_json:
        print(json.dumps({**report.to_json(), "problem": problem, "held_to": held_to,
                          "culprit": layer.to_json() if layer else None}, indent=2))
        return
    table = Table(title=f"{script} on {report.device}, torch {report.torch_version}")
    for column in ("oracle", "fires", "signature", "detail"):
        table.add_column(column, overflow="fold")
    for finding in report.findings:
        fires = "yes" if finding.steady else (f"{finding.fired}/{len(finding.verdicts)}" if finding.fired else "no")
        pinned = " (pinned)" if report.pinned is finding else ""
        # Signatures are full of brackets (`[kernels: k]`) that rich would read as markup.
        table.add_row(escape(finding.spec + pinned), fires, escape(finding.signature), escape(finding.detail))
    console = Console()
    console.print(f"plain python: {report.plain_summary()}", highlight=False, markup=False)
    console.print(table)
    if held_to is not None:
        console.print(
            f"held: the assert fails with only {held_to} compiled; reduce compiles only it ({held.signature})",
            highlight=False,
            markup=False,
        )
    if layer is not None:
        console.print(f"culprit: {layer.describe()}", highlight=False, markup=False)
    if problem is not None:
        console.print(f"not reducible as it is: {problem}", highlight=False, markup=False)


def _program_from_trace(folder: Path, output: Optional[Path], timeout: Optional[float]) -> tuple[Path, Path]:
    """The first graph of a job's trace that fails here, written beside the repro (``OUT.traced.py``) as the
    script to reduce; that path and the repro's."""

    from minimizer.files import write_atomic
    from minimizer.runner.run_types import Limits
    from minimizer.stages.from_trace import graph_that_fails

    if not folder.is_dir():
        _fail(f"not a folder: {folder}")
    output = output or folder.resolve().parent / f"{folder.resolve().name}.min.py"
    traced = output.with_name(f"{output.name.removesuffix('.py').removesuffix('.min')}.traced.py")
    console = Console(stderr=True, soft_wrap=True)
    try:
        refuse_unwritable(("-o", output), ("the traced graph", traced))
        graph, program = graph_that_fails(folder, Limits(timeout=timeout or 600.0), lambda line: console.print(line, highlight=False, markup=False))
    except MinimizerError as exc:
        _fail(exc)
    write_atomic(traced, f"# The graph of {graph.origin}, from the trace in {folder}\n{program}")
    console.print(f"reducing {traced} (the graph of {graph.origin})", highlight=False, markup=False)
    return traced, output


@app.command("test")
def test_command(
    repro: Path = typer.Argument(..., help="A repro (minimizer's, or any script that fails because of the compiler)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Where to write the test [default: test_REPRO.py beside it]."),
    style: TestStyle = typer.Option(TestStyle.pytorch, "--style", help="pytorch: a TestCase method run by run_tests(); pytest: a test_ function."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per run of the test [default: 600]."),
) -> None:
    """Write REPRO as the regression test its fix needs, and check it: it fails under plain python as the repro
    does and under pytest, and passes with torch.compile as the identity. Exit status 1 where it does not."""

    if not repro.is_file():
        _fail(f"no such file: {repro}")
    _, problems = _write_regression_test(repro, output, style, repro.resolve().parent, timeout)
    if problems:
        raise typer.Exit(EXIT_NOT_A_REPRO)


def _write_regression_test(
    repro: Path,
    output: Optional[Path],
    style: TestStyle,
    beside: Path,
    timeout: Optional[float],
    repro_failure: Optional[str] = None,
) -> tuple[str, list[str]]:
    """Write and check the regression test of ``repro`` (``minimizer.regression_test``): its text, and what keeps
    it from being one (the test stays on disk for a person to mend); ``repro_failure``: how the repro fails under
    plain python, where the reduction's confirmation saw it."""

    from minimizer.files import write_atomic
    from minimizer.regression_check import check_regression_test
    from minimizer.regression_test import regression_test
    from minimizer.runner.run_types import Limits

    output = output or repro.with_name(f"test_{repro.name.removesuffix('.py').replace('.', '_')}.py")
    try:
        refuse_unwritable(("-o", output))
        test = regression_test(repro.read_text(), style=style.value, name=output.stem.removeprefix("test_"))
    except (MinimizerError, SyntaxError, ValueError) as exc:
        _fail(f"cannot write the test of {repro}: {exc}")
    write_atomic(output, test)
    console = Console(soft_wrap=True)
    console.print(f"checking the regression test {output}", highlight=False)
    checked = check_regression_test(
        test, output.name, repro.read_text(), beside, Limits(timeout=timeout or 600.0), repro_failure=repro_failure
    )
    console.print(f"{output}: {checked.describe()}", highlight=False, markup=False)
    return test, checked.problems


@app.command("triage")
def triage_command(
    folder: Path = typer.Argument(..., help="A folder of failing scripts (e.g. a fuzzer's output)."),
    script_args: Optional[List[str]] = typer.Argument(None, help="Arguments for every script, after --.", show_default=False),
    out: Path = typer.Option(..., "-o", "--out", help="Where index.json, index.md and the repros go."),
    jobs: int = typer.Option(2, "-j", "--jobs", min=1, help="Scripts checked at once; candidates at once when minimizing."),
    timeout: Optional[float] = typer.Option(None, "--timeout", help="Seconds per run of a script."),
    confirm: int = typer.Option(2, "--confirm", help="Runs per script."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="No progress output."),
    ray: Optional[str] = typer.Option(
        None, "--ray", envvar="MINIMIZER_RAY", help="Checks and candidates as Ray tasks: 'local', an address, or 'auto' (RAY_ADDRESS)."
    ),
) -> None:
    """Check every script in FOLDER, group the bugs by oracle and signature, minimize one script per bug."""

    from minimizer.triage import Triage

    if not folder.is_dir():
        _fail(f"not a folder: {folder}")
    try:
        refuse_unwritable(("-o", out), folder=True)
    except MinimizerError as exc:
        _fail(exc)
    console = Console(stderr=True)
    say = (lambda _: None) if quiet else (lambda line: console.print(line, highlight=False, markup=False))

    backend = None
    if ray:
        from minimizer.runner.ray_backend import RayBackend

        try:
            backend = RayBackend(ray)
        except MinimizerError as exc:
            _fail(exc)
        jobs = max(jobs, backend.slots)
    arguments = tuple(script_args or ())
    # Each bug's repro without its culprit or the cheaper backend's ladder: seven runs more for every bug of a
    # folder, most of them Inductor's; `minimizer check` names the culprit, `reduce` takes the cheaper backend.
    each = Options(script=folder, jobs=jobs, confirm=confirm, timeout=timeout, ray=ray, script_args=arguments,
                   culprit=False, cheaper_backend=False)
    _interrupt_on_termination()
    try:
        triage = Triage(folder, out, jobs=jobs, timeout=timeout, confirm=confirm, say=say, ray=backend, script_args=arguments)
        index = triage.run(functools.partial(_minimize_for_triage, each))
    except KeyboardInterrupt:
        kill_all_candidates()
        Console(stderr=True).print(f"interrupted; what is done is in {out} (run again to go on)")
        raise typer.Exit(EXIT_INTERRUPTED)
    finally:
        if backend is not None:
            backend.close()
    if not quiet:
        Console().print(
            f"{len(index['bugs'])} bugs, {len(index['passing'])} passing, {len(index['invalid'])} invalid, "
            f"{len(index['flaky'])} flaky: {out / 'index.md'}",
            highlight=False,
        )


def _minimize_for_triage(each: Options, script: Path, target: Path, oracle_spec: str) -> tuple[int, str]:
    """One bug of a triage minimized (``each``: the options every reduction shares); its tokens and signature."""

    options = dataclasses.replace(each, script=script, output=target, oracle=oracle_spec)
    session = Session(options, QuietProgress())
    try:
        outcome = session.reduce()
    finally:
        session.close()
    return outcome.after.tokens, outcome.signature


@app.command("bisect")
def bisect_command(
    repro: Path = typer.Argument(..., help="The repro to run on each release (under plain python)."),
    torch_releases: Optional[str] = typer.Option(None, "--torch", help="Comma-separated releases, e.g. 2.4.1,2.5.1,2.6.0."),
    torch_range: Optional[str] = typer.Option(None, "--torch-range", help="LOW:HIGH minor versions, e.g. 2.4:2.9 (the newest patch of each)."),
    venv_dir: Optional[Path] = typer.Option(None, "--venv-dir", help="Where the venvs are kept, one per release \\[default: ~/.cache/minimizer/venvs]."),
    confirm: int = typer.Option(2, "--confirm", help="Runs per release."),
    timeout: float = typer.Option(600.0, "--timeout", help="Seconds per run."),
    as_json: Optional[Path] = typer.Option(None, "--json", help="Also write the table as JSON here (for `report --bisect`)."),
) -> None:
    """Run REPRO under plain python on several torch releases; name the last good and first bad."""

    from minimizer.bisect import DEFAULT_VENV_DIR, available_releases, bisect, releases_in_range
    from minimizer.runner.run_types import Limits

    if not repro.is_file():
        _fail(f"no such file: {repro}")
    releases = [r.strip() for r in (torch_releases or "").split(",") if r.strip()]
    if torch_range:
        offered = available_releases()
        if not offered:
            _fail("cannot list torch releases (`pip index versions torch` failed); name them with --torch")
        releases += releases_in_range(torch_range, offered)
    if not releases:
        _fail("name the releases: --torch 2.4.1,2.5.1 or --torch-range 2.4:2.9")
    console = Console(stderr=True)
    _interrupt_on_termination()
    try:
        outcome = bisect(
            repro.read_text(),
            repro.name,
            str(repro.resolve().parent),
            sorted(set(releases)),
            venv_dir=venv_dir or DEFAULT_VENV_DIR,
            confirm=confirm,
            limits=Limits(timeout=timeout),
            say=lambda line: console.print(line, highlight=False, markup=False),
        )
    except KeyboardInterrupt:
        raise typer.Exit(EXIT_INTERRUPTED)
    table = Table()
    for column in ("torch", "result", "failure"):
        table.add_column(column, overflow="fold")
    for result in outcome.results:
        rate = f" ({result.failed_runs} of {result.runs})" if result.runs and result.failed_runs else ""
        table.add_row(result.release, result.status + rate, escape(result.failure or ""))
    Console().print(table)
    Console().print(outcome.verdict, highlight=False, markup=False)
    if as_json is not None:
        from minimizer.files import write_atomic

        write_atomic(as_json, json.dumps(outcome.to_json(), indent=2) + "\n")


@app.command("report")
def report_command(
    repro: Path = typer.Argument(..., help="The repro (a minimizer output, or any failing script)."),
    output: Optional[Path] = typer.Option(None, "-o", "--output", help="Write the issue body here instead of printing it."),
    bisect_json: Optional[Path] = typer.Option(None, "--bisect", help="A table from `minimizer bisect --json`."),
) -> None:
    """Write an issue body for the PyTorch tracker: title, repro, error under plain python, expected vs
    actual, the releases table, the environment."""

    if not repro.is_file():
        _fail(f"no such file: {repro}")
    _write_issue(repro, output, bisect_json=bisect_json)


def _write_issue(
    repro: Path, output: Optional[Path], *, bisect_json: Optional[Path] = None, command: Optional[str] = None,
    test: Optional[str] = None,
) -> None:
    from minimizer.bisect import Bisection
    from minimizer.files import write_atomic
    from minimizer.report import issue_body

    bisection = None
    if bisect_json is not None:
        try:
            data = json.loads(bisect_json.read_text())
            bisection = Bisection.from_json(data)
        except (OSError, ValueError, KeyError, TypeError) as error:
            _fail(f"cannot read the bisect table {bisect_json}: {error}")
    text = issue_body(repro, bisection=bisection, command=command, test=test)
    if output is None:
        print(text, end="")
    else:
        write_atomic(output, text)


@app.command("oracles")
def list_oracles() -> None:
    """List every oracle minimizer can find: built-ins and installed plug-ins."""

    from oracles.registry import available_oracles

    table = Table()
    for column in ("oracle", "from", "what it detects"):
        table.add_column(column, overflow="fold")
    for entry in available_oracles():
        table.add_row(entry.name, entry.origin, entry.summary)
    Console().print(table)


def main() -> None:  # pragma: no cover - `python -m minimizer`
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
