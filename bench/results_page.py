"""Write docs/results.md, the current figure of every benchmark, from the JSON files in bench/results/.

    python bench/results_page.py            # rewrite docs/results.md
    python bench/results_page.py --check    # exit 1 where docs/results.md is not what this would write

The page is regenerated, never appended to: what was measured before stays in bench/results/ and in git.
For each case a table keeps its latest measurement: the one whose file records the latest ``date`` (then the
latest file name). Where two runs of one session were made side by side, one at the session's first code and one
at its final code, FIRST_AND_FINAL names their files and the page shows the two figures side by side instead.
Only the formats read below are shown; every other file is counted at the end of the page, not guessed at.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
PAGE = REPO / "docs" / "results.md"
COMMAND = "python bench/results_page.py"


@dataclass(frozen=True)
class FirstAndFinal:
    """Runs of one session's programs at its first code (``first``) and at its final code (``final``)."""

    title: str
    about: str
    first_label: str
    first: tuple[str, ...]
    final: tuple[str, ...]
    notes: tuple[str, ...] = ()


FIRST_AND_FINAL = (
    FirstAndFinal(
        title="The bug's identity and today's bugs (2026-12-02, programs written before the code)",
        about=(
            "`python bench/corpus.py --cases CASES --venv 2.13.0=PYTHON -j 1 --max-time 240` on the 2-core VM, each "
            "program run at the session's first commit (05572e7, from a worktree of it with the new cases copied in) "
            "and at its final code, the two side by side on the two cores (so every second is about twice a quiet "
            "machine's). `id_*`: programs around the bug's identity (issue 70), written for it; `today_*`: real "
            "upstream bugs that fire on the registry's torch 2.13 CPU build (issue 71; each `case.json` names its "
            "issue). \"same bug\": fails under plain python as the program or the hand repro does, passes with "
            "`torch.compile` as the identity (or with the kernel's fix), compares a value of the suspect where the "
            "case says so."
        ),
        first_label="first (05572e7)",
        first=("2026-12-02-vm-identity-today-base.json", "2026-12-02-vm-identity-today-base2.json"),
        final=(
            "2026-12-02-vm-identity-today-new.json", "2026-12-02-vm-identity-today-new2.json",
            "2026-12-02-vm-identity-today-new3.json", "2026-12-02-vm-identity-today-new4.json",
        ),
        notes=(
            "`id_kernel_data_pipeline` is not the same bug at either code: the reference lost its division by the "
            "length while the kernel's input went through a `div` as well, so the `div` counted as common to both "
            "sides. Open.",
            "`id_sgd_schedule_compiled` reads \"not the same bug\" at both codes because the repro states the bug "
            "as an `assert_close` (AssertionError) where the program and its hand repro raise a RuntimeError: the "
            "bench compares exception types. The repro fails under plain python and passes with the identity.",
            "The two kernel programs ended at 184-207 s of the 240-s limit with the model classes around the check "
            "still there: time-bound, not pinned.",
        ),
    ),
    FirstAndFinal(
        title="The same session on CUDA (2026-12-02, H200, torch 2.11)",
        about=(
            "One device call, both codes at once, `-j 2`, `--max-time 150`. `id_cuda_grad_parity_case_table` did not "
            "finish in the call and wrote no file."
        ),
        first_label="first (05572e7)",
        first=(
            "2026-12-02-h200-base_id_cuda_train_adamw_kernel.json",
            "2026-12-02-h200-base_today_cuda_trunc_div_pages.json",
        ),
        final=(
            "2026-12-02-h200-new_id_cuda_train_adamw_kernel.json",
            "2026-12-02-h200-new_today_cuda_trunc_div_pages.json",
        ),
    ),
    FirstAndFinal(
        title="The operator held through the reduction (2026-12-02, H200, torch 2.11)",
        about=(
            "`bash bench/checks_gpu.sh 240 today_cuda_trunc_div_pages today_cuda_remainder_large_ratio "
            "today_cuda_fp16_ldexp_block_float` (three at once, `-j 4` each), the tree at 725c974 (the file's `commit` "
            "is the device copy's HEAD, 1d62777; the device copies record no HEAD of ours). Beside it, the session's "
            "earlier run (`-j 2`, `--max-time 150`, five oracle calls before its limit: not like for like). The repro "
            "keeps `rounding_mode=\"trunc\"` (the issue's slip dropped it for `div` then a cast, at an earlier code) "
            "and the culprit names aten.div.Tensor_mode."
        ),
        first_label="earlier run",
        first=("2026-12-02-h200-new_today_cuda_trunc_div_pages.json",),
        final=("2026-12-02-h200-today-cuda-operator-today_cuda_trunc_div_pages.json",),
    ),
)


