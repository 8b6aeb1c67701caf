"""Entry point of a capture run: ``python -m minimizer.graph.capture_child REQUEST.json``.

Runs the user's script once, like ``minimizer.runner.child`` does (its folder first on ``sys.path``, fixed
seeds, ``runpy``), with ``torch.compile`` patched to save every graph it compiles into the request's output file.
What the script itself does afterwards (an assert failing, an exception) does not matter here.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(request_path: str) -> int:
    from minimizer.runner.bytecode import own_bytecode

    with own_bytecode():  # a fresh interpreter of ours: what it imports, it compiles once per host
        return _capture(json.loads(Path(request_path).read_text()))


def _capture(request: dict) -> int:
    script = request["script"]
    from minimizer.runner.child import enter_script_folder
    from minimizer.runner.prelude import SETTLE_VEC_ISA_VARIABLE

    replay_the_cpu_probe = bool(os.environ.get(SETTLE_VEC_ISA_VARIABLE))  # the script's folder drops the variable
    enter_script_folder(script)

    from minimizer.graph.capture import Recording, install_capture, save_recording
    from minimizer.runner.child import run_script

    recording = Recording([], [])

    def sink(graph) -> None:
        # A graph sunk again (with the inputs of the call the bug showed in) replaces its first record.
        again = [i for i, recorded in enumerate(recording.graphs) if recorded.index == graph.index]
        if again:
            recording.graphs[again[0]] = graph
        else:
            recording.graphs.append(graph)
        # Saved after every graph and call: a later compile may crash the interpreter.
        save_recording(request["output"], recording)

    def call_sink(call) -> None:
        # A call is sunk before it runs (it may crash), and again once it returned what the lift asserts on.
        again = [i for i, recorded in enumerate(recording.calls) if recorded.same_call(call)]
        if again:
            recording.calls[again[-1]] = call
        else:
            recording.calls.append(call)
        save_recording(request["output"], recording)

    if replay_the_cpu_probe:
        # As the warm server's candidates do: this run is a fresh interpreter, where Inductor's CPU probe takes
        # about 30 s on the GPU machine's host (a repro that compiles for the CPU is captured once per reduction).
        from minimizer.runner.vec_isa import replay_recorded

        replay_recorded()
    install_capture(sink, call_sink, request.get("wanted_call"), request.get("random_as_eager", True))
    escaped = run_script(script, request["seed"])
    if escaped is not None:
        print(f"minimizer: the script raised {type(escaped).__name__} (expected for a failing script)", file=sys.stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1])
