"""Drive pysource-minimize with our exit-code interestingness test (one cold run per call), for bench/run.py.

    python bench/pysource_driver.py SCRIPT BEST COUNT_FILE -- TEST_COMMAND...

pysource-minimize is a library (``minimize(source, checker)``) with no time limit of its own; every source its
checker accepts is written to BEST at once (atomically), so that the benchmark can stop this process at its cap
and measure the best so far, as it does for shrinkray. Each checker call appends a line to COUNT_FILE.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pysource_minimize import minimize


def main() -> int:
    script, best, count_file = (Path(a) for a in sys.argv[1:4])
    test = sys.argv[sys.argv.index("--") + 1 :]
    source = script.read_text()
    best.write_text(source)

    def checker(candidate: str) -> bool:
        with count_file.open("a") as counts:
            counts.write("call\n")
        with tempfile.NamedTemporaryFile("w", suffix=".py", dir=best.parent, delete=False) as handle:
            handle.write(candidate)
        try:
            interesting = subprocess.run([*test, handle.name], capture_output=True).returncode == 0
        finally:
            os.unlink(handle.name)
        if interesting and len(candidate) < len(best.read_text()):
            partial = best.with_suffix(".partial")
            partial.write_text(candidate)
            partial.replace(best)
        return interesting

    result = minimize(source, checker)
    if len(result) <= len(best.read_text()):
        best.write_text(result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
