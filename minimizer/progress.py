"""Progress display: a rich live line on a terminal, plain lines elsewhere, nothing with -q.

It only observes the reduction; it never changes it.
"""

from __future__ import annotations

import sys
import time
from typing import Protocol

from rich.console import Console
from rich.live import Live
from rich.text import Text


class QuietProgress:
    def message(self, text: str) -> None: ...
    def reduction_started(self, size: int) -> None: ...
    def pass_started(self, name: str) -> None: ...
    def accepted(self, text: str, size: int, pass_name: str) -> None: ...
    def tested(self, interesting: bool, cached: bool) -> None: ...
    def close(self) -> None: ...


class PlainProgress(QuietProgress):
    """One line per event that matters, for logs and pipes."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.started = time.monotonic()
        self.start_size = 0
        self.calls = 0
        self.steps = 0

    def _print(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f}s] {text}", file=self.stream, flush=True)

    def message(self, text: str) -> None:
        self._print(text)

    def reduction_started(self, size: int) -> None:
        self.start_size = size
        self._print(f"reducing: {size} tokens")

    def tested(self, interesting: bool, cached: bool) -> None:
        if not cached:
            self.calls += 1

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.steps += 1
        self._print(f"{size} / {self.start_size} tokens after {self.calls} oracle calls ({pass_name})")


class RichProgress(PlainProgress):
    """A live status line: size now against the start, oracle calls, accepted steps, elapsed time."""

    def __init__(self):
        super().__init__()
        self.console = Console(stderr=True)
        self.size = 0
        self.pass_name = ""
        self.live = Live(self._render(), console=self.console, refresh_per_second=4, transient=False)
        self.live.start()

    def _render(self) -> Text:
        elapsed = time.monotonic() - self.started
        percent = 100 * self.size / self.start_size if self.start_size else 100
        return Text.assemble(
            ("minimizer ", "bold"),
            (f"{self.size}/{self.start_size} tokens ({percent:.0f}%)", "cyan"),
            f"  oracle calls {self.calls}  accepted {self.steps}  {elapsed:.0f}s  ",
            (self.pass_name, "dim"),
        )

    def _refresh(self) -> None:
        self.live.update(self._render())

    def message(self, text: str) -> None:
        self.console.print(text)

    def reduction_started(self, size: int) -> None:
        self.start_size = self.size = size
        self._refresh()

    def pass_started(self, name: str) -> None:
        self.pass_name = name
        self._refresh()

    def tested(self, interesting: bool, cached: bool) -> None:
        super().tested(interesting, cached)
        self._refresh()

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.steps += 1
        self.size = size
        self._refresh()

    def close(self) -> None:
        self.live.stop()


def make_progress(quiet: bool) -> QuietProgress:
    if quiet:
        return QuietProgress()
    if sys.stderr.isatty():
        return RichProgress()
    return PlainProgress()


class Progress(Protocol):
    """What the stages tell whoever watches them (``QuietProgress`` and its kin, or a test's recorder)."""

    def message(self, text: str) -> None: ...
    def reduction_started(self, size: int) -> None: ...
    def pass_started(self, name: str) -> None: ...
    def accepted(self, text: str, size: int, pass_name: str) -> None: ...
    def tested(self, interesting: bool, cached: bool) -> None: ...
