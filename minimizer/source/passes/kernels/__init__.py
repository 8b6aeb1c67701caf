"""Triton kernels made what a person writes down by hand: a load a constant, a mask gone, a launch of many small
programs one program, a block of one element its scalar.

They read the script's `@triton.jit` functions (`memory.KERNEL`) and their launches. The kernel stages of
`minimizer.stages.own_kernels` take more from here, outside the first round: `paired` (an operator bypassed in a
kernel and in its reference alike), `launches.launches_as_run` and `launches.block_sizes_only`.
"""

from minimizer.source.passes.kernels.launches import single_program_launches
from minimizer.source.passes.kernels.memory import (
    constant_kernel_loads,
    drop_kernel_masks,
    one_element_blocks_as_scalars,
)

PASSES = [constant_kernel_loads, drop_kernel_masks, single_program_launches, one_element_blocks_as_scalars]
