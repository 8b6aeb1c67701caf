"""Bug signatures: exception text normalized so that the same bug in a smaller script reads the same.

Reduction changes numbers, shapes, file names and line numbers in error messages without changing the bug;
normalization removes exactly those so that signatures stay comparable.
"""

from __future__ import annotations

import re

from oracles.api import ExceptionInfo

# Lines after which torch's error messages carry only advice, locations and user code.
_BOILERPLATE_PREFIXES = (
    "Set TORCH_LOGS",
    "Set TORCHDYNAMO_VERBOSE",
    "You can suppress this exception",
    "For even more developer context",
    "from user code:",
    "Developer debug context:",
    "While executing",
    "Original traceback:",
    "To execute this test, run",
)
_MAX_LEN = 400

_PATH = re.compile(r"""(?:[A-Za-z]:)?(?:[\w.~-]*/)+[\w.-]+""")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_LINE = re.compile(r"\bline \d+")
_SHAPE = re.compile(r"(?<![\w.])[\[(]\s*(?:-?\d+|N|s\d+)(?:\s*,\s*(?:-?\d+|N|s\d+))*\s*,?\s*[\])]")
# Digits inside words too: generated names (buf3, arg0_1, 8x64) change as the script shrinks.
_NUMBER = re.compile(r"(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")
_SPACE = re.compile(r"\s+")
# In a tensor's repr, how it was made (`grad_fn=<GeluBackward0>`, `requires_grad=True`): an operand's history,
# which changes when the reduction removes the layers before the op that fails.
_TENSOR_HISTORY = re.compile(r",\s*(?:grad_fn=<[^>]*>|requires_grad=(?:True|False))")


def normalize_message(message: str) -> str:
    """Return ``message`` with paths, addresses, line numbers, shapes and numbers replaced by placeholders, and
    tensors' autograd history left out of their reprs.

    Only the lines before torch's advice boilerplate are kept; whitespace is collapsed and lines are joined
    with `` | ``.
    """

    kept: list[str] = []
    for line in message.splitlines():
        stripped = line.strip()
        if stripped.startswith(_BOILERPLATE_PREFIXES):
            break
        if stripped:
            kept.append(stripped)
    text = " | ".join(kept)
    text = _TENSOR_HISTORY.sub("", text)
    text = _HEX.sub("0x?", text)
    text = _PATH.sub("<path>", text)
    text = _LINE.sub("line ?", text)
    text = _SHAPE.sub("[shape]", text)
    text = _NUMBER.sub("N", text)
    text = _SPACE.sub(" ", text).strip()
    return text[:_MAX_LEN]


def normalize_source(text: str) -> str:
    """Collapse whitespace in a source fragment (an assert's test) so formatting changes don't matter."""

    return _SPACE.sub(" ", text).strip()


def exception_signature(exc: ExceptionInfo) -> str:
    """``Type: normalized message``; for an assertion, the assert's test source and its message."""

    if exc.assert_text is not None:
        message = normalize_message(exc.message)
        tail = f" -- {message}" if message else ""
        return f"{exc.type}: assert {normalize_source(exc.assert_text)}{tail}"
    return f"{exc.type}: {normalize_message(exc.message)}"
