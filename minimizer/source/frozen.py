"""Kernels left as they are: those whose output the pinned failure compares with a reference.

When a script checks its own Triton kernel against torch (``[compared: kernel row_softmax_kernel, softmax]``
in the signature), the kernel is what is under test: any edit to it makes it compute something else, which
fails the same comparison for another reason (a kernel reduced to ``tl.store(out_ptr, 0.0)`` is never close
to a softmax). A compiled call has eager as a twin that such an edit would break too; a kernel has none, so
its text is kept and the reduction works on everything around it (``FrozenKernels``).

Once the values compared are held instead (``oracles.script.same_comparison``), an edit that computes the same
numbers may go, with one exception (``GuardedMasks``): the kernel's masks and what its masked loads read. On the
inputs at hand a mask may be all true (``cols <= n_cols`` over one column too many) or a masked lane's value may
not show (``other=0.0`` where ``-inf`` was meant), so dropping either changes no value, yet it is the line the
kernel's author must fix. Only such masks are held: those of a kernel that reached out of bounds or whose masked
loads say what masked lanes read; a mask that only fences the launch's tail goes where the values stay. The same
holds for an address that maps a flat offset to a row or a column (``shift_ptr + offs // n_cols``): over one row
a division by the row's length reads 0 and a remainder reads the offset, so the bug's line computes what a
plainer address would; ``gamma_ptr + cols * 0`` reads what a scalar load of ``gamma_ptr`` broadcast does; and
``scale_ptr + row`` (one element per program, where one per column was meant) reads over one program what
``scale_ptr`` does. A load or store that stays keeps such an address; one may still go whole.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

from minimizer.syntax import parse_python
from oracles.bug import Bug

@dataclass(frozen=True)
class FrozenKernels:
    """The text (as its syntax tree) of each kernel that candidates must keep unchanged."""

    kernels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, start: str, bug: Bug) -> FrozenKernels:
        names = set(bug.compared_kernels)
        if not names:
            return cls()
        return cls(tuple(sorted(_definitions(start, names).items())))

    def why_not(self, text: str) -> str | None:
        """Why ``text`` changes a frozen kernel, or ``None``."""

        if not self.kernels:
            return None
        try:
            now = _definitions(text, {name for name, _ in self.kernels})
        except (SyntaxError, ValueError):
            return "does not parse"
        for name, dumped in self.kernels:
            if now.get(name) != dumped:
                return f"changes the kernel {name}, whose output the failing comparison checks"
        return None


def _definitions(text: str, names: set[str]) -> dict[str, str]:
    return {
        node.name: ast.dump(node)
        for node in parse_python(text).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names
    }


@dataclass(frozen=True)
class GuardedMasks:
    """Per compared kernel, the masks of its loads and stores and the values its masked loads take (``other``),
    which candidates must keep: the set of their texts stays the same (a load may go, if another keeps what it
    said), a name assigned once in the kernel read as its value (``mask = cols <= n_cols``); and the row or
    column addresses of its loads and stores, which every load or store from the same pointer keeps."""

    masks: tuple[tuple[str, frozenset[str]], ...] = ()
    addresses: tuple[tuple[str, frozenset[tuple[str, str]]], ...] = ()
    # The compared kernels whose stores write what they loaded: a store of what no load read goes nowhere near
    # the bug (over a two-element row, a load of `shift_ptr + offs // n_cols` reads one value, a constant).
    loading: tuple[str, ...] = ()

    @classmethod
    def of(cls, start: str, bug: Bug) -> GuardedMasks:
        """The masks of ``start``'s compared kernels, where a mask may be the bug's line: the kernel reached out of
        bounds (``[out of bounds: k ...]``), or a masked load says what its masked lanes read (``other=``). A
        kernel that did neither only fenced its launch's tail (``offs < n_elements``): with the values or their
        difference held, a mask that was live changes them when it goes, and one that was not is no line of the
        failure."""

        tree = parse_python(start)
        kernels = sorted(set(bug.compared_kernels))
        masks = ((kernel, _masks(tree, kernel)) for kernel in kernels)
        addresses = ((kernel, _of_row_pointers(tree, kernel)) for kernel in kernels)
        return cls(
            tuple((k, found) for k, found in masks if _may_hold_the_bug(k, found, bug)),
            tuple((k, found) for k, found in addresses if found),
            tuple(k for k in kernels if _stores_loaded(tree, k)),
        )

    def why_not(self, text: str) -> str | None:
        """Why ``text`` changes a guarded mask, or ``None``."""

        if not self.masks and not self.addresses and not self.loading:
            return None
        try:
            tree = parse_python(text)
        except (SyntaxError, ValueError):
            return "does not parse"
        for kernel, masks in self.masks:
            if _masks(tree, kernel) != masks:
                return f"changes a mask of {kernel} or what its masked loads read"
        for kernel, held in self.addresses:
            pointers = {pointer for pointer, _ in held}
            addresses = _addresses(tree, kernel, _lanes(tree, kernel))
            now = {(pointer, address) for pointer, address in addresses if pointer in pointers}
            if not now <= held:
                return f"changes the row or column {kernel} reads or writes"
        for kernel in self.loading:
            if not _stores_loaded(tree, kernel):
                return f"makes {kernel} store what it did not load"
        return None


def _stores_loaded(tree: ast.Module, kernel: str) -> bool:
    """Whether some store of ``kernel`` writes a value computed from a load (a name assigned more than once counts
    as one: what it holds is not told)."""

    function = _kernel(tree, kernel)
    if function is None:
        return False
    assigned = _assigned(function)
    reassigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)} - set(assigned)

    def loaded(value: ast.AST, seen: frozenset[str]) -> bool:
        for node in ast.walk(value):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "load":
                return True
            if isinstance(node, ast.Name) and node.id not in seen:
                if node.id in reassigned or (node.id in assigned and loaded(assigned[node.id], seen | {node.id})):
                    return True
        return False

    stores = [node for node in _loads_and_stores(function) if node.func.attr == "store"]
    stored = [next((k.value for k in s.keywords if k.arg == "value"), s.args[1] if len(s.args) > 1 else None) for s in stores]
    return any(value is not None and loaded(value, frozenset()) for value in stored)


def _may_hold_the_bug(kernel: str, masks: frozenset[str], bug: Bug) -> bool:
    out_of_bounds = any(stray.split()[0] == kernel for stray in bug.strays)
    return out_of_bounds or any(mask.startswith("load other") and not mask.endswith(": None") for mask in masks)


def _masks(tree: ast.Module, kernel: str) -> frozenset[str]:
    """``{"load mask=: cols <= n_cols", "load other=: 0.0", "store mask: None"}`` for ``kernel`` in ``tree``."""

    function = _kernel(tree, kernel)
    if function is None:
        return frozenset()
    assigned = _assigned(function)
    found = set()
    for node in _loads_and_stores(function):
        for role, place in _PLACES[node.func.attr].items():
            # Given as it was given: `other=0.0` reads as what it is, a bare `0.0` in third place does not.
            value, given = next((k.value for k in node.keywords if k.arg == role), None), f"{role}="
            if value is None and len(node.args) > place:
                value, given = node.args[place], role
            if isinstance(value, ast.Name) and value.id in assigned:
                value = assigned[value.id]
            found.add(f"{node.func.attr} {given}: {ast.unparse(value) if value is not None else None}")
    # A mask computed and never given (`mask = offs < n`, a load without `mask=`) is the line its fix reads.
    read = {node.id for node in ast.walk(function) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    found |= {f"unread mask: {ast.unparse(value)}" for name, value in assigned.items()
              if isinstance(value, ast.Compare) and name not in read}
    return frozenset(found)


# Where a mask and the value of masked lanes go in `tl.load(pointer, mask, other)` and `tl.store(pointer, value,
# mask)`.
_PLACES = {"load": {"mask": 1, "other": 2}, "store": {"mask": 2}}


def _kernel(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    return next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _loads_and_stores(function: ast.FunctionDef) -> list[ast.Call]:
    return [
        node for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in _PLACES
    ]


def _of_row_pointers(tree: ast.Module, kernel: str) -> frozenset[tuple[str, str]]:
    """``kernel``'s addresses from each pointer that some load or store addresses as ``_held`` says."""

    lanes = _lanes(tree, kernel)
    addresses = _addresses(tree, kernel, lanes)
    rows = {pointer for pointer, address in addresses if _held(ast.parse(address, mode="eval").body, lanes)}
    return frozenset((pointer, address) for pointer, address in addresses if pointer in rows)


