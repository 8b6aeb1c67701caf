"""The script's environment prelude: what it sets before it first imports torch, triton or any other library.

Torch, Triton and their configs read the environment when they are imported (``TRITON_INTERPRET``,
``TORCHINDUCTOR_FREEZING``, ``TORCH_LOGS``, ``CUDA_VISIBLE_DEVICES``, ...). A script that sets them in its
first lines gets them honoured under plain python; a candidate's process imports torch before the script
runs (the harness needs it, the warm worker has it preloaded), so it must be given that environment up front.

The prelude is the script's setup block: the leading statements that import modules or set the environment
or ``sys.path``, before the first statement that computes anything. A probe runs that block in a plain
interpreter (``minimizer.runner.prelude_probe``); the environment and ``sys.path`` it leaves, against those it
started with, are given to the candidate's process from its start. Setting a variable earlier than the script
does changes nothing for what is read lazily and is what makes it count for what is read at import. Probing
is cached by the block's text, and skipped when the block cannot touch the environment at all. Environment
set inside a function (``main()``) is not seen.

This module is imported by the candidate's process before torch: it must stay light.
"""

from __future__ import annotations

import ast
import functools
import json
import os
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from minimizer.syntax import parse_python

SYS_PATH_VARIABLE = "MINIMIZER_PRELUDE_SYS_PATH"
# Modules the warm server imports once before forking candidates (see ``preimports``).
PREIMPORT_VARIABLE = "MINIMIZER_PREIMPORT"
# Set when the warm server may settle Inductor's choice of CPU vector instructions before forking (see
# minimizer.runner.forkserver._settle_cpu_vec_isa): not for a script that overrides that choice itself.
SETTLE_VEC_ISA_VARIABLE = "MINIMIZER_SETTLE_VEC_ISA"
# Set when the warm server should import Inductor's compiler before forking (see
# minimizer.runner.forkserver._warm_inductor): only for a script that compiles.
WARM_INDUCTOR_VARIABLE = "MINIMIZER_WARM_INDUCTOR"
# Set when the warm server may fork candidates ahead of their jobs with CUDA started (see
# minimizer.runner.candidate_process.Spares): only for a script that uses CUDA and leaves the environment alone.
PREINIT_CUDA_VARIABLE = "MINIMIZER_START_CUDA_AHEAD"
# Set for a warm server whose spares stay and run job after job (minimizer.runner.resident).
RESIDENT_VARIABLE = "MINIMIZER_RESIDENT"
# Set beside OMP_WAIT_POLICY where minimizer set that for its own processes (minimizer.runner.run_folder.child_env):
# the script then finds neither, as under plain python.
OMP_WAIT_POLICY_SET_VARIABLE = "MINIMIZER_SET_OMP_WAIT_POLICY"
# Imported by every warm server anyway, or never worth it.
_ALWAYS_LOADED = frozenset({"torch", "triton", "__future__", "os", "sys"})
PROBE_TIMEOUT = 60.0
# Words without which a block cannot change the environment or sys.path (cheap test before probing).
_ENVIRONMENT_WORDS = ("environ", "putenv", "unsetenv", "sys.path")


