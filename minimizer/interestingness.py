"""An exit-code interestingness test, so that any external reducer (shrinkray, C-Reduce, ...) can use our oracles.

    python -m minimizer.interestingness --oracle SPEC --signature SIG --origin-dir DIR FILE_OR_DASH

runs the candidate (a file, or stdin for ``-``) once through the isolated runner, in a fresh interpreter (no warm
worker: the external reducer pays the normal cost of a cold start per call), and exits 0 iff the oracle fires with
exactly the signature SIG, else 1. Exit status 2 is argparse's, for bad options.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from minimizer.runner.process import run_candidate
from minimizer.runner.run_types import Limits, RunResult, RunSettings
from minimizer.source.statement import COMPARED_BY_AN_ASSERT, COMPARED_WITH_EAGER, stated_message
from oracles.bug import ALSO_WITHOUT_COMPILE, Bug, same_bug
from oracles.registry import canonical_spec

INTERESTING = 0
NOT_INTERESTING = 1


def shows_bug(result: RunResult, oracle: str, pinned: Bug | str, *, stated: bool) -> bool:
    """Whether a run shows the bug: ``oracle`` fires with the ``pinned`` bug (``oracles.bug.same_bug``; an
    external reducer's ``--signature`` text is that bug's signature). A repro that states the bug (see
    ``minimizer.source.statement``) must also fail on its own: ``script`` fires.

    The in-place check stated in a script takes over the harness's saved-tensor hooks, so for ``inplace`` the
    stated assert itself is the evidence. A comparison stated as an assert must fail by it, comparing a value
    of the suspect (``Bug.by_a_comparison``): a statement that raises on its own (``autograd.grad`` of a tensor
    that needs no gradient), or compares what no longer comes from the compiled call, shows nothing.
    """

    verdict = result.verdict(oracle)
    seen = verdict.found
    shown = verdict.fires and (seen.signature == pinned if isinstance(pinned, str) else same_bug(pinned, seen))
    if not stated:
        return shown
    standalone = result.verdict("script")
    alone = standalone.found
    # The saved-tensor check runs inside backward, where no comparison is followed: its own assert is its evidence.
    compares = oracle == "inplace" or alone.by_a_comparison
    if oracle in COMPARED_BY_AN_ASSERT and not (alone.is_assertion and compares):
        return False
    if oracle in COMPARED_WITH_EAGER and alone.under_compile == ALSO_WITHOUT_COMPILE:
        return False  # the stated comparison fails with the identity too (NaN on both sides): not the compiler's bug
    return standalone.fires and (shown or (oracle == "inplace" and stated_message(oracle) in alone.failure))


def oracles_to_run(oracle: str) -> tuple[str, ...]:
    """``inplace`` also needs ``script``, to recognize a repro that states the in-place bug."""

    return (oracle, "script") if oracle == "inplace" else (oracle,)


def is_interesting(source: str, oracle: str, signature: str, settings: RunSettings) -> bool:
    """Run ``source`` under ``settings`` and say whether it shows the bug, stated as code or not."""

    result = run_candidate(source, settings)
    return shows_bug(result, oracle, signature, stated=False) or shows_bug(result, oracle, signature, stated=True)


def append_count(path: Path, line: str) -> None:
    """Append one line with a single O_APPEND write, so that parallel calls never interleave."""

    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m minimizer.interestingness",
        description="Exit 0 iff the oracle fires on the candidate with exactly the given signature, else 1.",
    )
    parser.add_argument("candidate", help="the candidate script, or - to read it from stdin")
    parser.add_argument("--oracle", required=True, help="oracle spec, as pinned by `minimizer check`")
    parser.add_argument("--signature", required=True, help="the signature the oracle must fire with")
    parser.add_argument("--origin-dir", required=True, help="the original script's folder (first on sys.path)")
    parser.add_argument("--filename", default="repro.py", help="the candidate's file name in its run directory")
    parser.add_argument("--timeout", type=float, default=300.0, help="wall seconds per run (default 300)")
    parser.add_argument("--count-file", type=Path, help="append one line per call to this file")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    source = sys.stdin.read() if args.candidate == "-" else Path(args.candidate).read_text()
    oracle = canonical_spec(args.oracle)
    settings = RunSettings(
        filename=args.filename,
        origin_dir=str(Path(args.origin_dir).resolve()),
        oracles=oracles_to_run(oracle),
        limits=Limits(timeout=args.timeout),
    )
    started = time.monotonic()
    interesting = is_interesting(source, oracle, args.signature, settings)
    if args.count_file is not None:
        append_count(args.count_file, f"{time.time():.3f} {time.monotonic() - started:.2f} {int(interesting)}")
    return INTERESTING if interesting else NOT_INTERESTING


if __name__ == "__main__":
    sys.exit(main())
