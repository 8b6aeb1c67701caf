"""Where a reduction's candidates run on a host of several GPUs, and what spreading them over the GPUs buys.

    python bench/gpu_spread.py EXAMPLE [--jobs N] [--json-out FILE]

Reduces EXAMPLE twice with ``minimizer reduce --jobs N``: once seeing every GPU (candidates spread, each on the
least busy GPU) and once with ``CUDA_VISIBLE_DEVICES`` set to the first GPU only (all candidates share it).
Meanwhile it samples ``nvidia-smi`` twice a second and counts the candidate processes on each GPU. Prints, per
run: wall seconds, oracle calls, final tokens, and per GPU the most candidates seen on it at once and the share
of samples in which it had any.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SAMPLE_SECONDS = 0.5


def _gpu_indices() -> dict[str, str]:
    """GPU uuid -> index, as nvidia-smi lists them."""

    listing = subprocess.run(
        ["nvidia-smi", "--query-gpu=uuid,index", "--format=csv,noheader"], capture_output=True, text=True, check=True
    )
    pairs = (line.split(",") for line in listing.stdout.splitlines() if line.strip())
    return {uuid.strip(): index.strip() for uuid, index in pairs}


def _processes_per_gpu() -> Counter:
    listing = subprocess.run(
        ["nvidia-smi", "--query-compute-apps=gpu_uuid,pid", "--format=csv,noheader"], capture_output=True, text=True
    )
    return Counter(line.split(",")[0].strip() for line in listing.stdout.splitlines() if line.strip())


def _memory_used_mib() -> dict[str, int]:
    """GPU uuid -> MiB in use (seen even where a container hides the processes from nvidia-smi)."""

    listing = subprocess.run(
        ["nvidia-smi", "--query-gpu=uuid,memory.used", "--format=csv,noheader,nounits"], capture_output=True, text=True
    )
    pairs = (line.split(",") for line in listing.stdout.splitlines() if line.strip())
    return {uuid.strip(): int(used) for uuid, used in pairs}


def _sample(stop: threading.Event, samples: list[Counter], memory: list[dict[str, int]]) -> None:
    while not stop.is_set():
        samples.append(_processes_per_gpu())
        memory.append(_memory_used_mib())
        stop.wait(SAMPLE_SECONDS)


def reduce_once(example: Path, jobs: int, env: dict[str, str], scratch: Path, label: str) -> dict:
    report = scratch / f"{label}.json"
    command = [sys.executable, "-m", "minimizer", "reduce", str(example), "-o", str(scratch / f"{label}.min.py")]
    command += ["--report", str(report), "--jobs", str(jobs), "-q"]
    samples: list[Counter] = []
    memory: list[dict[str, int]] = []
    stop = threading.Event()
    sampler = threading.Thread(target=_sample, args=(stop, samples, memory), daemon=True)
    started = time.monotonic()
    sampler.start()
    finished = subprocess.run(command, env=env, cwd=REPO)
    seconds = time.monotonic() - started
    stop.set()
    sampler.join()
    if finished.returncode != 0:
        raise SystemExit(f"{label}: minimizer exited with {finished.returncode}")
    outcome = json.loads(report.read_text())
    names = _gpu_indices()
    per_gpu = {}
    for uuid, index in sorted(names.items(), key=lambda item: item[1]):
        counts = [sample.get(uuid, 0) for sample in samples]
        used = [sample.get(uuid, 0) for sample in memory]
        per_gpu[index] = {
            "most_at_once": max(counts, default=0),
            "busy_share": round(sum(1 for c in counts if c) / max(len(counts), 1), 3),
            "peak_memory_mib": max(used, default=0),
        }
    return {
        "run": label,
        "seconds": round(seconds, 1),
        "oracle_calls": outcome["oracle_calls"],
        "tokens": outcome["after"]["tokens"],
        "gpus_seen_by_minimizer": outcome.get("gpus", 0),
        "per_gpu": per_gpu,
        "samples": len(samples),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("example", type=Path)
    parser.add_argument("--jobs", "-j", type=int, default=4)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    base = {k: v for k, v in os.environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    first_gpu = sorted(_gpu_indices().values())[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="gpu-spread-") as scratch:
        for label, env in (("spread", base), ("one-gpu", {**base, "CUDA_VISIBLE_DEVICES": first_gpu})):
            row = reduce_once(args.example.resolve(), args.jobs, env, Path(scratch), label)
            rows.append(row)
            gpus = ", ".join(f"GPU {i}: up to {g['most_at_once']} at once, busy {g['busy_share']:.0%}, peak {g['peak_memory_mib']} MiB" for i, g in row["per_gpu"].items())
            print(f"{label:8} -j {args.jobs}: {row['seconds']} s, {row['oracle_calls']} calls, {row['tokens']} tokens; {gpus}")
    if args.json_out:
        args.json_out.write_text(json.dumps({"example": str(args.example), "jobs": args.jobs, "runs": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