@dataclass(frozen=True)
class Prelude:
    """Variables the prelude set (value) or removed (``None``), and the entries it added to ``sys.path``."""

    env: tuple[tuple[str, str | None], ...] = ()
    sys_path: tuple[str, ...] = ()

    def apply(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` as the prelude leaves it (``sys.path`` additions travel in ``SYS_PATH_VARIABLE``)."""

        env = dict(env)
        for name, value in self.env:
            if value is None:
                env.pop(name, None)
            else:
                env[name] = value
        if self.sys_path:
            env[SYS_PATH_VARIABLE] = json.dumps(list(self.sys_path))
        return env

    def to_json(self) -> dict:
        return {"env": dict(self.env), "sys_path": list(self.sys_path)}


NO_PRELUDE = Prelude()


def apply_sys_path() -> None:
    """In a candidate's process, before torch is imported: put the prelude's ``sys.path`` entries first."""

    entries = json.loads(os.environ.pop(SYS_PATH_VARIABLE, "[]") or "[]")
    sys.path[0:0] = [p for p in entries if p not in sys.path[: len(entries)]]


def compiles(source: str) -> bool:
    """Whether ``source`` may call ``torch.compile`` (a cheap, generous test: the word anywhere)."""

    return "compile" in source


def may_settle_vec_isa(source: str) -> bool:
    """Whether the warm server should settle the CPU vector instructions for this script: it compiles (a script
    that runs Triton kernels alone never asks, and the settle costs each new server 2-4 s), and it does not set
    ``config.cpp.vec_isa_ok`` itself (older releases cache the answer whatever the config says later)."""

    return compiles(source) and "vec_isa" not in source


# Words after the setup block that could make starting CUDA before the script's first CUDA call change what it
# computes: the environment CUDA and torch's allocator read when they start, processes forked before the script
# uses CUDA (they cannot use it after), a script that asks whether CUDA has started.
_CUDA_START_WORDS = ("environ", "putenv", "unsetenv", "fork", "multiprocessing", "num_workers", "is_initialized")


def may_start_cuda_ahead(source: str, beside: str | None) -> bool:
    """Whether a candidate of ``source`` may have CUDA started before its script runs: the script (or a module
    it imports from beside it) mentions CUDA, and nothing after the setup block (whose environment every
    candidate gets up front) nor any such module changes the environment, forks, or asks whether CUDA has
    started."""

    statements, lines = _setup_statements(source)
    setup_end = (statements[-1].end_lineno or 0) if statements else 0
    texts = ["".join(lines[setup_end:]) if lines else source, *local_module_texts(source, beside)]
    return any("cuda" in text for text in texts) and not any(
        word in text for text in texts for word in _CUDA_START_WORDS
    )


def local_module_texts(source: str, beside: str | None) -> list[str]:
    """The text of each module ``source`` imports from beside it."""

    return [_module_text(beside, root) for root in _local_imports(source, beside)]


def _local_imports(source: str, beside: str | None) -> list[str]:
    """The roots of the modules ``source`` imports (anywhere in it) that live beside it."""

    tree = _parsed(source)
    roots: list[str] = []
    for node in ast.walk(tree) if tree else []:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for root in (name.split(".")[0] for name in _absolute_names(node)):
                if _beside(root, beside) and root not in roots:
                    roots.append(root)
    return roots


def _absolute_names(statement: ast.Import | ast.ImportFrom) -> list[str]:
    """The modules an import statement names (``import a.b, c``: both; ``from a.b import c``: ``a.b``; a relative
    import: none)."""

    if isinstance(statement, ast.Import):
        return [alias.name for alias in statement.names]
    return [statement.module] if statement.module and not statement.level else []


@functools.lru_cache(maxsize=64)
def _module_text(beside: str, root: str) -> str:
    """The source of the module or package ``root`` beside the script (a package: all its files)."""

    folder = Path(beside)
    files = [folder / f"{root}.py"] if (folder / f"{root}.py").exists() else sorted((folder / root).rglob("*.py"))
    return "".join(path.read_text(errors="replace") for path in files)


# Values of SETTLE_VEC_ISA_VARIABLE: settle on any host, or only on hosts without a GPU.
SETTLE_ON_ANY_HOST = "any-host"
SETTLE_WITHOUT_GPU = "without-gpu"


def settle_vec_isa_value(source: str) -> str:
    """Where the server settles the probe for ``source``: a script that mentions CUDA compiles for the GPU where
    there is one and never asks the CPU probe there, while the probe costs a GPU host's server most of a minute
    with a cold cache; on a host without a GPU it compiles for the CPU."""

    return SETTLE_WITHOUT_GPU if "cuda" in source else SETTLE_ON_ANY_HOST


def preimports(source: str, beside: str | None) -> list[str]:
    """Modules the script imports at top level that live outside its folder (installed libraries such as
    transformers or liger_kernel), in order: a warm server imports them once, so each candidate forks with
    them loaded instead of importing them again. Imports under a top-level ``if`` or ``try`` count (``try:
    import liger_kernel`` after a CUDA check is a common shape); those inside functions do not. Modules beside
    the script are left to the candidate: their import-time effects (prints, random draws) belong to its run."""

    names: list[str] = []
    for statement in _top_level_imports(_parsed(source)):
        for name in _absolute_names(statement):
            root = name.split(".")[0]
            if root in _ALWAYS_LOADED or name in names or _beside(root, beside):
                continue
            names.append(name)
    return names


@functools.lru_cache(maxsize=32)
def _parsed(source: str) -> ast.Module | None:
    try:
        return parse_python(source)
    except SyntaxError:
        return None


def _top_level_imports(tree: ast.Module | None) -> list[ast.Import | ast.ImportFrom]:
    """Import statements of the module's top level, also inside top-level ``if``/``try``/``with`` blocks."""

    found: list[ast.Import | ast.ImportFrom] = []
    pending = list(tree.body) if tree else []
    while pending:
        statement = pending.pop(0)
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            found.append(statement)
        elif isinstance(statement, (ast.If, ast.Try, ast.With)):
            nested = [*statement.body, *getattr(statement, "orelse", []), *getattr(statement, "finalbody", [])]
            for handler in getattr(statement, "handlers", []):
                nested += handler.body
            pending[0:0] = nested
    return found


def _beside(root: str, beside: str | None) -> bool:
    if not beside:
        return False
    folder = Path(beside)
    return (folder / f"{root}.py").exists() or (folder / root).is_dir()


def setup_block(source: str) -> tuple[str, str] | None:
    """The script's setup block (its leading top-level statements that import modules or set the environment
    or ``sys.path``; ``if``/``try`` made only of such; a docstring) and its key: the block's statements other
    than imports, which alone decide what it sets (so candidates that differ only in imports share a probe).
    ``None`` when the block cannot change the environment at all, so no probe is needed."""

    statements, lines = _setup_statements(source)
    end = 0
    key: list[str] = []
    for statement in statements:
        end = statement.end_lineno or end
        docstring = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
        if not (docstring or isinstance(statement, (ast.Import, ast.ImportFrom))):
            key += lines[statement.lineno - 1 : end]
    key_text = "".join(key)
    if not any(word in key_text for word in _ENVIRONMENT_WORDS):
        return None
    return "".join(lines[:end]), key_text


@functools.lru_cache(maxsize=32)
def _setup_statements(source: str) -> tuple[tuple[ast.stmt, ...], tuple[str, ...]]:
    """The leading top-level statements that make up the setup block, and the source's lines (no statements
    for a source that does not parse). Cached: every candidate asks twice, for its prelude and its imports."""

    try:
        tree = parse_python(source)
    except SyntaxError:
        return (), ()
    lines = source.splitlines(keepends=True)
    statements = []
    for statement in tree.body:
        if not _is_setup(statement, lines):
            break
        statements.append(statement)
    return tuple(statements), tuple(lines)


def _is_setup(statement: ast.stmt, lines: list[str]) -> bool:
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
        return True  # a docstring
    if isinstance(statement, (ast.If, ast.Try)):
        bodies = [statement.body, statement.orelse]
        if isinstance(statement, ast.Try):
            bodies += [handler.body for handler in statement.handlers] + [statement.finalbody]
        return all(_is_setup(inner, lines) or isinstance(inner, ast.Pass) for body in bodies for inner in body)
    if isinstance(statement, (ast.Expr, ast.Assign, ast.AugAssign, ast.Delete)):
        text = "".join(lines[statement.lineno - 1 : statement.end_lineno])
        return any(word in text for word in _ENVIRONMENT_WORDS)
    return False


class PreludeCache:
    """Probes scripts' preludes, once per distinct prefix (thread-safe; probes of one prefix run once)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple, Prelude] = {}
        self._pending: dict[tuple, threading.Event] = {}

    def prelude_of(self, source: str, filename: str, beside: str | None, env: dict[str, str]) -> Prelude:
        block = setup_block(source)
        if block is None:
            return NO_PRELUDE
        prefix, block_key = block
        key = (block_key, filename, beside)
        while True:
            with self._lock:
                if key in self._known:
                    return self._known[key]
                waiting = self._pending.get(key)
                if waiting is None:
                    self._pending[key] = threading.Event()
                    break
            waiting.wait()
        try:
            found = probe(prefix, filename, beside, env)
        finally:
            with self._lock:
                self._known[key] = found if "found" in locals() else NO_PRELUDE
                self._pending.pop(key).set()
        return found


def probe(prefix: str, filename: str, beside: str | None, env: dict[str, str]) -> Prelude:
    """Run the setup block ``prefix`` in a plain interpreter; the environment and ``sys.path`` it leaves.

    A probe that fails to report (it hung or crashed) gives no prelude: the candidate's own run then shows
    whatever went wrong.
    """

    from minimizer.runner.workspace import populate

    with tempfile.TemporaryDirectory(prefix="minimizer-prelude-") as workdir:
        run_dir = Path(workdir) / "run"
        run_dir.mkdir()
        script = run_dir / filename
        script.write_text(prefix)
        if beside:
            populate(beside, run_dir)
        result = Path(workdir) / "prelude.json"
        try:
            subprocess.run(
                [sys.executable, "-m", "minimizer.runner.prelude_probe", str(script), str(result)],
                cwd=run_dir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=PROBE_TIMEOUT,
                start_new_session=True,
            )
        except subprocess.TimeoutExpired:
            return NO_PRELUDE
        try:
            data = json.loads(result.read_text())
        except (OSError, ValueError):
            return NO_PRELUDE
    return Prelude(env=tuple(sorted(data["env"].items())), sys_path=tuple(data["sys_path"]))


PRELUDES = PreludeCache()
