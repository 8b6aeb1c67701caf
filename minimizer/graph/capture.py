"""Capture the graphs torch.compile hands its backend, in the candidate's process, and load them in the parent.

In the child (``minimizer.graph.capture_child``), ``install_capture`` wraps ``torch.compile`` so that the backend
the script asked for is itself wrapped: each Dynamo graph is saved (as a pickled ``GraphModule`` plus one
``InputSpec`` per placeholder and the ``CompileCall``) before the real backend sees it, so a backend that crashes
still leaves its graph behind. In the parent, ``capture_graphs`` runs the child and returns ``GraphCase``s.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import inspect
import io
import json
import operator
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch
import torch.fx as fx

from minimizer.graph.call_record import RecordedCall, record_module_construction, recording_calls, wanted_call_running
from minimizer.graph.case import INPUT_SPEC, MAX_RECORDED_VALUES, CompileCall, GraphCase, InputSpec, propagate_shapes, tensor_spec
from minimizer.runner.process import Job, SubprocessLauncher, supervise
from minimizer.runner.run_types import RunSettings
from minimizer.runner.run_folder import job_env, prepare_run_folder
from oracles.dynamo_optimize import OptimizeThroughCompile



@dataclass
class CapturedGraph:
    """One graph as the child saved it: a pickled GraphModule, its inputs, and the compile call."""

    index: int
    graph_module: bytes
    inputs: list[InputSpec]
    compile: CompileCall
    # Grad mode when the graph was compiled: a graph compiled under no_grad is an inference graph, which
    # Inductor lowers differently (no joint graph), so a repro must compile it the same way.
    grad_enabled: bool = True
    # Autocast as it was when the graph was compiled (``cpu:bfloat16``): a graph traced under an autocast the
    # script entered outside the compiled call runs in the lower precision only under that autocast.
    autocast: list[str] = dataclasses.field(default_factory=list)


def autocast_now() -> list[str]:
    """``device:dtype`` for each device type autocast is on for here (``cpu:bfloat16``)."""

    on = []
    for device in ("cpu", "cuda"):
        try:
            if torch.is_autocast_enabled(device):
                on.append(f"{device}:{str(torch.get_autocast_dtype(device)).removeprefix('torch.')}")
        except (RuntimeError, TypeError):  # a release without the per-device API: as if off
            continue
    return on


class CaptureFailed(Exception):
    """The capture run produced no graph file; the message says why."""


# -- child side ------------------------------------------------------------------------------------------


def compile_call_of(kwargs: dict[str, Any]) -> CompileCall:
    """The ``CompileCall`` for ``torch.compile(model, **kwargs)``; a callable backend becomes ``module:qualname``."""

    backend = kwargs.get("backend", "inductor") or "inductor"
    if not isinstance(backend, str):
        module = getattr(backend, "__module__", None)
        qualname = _made_by(backend) or getattr(backend, "__qualname__", None) or getattr(backend, "__name__", None)
        backend = f"{module}:{qualname}" if module and qualname else repr(backend)
    options = kwargs.get("options")
    return CompileCall(
        backend=backend,
        mode=kwargs.get("mode"),
        fullgraph=bool(kwargs.get("fullgraph", False)),
        dynamic=kwargs.get("dynamic"),
        options=dict(options) if options else None,
    )


def _made_by(backend: Any) -> str | None:
    """``make_backend(scale=2.0)``: the call of a top-level factory that made a closure backend, where the
    closure holds exactly the factory's parameters as literals (``skewing_backend.<locals>.backend``, made by
    ``skewing_backend("focal")``, is otherwise no name a lifted program can write); ``None`` otherwise."""

    qualname = getattr(backend, "__qualname__", "")
    factory, sep, inner = qualname.partition(".<locals>.")
    cells = getattr(backend, "__closure__", None) or ()
    names = getattr(getattr(backend, "__code__", None), "co_freevars", ())
    maker = getattr(sys.modules.get(getattr(backend, "__module__", "")), factory, None)
    if not sep or "<locals>" in inner or "." in factory or len(cells) != len(names) or not callable(maker):
        return None
    try:
        values = {name: cell.cell_contents for name, cell in zip(names, cells)}
        if any(ast.literal_eval(repr(v)) != v for v in values.values()):
            return None
        inspect.signature(maker).bind(**values)
    except (ValueError, SyntaxError, TypeError):  # an empty cell, a value with no literal, another signature
        return None
    return f"{factory}({', '.join(f'{k}={v!r}' for k, v in values.items())})"


def input_specs(gm: fx.GraphModule, example_inputs: list[Any]) -> list[InputSpec]:
    """One spec per placeholder, from the real values Dynamo passes the backend."""

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    specs = []
    for node, value in zip(placeholders, example_inputs):
        if isinstance(value, torch.Tensor):
            kind = "input"
            if isinstance(value, torch.nn.Parameter):
                kind = "parameter"
            elif "_buffers_" in node.name:
                kind = "buffer"
            specs.append(tensor_spec(node.name, value, kind))
        else:
            specs.append(InputSpec(name=node.name, kind="int", value=int(value)))
    return specs


class _CapturingBackend:
    """Saves each graph, then hands it to the real backend.

    Dynamo reads a few attributes off the backend (its name, the AOT config of Inductor's wrapper); those are
    copied from the real backend. A blanket ``__getattr__`` forward crashes Dynamo's frame evaluation.
    """

    _FORWARDED = ("compiler_name", "get_compiler_config", "reset", "backend_ctx_ctor")

    def __init__(
        self, inner: Any, call: CompileCall, sink: Callable[[CapturedGraph], None], counter: list[int], wanted: bool = False
    ):
        self._inner = inner
        self._wanted = wanted
        self._call = call
        self._sink = sink
        self._counter = counter
        for name in self._FORWARDED:
            if hasattr(inner, name):
                setattr(self, name, getattr(inner, name))

    def __call__(self, gm: fx.GraphModule, example_inputs: list[Any], **kwargs: Any) -> Any:
        try:
            buffer = io.BytesIO()
            torch.save(gm, buffer)
            specs = input_specs(gm, example_inputs)
            graph = CapturedGraph(self._counter[0], buffer.getvalue(), specs, self._call, torch.is_grad_enabled(), autocast_now())
            self._sink(graph)
        except Exception as exc:  # capturing must never change what the script does
            graph = None
            print(f"minimizer: could not capture graph {self._counter[0]}: {exc}", file=sys.stderr)
        self._counter[0] += 1
        compiled = self._inner(gm, example_inputs, **kwargs)
        return compiled if graph is None or not self._wanted else _inputs_of_wanted_call(compiled, gm, graph, self._sink)


def _inputs_of_wanted_call(compiled: Any, gm: fx.GraphModule, graph: CapturedGraph, sink: Callable) -> Any:
    """``compiled`` (what the backend made of ``gm``), sinking ``graph`` again with the inputs it is run with in
    the call the bug showed in (``call_record.wanted_call_running``), once: a graph compiled at an earlier call
    holds that call's values, which may show nothing (a box of finite periods where the failing call's has an
    infinite one)."""

    done = [False]

    def seen(inputs: Any) -> None:
        if done[0] or not wanted_call_running():
            return
        done[0] = True
        try:
            sink(dataclasses.replace(graph, inputs=input_specs(gm, list(inputs))))
        except Exception as exc:  # capturing must never change what the script does
            print(f"minimizer: could not record graph {graph.index}'s inputs again: {exc}", file=sys.stderr)

    @functools.wraps(compiled)  # and its `_boxed_call` where it has one: then one list holds the inputs
    def watched(*inputs: Any, **kwargs: Any) -> Any:
        boxed = len(inputs) == 1 and isinstance(inputs[0], list) and getattr(compiled, "_boxed_call", False)
        seen(inputs[0] if boxed else inputs)
        return compiled(*inputs, **kwargs)

    return watched


def install_capture(
    sink: Callable[[CapturedGraph], None],
    calls: Callable[[RecordedCall], None] | None = None,
    wanted_call: int | None = None,
    random_as_eager: bool = True,
) -> None:
    """Patch ``torch.compile`` in this process so every graph it compiles goes to ``sink`` first, and (given
    ``calls``) the first distinct calls of each function it compiles go there, and its call ``wanted_call``
    (``graph.call_record``).

    ``torch.compile`` builds the real backend itself (mode and options included) and passes it to
    ``torch._dynamo.optimize``; we wrap it there, for the duration of that call only.
    """

    import torch._dynamo

    if random_as_eager:  # as the oracle harness does for the oracles that compare (oracles.api.DRAWS_ALIKE)
        torch._inductor.config.fallback_random = True
    real_compile = torch.compile
    counter = [0]

    def compile(model: Any = None, **kwargs: Any) -> Any:
        if model is None:
            return lambda fn: compile(fn, **kwargs)
        call = compile_call_of(kwargs)
        real_optimize = torch._dynamo.optimize

        def optimize(*args: Any, **opt_kwargs: Any) -> Any:
            opt_kwargs["backend"] = _CapturingBackend(opt_kwargs["backend"], call, sink, counter, wanted_call is not None)
            return real_optimize(*args, **opt_kwargs)

        torch._dynamo.optimize = optimize
        try:
            compiled = real_compile(model, **kwargs)
        finally:
            torch._dynamo.optimize = real_optimize
        return compiled if calls is None else recording_calls(model, compiled, call, calls, autocast_now, wanted_call)

    compile.__doc__ = real_compile.__doc__
    torch.compile = compile  # type: ignore[assignment]
    OptimizeThroughCompile().install_through(compile)  # the script's `torch._dynamo.optimize(backend)(f)` too
    if calls is not None:
        record_module_construction()  # a compiled method's `self`, written back as the script built it


# -- parent side -----------------------------------------------------------------------------------------


@dataclass
class Recording:
    """What one capture run recorded: every graph the script compiled, in compile order, and the first distinct
    calls of each function it compiled (``minimizer.graph.call_record``)."""

    graphs: list[CapturedGraph]
    calls: list[RecordedCall]


def capture_graphs(script_source: str, settings: RunSettings, *, timeout: float | None = None) -> list[CapturedGraph]:
    """Run the script once in a child process and return every graph it compiled, in compile order (see
    ``capture_recording``); raises ``CaptureFailed`` where it compiled none."""

    graphs = capture_recording(script_source, settings, timeout=timeout).graphs
    if not graphs:
        raise CaptureFailed("the capture run compiled no graph")
    return graphs


def capture_recording(
    script_source: str, settings: RunSettings, *, timeout: float | None = None, wanted_call: int | None = None
) -> Recording:
    """Run the script once in a child process and return what it compiled and called (``wanted_call``: the call
    of each compiled function, by number, recorded whatever came before it; see ``install_capture``).

    ``settings`` gives the file name, the original's folder, the seed and the environment; its oracles say
    whether the run has random operators draw as eager ones do, as the oracles' own runs do. Raises ``CaptureFailed`` when the child left no recording (it hung, or compiled and called nothing).
    """

    timeout = settings.limits.timeout if timeout is None else timeout
    with tempfile.TemporaryDirectory(prefix="minimizer-capture-") as workdir:
        work = Path(workdir)
        script, own, base_env, set_by_script = prepare_run_folder(script_source, settings, work)
        output = own / "graphs.pt"
        request = {
            "script": str(script), "origin_dir": settings.origin_dir, "seed": settings.seed, "output": str(output),
            "wanted_call": wanted_call, "random_as_eager": _random_as_eager(settings.oracles),
        }
        (own / "request.json").write_text(json.dumps(request))
        handle = SubprocessLauncher("minimizer.graph.capture_child").launch(
            Job(
                request=str(own / "request.json"),
                cwd=str(work),
                stdout=str(own / "stdout"),
                stderr=str(own / "stderr"),
                env={k: v for k, v in job_env(settings).items() if k not in set_by_script},
                base_env=base_env,
            )
        )
        timed_out, memory_exceeded, _ = supervise(handle, dataclasses.replace(settings.limits, timeout=timeout))
        if timed_out or memory_exceeded:
            why = f"did not finish within {timeout:.0f} s" if timed_out else "exceeded the memory limit"
            raise CaptureFailed(f"the capture run {why}")
        if not output.exists():
            tail = (own / "stderr").read_text(errors="replace").strip().splitlines()[-1:] or [""]
            raise CaptureFailed(f"the capture run compiled no graph (exit {handle.returncode}): {tail[0]}")
        return load_recording(output)


def _random_as_eager(specs: tuple[str, ...]) -> bool:
    from oracles.api import draws_alike
    from oracles.registry import load_oracle

    return any(draws_alike(load_oracle(spec).needs) for spec in specs)


def load_recording(path: str | os.PathLike) -> Recording:
    data = torch.load(path, weights_only=False)
    return Recording([CapturedGraph(**entry) for entry in data["graphs"]], list(data.get("calls", [])))


def save_recording(path: str | os.PathLike, recording: Recording) -> None:
    """Write all graphs and calls so far (atomically: a crash mid-write leaves the previous file)."""

    target = Path(path)
    tmp = target.with_suffix(".tmp")
    torch.save({"graphs": [vars(g) for g in recording.graphs], "calls": recording.calls}, tmp)
    os.replace(tmp, target)


def case_from_capture(captured: CapturedGraph, *, prelude: str = "", check: str = "allclose") -> GraphCase | None:
    """A ``GraphCase`` for one captured graph, or ``None`` when the graph does not re-propagate in the parent."""

    gm = _loaded_graph(captured.graph_module, prelude)
    if gm is None:
        return None
    case = case_from_graph_module(gm, captured.inputs, captured.compile, prelude=prelude, check=check)
    return None if case is None else dataclasses.replace(case, grad_enabled=captured.grad_enabled, autocast=tuple(captured.autocast))


def _loaded_graph(data: bytes, prelude: str) -> fx.GraphModule | None:
    """The captured graph module, or ``None`` where it does not load here. A graph may call a library's own
    operator (``torch.ops.transformers.grouped_mm_fallback``), registered when the script imported what it did
    from the library: the script's imports from the package the namespace names are run here too (``prelude``),
    and the load tried again."""

    tried: set[str] = set()
    while True:
        try:
            with _subscript_assignment_traced():
                return torch.load(io.BytesIO(data), weights_only=False)
        except AttributeError as exc:
            namespace = re.search(r"'_OpNamespace' '(\w+)' object has no attribute", str(exc))
            if namespace is None or namespace.group(1) in tried:
                return None
            tried.add(namespace.group(1))
            if not _import_as_the_script_did(namespace.group(1), prelude):
                return None
        except Exception:  # e.g. graphs with operator.setitem do not survive unpickling's re-tracing
            return None


@contextlib.contextmanager
def _subscript_assignment_traced() -> Iterator[None]:
    """Loading a graph module traces its generated code again, where FX writes ``operator.setitem`` as
    ``x[i] = v``; its tracer's proxies take no item assignment, so such a graph (transformers' MoE routing fills
    a tensor by index) did not load. For the load, an assignment to a proxy's item records the ``setitem``."""

    if hasattr(fx.Proxy, "__setitem__"):
        yield
        return

    def setitem(proxy: fx.Proxy, index: Any, value: Any) -> None:
        proxy.tracer.create_proxy("call_function", operator.setitem, (proxy, index, value), {})

    fx.Proxy.__setitem__ = setitem  # type: ignore[attr-defined]
    try:
        yield
    finally:
        del fx.Proxy.__setitem__  # type: ignore[attr-defined]


