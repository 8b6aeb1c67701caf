"""Bug signatures: exception text normalized so that the same bug in a smaller script reads the same.

Reduction changes numbers, shapes, file names and line numbers in error messages without changing the bug;
normalization removes exactly those so that signatures stay comparable.
"""

from __future__ import annotations

import ast
import builtins
import re
from typing import Callable

from oracles.api import ExceptionInfo
from oracles.library_checks import raises_itself

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


def exception_signature(exc: ExceptionInfo, *, evidence: bool = False) -> str:
    """``Type: normalized message``; for an assertion, the assert's test and its message.

    An assert with a message is told by the message and the test's shape (``assert torch.allclose(_, _) --
    bank update differs``): the names and expressions it compares are left out, since reductions rename and
    inline them (``bank.features`` -> ``features``) while the check stays the same. Without a message, the
    test's source is all that tells one assert from another and is kept whole.

    With ``evidence`` (the run recorded the failing comparison of the suspect's values, which the signature
    carries beside this), the message is left out: the comparison, not the words a person wrote about it, tells
    which check failed, and a message that names where it failed (``f"{name} differs"`` in a loop over cases)
    would pin the loop. Of the assert's test only what decides whether the recorded comparison fails stays
    (``deciding_parts``: its tolerances, thresholds and operators); how it is spelled around that comparison
    (`all(close(o, r) for o, r in zip([out], [ref]))` or `torch.allclose(out, ref)`) is the evidence's to tell.
    An exit's status stays. Where the recorded check raises itself (``assert_close``), how the script caught and
    reported its failure (an ``except`` appending to a list asserted empty) is not the failure either: the
    exception's type is."""

    if evidence and exc.type != "SystemExit":
        if exc.assert_text is None or raises_itself(exc.evidence_kind):
            return exc.type
        return f"{exc.type}: assert {deciding_parts(exc.assert_text)}"
    if exc.assert_text is not None:
        message = normalize_message(exc.message)
        if not message:
            return f"{exc.type}: assert {normalize_source(exc.assert_text)}"
        return f"{exc.type}: assert {assert_shape(exc.assert_text)} -- {message}"
    return f"{exc.type}: {normalize_message(exc.message)}"


# Modules whose functions a check calls by their dotted name: `torch.allclose(_, _)` stays as it is.
_LIBRARIES = frozenset({"torch", "math", "np", "numpy"})


def assert_shape(test: str) -> str:
    """An assert's test with what it compares left out: ``torch.allclose(out, ref, atol=0.001)`` ->
    ``torch.allclose(_, _, atol=0.001)``, ``not info['attached']`` -> ``not _``, ``(f, b) == (1, 0)`` ->
    ``(_, _) == (1, 0)``. Literals, comparison operators, and calls of torch, math, numpy and builtins stay:
    they decide what fails (a tolerance dropped makes a check fail on rounding)."""

    return _read(test, lambda tree: ast.unparse(_shaped(tree)))


def deciding_parts(test: str) -> str:
    """What of an assert's test decides whether the comparison it makes fails, the comparison aside: the
    operators that compare and negate (``<``, ``not``, ``and``), the literals compared with (``< 1e-05``), and
    the tolerances given by keyword (``atol=0.001``); ``_`` where there is none. ``all(close(o, r) for o, r in
    zip([out], [ref]))`` and ``torch.allclose(out, ref)`` are both ``_``; ``err.max() < 1e-5`` is ``< 1e-05``."""

    return _read(test, lambda tree: " ".join(_deciding(tree)) or "_")


def _read(test: str, told: Callable[[ast.expr], str]) -> str:
    """``told`` of the test's expression; the test's normalized source where it does not parse."""

    try:
        tree = ast.parse(normalize_source(test), mode="eval").body
    except SyntaxError:
        return normalize_source(test)
    return told(tree)


# Keywords that set how close is close: `atol`, `rel_tol`, `equal_nan`, `check_dtype`.
_TOLERANCE = re.compile(r"tol$|^equal_nan$|^check_")


def _deciding(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Compare):
        parts = _compared(node.left)
        for op, comparator in zip(node.ops, node.comparators):
            parts += [_COMPARE_SYMBOLS[type(op)], *_compared(comparator)]
        return parts
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return ["not", *_deciding(node.operand)]
    if isinstance(node, ast.BoolOp):
        return [("and" if isinstance(node.op, ast.And) else "or"), *(p for v in node.values for p in _deciding(v))]
    parts = []
    if isinstance(node, ast.Call):
        parts += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords if k.arg and _TOLERANCE.search(k.arg) and _literal(k.value)]
    for child in ast.iter_child_nodes(node):
        parts += _deciding(child)
    return parts


def _compared(node: ast.expr) -> list[str]:
    """A literal a comparison compares with (``1e-05``, ``-1``), or what decides inside the expression."""

    return [ast.unparse(node)] if _literal(node) else _deciding(node)


def _literal(node: ast.expr) -> bool:
    """A number, a bool, None, negated or in a tuple or list of them (`(1, 0)`)."""

    if isinstance(node, (ast.Tuple, ast.List)):
        return bool(node.elts) and all(_literal(e) for e in node.elts)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and not isinstance(node.value, str)


_COMPARE_SYMBOLS = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Is: "is",
    ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in",
}


def _shaped(node: ast.expr) -> ast.expr:
    hole = ast.Name("_")
    if isinstance(node, ast.Constant):
        return node
    if isinstance(node, ast.UnaryOp):
        return ast.UnaryOp(node.op, _shaped(node.operand))
    if isinstance(node, ast.BoolOp):
        return ast.BoolOp(node.op, [_shaped(v) for v in node.values])
    if isinstance(node, ast.Compare):
        return ast.Compare(_shaped(node.left), node.ops, [_shaped(c) for c in node.comparators])
    if isinstance(node, (ast.Tuple, ast.List)):
        return type(node)([_shaped(e) for e in node.elts], ast.Load())
    if isinstance(node, ast.Call) and _library_function(node.func):
        keywords = [ast.keyword(k.arg, _shaped(k.value)) for k in node.keywords]
        return ast.Call(node.func, [_shaped(a) for a in node.args], keywords)
    return hole


def _library_function(func: ast.expr) -> bool:
    """``torch.allclose``, ``math.isclose``, ``all``: a function the script did not define."""

    if isinstance(func, ast.Name):
        return hasattr(builtins, func.id)
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in _LIBRARIES
