"""Size measures of a script: lines, tokens and torch operators (as the report and README define them)."""

from __future__ import annotations

import ast
import importlib.metadata
import io
import json
import os
import subprocess
import sys
import threading
import tokenize
from dataclasses import asdict, dataclass
from functools import lru_cache
from pathlib import Path

from minimizer.runner.bytecode import own_process_environment
from minimizer.syntax import parse_python

_NON_CODE_TOKENS = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENDMARKER,
}
_TORCH_MODULES = ("torch", "torch.nn", "torch.nn.functional")


@dataclass(frozen=True)
class Size:
    lines: int
    tokens: int
    torch_ops: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


def measure(source: str) -> Size:
    return Size(lines=count_lines(source), tokens=count_tokens(source), torch_ops=count_torch_ops(source))


def count_lines(source: str) -> int:
    """Non-blank lines that are not only a comment."""

    return sum(1 for line in source.splitlines() if line.strip() and not line.strip().startswith("#"))


@lru_cache(maxsize=1024)
def code_tokens(source: str) -> tuple[str, ...]:
    """The strings of the tokens that carry code (comments, newlines and indentation left out)."""

    # Remembered: a reduction asks for one candidate's tokens for its size, its cache key and its screen.
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return tuple(_whole_fstrings(tok for tok in tokens if tok.type not in _NON_CODE_TOKENS))


# Python 3.12 tokenizes an f-string into its parts (PEP 701); 3.11 and earlier give one STRING token. One token
# either way, so a repro's size does not depend on the Python that measures it.
_FSTRING_START, _FSTRING_END = getattr(tokenize, "FSTRING_START", None), getattr(tokenize, "FSTRING_END", None)


def _whole_fstrings(tokens) -> list[str]:
    found: list[str] = []
    depth, parts = 0, []
    for tok in tokens:
        if _FSTRING_START is not None and tok.type == _FSTRING_START:
            depth += 1
        if depth:
            parts.append(tok.string)
            if tok.type == _FSTRING_END:
                depth -= 1
                if not depth:
                    found.append("".join(parts))
                    parts = []
            continue
        found.append(tok.string)
    return found


def count_tokens(source: str) -> int:
    return len(code_tokens(source))


def count_torch_ops(source: str) -> int:
    """Calls of functions from torch, torch.nn and torch.nn.functional (under any import alias, constructors of
    ``nn`` layers included) plus calls of tensor methods (``x.relu()``, ``x.view(...)``: a method name of
    ``torch.Tensor`` called on something that is not a module)."""

    tree = parse_python(source)
    aliases = _torch_aliases(tree)
    methods = _tensor_method_names()
    count = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        dotted = _dotted_name(func)
        if dotted is not None:
            root, _, rest = dotted.partition(".")
            if root in aliases and (rest or aliases[root] != "torch"):
                count += 1
                continue
            if root in aliases:
                continue
        if isinstance(func, ast.Attribute) and func.attr in methods:
            count += 1
    return count


def _torch_aliases(tree: ast.Module) -> dict[str, str]:
    aliases = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _TORCH_MODULES:
                    aliases[alias.asname or alias.name.partition(".")[0]] = alias.name if alias.asname else "torch"
        elif isinstance(node, ast.ImportFrom) and node.module in _TORCH_MODULES:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return aliases


def _dotted_name(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def list_tensor_methods_in_background() -> threading.Thread:
    """Start listing ``torch.Tensor``'s methods (a fresh interpreter's ``import torch`` the first time on a host)
    while other work goes on; join the thread before measuring."""

    thread = threading.Thread(target=_tensor_method_names, daemon=True)
    thread.start()
    return thread


@lru_cache(maxsize=1)
def _tensor_method_names() -> frozenset[str]:
    """``torch.Tensor``'s public attribute names, for the installed torch.

    Read from a file cached per torch release (~/.cache/minimizer): importing torch costs seconds of the
    parent's CPU, which a reduction needs for proposing candidates. The first time, a child interpreter imports
    torch and lists them. Without torch: none (calls of tensor methods are then not counted).
    """

    try:
        version = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return frozenset()
    cache = TENSOR_METHODS_CACHE / f"tensor-methods-{version}.json"
    try:
        return frozenset(json.loads(cache.read_text()))
    except (OSError, ValueError):
        pass
    try:
        listing = subprocess.run(
            [sys.executable, "-c", _LIST_TENSOR_METHODS],
            capture_output=True,
            text=True,
            timeout=300,
            env=own_process_environment(dict(os.environ)),
        )
        names = json.loads(listing.stdout) if listing.returncode == 0 else None
    except (OSError, subprocess.SubprocessError, ValueError):
        names = None
    if names is None:
        return frozenset()
    try:
        from minimizer.files import write_atomic

        write_atomic(cache, json.dumps(names))
    except OSError:
        pass  # a read-only home: listed again next time
    return frozenset(names)


TENSOR_METHODS_CACHE = Path.home() / ".cache" / "minimizer"
_LIST_TENSOR_METHODS = (
    "import json, torch; print(json.dumps(sorted(n for n in dir(torch.Tensor) if not n.startswith('_'))))"
)
