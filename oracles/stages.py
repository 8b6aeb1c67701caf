"""Which compiler stage an exception arose in, told from its type and traceback."""

from __future__ import annotations

import traceback

# Checked in order: the innermost recognisable frame wins, so a Triton compile error wrapped by Inductor's
# codegen reads as a Triton compile error.
_STAGE_BY_PATH = (
    ("triton/compiler", "triton-compile"),
    ("torch/_inductor/codecache", "cpp-or-triton-compile"),
    ("torch/_inductor/cpp_builder", "cpp-compile"),
    ("torch/_inductor/codegen", "inductor-codegen"),
    ("torch/_inductor/lowering", "inductor-lowering"),
    ("torch/_inductor/graph", "inductor-lowering"),
    ("torch/_inductor/fx_passes", "inductor-fx-passes"),
    ("torch/_inductor/compile_fx", "inductor-compile"),
    ("torch/_functorch/_aot_autograd", "aot-autograd"),
    ("torch/_functorch/aot_autograd", "aot-autograd"),
    ("torch/_dynamo/symbolic_convert", "dynamo-tracing"),
    ("torch/_dynamo/variables", "dynamo-tracing"),
)


# Frames recognised by file and function: the call into a ``torch.compile`` backend (a custom backend that
# raises leaves no deeper recognisable frame).
_STAGE_BY_FUNCTION = (("torch/_dynamo/output_graph", "call_user_compiler", "backend-compile"),)
# Every stage name ``stage_of`` may give.
STAGES = frozenset(
    {stage for _, stage in _STAGE_BY_PATH} | {stage for *_, stage in _STAGE_BY_FUNCTION} | {"compiled-run"}
)
# Frames of code that a compiler generated, running after compilation finished: Inductor's output modules
# (written under a ``torchinductor_<user>`` cache folder), the module that calls them, and FX graph modules.
_GENERATED_CODE = ("torchinductor_", "torch/_inductor/output_code", "<eval_with_key>")
# Frames that only appear while a compiler traces: generated code running inside them is being traced (with
# fake tensors), not run, so the error belongs to the tracing stage.
_TRACING = (
    "torch/_dynamo/symbolic_convert",
    "torch/_dynamo/convert_frame",
    "torch/fx/experimental/proxy_tensor",
    "torch/_functorch/_aot_autograd/graph_capture",
    "torch/_functorch/_aot_autograd/jit_compile_runtime_wrappers",
    "torch/_functorch/_aot_autograd/collect_metadata_analysis",
    "torch/_inductor/compile_fx",
    "torch/_inductor/graph",
)


def stage_of(exc: BaseException) -> str | None:
    """Name the compiler stage of ``exc`` (``dynamo-tracing``, ``aot-autograd``, ``inductor-lowering`` ...).

    ``compiled-run`` when the innermost recognisable frame is generated code running outside any tracing (an
    error while a compiled graph executes). ``None`` when nothing in the chain of causes points into the
    compiler.
    """

    best: str | None = None
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        tracing = False
        for frame in traceback.extract_tb(current.__traceback__):
            filename = frame.filename.replace("\\", "/")
            tracing = tracing or any(fragment in filename for fragment in _TRACING)
            if not tracing and any(fragment in filename for fragment in _GENERATED_CODE):
                best = "compiled-run"
                continue
            by_function = [s for f, name, s in _STAGE_BY_FUNCTION if f in filename and name in frame.name]
            if by_function:
                best = by_function[0]
                continue
            for fragment, stage in _STAGE_BY_PATH:
                if fragment in filename:
                    best = stage
                    break
        current = current.__cause__ or current.__context__
    return best
