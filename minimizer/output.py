"""Writing the repro: a header that says what it shows, tidy layout, and atomic writes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from minimizer import __version__
from minimizer.metrics import Size
from oracles.bug import shortened

_HEADER_MARK = "# Minimized by minimizer"
_BLANK_RUN = re.compile(r"\n{3,}(?=\S)")


@dataclass(frozen=True)
class ReproInfo:
    """What the header of a repro states."""

    source_name: str
    torch_version: str
    device: str
    oracle: str
    fails: str  # what fails, in words (``oracles.bug.Bug.in_words``)
    before: Size
    after: Size
    oracle_calls: int
    cache_hits: int
    seconds: float
    final: bool
    cost: str = ""  # what plain python runs of the repro and the original cost, for people
    compares: str = ""  # what the repro's failing check compares (oracles.evidence.Comparison.describe)
    culprit: str = ""  # the compiler layer the bug lives in (minimizer.stages.culprit.Culprit.describe)


def default_output_path(script: Path) -> Path:
    """``bug.py`` -> ``bug.min.py`` beside it."""

    return script.with_name(f"{script.stem}.min.py")


def tidy(source: str) -> str:
    """At most two blank lines in a row, no trailing spaces, exactly one final newline."""

    lines = [line.rstrip() for line in source.splitlines()]
    text = "\n".join(lines).strip("\n")
    text = _BLANK_RUN.sub("\n\n\n", text)
    return text + "\n"


def strip_header(source: str) -> str:
    """Remove a header that an earlier run of minimizer wrote, so re-reducing a repro doesn't stack headers."""

    return split_header(source)[1]


def split_header(source: str) -> tuple[str, str]:
    """The header an earlier run of minimizer wrote ("" where there is none), and the script after it."""

    lines = source.splitlines(keepends=True)
    if not lines or not lines[0].startswith(_HEADER_MARK):
        return "", source
    end = 0
    while end < len(lines) and lines[end].startswith("#"):
        end += 1
    return "".join(lines[:end]), "".join(lines[end:]).lstrip("\n")


def _line(label: str, text: str, most: int = 160) -> str:
    """``# label: text``, the text cut to fit the line in ``most`` characters; the report holds the whole."""

    return shortened(f"# {label}: {text}", most)


def render_repro(body: str, info: ReproInfo) -> str:
    """The repro file's text: the header comment, then the tidied script."""

    status = "" if info.final else " (in progress: best so far)"
    header = [
        f"{_HEADER_MARK} {__version__} from {info.source_name}{status}",
        f"# torch {info.torch_version} on {info.device}; oracle: {info.oracle}",
        _line("fails", info.fails),
        *([_line("compares", info.compares)] if info.compares else []),
        *([_line("culprit", info.culprit)] if info.culprit else []),
        f"# size: {info.before.tokens} -> {info.after.tokens} tokens, {info.before.lines} -> {info.after.lines} lines,"
        f" {info.before.torch_ops} -> {info.after.torch_ops} torch ops",
        f"# work: {info.oracle_calls} oracle calls ({info.cache_hits} cache hits), {info.seconds:.0f} s",
    ]
    if info.cost:
        header.append(f"# plain python: {info.cost}")
    return "\n".join(header) + "\n\n" + tidy(body)
