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

import contextlib
import hashlib
import json
import os
import platform
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minimizer.files import write_atomic
from minimizer.runner.bytecode import own_process_environment

# Where the probe libraries are built and its answers kept.
VEC_ISA_PROBE_CACHE = Path.home() / ".cache" / "minimizer" / "vec-isa-probe"
# The sets are probed in threads (`_answer_each_set_at_once`): one adds its answer to the record at a time.
_RECORD_WRITE = threading.Lock()
# Environment variables a C++ build reads, besides Inductor's own TORCHINDUCTOR_* settings.
_BUILD_ENVIRONMENT = ("CC", "CXX", "CFLAGS", "CXXFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "PATH")


def settle_vec_isa() -> bool:
    """Make this process's per-instruction-set answers known (replayed where this host answered before, probed
    otherwise), so that processes forked from it pick without probing; whether every answer is known. Only the
    per-set answers stay cached: the list is rebuilt in the candidate, from the config it has then. Any failure
    leaves the candidate to probe for itself, as it would have anyway."""

    user_cache = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(VEC_ISA_PROBE_CACHE)
    try:
        from torch._inductor import cpu_vec_isa

        _answer_from_record(cpu_vec_isa)
        return True
    except Exception:  # noqa: BLE001
        return False
    finally:
        if user_cache is None:
            os.environ.pop("TORCHINDUCTOR_CACHE_DIR", None)
        else:
            os.environ["TORCHINDUCTOR_CACHE_DIR"] = user_cache


def replay_when_asked() -> None:
    """Where the server must not probe (a GPU host, for a script that compiles for the GPU: most minutes would go
    to a probe no candidate asks for), a candidate that does ask, having lost its device, gets the answers this
    host recorded, and probes only for what was never answered, recording it. Until the host's record is
    complete, the answers are recorded in the background (`record_answers`), so that such candidates need not
    each spend half a minute probing. The recorder leads its own session: retiring the server (a reduction
    retires the servers of its first checks within seconds) must not cut the half-minute recording short and
    leave a partial record. Any failure leaves candidates to probe."""

    try:
        record = replay_recorded()
        marker = _marker(record)
        if not _complete(record).exists() and _claim(marker):
            recorder = subprocess.Popen(
                [sys.executable, "-c", f"from {__name__} import {record_answers.__name__}; {record_answers.__name__}()"],
                env=own_process_environment({**os.environ, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"}),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
            marker.write_text(str(recorder.pid))
    except Exception:  # noqa: BLE001
        pass


def replay_recorded() -> Path:
    """From now on, this process's probe answers what this host recorded and probes (recording the answer) only
    what was never asked; the record's path."""

    from torch._inductor import cpu_vec_isa

    record = _record()
    cpu_vec_isa.VecISA.check_build = _replaying(cpu_vec_isa.VecISA.check_build, record)
    return record


def record_answers() -> None:
    """The background recorder: every answer this host gives, then the mark that the record is complete."""

    os.nice(19)  # a background job: the check and the candidates come first (the probes' compilers inherit it)
    record = _record()
    if settle_vec_isa():
        write_atomic(_complete(record), "")
    with contextlib.suppress(OSError):
        _marker(record).unlink()


def _marker(record: Path) -> Path:
    """Names the process recording ``record`` while it does."""

    return record.with_suffix(".recording")


def _complete(record: Path) -> Path:
    """Is there once ``record`` holds every answer (a recorder that died part way leaves a partial record)."""

    return record.with_suffix(".complete")


def _claim(marker: Path) -> bool:
    """Whether this process is the one to record: no recorder named by ``marker`` is alive (one that died, or
    was killed, leaves its marker: the next server records instead)."""

    marker.parent.mkdir(parents=True, exist_ok=True)
    if _recorder_alive(marker):
        return False
    marker.write_text(str(os.getpid()))
    return True


def _recorder_alive(marker: Path, stale_after: float = 300.0) -> bool:
    """Whether the process ``marker`` names is still a recorder at work (a marker older than ``stale_after``
    seconds is dead: the recording takes well under a minute; a process number is soon reused, so where /proc
    says what the process runs, it must be ``record_answers``)."""

    try:
        if time.time() - marker.stat().st_mtime >= stale_after:
            return False
        pid = int(marker.read_text())
    except (OSError, ValueError):
        return False
    if pid == os.getpid():
        return False  # the recorder itself: it must probe, not wait for its own answers
    if Path("/proc/self").exists():
        try:
            return record_answers.__name__.encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        return True  # another user's process
    except OSError:
        return False
    return True


def _record() -> Path:
    return VEC_ISA_PROBE_CACHE / f"answers-{_environment_key()}.json"


def _recorded(record: Path) -> dict[str, bool]:
    try:
        return json.loads(record.read_text())
    except (OSError, ValueError):
        return {}


def _answer_key(isa, code: str) -> str:
    return f"{isa} {hashlib.sha256(code.encode()).hexdigest()[:16]}"


def _replaying(probe, record: Path, most_wait: float = 60.0):
    """``VecISA.check_build`` answering from ``record`` (read at each call: another process may have added to
    it), probing only what it was never asked and recording that answer. While a recorder is at work, the answer
    is awaited (up to ``most_wait`` seconds) rather than probed for a second time at the same cost."""

    def replayed_or_probed(isa, code: str) -> bool:
        key = _answer_key(isa, code)
        answers = _recorded(record)
        give_up = time.monotonic() + most_wait
        while key not in answers and _recorder_alive(_marker(record)) and time.monotonic() < give_up:
            time.sleep(0.2)
            answers = _recorded(record)
        if key in answers:
            return answers[key]
        answer = probe(isa, code)
        with _RECORD_WRITE, contextlib.suppress(OSError):  # an unwritable cache must not fail the compile that asked
            write_atomic(record, json.dumps(_recorded(record) | {key: answer}, indent=1, sort_keys=True))
        return answer

    return replayed_or_probed


def _answer_from_record(cpu_vec_isa) -> None:
    probe = cpu_vec_isa.VecISA.check_build
    cpu_vec_isa.VecISA.check_build = _replaying(probe, _record())
    try:
        _answer_each_set_at_once(cpu_vec_isa)
        cpu_vec_isa.valid_vec_isa_list()
    finally:
        cpu_vec_isa.VecISA.check_build = probe
        cpu_vec_isa.valid_vec_isa_list.cache_clear()


def _answer_each_set_at_once(cpu_vec_isa) -> None:
    """Ask each instruction set this CPU claims in a thread of its own. Each probe is a C++ build and an
    interpreter that imports torch, ten of them in a row on an x86 host with AMX: minutes on a GPU host busy with
    candidates, where the sets at once take as long as the longest set's chain of probes. Each set's answer is
    cached (`VecISA.__bool__`), so the list built next asks nothing again."""

    claimed = getattr(cpu_vec_isa, "x86_isa_checker", lambda: None)()
    sets = [
        isa
        for isa in cpu_vec_isa.supported_vec_isa_list
        if claimed is not None and all(flag in claimed for flag in str(isa).split())
    ]
    if len(sets) > 1:
        with ThreadPoolExecutor(len(sets)) as pool:
            list(pool.map(bool, sets))


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
