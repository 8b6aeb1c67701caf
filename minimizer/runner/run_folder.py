"""A candidate's run folder and environment: the script, links to the files beside the original, our own folder
for the request and answer, and the environment the warm server and the job start from."""

from __future__ import annotations

import os
from pathlib import Path
from minimizer.runner.prelude import (
    OMP_WAIT_POLICY_SET_VARIABLE,
    PREIMPORT_VARIABLE,
    PREINIT_CUDA_VARIABLE,
    PRELUDES,
    RESIDENT_VARIABLE,
    SETTLE_VEC_ISA_VARIABLE,
    WARM_INDUCTOR_VARIABLE,
    compiles,
    local_module_texts,
    may_settle_vec_isa,
    may_start_cuda_ahead,
    preimports,
    settle_vec_isa_value,
)
from minimizer.runner.resident import may_run_resident
from minimizer.runner.run_types import RunSettings
from minimizer.runner.workspace import populate


# The compile caches the user chose, read when this module is imported: once torch is imported here, Inductor's
# cache_dir() (called, for one, when its config is copied) writes its default into os.environ.
_CACHE_VARIABLES = {"TORCHINDUCTOR_CACHE_DIR": "inductor", "TRITON_CACHE_DIR": "triton"}
_USER_CACHE_DIRS = {variable: os.environ.get(variable) for variable in _CACHE_VARIABLES}


def prepare_run_folder(source: str, settings: RunSettings, work: Path) -> tuple[Path, Path, dict[str, str], set[str]]:
    """Lay out one run in the empty folder ``work``: the script as ``settings.filename``, links to the files
    beside the original, and a hidden folder of our own for requests, results and output. Returns the script's
    path, our folder, the environment the process starts from (the script's prelude applied, see
    ``minimizer.runner.prelude``) and the variables the prelude set (they win over anything set per job)."""

    script = work / settings.filename
    script.write_text(source)
    own = work / ".minimizer"
    own.mkdir()
    beside = settings.beside or settings.origin_dir
    populate(beside, work)
    base_env = child_env(settings)
    prelude = PRELUDES.prelude_of(source, settings.filename, beside, base_env)
    start_env = prelude.apply(base_env)
    modules = preimports(source, beside)
    if modules:
        start_env[PREIMPORT_VARIABLE] = ",".join(modules)
    decides = source if settings.settle_from is None else settings.settle_from
    if may_settle_vec_isa(decides):
        start_env[SETTLE_VEC_ISA_VARIABLE] = settle_vec_isa_value(decides)
    if compiles(decides):
        start_env[WARM_INDUCTOR_VARIABLE] = "1"
    if may_start_cuda_ahead(decides, beside):
        start_env[PREINIT_CUDA_VARIABLE] = "1"
        if settings.resident and may_run_resident([decides, *local_module_texts(decides, beside)]):
            start_env[RESIDENT_VARIABLE] = "1"
    return script, own, start_env, {name for name, _ in prelude.env}


def child_env(settings: RunSettings) -> dict[str, str]:
    """The environment every candidate process of a reduction starts from."""

    env = dict(os.environ)
    project_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (project_root, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONHASHSEED", "0")
    # One compile thread: no subprocess pool to start per candidate, and parallel candidates don't oversubscribe.
    env.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    env["PYTHONUNBUFFERED"] = "1"
    if "OMP_WAIT_POLICY" not in env:
        # OpenMP threads that wait for work sleep instead of spinning. Candidates run side by side, each with a
        # thread per core, and spinning threads take the cores from the threads they wait for: two processes of
        # small eager ops on 2 cores took 39 s each instead of 1.4 s. Only how threads wait changes, not what they
        # compute; OpenMP reads the variable when torch loads it, and the script does not find it (child.py).
        env["OMP_WAIT_POLICY"] = "PASSIVE"
        env[OMP_WAIT_POLICY_SET_VARIABLE] = "1"
    return env


def job_env(settings: RunSettings) -> dict[str, str]:
    """What one candidate's environment adds to ``child_env``; it travels with the job, so a warm server
    started for other settings still honours it."""

    env = dict(settings.env)
    if settings.compile_cache:
        # Candidates mostly compile graphs an earlier candidate already compiled (only code the compiler never
        # sees changed), so Inductor's FX-graph cache answers instead of a compile. A cache the user set wins.
        for variable, folder in _CACHE_VARIABLES.items():
            if _USER_CACHE_DIRS[variable] is None:
                env.setdefault(variable, str(Path(settings.compile_cache) / folder))
    return env
