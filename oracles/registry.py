"""Finding oracles by name: built-ins, ``file.py:name``, ``package.module:name``, and entry points.

Specs are plain strings so that the parent (which never imports the user's script) and the candidate's
process (which runs it) resolve the same oracle.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from oracles.api import ALL_NEEDS, NEEDS_EAGER_RERUN, Oracle, oracle

ENTRY_POINT_GROUP = "minimizer.oracles"

# Built-ins in ``--oracle auto`` priority: when several fire on the original, the first one is pinned. A crash
# or a hang hides every other comparison; in-place corruption and lost requires_grad are the most specific findings;
# numerical gaps come before gradient gaps because a wrong forward also gives wrong gradients; ``script``
# (the user's own assert or exception) is the fallback.
BUILTINS: dict[str, str] = {
    "crash": "oracles.crash:crash",
    "hang": "oracles.hang:hang",
    "inplace": "oracles.inplace:inplace",
    "requires-grad": "oracles.requires_grad:requires_grad",
    "numerical": "oracles.numerical:numerical",
    "gradient": "oracles.gradient:gradient",
    "script": "oracles.script:script",
}
AUTO_PRIORITY: tuple[str, ...] = tuple(BUILTINS)


class OracleNotFound(LookupError):
    """The spec names no oracle we can load; the message says why, in one line."""


@dataclass(frozen=True)
class OracleEntry:
    name: str
    spec: str
    origin: str
    summary: str


def canonical_spec(spec: str) -> str:
    """Make a spec usable from any working directory (a relative ``file.py:name`` becomes absolute)."""

    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py"):
        return f"{Path(path).expanduser().resolve()}:{attr}"
    return spec


def load_oracle(spec: str) -> Oracle:
    """Resolve ``spec`` (a built-in name, ``file.py:name``, ``package.module:name`` or an entry-point name)."""

    if spec in BUILTINS:
        return _as_oracle(_import_target(BUILTINS[spec]), spec)
    path, sep, attr = spec.rpartition(":")
    if sep and path.endswith(".py"):
        return _as_oracle(_load_from_file(Path(path), attr), spec)
    if sep:
        return _as_oracle(_import_target(spec), spec)
    for ep in _entry_points():
        if ep.name == spec:
            return _as_oracle(ep.load(), spec)
    known = ", ".join(list(BUILTINS) + [ep.name for ep in _entry_points()])
    raise OracleNotFound(f"unknown oracle {spec!r}; known: {known}, or give file.py:name / package.module:name")


def available_oracles() -> list[OracleEntry]:
    """Every oracle we can find: built-ins first, then entry points of group ``minimizer.oracles``."""

    entries = []
    for name in BUILTINS:
        found = load_oracle(name)
        entries.append(OracleEntry(name, name, "built-in", getattr(found, "summary", "")))
    for ep in _entry_points():
        try:
            found = load_oracle(ep.name)
            summary = getattr(found, "summary", "")
        except Exception as exc:  # a broken plug-in must not hide the others
            summary = f"(fails to load: {type(exc).__name__}: {exc})"
        entries.append(OracleEntry(ep.name, ep.name, f"entry point {ep.value}", summary))
    return entries


def _entry_points() -> list[metadata.EntryPoint]:
    return list(metadata.entry_points(group=ENTRY_POINT_GROUP))


def _import_target(target: str) -> object:
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise OracleNotFound(f"cannot import {module_name!r} for oracle {target!r}: {exc}") from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise OracleNotFound(f"module {module_name!r} has no oracle named {attr!r}") from None


def _load_from_file(path: Path, attr: str) -> object:
    if not path.is_file():
        raise OracleNotFound(f"oracle file not found: {path}")
    module_name = f"_minimizer_oracle_{abs(hash(str(path.resolve())))}"
    module = sys.modules.get(module_name)
    if module is None:
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise OracleNotFound(f"{path} defines no oracle named {attr!r}") from None


def _as_oracle(found: object, spec: str) -> Oracle:
    if isinstance(found, Oracle):
        return found
    if callable(found):
        # A bare function: give it the spec as its name and record everything except the eager re-run.
        return oracle(spec, needs=ALL_NEEDS - {NEEDS_EAGER_RERUN})(found)  # type: ignore[arg-type]
    raise OracleNotFound(f"{spec!r} is not callable, so it is not an oracle")