# Files whose own run said they measure the machine's load rather than the tools (docs/history.md): left out.
NOT_COMPARISONS = {
    "2026-11-25-h100-cpu-compare-5-corpus-cases.json": "fifteen reductions at once on the GPU machine's 16 CPU cores, "
    "a first attempt whose figures show the load more than the tools",
    "2026-11-25-h100-cpu-compare-7-corpus-cases-first.json": "twenty-one reductions at once, every shrinkray run "
    "stopped by a usage error",
}


# ---------------------------------------------------------------------------------------------- reading the files


def load(results: Path) -> dict[str, object]:
    """Every JSON file of ``results`` by name but NOT_COMPARISONS; one that does not parse is None (and counted)."""

    loaded = {}
    for path in sorted(results.glob("*.json")):
        if path.name in NOT_COMPARISONS:
            continue
        try:
            loaded[path.name] = json.loads(path.read_text())
        except json.JSONDecodeError:
            loaded[path.name] = None
    return loaded


def kind(data: object) -> str:
    """Which bench wrote ``data``, by its shape; "other" for a shape this page does not read."""

    if not isinstance(data, dict):
        return "other"
    if {"results", "summary", "options"} <= data.keys():
        return "corpus"  # bench/corpus.py
    if {"programs", "seeds", "summary"} <= data.keys():
        return "generated"  # bench/generated.py
    if {"rows", "machine", "settings", "originals"} <= data.keys():
        return "shrinkray"  # bench/run.py
    if {"planted_bugs", "precision", "recall"} <= data.keys():
        return "triage"  # bench/triage_bench.py
    if {"releases", "verdict", "repro"} <= data.keys():
        return "bisect"  # bench/bisect_real.py
    if data.get("rows") and isinstance(data["rows"][0], dict) and "share" in data["rows"][0]:
        return "shared verdicts"
    return "other"


def when(name: str, data: dict) -> tuple[str, str]:
    """The order of measurements: the date the file records (its name's date where it records none), then its name."""

    date = data.get("date") or (data.get("machine") or {}).get("date") or name[:10]
    return str(date), name


def latest(rows: list[tuple[tuple[str, str], dict]]) -> tuple[tuple[str, str], dict]:
    return max(rows, key=lambda row: row[0])


def measured(result: dict) -> bool:
    """A case the bench skipped (an interpreter or library missing) was not measured."""

    return not str(result.get("error") or "").startswith("skipped")


# ---------------------------------------------------------------------------------------------- cells


def cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def short(text: str, most: int = 90) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= most else text[: most - 3] + "..."


def ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def same_bug(result: dict) -> str:
    if result.get("output_tokens") is None:
        return "not reduced: " + short(str(result.get("error") or "no output").removeprefix("error: "), 70)
    failed = [name for name, held in (result.get("checks") or {}).items() if not held]
    if result.get("checks") and not failed:
        return "yes"
    return "NO" + (": " + ", ".join(failed) if failed else ": no checks")


def figure(result: dict) -> str:
    if result.get("output_tokens") is None:
        return same_bug(result)
    return (f"{result['output_tokens']} ({ratio(result.get('ratio'))}), {result.get('seconds') or 0:.0f} s, "
            + ("same bug" if same_bug(result) == "yes" else same_bug(result)))


def para(text: str) -> list[str]:
    return textwrap.wrap(text, 118, break_long_words=False, break_on_hyphens=False)


def bullet(text: str) -> list[str]:
    return textwrap.wrap(text, 118, initial_indent="- ", subsequent_indent="  ", break_long_words=False,
                         break_on_hyphens=False)


