"""Reduce the generated programs of a seed range (bench/generate.py) and check each output as a corpus case.

    python bench/generated.py --seeds 0-9 --venv 2.13.0=.venv/bin/python
    python bench/generated.py --seeds 100-139 --json bench/results/generated-100-139.json
    python bench/generated.py --seeds 492-531 --venv 2.13.0=PY213 --venv 2.5.1=PY251   # real bugs fire on 2.5.1

For each seed: the program is written to a scratch folder; its hand repro must fail as the program does and pass
with the fix (``torch.compile`` as the identity, or the kernel's line mended), else the generator is at fault and
the seed is reported as such (a real upstream bug's program fails on torch 2.5.1 and passes on 2.13.0, its
fixed release); then ``minimizer reduce`` with default options (``--max-time`` 300 s, 600 s for a
library model) and the checks of ``bench/corpus.py`` (the output fails as the program does, passes with the fix,
and its failing check compares a value of the compiled call or kernel). One line per program, then
``median=R worst=R same_bug=K/N``.

Seeds 0-99 are for development; each closing note reports the next unseen range before tuning anything on it.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import json
import shutil
import socket
import statistics
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO))

from corpus import exits_zero, fails_like, find_python, run_case  # noqa: E402
from generate import OPTIONS, generate  # noqa: E402


def seed_range(text: str) -> list[int]:
    """``"0-9"`` -> 0..9; ``"3,7"`` -> [3, 7]."""

    seeds: list[int] = []
    for part in text.split(","):
        first, _, last = part.partition("-")
        seeds += list(range(int(first), int(last or first) + 1))
    return seeds


def hand_is_sound(python: str, folder: Path, meta: dict) -> str | None:
    """Why the generator's hand repro (or program) is not what it claims, or ``None``: both fail, and both pass
    with the fix."""

    for script in ("program.py", "hand.py"):
        fails, _ = fails_like(python, folder, script, set())
        if not fails:
            return f"{script} does not fail"
        if meta.get("fix"):
            old, new = meta["fix"]
            text = (folder / script).read_text()
            (folder / "_fixed.py").write_text(text.replace(old, new))
            if old not in text or not exits_zero(python, folder, "_fixed.py"):
                return f"{script} does not pass with its fix"
        elif meta.get("identity_passes") and not exits_zero(python, folder, script, identity=True):
            return f"{script} does not pass with torch.compile as the identity"
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", required=True, help="A-B or a comma-separated list")
    parser.add_argument("--venv", action="append", default=[], help="VERSION=PYTHON, an interpreter with that torch")
    parser.add_argument("--json", default="", help="where to write the results (default bench/results/...)")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--max-time", type=float, default=None, help="for every program (default: 300, 600 for a library model)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args()

    named = dict(item.split("=", 1) for item in args.venv)
    # 2.13.0 for the planted bugs and as the release that fixed the real ones; 2.5.1 where those fire.
    pythons = {v: python for v in ("2.13.0", "2.5.1") if (python := find_python(v, named))}
    if "2.13.0" not in pythons:
        parser.error("no interpreter with torch 2.13.0 (--venv 2.13.0=PYTHON)")
    seeds = seed_range(args.seeds)
    out = Path(args.json) if args.json else (
        REPO / "bench" / "results" / f"{dt.date.today().isoformat()}-generated-{args.seeds}-{socket.gethostname()}.json"
    )
    rows: list[dict] = []
    drawn_counts: dict[str, collections.Counter] = {k: collections.Counter() for k in OPTIONS}
    for seed in seeds:
        program = generate(seed)
        for key in OPTIONS:
            drawn_counts[key][program.drawn[key]] += 1
        folder = Path(tempfile.mkdtemp(prefix=f"generated-{seed}-")) / "case"
        program.write(folder)
        row: dict = {"seed": seed, "drawn": program.drawn}
        release = program.meta["torch"]
        unsound = (
            f"no interpreter with torch {release} (--venv {release}=PYTHON)" if release not in pythons
            else hand_is_sound(pythons[release], folder, program.meta)
        )
        if unsound is not None:
            row["generator_error"] = unsound
            print(f"seed {seed}: generator error: {unsound} ({folder})", flush=True)
        else:
            result = run_case(f"seed-{seed}", pythons, args, case_dir=folder)
            row |= asdict(result) | {"layer_named": result.layer_named}
            status = result.error or (
                f"{result.original_tokens} -> {result.output_tokens} tokens (hand {result.hand_tokens}, {result.ratio}x), "
                f"{result.oracle_calls} calls, {result.seconds} s, same bug {result.same_bug} {result.checks}, "
                f"layer named {result.layer_named}"
            )
            print(f"seed {seed}: {status}  [{program.meta['family'].split(': ', 1)[1]}]", flush=True)
        rows.append(row)
        if not args.keep:
            shutil.rmtree(folder.parent, ignore_errors=True)
        _write(out, rows, drawn_counts, args)
    summary = _summary(rows)
    print(
        f"median={summary['median_ratio']} worst={summary['worst_ratio']} same_bug={summary['same_bug']}/{summary['programs']}"
        f" layer_named={summary['layer_named']}/{summary['programs']}"
    )
    print(f"wrote {out}")


def _summary(rows: list[dict]) -> dict:
    ratios = [r["ratio"] for r in rows if r.get("ratio") is not None]
    same = sum(1 for r in rows if r.get("checks") and all(r["checks"].values()) and r.get("ratio") is not None)
    return {
        "programs": len(rows),
        "generator_errors": sum(1 for r in rows if "generator_error" in r),
        "same_bug": same,
        "layer_named": sum(1 for r in rows if r.get("layer_named")),
        "median_ratio": round(statistics.median(ratios), 2) if ratios else None,
        "worst_ratio": max(ratios) if ratios else None,
    }


def _write(out: Path, rows: list[dict], drawn: dict, args: argparse.Namespace) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "seeds": args.seeds,
        "jobs": args.jobs,
        "summary": _summary(rows),
        "drawn": {key: dict(counts) for key, counts in drawn.items()},
        "programs": rows,
    }
    partial = out.with_suffix(".part")
    partial.write_text(json.dumps(payload, indent=2) + "\n")
    partial.replace(out)


if __name__ == "__main__":
    main()
