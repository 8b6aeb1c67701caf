"""Inductor's CPU vector-instruction probe, run once per host and environment instead of once per process.

Inductor decides which vector instructions (AVX2, AVX-512, AMX) its CPU kernels may use by compiling a probe
library per instruction set and loading it in a child interpreter, once per process. A warm server runs the
probe before it forks candidates (see ``forkserver._settle_cpu_vec_isa``); on the GPU machine's host that still
takes 30 s with the libraries already built (37 s cold), paid again by every server a reduction starts. So
each probe's answer is kept, keyed by everything it depends on (host, CPU flags, interpreter, torch build, the
compiler environment, the probe's code), and a later server replays the answers instead of probing: each
instruction set gets exactly the answer the probe gave on this host in this environment.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from pathlib import Path

from minimizer.output import write_atomic

# Where the probe libraries are built and its answers kept.
VEC_ISA_PROBE_CACHE = Path.home() / ".cache" / "minimizer" / "vec-isa-probe"
# Environment variables a C++ build reads, besides Inductor's own TORCHINDUCTOR_* settings.
_BUILD_ENVIRONMENT = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "PATH")


def settle_vec_isa() -> None:
    """Make this process's per-instruction-set answers known (replayed where this host answered before, probed
    otherwise), so that processes forked from it pick without probing. Only the per-set answers stay cached:
    the list is rebuilt in the candidate, from the config it has then. Any failure leaves the candidate to
    probe for itself, as it would have anyway."""

    user_cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(VEC_ISA_PROBE_CACHE)
    try:
        from torch._inductor import cpu_vec_isa

        _answer_from_record(cpu_vec_isa)
    except Exception:  # noqa: BLE001
        pass
    finally:
        if user_cache is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = user_cache


def _answer_from_record(cpu_vec_isa) -> None:
    record = VEC_ISA_PROBE_CACHE / f"answers-{_environment_key()}.json"
    try:
        answers: dict[str, bool] = json.loads(record.read_text())
    except (OSError, ValueError):
        answers = {}
    probe = cpu_vec_isa.VecISA.check_build
    probed: dict[str, bool] = {}

    def replayed_or_probed(isa, code: str) -> bool:
        key = f"{isa} {hashlib.sha256(code.encode()).hexdigest()[:16]}"
        if key not in answers:
            probed[key] = probe(isa, code)
        return answers.get(key, probed.get(key, False))

    cpu_vec_isa.VecISA.check_build = replayed_or_probed
    try:
        cpu_vec_isa.valid_vec_isa_list()
    finally:
        cpu_vec_isa.VecISA.check_build = probe
        cpu_vec_isa.valid_vec_isa_list.cache_clear()
    if probed:
        write_atomic(record, json.dumps(answers | probed, indent=1, sort_keys=True))


def _environment_key() -> str:
    import torch

    try:
        flags = next(line for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("flags"))
    except (OSError, StopIteration):
        flags = platform.processor()
    environment = {k: v for k, v in os.environ.items() if k in _BUILD_ENVIRONMENT or k.startswith("TORCHINDUCTOR_")}
    environment.pop("TORCHINDUCTOR_CACHE_DIR", None)  # ours while probing
    described = [platform.node(), flags, sys.executable, torch.__version__, torch.__file__, sorted(environment.items())]
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()[:20]
