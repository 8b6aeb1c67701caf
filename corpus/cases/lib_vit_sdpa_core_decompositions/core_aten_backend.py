"""The accelerator team's training backend: AOTAutograd graphs lowered to core ATen, the operator set its
compiler takes, before they reach the device (here the lowered graphs simply run on the CPU).

No bug is planted here: lowering with torch's own ``core_aten_decompositions()`` is the whole backend.
"""

from functorch.compile import make_boxed_func
from torch._decomp import core_aten_decompositions
from torch._dynamo import register_backend
from torch._dynamo.backends.common import aot_autograd


def _run_lowered(gm, example_inputs):
    return make_boxed_func(gm.forward)


register_backend(
    name="core_aten",
    compiler_fn=aot_autograd(
        fw_compiler=_run_lowered, bw_compiler=_run_lowered, decompositions=core_aten_decompositions()
    ),
)