def table(header: list[str], rows: list[list[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return lines + ["| " + " | ".join(cell(value) for value in row) + " |" for row in rows]


def summary(results: list[dict]) -> str:
    ratios = [r["ratio"] for r in results if r.get("ratio") is not None]
    same = sum(same_bug(r) == "yes" for r in results)
    if not ratios:
        return f"{len(results)} cases, none reduced."
    return (f"{len(results)} cases, {len(ratios)} reduced, {same} the same bug by every check the bench made; "
            f"median {statistics.median(ratios):.2f}x the hand repro's tokens, worst {max(ratios):.2f}x.")


# ---------------------------------------------------------------------------------------------- the sections


def corpus_runs(files: dict[str, object]) -> dict[str, list[tuple[tuple[str, str], dict]]]:
    """Every measurement of every corpus case (bench/corpus.py's files), by case."""

    runs: dict[str, list] = {}
    for name, data in files.items():
        if kind(data) == "corpus":
            for result in data["results"]:
                if measured(result):
                    runs.setdefault(result["case"], []).append((when(name, data), result | {"_file": name,
                                                                                           "_data": data}))
    return runs


def first_and_final_section(pair: FirstAndFinal, runs: dict[str, list], files: dict[str, object]
                            ) -> tuple[list[str], set[str]]:
    """The pair's table: each case both its first and its final files measured, and the cases it shows."""

    def among(case: str, names: tuple[str, ...]) -> dict | None:
        found = [row for row in runs.get(case, []) if row[1]["_file"] in names]
        return latest(found)[1] if found else None

    def commits(names: tuple[str, ...]) -> str:
        return ", ".join(sorted({files[n].get("commit") or "none" for n in names if isinstance(files.get(n), dict)}))

    def suffix(name: str) -> str:
        return name.removeprefix(prefix).removesuffix(".json")

    cases = sorted(c for c in runs if among(c, pair.first) and among(c, pair.final))
    prefix = os.path.commonprefix(pair.first + pair.final)
    rows = []
    for case in cases:
        first, final = among(case, pair.first), among(case, pair.final)
        rows.append([f"`{case}`", final.get("oracle") or first.get("oracle") or "-", final["hand_tokens"],
                     figure(first), figure(final), f"{suffix(first['_file'])}; {suffix(final['_file'])}"])
    about = (f"{pair.about} Files: `bench/results/{prefix}*.json` (the first record commit {commits(pair.first)}, "
             f"the final {commits(pair.final)}).")
    lines = [f"## {pair.title}", "", *para(about), ""]
    lines += table(["case", "oracle", "hand", pair.first_label, "final", "files (first; final)"], rows)
    lines += ["", *para("At the final code: " + summary([among(c, pair.final) for c in cases]))]
    lines += [""] if pair.notes else []
    for note in pair.notes:
        lines += bullet(note)
    return lines + [""], set(cases)


def corpus_section(runs: dict[str, list], shown: set[str]) -> list[str]:
    results = [latest(runs[case])[1] for case in sorted(runs) if case not in shown]
    rows = [
        [f"`{r['case']}`", r["torch"], r.get("oracle") or "-", r["hand_tokens"],
         "-" if r.get("output_tokens") is None else r["output_tokens"], ratio(r.get("ratio")),
         "-" if r.get("seconds") is None else f"{r['seconds']:.0f}", same_bug(r), when(r["_file"], r["_data"])[0][:10],
         r["_data"].get("commit") or "-", f"`{r['_file']}`"]
        for r in results
    ]
    lines = [
        "## The corpus: each case's latest run",
        "",
        *para(
        "`python bench/corpus.py --venv 2.13.0=PYTHON --venv 2.5.1=PYTHON -j 2` (`--cases A,B` for some; each case at "
        "its `case.json` limit unless `--max-time` is given): each program of `corpus/cases/` reduced with default "
        "options, its output checked to be the same bug (fails under plain python as the original does; passes with "
        "`torch.compile` as the identity, with the case's fix, or on the release `case.json` names; compares a value "
        "of the suspect where the case asks). \"hand\": the hand-minimal repro's tokens; \"repro\": the output's; "
        "\"same bug\" names the checks that failed. Cases of the tables above are here only where measured since."),
        "",
    ]
    lines += table(["case", "torch", "oracle", "hand", "repro", "ratio", "s", "same bug", "date", "commit", "source"],
                   rows)
    return lines + ["", *para(summary(results)), ""]


def generated_section(files: dict[str, object]) -> list[str]:
    seeds: dict[int, tuple] = {}
    for name, data in files.items():
        if kind(data) == "generated":
            for program in data["programs"]:
                if "generator_error" not in program:
                    key = when(name, data)
                    if program["seed"] not in seeds or key >= seeds[program["seed"]][0]:
                        seeds[program["seed"]] = (key, program | {"_file": name})
    hundreds: dict[int, list] = {}
    for seed, (key, program) in sorted(seeds.items()):
        hundreds.setdefault(seed // 100, []).append((key, program))
    rows = []
    for hundred, programs in sorted(hundreds.items()):
        results = [p for _, p in programs]
        ratios = [p["ratio"] for p in results if p.get("ratio") is not None]
        worst = max((p for p in results if p.get("ratio") is not None), key=lambda p: p["ratio"])
        dates = sorted(key[0][:10] for key, _ in programs)
        span = dates[0] if dates[0] == dates[-1] else f"{dates[0]} to {dates[-1]}"
        label = "0-99 (development)" if hundred == 0 else f"{hundred * 100}-{hundred * 100 + 99}"
        rows.append([label, len(results), sum(same_bug(p) == "yes" for p in results),
                     f"{statistics.median(ratios):.2f}x", f"{worst['ratio']:.2f}x (seed {worst['seed']})", span,
                     len({p["_file"] for p in results})])
    odd = [p for _, (key, p) in sorted(seeds.items()) if same_bug(p) != "yes" or (p.get("ratio") or 0) > 1.5]
    odd_rows = [[p["seed"], p.get("oracle") or "-", p["hand_tokens"], p.get("output_tokens") or "-",
                 ratio(p.get("ratio")), "-" if p.get("seconds") is None else f"{p['seconds']:.0f}", same_bug(p),
                 f"`{p['_file']}`"] for p in odd]
    lines = [
        "## Generated programs",
        "",
        *para(
        "`python bench/generated.py --seeds A-B --venv 2.13.0=PYTHON --venv 2.5.1=PYTHON`: each seed's program "
        "(`bench/generate.py`) reduced and checked as the corpus is, against the generator's hand repro. Each seed at "
        "its latest measurement in these files (the 2-core VM's; the files record no commit, and many seeds were last "
        "run at an early code), grouped by hundreds:"),
        "",
    ]
    lines += table(["seeds", "measured", "same bug", "median", "worst", "dates", "files"], rows)
    lines += ["", "The seeds whose latest figure is not the same bug or over 1.5x:", ""]
    lines += table(["seed", "oracle", "hand", "repro", "ratio", "s", "same bug", "source"], odd_rows)
    return lines + [""]


def shrinkray_section(files: dict[str, object]) -> list[str]:
    """Per example, the latest bench/run.py file that reduced it with minimizer: every tool of that run."""

    chosen: dict[str, tuple] = {}
    for name, data in files.items():
        if kind(data) == "shrinkray":
            for row in data["rows"]:
                if row["tool"] == "minimizer" and (row["example"] not in chosen
                                                   or when(name, data) > chosen[row["example"]][0]):
                    chosen[row["example"]] = (when(name, data), name, data)
    tools = sorted({row["tool"] for _, _, data in chosen.values() for row in data["rows"]},
                   key=lambda tool: (tool != "minimizer", tool))
    rows = []
    for example, (key, name, data) in sorted(chosen.items(), key=lambda item: (item[1][0], item[0])):
        original = data["originals"].get(example, {})
        by_tool = {row["tool"]: row for row in data["rows"] if row["example"] == example}
        rows.append([f"`{example}`", original.get("oracle") or "-", original.get("tokens") or "-",
                     original.get("hand_minimal_tokens") or "-"]
                    + [_tool_cell(by_tool.get(tool)) for tool in tools]
                    + [f"{data['settings']['max_seconds']:.0f} s", key[0][:10], f"`{name}`"])
    lines = [
        "## The examples against other reducers",
        "",
        *para(
        "`python bench/run.py` (`--examples`, `--tools`, `--max-seconds`): each tool reduces the example with the same "
        "interestingness (`python -m minimizer.interestingness`, the oracle and signature `minimizer check` pinned), "
        "`-j 1`; each cell: final tokens, oracle calls, wall seconds (\"capped\": stopped at the cap, its best so "
        "far measured). Per example, the latest run that reduced it with minimizer."),
        "",
    ]
    lines += table(["example", "oracle", "original", "hand"] + tools + ["cap", "date", "source"], rows)
    return lines + [""]


def _tool_cell(row: dict | None) -> str:
    if row is None:
        return "-"
    if row.get("error") or row.get("tokens") is None:
        return "error: " + short(row.get("error") or "no output", 50)
    text = f"{row['tokens']}, {row['oracle_calls']} calls, {float(row['wall_seconds']):.0f} s"
    return text + (" capped" if row.get("capped") else "") + ("" if row.get("same_bug") else ", NOT the same bug")


def shared_verdicts_section(files: dict[str, object]) -> list[str]:
    found = [(when(n, d), n, d) for n, d in files.items() if kind(d) == "shared verdicts"]
    if not found:
        return []
    key, name, data = max(found, key=lambda item: item[0])
    rows = []
    for row in data["rows"]:
        share, alone = row["share"], row["no_share"]
        sharing = share.get("sharing") or {}
        note = f"{sharing.get('shared', 0)} of {share['oracle_calls']} calls shared"
        if sharing.get("switched_off_after"):
            note += f"; switched off after {sharing['switched_off_after']}"
        same = "yes" if (share["tokens"], share["oracle_calls"]) == (alone["tokens"], alone["oracle_calls"]) else "no"
        rows.append([f"`{row['example']}`", f"{share['seconds']:.0f} s", f"{alone['seconds']:.0f} s", note, same])
    what = f"{data.get('what', '')}; {data.get('machine', '')}, commit {data.get('commit', '-')}, {key[0][:10]}"
    lines = ["## Shared verdicts", "", *para(f"{what} (`{name}`)."), ""]
    lines += table(["example", "shared", "not shared", "sharing", "same calls and repro"], rows)
    return lines + [""]


def triage_section(files: dict[str, object]) -> list[str]:
    by_backend: dict[str, tuple] = {}
    for name, data in files.items():
        if kind(data) == "triage":
            backend = data.get("backend") or "local processes"
            if backend not in by_backend or when(name, data) > by_backend[backend][0]:
                by_backend[backend] = (when(name, data), name, data)
    rows = []
    for backend, (key, name, d) in sorted(by_backend.items()):
        timing = d.get("timing") or {}
        rows.append([backend, d["scripts"], d["planted_bugs"], d["groups_found"], f"{d['precision']}, {d['recall']}",
                     d["classified_right"], "yes" if d["every_repro_fails_under_python"] else "NO",
                     ", ".join(map(str, d.get("repro_tokens") or [])), f"{timing.get('check_seconds', 0):.0f} s",
                     f"{timing.get('minimize_seconds', 0):.0f} s", key[0][:10], f"`{name}`"])
    if not rows:
        return []
    lines = ["## Triage", "", *para("`python bench/triage_bench.py --scripts 56 -j 2` (`--ray local` for Ray): a "
             "generated folder of fuzzer-style programs with planted bugs, passing and broken scripts, on the 2-core "
             "VM."), ""]
    lines += table(["backend", "scripts", "planted bugs", "groups", "precision, recall", "classified right",
                    "repros fail under python", "repro tokens", "check", "minimize", "date", "source"], rows)
    return lines + [""]


def bisect_section(files: dict[str, object]) -> list[str]:
    by_repro: dict[str, tuple] = {}
    for name, data in files.items():
        if kind(data) == "bisect" and (data["repro"] not in by_repro or when(name, data) > by_repro[data["repro"]][0]):
            by_repro[data["repro"]] = (when(name, data), name, data)
    if not by_repro:
        return []
    rows = [[f"`{repro}`", ", ".join(f"{r['release']} {r['status']}" for r in d["releases"]), d["verdict"],
             f"{d['seconds']:.0f} s", key[0][:10], f"`{name}`"] for repro, (key, name, d) in sorted(by_repro.items())]
    lines = ["## Bisection over releases", "", "`python bench/bisect_real.py` (venvs of each release built first).", ""]
    return lines + table(["repro", "releases", "verdict", "seconds", "date", "source"], rows) + [""]


LEFT_OUT = {
    "other": "JSON of other shapes, not read here: `bench/jobs_speedup.py` pairs (several runs of one example on "
             "one date, on different machines and settings, with no time or commit inside to tell the current "
             "one), minimizer reports of the GPU runs (they name neither the example nor the machine), and "
             "one-off measurements (resident workers, plain-run costs, GPU spread, a ddmin trial)",
    "unreadable": "JSON that does not parse",
}


def left_out_section(results: Path, files: dict[str, object]) -> list[str]:
    counts: dict[str, int] = {}
    for data in files.values():
        label = "unreadable" if data is None else kind(data)
        counts[label] = counts.get(label, 0) + 1
    others: dict[str, int] = {}
    for path in results.iterdir():
        if path.suffix != ".json":
            label = "folders" if path.is_dir() else f"`.{path.name.rsplit('.', 1)[-1]}`"
            others[label] = others.get(label, 0) + 1
    lines = ["## Not on this page", ""]
    for label, text in LEFT_OUT.items():
        if counts.get(label):
            lines += bullet(f"{counts[label]} {text}.")
    for name, why in NOT_COMPARISONS.items():
        lines += bullet(f"`{name}`, no comparison: {why}.")
    lines += bullet(", ".join(f"{n} {label}" for label, n in sorted(others.items())) + " in `bench/results/`: "
                    "archives and logs of the GPU machine's runs (their CUDA and CPU-interpreter runs share case names "
                    "with the VM's, so they are not merged into its tables), logs and kept repros. Their figures, as "
                    "they were read at the time, are in this page's git history.")
    return lines


# ---------------------------------------------------------------------------------------------- the page


def render(results: Path = RESULTS) -> str:
    files = load(results)
    runs = corpus_runs(files)
    lines = [
        "# Results: the current figure of every benchmark",
        "",
        f"Regenerate with `{COMMAND}` (never edit this page by hand; `{COMMAND} --check` says whether it is current).",
        "",
        *para("It is written from `bench/results/*.json` alone: each table keeps each case's latest measurement (the "
              "date its file records, then the file name) and names that file; earlier measurements stay in those "
              "files and in git, and why things changed is in `docs/history.md`. Ratios are the repro's tokens over "
              "the hand-minimal repro's. Compare seconds only within one run: machines and their load differ. "
              "\"commit\" is what the file records (the checkout's HEAD when the bench wrote it)."),
        "",
    ]
    shown: set[str] = set()
    for pair in FIRST_AND_FINAL:
        section, cases = first_and_final_section(pair, runs, files)
        lines += section
        # A case measured since its section's runs has its current figure in the corpus table.
        shown |= {case for case in cases if latest(runs[case])[1]["_file"] in pair.first + pair.final}
    lines += corpus_section(runs, shown)
    lines += generated_section(files)
    lines += shrinkray_section(files) + shared_verdicts_section(files) + triage_section(files) + bisect_section(files)
    lines += left_out_section(results, files)
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the folder of results files")
    parser.add_argument("--out", type=Path, default=PAGE, help="the page to write")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 where the page is not current")
    args = parser.parse_args()
    page = render(args.results)
    if args.check:
        current = args.out.exists() and args.out.read_text() == page
        print(f"{args.out} is {'current' if current else 'NOT current: run ' + COMMAND}")
        return 0 if current else 1
    args.out.write_text(page)
    print(f"wrote {args.out} ({len(page.splitlines())} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