def _held(value: ast.expr, lanes: set[str]) -> bool:
    """Whether an address (or a name it reads) maps lanes to rows, columns or one element (a division, a
    remainder, a product with zero: ``cols * 0``), or reads by the program alone (``scale_ptr + row`` with
    ``row = tl.program_id(0)``: one element per program, where the bug may be a per-column one read per row;
    over one program it reads what the bare pointer does)."""

    return _maps_lanes(value) or _per_program(value, lanes)


def _per_program(address: ast.expr, lanes: set[str]) -> bool:
    """Whether ``address`` reads by the program's id and by no lane (no ``tl.arange``, no name computed from one)."""

    read = {node.attr for node in ast.walk(address) if isinstance(node, ast.Attribute)}
    read |= {node.id for node in ast.walk(address) if isinstance(node, ast.Name)}
    return "program_id" in read and "arange" not in read and not read & lanes


def _lanes(tree: ast.Module, kernel: str) -> set[str]:
    """The names of ``kernel`` computed from ``tl.arange``, however far (``cols = tl.arange(...)``, ``offs = base +
    cols``)."""

    function = _kernel(tree, kernel)
    assigned = _assigned(function) if function is not None else {}
    lanes: set[str] = set()
    while True:
        grown = {
            name for name, value in assigned.items()
            if any(isinstance(n, ast.Attribute) and n.attr == "arange" or isinstance(n, ast.Name) and n.id in lanes
                   for n in ast.walk(value))
        }
        if grown <= lanes:
            return lanes
        lanes |= grown


