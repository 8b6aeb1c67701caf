"""``torch._dynamo.optimize(backend)(f)``, the older spelling of ``torch.compile(f, backend=backend)``, routed
through the harness's ``torch.compile`` so that the oracles see its calls as they see any compiled call.

``torch.compile`` itself calls ``torch._dynamo.optimize``: calls from torch's own modules, and any made while a
routed compile is under way (a patched ``torch.compile`` of ours that wraps ``optimize`` itself), get the real
one. So does anything the translation cannot carry (hooks, ``disable=True``) and the context-manager use.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

# ``optimize``'s keywords and the ``torch.compile`` keyword each becomes.
AS_COMPILE_KEYWORDS = {"backend": "backend", "nopython": "fullgraph", "dynamic": "dynamic"}


class OptimizeThroughCompile:
    """Installs the routing through a ``compile`` (``install_through``) and takes it back (``uninstall``)."""

    def __init__(self) -> None:
        self._real: Callable[..., Any] | None = None

    def install_through(self, compile: Callable[..., Any]) -> None:
        import torch._dynamo

        real = self._real = torch._dynamo.optimize
        compiling = [False]  # a compile we routed is under way: what it asks of `optimize` is the real one's

        def through_compile(fn: Any, keywords: dict[str, Any]) -> Any:
            compiling[0] = True
            try:
                return compile(fn, **keywords)
            finally:
                compiling[0] = False

        def optimize(*args: Any, **kwargs: Any) -> Any:
            caller = sys._getframe(1).f_globals.get("__name__", "")
            keywords = _as_compile_keywords(args, kwargs)
            if caller.split(".")[0] == "torch" or compiling[0] or keywords is None:
                return real(*args, **kwargs)
            return _Decorator(lambda fn: through_compile(fn, keywords), lambda: real(*args, **kwargs))

        optimize.__doc__ = real.__doc__
        torch._dynamo.optimize = optimize  # type: ignore[assignment]

    def uninstall(self) -> None:
        import torch._dynamo

        if self._real is not None:
            torch._dynamo.optimize = self._real  # type: ignore[assignment]
            self._real = None


def _as_compile_keywords(args: tuple, kwargs: dict) -> dict[str, Any] | None:
    """``torch.compile``'s keywords for ``optimize(*args, **kwargs)``; ``None`` where they cannot say it."""

    if len(args) > 1 or set(kwargs) - set(AS_COMPILE_KEYWORDS):
        return None
    given = dict(kwargs, **({"backend": args[0]} if args else {}))
    keywords = {AS_COMPILE_KEYWORDS[name]: value for name, value in given.items()}
    if not keywords.get("fullgraph", True):
        del keywords["fullgraph"]  # the default
    return keywords


class _Decorator:
    """What ``optimize(...)`` returns: applied to a function, the harness's compile of it; entered as a context
    manager, the real ``optimize``'s context."""

    def __init__(self, apply: Callable[[Any], Any], real: Callable[[], Any]) -> None:
        self._apply, self._real, self._context = apply, real, None

    def __call__(self, fn: Any) -> Any:
        return self._apply(fn)

    def __enter__(self) -> Any:
        self._context = self._real()
        return self._context.__enter__()  # type: ignore[attr-defined]

    def __exit__(self, *exc: Any) -> Any:
        return self._context.__exit__(*exc)  # type: ignore[attr-defined]
