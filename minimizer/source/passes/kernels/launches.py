"""A kernel launched as many small programs, launched as one: `k[4,](x, 1)` -> `k[1,](x, 4)`.

A script sizes its launch for throughput (`grid = (triton.cdiv(n, BLOCK),)`); once the sizes have shrunk to a
few elements, what is left is a program per element (`k[2,](x, 1)`) and the index arithmetic that places each
program (`tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)`). A reader of the repro wants one program that covers
every element, the way a kernel's bug is written down by hand: `offs = tl.arange(0, BLOCK)`.
"""

from __future__ import annotations

from typing import Callable, Iterator, Mapping

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.kernels.memory import KERNEL
from minimizer.source.substitution import swap_nodes
from minimizer.source.traversal import find_all, holds

__all__ = ["block_sizes_only", "launches_as_run", "single_program_launches"]

_PROGRAM_ID = m.Call(
    func=m.Attribute(value=m.Name("tl"), attr=m.Name("program_id")),
    args=[m.Arg(value=m.Integer("0"), keyword=None) | m.Arg(value=m.Integer("0"), keyword=m.Name("axis"))],
)
_CONSTEXPR = m.Annotation(annotation=m.Attribute(value=m.Name("tl"), attr=m.Name("constexpr")))


def single_program_launches(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with a kernel's one launch on a literal grid of `g` programs (`k[g,]`, `k[(g,)]`) made one
    program, a block-size parameter (`BLOCK: tl.constexpr`, given a literal `b` at the launch) given `g * b`,
    and the kernel's program index read as 0: `tl.program_id(0) * BLOCK + offsets` as `offsets`, any other
    read as `0`. One candidate per block-size parameter, where `g * b` is a power of two (`tl.arange` needs one);
    a launch of one program already has its index read as 0 alone. Only for a kernel whose name is read nowhere
    but at its one launch.
    """

    return distinct_candidates(module, _candidates(module))


def _candidates(module: cst.Module, told: Mapping[str, int] | None = None) -> Iterator:
    for kernel in find_all(module, KERNEL):
        launches = find_all(module, m.Call(func=m.Subscript(value=m.Name(kernel.name.value))))
        if len(launches) != 1 or len(find_all(module, m.Name(kernel.name.value))) != 2:  # its def and its launch
            continue
        launch = launches[0]
        literal = _literal_grid(launch.func)
        programs = (told or {}).get(kernel.name.value) if literal is None else literal
        reads = find_all(kernel, _PROGRAM_ID)
        if programs == 1 and (reads or literal is None):
            # One program already (`k[x.numel(),]` of one element): the grid is `1`, the index 0.
            yield lambda: replace_nodes(module, {launch: _one_program(launch, None, 1), **_index_reads_as_zero(kernel, reads)})
            continue
        if programs is None or programs < 2 or not reads:
            continue
        for arg in _block_arguments(kernel, launch):
            block = programs * int(arg.value.value)
            if block & (block - 1) == 0:
                yield lambda arg=arg, block=block: replace_nodes(module, {
                    launch: _one_program(launch, arg, block), **_index_reads_as_zero(kernel, reads),
                })
        ranges = find_all(kernel, _LITERAL_RANGE)
        if len(ranges) == 1:  # the block size bound already: `tl.arange(0, 1)`
            block = programs * int(ranges[0].args[1].value.value)
            if block & (block - 1) == 0:
                wider = ranges[0].with_changes(args=[ranges[0].args[0], ranges[0].args[1].with_changes(value=cst.Integer(str(block)))])
                yield lambda: replace_nodes(module, {
                    launch: _one_program(launch, None, 1), **_index_reads_as_zero(kernel, reads, {ranges[0]: wider}),
                })


def launches_as_run(programs: Mapping[str, int]) -> Callable[[cst.Module], Iterator[cst.Module]]:
    """`single_program_launches`, where a launch's grid is computed at run time (`k[(triton.cdiv(n, BLOCK),)]`,
    `k[grid]`) and the run launched the kernel on one number of programs each time (``programs``, told by the run:
    ``oracles.kernel_launches``): that number is the grid's."""

    def single_program_launches(module: cst.Module) -> Iterator[cst.Module]:
        return distinct_candidates(module, _candidates(module, programs))

    return single_program_launches


def _literal_grid(grid: cst.Subscript) -> int | None:
    """`g` of `k[g,]` or `k[(g,)]`, a literal; else None."""

    if len(grid.slice) != 1 or not isinstance(grid.slice[0].slice, cst.Index):
        return None
    value = grid.slice[0].slice.value
    if isinstance(value, cst.Tuple) and len(value.elements) == 1:
        value = value.elements[0].value
    return int(value.value) if isinstance(value, cst.Integer) else None


