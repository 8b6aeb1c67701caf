"""Reading the user's script: every way it can be unusable gets one clear line."""

from __future__ import annotations

from pathlib import Path

from minimizer.errors import MinimizerError
from minimizer.syntax import parse_python


def read_script(path: Path) -> str:
    """Return the text of ``path`` after checking that it exists, is a Python file and parses."""

    if not path.exists():
        raise MinimizerError(f"no such file: {path}")
    if not path.is_file():
        raise MinimizerError(f"not a file: {path}")
    if path.suffix != ".py":
        raise MinimizerError(f"not a Python file (expected a .py script): {path}")
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise MinimizerError(f"not a Python file (not valid UTF-8 text): {path}") from None
    try:
        parse_python(text, filename=str(path))
    except SyntaxError as exc:
        raise MinimizerError(f"syntax error in {path}, line {exc.lineno}: {exc.msg}") from None
    return text