def _maps_lanes(value: ast.expr) -> bool:
    """Whether ``value`` maps lanes to rows, columns or one element: a division, a remainder, a product with 0."""

    def maps(node: ast.AST) -> bool:
        if not isinstance(node, ast.BinOp):
            return False
        zero = any(isinstance(side, ast.Constant) and side.value == 0 for side in (node.left, node.right))
        return isinstance(node.op, (ast.FloorDiv, ast.Mod)) or (isinstance(node.op, ast.Mult) and zero)

    return any(maps(node) for node in ast.walk(value))


def _addresses(tree: ast.Module, kernel: str, lanes: set[str]) -> set[tuple[str, str]]:
    """``kernel``'s load and store addresses, each as ``("load shift_ptr", "shift_ptr + offs // n_cols")``, a name
    assigned once to a division or remainder, or to the program's id alone (``row = tl.program_id(0)``), read as
    its value (``lanes``: the kernel's names computed from ``tl.arange``, see ``_lanes``)."""

    function = _kernel(tree, kernel)
    if function is None:
        return set()
    arithmetic = {name: value for name, value in _assigned(function).items() if _held(value, lanes)}
    found = set()
    for node in _loads_and_stores(function):
        pointer = next((k.value for k in node.keywords if k.arg == "pointer"), node.args[0] if node.args else None)
        base = _leftmost_name(pointer)
        if base is not None:
            found.add((f"{node.func.attr} {base}", ast.unparse(_read_as(pointer, arithmetic))))
    return found


def _leftmost_name(node: ast.expr | None) -> str | None:
    while isinstance(node, ast.BinOp):
        node = node.left
    return node.id if isinstance(node, ast.Name) else None


def _read_as(expression: ast.expr, values: dict[str, ast.expr]) -> ast.expr:
    """``expression`` with each name of ``values`` read as its value."""

    class Substitute(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.expr:
            return values.get(node.id, node)

    return Substitute().visit(copy.deepcopy(expression))


def _assigned(function: ast.FunctionDef) -> dict[str, ast.expr]:
    """The kernel's names assigned once, with their value: ``mask = cols <= n_cols``."""

    values: dict[str, list[ast.expr]] = {}
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            values.setdefault(node.targets[0].id, []).append(node.value)
    return {name: found[0] for name, found in values.items() if len(found) == 1}