def _import_as_the_script_did(package: str, prelude: str) -> bool:
    """Run the prelude's imports from ``package`` (``from transformers import MixtralForCausalLM`` loads the
    modules that register the library's operators); whether they ran."""

    try:
        statements = [
            node for node in ast.parse(prelude).body
            if isinstance(node, (ast.Import, ast.ImportFrom)) and _top_level_modules(node) == {package}
        ]
        exec(compile(ast.Module(body=statements or [ast.Import([ast.alias(package)])], type_ignores=[]), "<prelude>", "exec"), {})
    except Exception:  # noqa: BLE001 - not importable here: the graph stays unloadable
        return False
    return True


def _top_level_modules(node: ast.Import | ast.ImportFrom) -> set[str]:
    if isinstance(node, ast.ImportFrom):
        return {(node.module or "").split(".")[0]} if node.level == 0 else set()
    return {alias.name.split(".")[0] for alias in node.names}


def case_from_graph_module(
    gm: fx.GraphModule,
    inputs: list[InputSpec],
    compile_call: CompileCall | None = None,
    *,
    prelude: str = "",
    check: str = "allclose",
) -> GraphCase | None:
    """A ``GraphCase`` from a GraphModule and one spec per placeholder (``input_specs`` makes them from real
    example inputs). Tensor attributes become buffer inputs. ``None`` when shape propagation fails."""

    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(inputs):
        return None
    for node, spec in zip(placeholders, inputs):
        node.meta[INPUT_SPEC] = spec
    _lift_constants(gm)
    case = GraphCase(gm=gm, compile=compile_call or CompileCall(), prelude=prelude, check=check)
    if not propagate_shapes(case):
        return None
    return case


def _lift_constants(gm: fx.GraphModule) -> None:
    """Tensor attributes (``get_attr``) become buffers with recorded specs, so every tensor is a placeholder."""

    first = next((n for n in gm.graph.nodes if n.op != "placeholder"), None)
    for node in list(gm.graph.nodes):
        if node.op != "get_attr":
            continue
        value = getattr(gm, str(node.target), None)
        if not isinstance(value, torch.Tensor):
            continue
        with gm.graph.inserting_before(first):
            placeholder = gm.graph.placeholder(str(node.target).replace(".", "_"))
        flat = value.detach().cpu().reshape(-1)
        exact = value.numel() <= MAX_RECORDED_VALUES
        placeholder.meta[INPUT_SPEC] = InputSpec(
            name=placeholder.name,
            kind="buffer",
            shape=tuple(int(d) for d in value.shape),
            dtype=value.dtype,
            device=str(value.device),
            values=tuple(flat.tolist()) if exact else None,
        )
        node.replace_all_uses_with(placeholder)
        gm.graph.erase_node(node)
    gm.recompile()
