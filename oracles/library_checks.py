"""Library checks (``assert_close``, ``math.isclose``, numpy's), recorded whole by the evidence recorder: their
own comparisons are their business, the check is the event. Where the recorder holds the suspect's comparisons
(``EvidenceRecorder.holding``), a check of the suspect's values passes: it neither raises nor returns false."""

from __future__ import annotations

import contextlib
import math
import sys
from typing import Any

Patched = list[tuple[Any, str, Any]]


def raises_itself(kind: str | None) -> bool:
    """Whether a recorded check of this kind raises where it fails (``assert_close``, ``np.testing``'s), rather
    than returning false for the script to act on."""

    return kind is not None and (kind == "assert_close" or kind.startswith("np.testing."))


def patch_checks(recorder: Any) -> Patched:
    """Replace each library check by one that reports to ``recorder``; what to put back (owner, name, real)."""

    import torch.testing

    patched: Patched = []
    _patch(recorder, patched, torch.testing, "assert_close", "assert_close")
    _patch(recorder, patched, math, "isclose", "math.isclose")
    numpy = sys.modules.get("numpy")
    if numpy is None:
        with contextlib.suppress(ImportError):
            import numpy
    if numpy is not None:
        for name in ("assert_allclose", "assert_array_equal", "assert_array_almost_equal", "assert_equal",
                     "assert_almost_equal"):
            _patch(recorder, patched, numpy.testing, name, f"np.testing.{name}")
        for name in ("allclose", "array_equal"):
            _patch(recorder, patched, numpy, name, f"np.{name}")
    return patched


def unpatch_checks(patched: Patched) -> None:
    for owner, name, real in reversed(patched):
        setattr(owner, name, real)
    patched.clear()


def _patch(recorder: Any, patched: Patched, owner: Any, name: str, kind: str) -> None:
    raises = raises_itself(kind)
    real = getattr(owner, name, None)
    if real is None:
        return

    def check(actual: Any, expected: Any, *args: Any, **kwargs: Any) -> Any:
        if recorder.is_aside():
            return real(actual, expected, *args, **kwargs)
        try:
            with recorder.aside():
                result = real(actual, expected, *args, **kwargs)
        except AssertionError as failed:
            if recorder.record(kind, (actual, expected), False) and recorder.holding:
                return None
            recorder.raised = failed
            raise
        kept = recorder.record(kind, (actual, expected), True if raises else bool(result))
        return True if kept and recorder.holding and not raises else result

    check.__wrapped__ = real  # type: ignore[attr-defined]
    check.__name__ = getattr(real, "__name__", name)
    check.__doc__ = getattr(real, "__doc__", None)
    patched.append((owner, name, real))
    setattr(owner, name, check)
