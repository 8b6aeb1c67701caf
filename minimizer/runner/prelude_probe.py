"""The prelude probe: ``python -m minimizer.runner.prelude_probe SCRIPT RESULT.json``.

Runs SCRIPT (a script's setup block, see ``minimizer.runner.prelude``) as ``__main__`` in a plain
interpreter and writes the environment variables and ``sys.path`` entries it changed. Nothing here may
import a library before it: that would defeat the probe.
"""

from __future__ import annotations

import json
import os
import runpy
import sys


def main(script: str, result: str) -> None:
    started_env = dict(os.environ)
    started_path = list(sys.path)
    put: dict[str, str | None] = {}
    real_putenv, real_unsetenv = os.putenv, os.unsetenv

    def putenv(name, value):  # os.putenv changes the process's environment without touching os.environ
        put[os.fsdecode(name)] = os.fsdecode(value)
        real_putenv(name, value)

    def unsetenv(name):
        put[os.fsdecode(name)] = None
        real_unsetenv(name)

    os.putenv, os.unsetenv = putenv, unsetenv

    def report() -> None:  # the environment and sys.path as the block left them
        changed: dict[str, str | None] = dict(put)
        for name, value in os.environ.items():
            if started_env.get(name) != value:
                changed[name] = value
        for name in started_env:
            if name not in os.environ:
                changed[name] = None
        added = [p for p in sys.path if p not in started_path]
        tmp = result + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"env": changed, "sys_path": added}, f)
        os.replace(tmp, result)
        os._exit(0)

    sys.argv = [script]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    started_path = list(sys.path)
    try:
        runpy.run_path(script, run_name="__main__")
    except BaseException:  # noqa: BLE001 - the script's own failure is for the real run to show
        pass
    report()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