def _block_arguments(kernel: cst.FunctionDef, launch: cst.Call) -> list[cst.Arg]:
    """The launch's integer-literal arguments of the kernel's `tl.constexpr` parameters."""

    params = _parameters(kernel)
    constexpr = _constexpr_names(kernel)
    found = []
    for position, arg in enumerate(launch.args):
        if arg.star:
            return []
        name = arg.keyword.value if arg.keyword is not None else (
            params[position].name.value if position < len(params) else None
        )
        if name in constexpr and isinstance(arg.value, cst.Integer):
            found.append(arg)
    return found


def _one_program(launch: cst.Call, block_arg: cst.Arg | None, block: int) -> cst.Call:
    grid = launch.func.slice[0].slice.value
    one = cst.Integer("1")
    if isinstance(grid, cst.Tuple):
        one = grid.with_changes(elements=[grid.elements[0].with_changes(value=one)])
    element = launch.func.slice[0]
    element = element if isinstance(grid, cst.Tuple) else element.with_changes(comma=cst.Comma())  # `k[1,]`
    return launch.with_changes(
        func=launch.func.with_changes(slice=[element.with_changes(slice=cst.Index(value=one))]),
        args=[arg.with_changes(value=cst.Integer(str(block))) if arg is block_arg else arg for arg in launch.args],
    )


# `tl.arange(0, 4)`: a block size written in the kernel.
_LITERAL_RANGE = m.Call(
    func=m.Attribute(value=m.Name("tl"), attr=m.Name("arange")), args=[m.Arg(value=m.Integer("0")), m.Arg(value=m.Integer())]
)


def _index_reads_as_zero(kernel: cst.FunctionDef, reads: list[cst.Call], within: dict | None = None) -> dict:
    """`tl.program_id(0) * BLOCK + offsets` (either order of each operation) -> `offsets`; any other read -> `0`;
    ``within``: replacements of nodes in the kernel (inside kept offsets too)."""

    replacements: dict = dict(within or {})
    placed = set()
    for total in find_all(kernel, m.BinaryOperation(operator=m.Add())):
        for start, offsets in ((total.left, total.right), (total.right, total.left)):
            if _is_placement(start, reads):
                inside = {node: by for node, by in replacements.items() if holds(offsets, node)}
                replacements = {node: by for node, by in replacements.items() if node not in inside}
                replacements[total] = swap_nodes(offsets, inside)
                placed.update(find_all(start, _PROGRAM_ID))
                break
    for read in reads:
        if read not in placed:
            replacements[read] = cst.Integer("0")
    return replacements


def _is_placement(node: cst.BaseExpression, reads: list[cst.Call]) -> bool:
    """`tl.program_id(0)`, or it times anything."""

    if node in reads:
        return True
    return isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply) and (
        node.left in reads or node.right in reads
    )


def block_sizes_only(reduction_pass: Callable[[cst.Module], Iterator[cst.Module]]) -> Callable[[cst.Module], Iterator[cst.Module]]:
    """``reduction_pass`` (binding or removing parameters), its candidates left out unless all they take from the
    kernels is block sizes (`BLOCK: tl.constexpr` read by `tl.arange`): a kernel's other parameter bound to its
    one value (`max_bucket` read as `6`) computes the same, but the line its author must mend reads the name."""

    def kept(module: cst.Module) -> Iterator[cst.Module]:
        before, blocks = _kernel_parameters(module), _block_sizes(module)
        for candidate in reduction_pass(module):
            after = _kernel_parameters(candidate)
            taken = {(kernel, name) for kernel, names in before.items() for name in names - after.get(kernel, names)}
            if taken and taken <= blocks and after.keys() == before.keys():
                yield candidate

    kept.__name__ = reduction_pass.__name__
    return kept


def _kernel_parameters(module: cst.Module) -> dict[str, set[str]]:
    return {kernel.name.value: {p.name.value for p in _parameters(kernel)} for kernel in find_all(module, KERNEL)}


def _block_sizes(module: cst.Module) -> set[tuple[str, str]]:
    """(kernel, parameter) for each `tl.constexpr` parameter a `tl.arange` reads."""

    sizes = set()
    for kernel in find_all(module, KERNEL):
        read_by_arange = {
            arg.value.value for call in find_all(kernel, _ARANGE) for arg in call.args if isinstance(arg.value, cst.Name)
        }
        sizes |= {(kernel.name.value, name) for name in _constexpr_names(kernel) & read_by_arange}
    return sizes


def _parameters(kernel: cst.FunctionDef) -> list[cst.Param]:
    return [*kernel.params.params, *kernel.params.kwonly_params]


def _constexpr_names(kernel: cst.FunctionDef) -> set[str]:
    return {p.name.value for p in _parameters(kernel) if p.annotation is not None and m.matches(p.annotation, _CONSTEXPR)}


_ARANGE = m.Call(func=m.Attribute(value=m.Name("tl"), attr=m.Name("arange")))
