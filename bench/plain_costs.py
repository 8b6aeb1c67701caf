"""What a plain ``python script.py`` run costs, and where: importing each top-level module, then whole runs
with cold and with warm compile caches (Triton's and Inductor's, in folders of their own).

    python bench/plain_costs.py SCRIPT... [--runs 2] [--json-out FILE]

The check and the confirm stages run the original and the repro under plain python, where no warm worker
helps: this says how much of such a run is imports, how much compiling kernels, and what is left.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_TIMED_IMPORTS = """
import sys, time
for name in sys.argv[1:]:
    started = time.perf_counter()
    __import__(name)
    print(name, round(time.perf_counter() - started, 3), flush=True)
"""


def top_level_imports(source: str) -> list[str]:
    """The modules ``source`` imports at its top level, in order, once each (``from a.b import c`` -> ``a.b``)."""

    names: list[str] = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module)
    return list(dict.fromkeys(names))


def import_seconds(modules: list[str], env: dict) -> dict[str, float]:
    """Seconds each import adds, in order, in one fresh interpreter."""

    done = subprocess.run([sys.executable, "-c", _TIMED_IMPORTS, *modules], capture_output=True, text=True, env=env)
    seconds = {}
    for line in done.stdout.splitlines():
        name, _, value = line.rpartition(" ")
        seconds[name] = float(value)
    return seconds


def timed_run(script: Path, env: dict) -> tuple[float, int]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, script.name], cwd=script.parent, capture_output=True, env=env)
    return time.perf_counter() - started, done.returncode


def costs(script: Path, runs: int) -> dict:
    source = script.read_text()
    with tempfile.TemporaryDirectory(prefix="plain-costs-") as scratch:
        env = dict(os.environ)
        env["TRITON_CACHE_DIR"] = str(Path(scratch) / "triton")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(Path(scratch) / "inductor")
        imports = import_seconds(top_level_imports(source), env)
        cold = timed_run(script, env)
        warm = [timed_run(script, env) for _ in range(runs)]
    return {
        "script": str(script),
        "imports": imports,
        "cold_seconds": round(cold[0], 2),
        "warm_seconds": [round(seconds, 2) for seconds, _ in warm],
        "exit_codes": [cold[1], *(code for _, code in warm)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scripts", nargs="+", type=Path)
    parser.add_argument("--runs", type=int, default=2, help="warm runs after the cold one (default 2)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    results = []
    for script in args.scripts:
        found = costs(script.resolve(), args.runs)
        results.append(found)
        imported = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in found["imports"].items())
        print(f"{script}: imports {imported}; run cold {found['cold_seconds']} s, warm {found['warm_seconds']} s, "
              f"exit {found['exit_codes']}", flush=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
