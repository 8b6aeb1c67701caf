"""Which subsystem of Inductor, and which application of it, a bug the backend ladder laid at Inductor's door
needs: torch's compiler bisector (``torch._inductor.compiler_bisector``, shipped from torch 2.6), driven by plain
runs of the repro.

The bisector runs a command again and again, each time with another subsystem (pre-grad, joint-graph and
post-grad passes, lowerings, config changes) turned off, or only its first N applications on, and reads the
command's exit status: 0 for "no bug". The command here is this module's ``probe``: the repro under plain python,
"bug" only where it fails as the repro claims (another failure, such as a compile error with a pass turned off,
is not the bug). Each bisection gets an Inductor cache of its own: a graph compiled with a pass turned off is
cached under the same key as the graph compiled with it, and a shared cache would hand the bisected kernel to
every later run of the program (2026-11-28: a bisection beside a benchmark made the planted bug vanish there).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from minimizer.runner.plain import run_plain
from minimizer.runner.process import USER_ENV
from minimizer.runner.run_types import Limits
from minimizer.runner.workspace import populate

_FOUND = re.compile(
    r"BisectionResult\(backend='(?P<backend>[^']*)'"
    r"(?:, subsystem=(?:'(?P<subsystem>[^']*)'|None))?"
    r"(?:, bisect_number=(?:(?P<number>\d+)|None))?"
    r"(?:, debug_info=(?:'(?P<detail>[^']*)'|None))?\)"
)


@dataclass(frozen=True)
class Subsystem:
    """What the bisector found: the subsystem ("" where it named only the backend), the application of it that
    breaks (0: not counted), and what it says of that application (a pass's name)."""

    name: str
    application: int = 0
    detail: str = ""

    def describe(self) -> str:
        """``post_grad_passes, application 1 (post_grad_custom_pre_pass)``."""

        if not self.name:
            return "no subsystem of Inductor alone"
        told = self.name + (f", application {self.application}" if self.application else "")
        return told + (f" ({self.detail})" if self.detail else "")


def ships_the_bisector(python: str = sys.executable) -> bool:
    """Whether ``python``'s torch has a compiler bisector that runs a command (``compiler_bisector run``)."""

    probe = "import inspect, torch._inductor.compiler_bisector as b; print('\"run\"' in inspect.getsource(b))"
    done = subprocess.run([python, "-c", probe], capture_output=True, text=True, env=USER_ENV)
    return done.returncode == 0 and done.stdout.strip() == "True"


def bisect_inductor(
    source: str, filename: str, beside: str | None, failure: str, *, python: str = sys.executable,
    run_seconds: float = 300.0, total_seconds: float | None = None,
) -> Subsystem | str:
    """The subsystem of Inductor the repro ``source`` (which fails under plain python with ``failure``) needs, or
    why none was found. ``run_seconds`` bounds each run of the repro; the bisection takes some twenty, all of them
    within ``total_seconds`` (``None``: no bound), else it is stopped with every run it started."""

    with tempfile.TemporaryDirectory(prefix="minimizer-bisect-") as work:
        folder = Path(work) / "case"
        folder.mkdir()
        (folder / filename).write_text(source)
        if beside:
            populate(beside, folder)
        env = {**USER_ENV, "TORCHINDUCTOR_CACHE_DIR": str(Path(work) / "inductor-cache")}
        probe = [python, "-m", "minimizer.stages.subsystem", filename, failure, str(run_seconds)]
        command = [python, "-m", "torch._inductor.compiler_bisector", "run", *probe]
        bisector = subprocess.Popen(
            command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
        try:
            output, _ = bisector.communicate(timeout=total_seconds)
        except subprocess.TimeoutExpired:
            os.killpg(bisector.pid, signal.SIGKILL)  # the bisector and the plain run it is waiting for
            bisector.communicate()
            return f"the bisector did not finish within {total_seconds:.0f} s"
    return read_bisection(output)


def read_bisection(output: str) -> Subsystem | str:
    """What ``compiler_bisector run`` printed, read: the subsystem it found, or why it found none."""

    found = _FOUND.search(output)
    if found is None:
        return "the bisector found no issue" if "no issue found" in output else "the bisector did not finish"
    return Subsystem(found["subsystem"] or "", int(found["number"] or 0), found["detail"] or "")


def _probe(filename: str, failure: str, run_seconds: float) -> int:
    """The bisector's command: 1 where ``filename`` fails under plain python with ``failure``, else 0."""

    run = run_plain(Path(filename).read_text(), filename, str(Path.cwd()), Limits(timeout=run_seconds))
    return 1 if run.failure == failure else 0


if __name__ == "__main__":
    sys.exit(_probe(sys.argv[1], sys.argv[2], float(sys.argv[3])))
