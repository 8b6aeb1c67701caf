"""Triage a generated fuzzer-style folder and score the grouping against the bugs planted in it.

Generates ``--scripts`` programs (default 56) from random chains of elementwise ops on random shapes, in the
shape NNSmith-style generators write them: each holds one of four planted bugs (planted backends that
miscompile one op, crash on one op, or lose requires_grad: stand-ins for compiler bugs, labelled as such), or
none (passing), or is broken (syntax error, a missing module). Then runs ``minimizer triage`` on it and
prints precision and recall of the grouping (pairs of scripts put together that hold the same bug), scripts
checked per second, the time to all repros, and whether every repro fails under plain python:

    python bench/triage_bench.py [--scripts 56] [-j 2] [--seed 0] [--ray local]

Writes ``bench/results/<date>-triage-<host>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.runner.plain import run_plain  # noqa: E402
from minimizer.runner.process import Limits  # noqa: E402

OPS = ["torch.sin", "torch.cos", "torch.tanh", "torch.relu", "torch.sigmoid", "torch.exp", "torch.abs"]

# Planted backends: each is a stand-in for one compiler bug (PLANTED, not PyTorch's).
BUGS = {
    "sigmoid-off-by-one": '''def backend(gm, example_inputs):
    # PLANTED: outputs off by one when the graph holds a sigmoid.
    has = any("sigmoid" in str(n.target) for n in gm.graph.nodes)
    return (lambda *args: [t + 1 for t in gm(*args)]) if has else gm
''',
    "exp-crash": '''def backend(gm, example_inputs):
    # PLANTED: the compiler cannot lower exp.
    if any("exp" in str(n.target) for n in gm.graph.nodes):
        raise RuntimeError("planted: cannot lower exp")
    return gm
''',
    "tanh-crash": '''def backend(gm, example_inputs):
    # PLANTED: the compiler fails on tanh, with another message.
    if any("tanh" in str(n.target) for n in gm.graph.nodes):
        raise ValueError("planted: tanh has no kernel")
    return gm
''',
    "abs-loses-grad": '''def backend(gm, example_inputs):
    # PLANTED: outputs lose requires_grad when the graph holds abs.
    has = any("abs" in str(n.target) for n in gm.graph.nodes)
    return (lambda *args: [t.detach() for t in gm(*args)]) if has else gm
''',
}
TRIGGER = {"sigmoid-off-by-one": "torch.sigmoid", "exp-crash": "torch.exp", "tanh-crash": "torch.tanh",
           "abs-loses-grad": "torch.abs"}
CLEAN_BACKEND = "def backend(gm, example_inputs):\n    return gm\n"


def program(rng: random.Random, bug: str | None) -> str:
    """A random op chain; with ``bug``, the chain holds the op that triggers it and the planted backend."""

    safe = [op for op in OPS if op not in TRIGGER.values()]
    ops = [rng.choice(safe) for _ in range(rng.randint(1, 6))]
    if bug is not None:
        ops.insert(rng.randrange(len(ops) + 1), TRIGGER[bug])
    shape = ", ".join(str(rng.choice([2, 3, 4, 8])) for _ in range(rng.randint(1, 3)))
    grad = bug == "abs-loses-grad" or rng.random() < 0.3
    lines = ["import torch", "", "", BUGS[bug] if bug else CLEAN_BACKEND, "", "def model(x):"]
    lines += [f"    x = {op}(x)" for op in ops] + ["    return x", "", ""]
    lines.append(f"x = torch.randn({shape}, requires_grad={grad})")
    lines.append("out = torch.compile(model, backend=backend)(x)")
    lines.append("print(out.sum())")
    return "\n".join(lines) + "\n"


def generate(folder: Path, count: int, seed: int) -> dict[str, str]:
    """Writes the scripts; returns each script's truth: a bug name, "passing" or "invalid"."""

    rng = random.Random(seed)
    kinds = list(itertools.islice(itertools.cycle([*BUGS, *BUGS, "passing", "invalid"]), count))
    rng.shuffle(kinds)
    truth = {}
    for index, kind in enumerate(kinds):
        name = f"prog_{index:03d}.py"
        if kind == "invalid":
            text = program(rng, None)
            text = text.replace("def model(x):", "def model(x:") if index % 2 else "import fuzz_runtime_missing\n" + text
        else:
            text = program(rng, None if kind == "passing" else kind)
        (folder / name).write_text(text)
        truth[name] = kind
    return truth


def pair_scores(truth: dict[str, str], found: dict[str, str]) -> tuple[float, float]:
    """Precision and recall over pairs of bug scripts: grouped together by triage vs holding the same bug."""

    scripts = sorted(s for s in truth if truth[s] in BUGS)
    same_truth = {(a, b) for a, b in itertools.combinations(scripts, 2) if truth[a] == truth[b]}
    same_found = {(a, b) for a, b in itertools.combinations(scripts, 2) if a in found and found.get(a) == found.get(b)}
    precision = len(same_truth & same_found) / len(same_found) if same_found else 1.0
    recall = len(same_truth & same_found) / len(same_truth) if same_truth else 1.0
    return precision, recall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scripts", type=int, default=56)
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ray", default="", help="passed to minimizer triage --ray (e.g. local)")
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="triage-bench-"))
    folder, out = work / "fuzzed", work / "out"
    folder.mkdir()
    truth = generate(folder, args.scripts, args.seed)
    started = time.monotonic()
    command = [sys.executable, "-m", "minimizer", "triage", str(folder), "-o", str(out), "-j", str(args.jobs)]
    subprocess.run(command + (["--ray", args.ray] if args.ray else []), check=True)
    seconds = time.monotonic() - started
    index = json.loads((out / "index.json").read_text())
    found = {script: f"{bug['oracle']}|{bug['signature']}" for bug in index["bugs"] for script in bug["scripts"]}
    precision, recall = pair_scores(truth, found)
    classified_right = sum(
        (truth[s] in BUGS) == (s in found) and (truth[s] != "passing" or s in index["passing"])
        and (truth[s] != "invalid" or s in {e["script"] for e in index["invalid"]})
        for s in truth
    )
    repros_fail = []
    for bug in index["bugs"]:
        repro = out / bug["repro"] if bug.get("repro") else None
        fails = bool(repro and run_plain(repro.read_text(), repro.name, str(repro.parent), Limits(timeout=300)).fails)
        repros_fail.append(fails)
    result = {
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "scripts": args.scripts,
        "planted_bugs": len(BUGS),
        "jobs": args.jobs,
        "backend": f"ray {args.ray}" if args.ray else "local",
        "groups_found": len(index["bugs"]),
        "precision": round(precision, 3),
        "recall": round(recall, 3),
        "classified_right": f"{classified_right} of {len(truth)}",
        "seconds_to_all_repros": round(seconds, 1),
        "scripts_checked_per_second": round(index["timing"]["scripts_checked"] / max(index["timing"]["check_seconds"], 1e-9), 3),
        "timing": index["timing"],
        "every_repro_fails_under_python": all(repros_fail) and bool(repros_fail),
        "repro_tokens": [bug.get("repro_tokens") for bug in index["bugs"]],
    }
    print(json.dumps(result, indent=2))
    target = Path(args.json_out) if args.json_out else (
        REPO / "bench" / "results" / f"{dt.date.today().isoformat()}-triage-{'ray-' if args.ray else ''}{socket.gethostname()}.json"
    )
    target.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
