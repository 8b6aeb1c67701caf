"""`ast.parse` for the parent process, one thread at a time.

CPython before 3.12.1 keeps the recursion depth of its AST-to-Python conversion in module-wide state
(python/cpython#106905): two threads parsing at once can fail with "SystemError: AST constructor recursion
depth mismatch". The reducer's worker threads read each candidate's setup block while the main thread screens
the next candidate, so every parse in the parent goes through this lock.
"""

from __future__ import annotations

import ast
import threading

_LOCK = threading.Lock()


def parse_python(source: str, filename: str = "<unknown>", mode: str = "exec") -> ast.AST:
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)
