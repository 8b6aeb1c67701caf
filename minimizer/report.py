"""An issue body in the PyTorch tracker's bug-report form, from a repro and what plain python shows.

The title comes from the signature (the repro's header, or the failure python shows); the body holds the repro
without minimizer's header, the error as observed under plain python, what was expected and what happened,
the bisect table when there is one, the environment (``torch.utils.collect_env``) and how the repro was made.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from minimizer.bisect import Bisection
from minimizer.output import strip_header
from minimizer.runner.plain import PlainRun, run_plain
from minimizer.runner.run_types import Limits
from minimizer.stages.culprit import read_ladder

_EXPECTED = {
    "numerical": ("The compiled function returns the same values as eager (within `torch.testing.assert_close`'s "
                  "default tolerances).", "The compiled outputs differ from eager"),
    "gradient": ("Gradients through the compiled function match eager's.", "The compiled gradients differ from eager's"),
    "requires-grad": ("The compiled output's `requires_grad` matches eager's.",
                      "The compiled output's `requires_grad` differs from eager's"),
    "inplace": ("Tensors saved for backward are not modified before backward runs (or autograd raises).",
                "A tensor saved for backward is modified in place without a version bump: gradients are silently wrong"),
    "hang": ("The compiled call finishes, as the eager one does.", "The compiled call never finishes"),
}
_COLLECT_ENV_TIMEOUT = 180.0

@dataclass
class Header:
    """What minimizer's header on a repro says (empty strings for a script without one)."""

    oracle: str = ""
    fails: str = ""
    torch: str = ""
    device: str = ""
    source_name: str = ""
    compares: str = ""
    culprit: str = ""


def read_header(text: str) -> Header:
    header = Header()
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if found := re.match(r"# Minimized by minimizer \S+ from (\S+)", line):
            header.source_name = found.group(1)
        elif found := re.match(r"# torch (\S+) on (.+); oracle: (\S+)", line):
            header.torch, header.device, header.oracle = found.groups()
        elif found := re.match(r"# fails: (.*)", line):
            header.fails = found.group(1).strip()
        elif found := re.match(r"# compares: (.*)", line):
            header.compares = found.group(1).strip()
        elif found := re.match(r"# culprit: (.*)", line):
            header.culprit = found.group(1).strip()
    return header


def title_of(header: Header, plain: PlainRun) -> str:
    """A tracker title: ``[torch.compile] <what fails>``, from the header's words or from python's failure."""

    return f"[torch.compile] {(header.fails or plain.describe())[:140]}"


def collect_env(python: str = sys.executable) -> str:
    try:
        done = subprocess.run(
            [python, "-m", "torch.utils.collect_env"], capture_output=True, text=True, timeout=_COLLECT_ENV_TIMEOUT
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"(torch.utils.collect_env did not finish: {error})"
    return done.stdout.strip() or done.stderr.strip()[-2000:]


def issue_body(
    repro: Path,
    *,
    bisection: Bisection | None = None,
    command: str | None = None,
    python: str = sys.executable,
    plain: PlainRun | None = None,
    environment: str | None = None,
    test: str | None = None,
) -> str:
    """The issue text for ``repro`` (run under plain python here unless ``plain`` is given); ``test``: the
    regression test written from it (``minimizer.regression_test``), for the fix to add."""

    text = repro.read_text()
    header = read_header(text)
    body = strip_header(text).strip() + "\n"
    if plain is None:
        plain = run_plain(text, repro.name, str(repro.parent), Limits(timeout=600), python=python)
    expected, actual = _EXPECTED.get(header.oracle, ("The script runs as it does without `torch.compile`.", ""))
    observed, actual_line = _observed(plain, repro.name, actual)
    parts = [
        f"# {title_of(header, plain)}",
        "",
        "### 🐛 Describe the bug",
        "",
        _summary(header),
        "",
        "```python",
        body.rstrip(),
        "```",
        "",
        "### Error logs",
        "",
        "```",
        observed.rstrip(),
        "```",
        "",
        "**Expected:** " + expected,
        "",
        "**Actual:** " + actual_line,
    ]
    parts += _what_else_is_known(header, bisection, test)
    parts += [
        "",
        "### Versions",
        "",
        "```",
        (environment if environment is not None else collect_env(python)).rstrip(),
        "```",
        "",
        "<sub>Minimized with minimizer"
        + (f" from `{header.source_name}`" if header.source_name else "")
        + (f": `{command}`" if command else "")
        + ".</sub>",
    ]
    return "\n".join(parts) + "\n"


def _observed(plain: PlainRun, name: str, actual: str) -> tuple[str, str]:
    """The error log the plain run left, and the "Actual" line that says what it did."""

    if plain.fails:
        # The run was in a temporary folder: the traceback names the file as the reader will have it.
        observed = re.sub(r'File "[^"]*/' + re.escape(name) + '"', f'File "{name}"', _error_tail(plain.stderr_tail))
        return observed, f"{actual + ': ' if actual else ''}`python {name}` fails with `{plain.describe()}`."
    if plain.timed_out:
        return "(no output: the run was stopped at its time limit)", f"{actual or 'It hangs'}."
    return (
        f"(python {name} exited 0 here: the failure did not reproduce on this machine)",
        "It did not fail on this machine; see the bisect table for where it does.",
    )


def _what_else_is_known(header: Header, bisection: Bisection | None, test: str | None) -> list[str]:
    """The sections after the error: the culprit, the releases it fails on, the regression test."""

    parts = []
    if header.culprit:
        parts += ["", "### Culprit", "", *_culprit_section(header.culprit)]
    if bisection is not None:
        parts += ["", "### Releases", "", bisection.markdown().rstrip()]
    if test is not None:
        parts += ["", "### Regression test", "", "Fails today, passes once fixed:", "", "```python", strip_header(test).rstrip(), "```"]
    return parts


def _culprit_section(described: str) -> list[str]:
    """The layer the repro's header names, and the backend ladder that named it as a table."""

    layer, ladder = read_ladder(described)
    lines = [f"**Layer:** {layer} (the repro run with every compiled call given each backend in turn)."]
    if ladder:
        lines += ["", "| backend | shows the bug |", "| --- | --- |"]
        lines += [f"| `{backend}` | {'yes' if shown else 'no'} |" for backend, shown in ladder]
    return lines


def _summary(header: Header) -> str:
    if not header.oracle:
        return "The script below fails under `torch.compile`; it runs without it."
    where = f" on {header.device} (torch {header.torch})" if header.torch else ""
    compares = f" Its check {header.compares.split(': ', 1)[-1]}." if header.compares else ""
    return f"Standalone repro{where}. Found by minimizer's `{header.oracle}` oracle: {header.fails}.{compares}"


def _error_tail(stderr: str, lines: int = 30) -> str:
    """The last traceback python printed, at most ``lines`` lines (warnings before it left out)."""

    text = stderr.rstrip()
    start = text.rfind("Traceback (most recent call last):")
    if start >= 0:
        text = text[start:]
    kept = text.splitlines()
    if len(kept) > lines:
        kept = kept[:3] + ["  ..."] + kept[-(lines - 4):]
    return "\n".join(kept)
