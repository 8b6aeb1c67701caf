"""What a failing check compared, recorded while the script runs: the evidence that the bug fails it.

A script's check can fail for a reason that has nothing to do with the bug: a helper reduced to a bare call
returns ``None``, a list of problems becomes a literal, a reference becomes a constant, a kernel stores a
constant. The message and the assert's text survive all of these. What does not survive is the comparison
itself: which comparison came out false (``allclose``, ``assert_close``, ``==``, ``<`` on a Python float,
``math.isclose``, ``np.testing.assert_allclose``, ...) and whether one of its operands came from the suspect (the
output of a compiled call, or a tensor a Triton kernel of the script wrote).

``EvidenceRecorder`` follows values while the script runs, outside the compiled calls: a torch function mode
carries each tensor's origin from the operations' inputs to their outputs (and into tensors written in place),
gradients read after a backward of such a value carry it too, and numbers taken out of a tensor (``.item()``,
``float()``) come back as ``TracedFloat``, which carries it through arithmetic and records its comparisons.
Library checks (``assert_close``, ``math.isclose``, numpy's) are recorded whole. Only the script's own comparisons
with an operand from the suspect are kept; ``failing_comparison``, the last that did not hold, is read by
``oracles.capture`` when the script's check fails."""

from __future__ import annotations

import contextlib
import os
import sys
import weakref
from typing import Any, Iterator

from oracles.alike import AlikeSteps
from oracles.compared import digest_of, marked_where_unwritten
from oracles.compared import differs_where_unwritten as _unwritten_differ
from oracles.arguments import shallow as _shallow
from oracles.arguments import tensors_in as _tensors_in
from oracles.events import Events
from oracles.marks import spreads_a_suspect, then_operation
from oracles.draws import DrawsFollower, from_other_data, measured_through_other_data
from oracles.library_checks import patch_checks, unpatch_checks
from oracles.operation_names import (
    AUTOGRAD, COMPARISONS, ELEMENT_WISE, FACTORIES, NUMBERS, TRUTH, WHOLE, in_place, operation_name,
)
from oracles.layers import is_layer, told
from oracles.settings import named_operation
from oracles.comparison import (
    AGAINST, COMPARED, COMPILED, INPUT, NUMBER, OTHER, SPREAD, STRICT_SHAPES, THEN, THROUGH_OTHER, UNLIKE_SHAPES,
    UNWRITTEN, Comparison, Operand, TracedFloat, described, launched_operations, measured_operations,
    spread_where_broadcast, without_common, largest_difference, origin_text,
)

__all__ = ["Comparison", "EvidenceRecorder", "TracedFloat", "aside"]
_MOST_KEPT = 256
_MOST_ITEMS = 16  # items of a compared sequence followed


# The recorder installed in this process, if any (TracedFloat's comparisons report to it).
_ACTIVE: EvidenceRecorder | None = None

# Frames of these modules are looked through when asking whether the script itself made a comparison.
_LIBRARY_FRAMES = ("torch", "numpy", "unittest", "oracles", "minimizer", "functools", "contextlib", "triton")


class EvidenceRecorder:
    """Follows the suspect's values through the script's run and keeps the comparisons made of them.

    ``writes``: the kernel writes of the run (``oracles.compared.KernelWrites``): a tensor a kernel of the script
    wrote is that kernel's output. ``folder``: the script's folder; comparisons made from code elsewhere (a
    library's own) are not the script's check. ``kernels_defined``: the script's folder defines Triton kernels.

    A mode is off the stack inside its own handler: what runs inside a backward (a saved-tensor hook's comparison)
    is not followed; what a kernel wrote meanwhile is (``AUTOGRAD``)."""

    def __init__(self, writes: Any, folder: str | None, kernels_defined: bool = False):
        import torch.utils.weak

        self._writes = writes
        # Only where the script (or a module beside it) defines Triton kernels are operations followed (``_ops``).
        self._kernels_defined = kernels_defined
        self._folder = os.path.abspath(folder) + os.sep if folder else None
        self._origins: Any = torch.utils.weak.WeakIdKeyDictionary()  # tensor -> frozenset of suspects
        self._pending: Any = torch.utils.weak.WeakIdKeyDictionary()  # tensor -> (symbol, operands) not yet read
        self._arrays: dict[int, tuple[Any, frozenset]] = {}  # id(ndarray) -> (weak ref, suspects)
        self._grads_from: Any = torch.utils.weak.WeakIdKeyDictionary()  # leaf -> suspects its gradient went through
        self._read_numbers: dict[float, frozenset] = {}  # value -> suspects, of `float(t)` reads
        self._inputs: Any = torch.utils.weak.WeakIdKeyDictionary()  # tensors a compiled call was given
        # Each compiled call and kernel launch is an event; the origins of the last call's inputs begin its own.
        self._events = Events()
        self._call_inputs: list[frozenset] = []
        self._call_reads_globals = False
        # Where the script has Triton kernels: tensor -> the torch operations that computed it from what the
        # kernels were given (a kernel has no eager twin: its reference is told by how it was computed).
        self._ops: Any = torch.utils.weak.WeakIdKeyDictionary()
        # ... and tensor -> how many elements a number was reduced from (``_note_extent``).
        self._extents: Any = torch.utils.weak.WeakIdKeyDictionary()
        # ... and tensor -> the operations that computed the tensors a kernel was given that it was computed from.
        self._reads_launch: Any = torch.utils.weak.WeakIdKeyDictionary()
        self._array_ops: dict[int, tuple[Any, frozenset]] = {}  # id(ndarray) -> (weak ref, operations)
        self._draws = DrawsFollower.watching(writes)  # where the script has Triton kernels: what each tensor was drawn from
        self._alike = AlikeSteps(writes.writer_of if writes is not None else lambda _: None)  # ... and its source
        self.comparisons: list[Comparison] = []
        self._mode: Any = None
        self._aside = 0  # > 0: the harness's own work, or a library check recorded whole
        self._patched: list[tuple[Any, str, Any]] = []
        # Whether the script's comparisons of the suspect's values are made to hold (``oracles.deciding``), and
        # the last failure a library check raised on them.
        self.holding = False
        self.raised: BaseException | None = None

    # -- installation ------------------------------------------------------------------------------------

    def install(self) -> None:
        global _ACTIVE
        from torch.overrides import TorchFunctionMode

        recorder = self

        class Following(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                return recorder._follow(func, args, kwargs or {})

        self._mode = Following()
        self._mode.__enter__()
        self._patched = patch_checks(self)
        _ACTIVE = self
        COMPARED[0] = self._numbers_compared

    def uninstall(self) -> None:
        global _ACTIVE
        if self._mode is not None:
            with contextlib.suppress(Exception):
                self._mode.__exit__(None, None, None)
            self._mode = None
        unpatch_checks(self._patched)
        if _ACTIVE is self:
            _ACTIVE = None
            COMPARED[0] = None

    def clear(self) -> None:
        self._origins.clear()
        self._pending.clear()
        self._arrays.clear()
        self._grads_from.clear()
        self._read_numbers.clear()
        self._inputs.clear()
        self._ops.clear()
        self._extents.clear()
        self._reads_launch.clear()
        self._array_ops.clear()
        self.comparisons.clear()
        self.raised = None

    def is_aside(self) -> bool:
        return self._aside > 0

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The harness's own work: nothing followed, nothing recorded."""
        self._aside += 1
        try:
            yield
        finally:
            self._aside -= 1

    @contextlib.contextmanager
    def outside_the_mode(self) -> Iterator[None]:
        """A compiled call runs with the mode off the stack: Dynamo traces what the script gave it, nothing of ours."""

        import torch

        on_top = self._mode is not None and _top_function_mode(torch) is self._mode
        if on_top:
            self._mode.__exit__(None, None, None)
        try:
            with self.aside():
                yield
        finally:
            if on_top:
                self._mode.__enter__()

    def note_inputs(self, args: tuple, kwargs: dict, model: Any = None) -> None:
        """The tensors a compiled call is given: compared with its output, they are not a reference. What they,
        and a compiled module's parameters and buffers, come from is the call's history (``oracles.events``)."""

        given = _tensors_in(list(_shallow(args, kwargs)))
        for tensor in given:
            self._inputs[tensor] = True
        module = hasattr(model, "parameters") and hasattr(model, "buffers")
        state = [*model.parameters(), *model.buffers()] if module else []
        self._call_inputs = [self.origin_of(t) for t in [*given, *state]]
        self._call_reads_globals = not module

    def note_output(self, output: Any, suspect: str = COMPILED) -> None:
        """Every tensor in ``output`` (a compiled call's result) comes from ``suspect``, in an event of its own."""
        event = self._events.begin(self._call_inputs, after_all=self._call_reads_globals)
        for tensor in _tensors_in(output):
            self._origins[tensor] = self._origins.get(tensor, frozenset()) | {suspect, event}

    def launch_event(self, read: list[Any]) -> str:
        """A launch of a kernel that read ``read``: its event's origin item."""

        return self._events.begin([self.origin_of(t) for t in read])

    # -- what a failing check compared -------------------------------------------------------------------

    def failing_comparison(self) -> Comparison | None:
        """The last comparison of the suspect's values that did not hold (or whose outcome only the script can
        judge), or ``None``."""
        return next((c for c in reversed(self.comparisons) if c.held is not True), None)

    def record(self, kind: str, values: tuple, held: bool | None) -> bool:
        """Keep the comparison ``kind`` of ``values`` where one comes from the suspect and the script made it;
        whether it was kept."""

        if self._aside:
            return False
        origins = self._current_origins(values)
        operands = tuple(self._operand(v, o) for v, o in zip(values, origins))
        if not any(o.suspect for o in operands) or not self._made_by_the_script():
            return False
        if any(o.origin.startswith("kernel ") for o in operands):
            # A kernel has no eager twin: its reference is told by the operations that computed it (those its
            # launch's inputs went through as well left out of both), and its output spread over a larger
            # reference by the comparison itself measures the broadcast.
            common = self._common_operations(values, origins)
            operands = tuple(self._operand(v, o, operations=True, common=common) for v, o in zip(values, origins))
            operands = spread_where_broadcast(operands, self._extents_compared(values))
            operands = from_other_data(operands, values, self._writes, self._draws)
            alike = self._alike.sources(values)  # numbers reduced alike: their sources tell where the kernel wrote
            operands = marked_where_unwritten(operands, alike[1] if alike else values, self._writes)
        with self.aside():
            difference = largest_difference(values) if held is False else None
            digest, differences = (digest_of(values), self._alike.difference(values)) if held is not True else (None, None)
        # Arrays of two shapes: `assert_close` fails on the shapes alone, whatever the values (a reduction that
        # flattened the reference's input, not the kernel's, compared [1, 3] with [3]).
        shapes = {tuple(v.shape) for v in values if hasattr(v, "shape") and not isinstance(v, (int, float))}
        kind = f"{kind} {UNLIKE_SHAPES}" if len(shapes) > 1 and kind.startswith(STRICT_SHAPES) else kind
        self.comparisons.append(Comparison(kind, operands, held, difference, digest, differences))
        del self.comparisons[:-_MOST_KEPT]
        return True

    def _numbers_compared(self, symbol: str, values: tuple, held: bool | None, result: bool) -> bool:
        """A traced number's comparison (``oracles.comparison.TracedFloat``): recorded; what it comes out as."""

        kept = self.record(symbol, values, held)
        return _held(symbol) if kept and self.holding and held is not None else result

    def compared_numbers(self, symbol: str, values: tuple) -> Comparison | None:
        """The comparison ``symbol`` of plain numbers, where one is a value read with ``float()`` from the suspect
        (matched by value, 0 and 1 left out: they come from anywhere)."""

        origins = [self._read_numbers.get(v) if isinstance(v, float) and v not in (0.0, 1.0) else None for v in values]
        if not any(origins):
            return None
        operands = tuple(
            Operand(origin_text(o), described(v)) if o else self._operand(v, frozenset()) for v, o in zip(values, origins)
        )
        return Comparison(symbol, operands, None)

    def _common_operations(self, values: tuple, origins: list[frozenset]) -> tuple[frozenset, frozenset, frozenset]:
        """(launched, measured, then): the operations that computed the compared kernels' inputs, those that
        computed what their outputs are compared with (``against ...``, and the other operands' own), and the
        layers the outputs went through (``oracles.layers``: one the reference went through too is alike)."""

        launched = frozenset().union(*(launched_operations(o) for o in origins))
        measured = frozenset().union(*(measured_operations(o) for o in origins),
                                     *(self._operations_of(v) for v, o in zip(values, origins) if not o))
        # A reference computed from the very tensors the kernel was given (`softmax(logits)`) sees them whatever
        # computed them: those operations are then no part of what the check compares.
        measured |= frozenset().union(*(self._reads_launch.get(v, frozenset()) for v, o in zip(values, origins)
                                        if not o and hasattr(v, "untyped_storage")))
        then = frozenset(t.removeprefix(THEN) for o in origins for t in o if t.startswith(THEN) and is_layer(t))
        return launched, measured, then

    def _operations_of(self, value: Any) -> frozenset:
        if isinstance(value, TracedFloat):
            return value.computed
        if hasattr(value, "untyped_storage"):
            return self._ops.get(value, frozenset())
        array = self._array_ops.get(id(value))  # a reference read with `.numpy()` keeps what computed it
        return array[1] if array is not None and array[0]() is value else frozenset()

    def _extents_compared(self, values: tuple) -> list[int | None]:
        """Each tensor operand's element count; where every one is a number reduced from a tensor, the count it
        was reduced from (a reduction kernel's own output, compared with a reduced reference, is not spread)."""

        tensors = [v for v in values if hasattr(v, "untyped_storage")]
        reduced = bool(tensors) and all(v in self._extents for v in tensors)
        return [(self._extent(v) if reduced else v.numel()) if hasattr(v, "untyped_storage") else None for v in values]

    def _extent(self, value: Any) -> int | None:
        """How many elements ``value`` was computed over: a number reduced from a tensor (``out.exp().sum()``)
        counts the tensor's; ``None`` for what is no tensor."""

        return self._extents.get(value, value.numel()) if hasattr(value, "untyped_storage") else None

    def _operand(self, value: Any, origin: frozenset, operations: bool = False, common: tuple = (frozenset(),) * 3) -> Operand:
        launched, measured, then = common
        if origin:
            return Operand(origin_text(without_common(origin, launched, measured)), described(value))
        computed = self._operations_of(value) - launched - then if operations else None
        if isinstance(value, TracedFloat):
            return Operand("+".join(told(computed)) if computed else OTHER, described(value))
        if self._given_to_the_suspect(value):
            return Operand(INPUT, described(value))
        if computed:
            return Operand("+".join(told(computed)), described(value))
        if isinstance(value, (bool, int, float)):
            return Operand(NUMBER, type(value).__name__)
        return Operand(OTHER, described(value))

    def _current_origins(self, values: Any) -> list[frozenset]:
        """The origin of each of ``values``, those from the history of another's event emptied (``oracles.events``)."""

        return self._events.current([self.origin_of(v) for v in values])

    def origin_of(self, value: Any) -> frozenset:
        """The suspects ``value`` comes from (empty for none), with the events they come from."""

        if isinstance(value, TracedFloat):
            return value.origin
        torch = sys.modules["torch"]
        if isinstance(value, torch.Tensor):
            found = self._origins.get(value, frozenset())
            kernel = self._writes.writer_of(value) if self._writes else None
            if kernel is None:
                return found
            # What the launch was given is part of what it computed: a repro that launches it with another
            # `max_bucket`, or on `x` where the script gave it `x * 0.5`, compares other numbers.
            return found | {f"kernel {kernel}{self._writes.launch_of(value)}"} | self._writes.event_of(value)
        if isinstance(value, (tuple, list)):  # what `assert_close` compares item by item (`autograd.grad`'s)
            return frozenset().union(*(self.origin_of(item) for item in value[:_MOST_ITEMS]))
        known = self._arrays.get(id(value))
        return known[1] if known is not None and known[0]() is value else frozenset()

    def _given_to_the_suspect(self, value: Any) -> bool:
        torch = sys.modules["torch"]
        if not isinstance(value, torch.Tensor):
            return False
        return value in self._inputs or bool(self._writes is not None and self._writes.was_passed(value))

    def _made_by_the_script(self) -> bool:
        if self._folder is None:
            return True
        frame = sys._getframe(2)
        for _ in range(40):
            if frame is None:
                return False
            filename = os.path.abspath(frame.f_code.co_filename)
            if filename.startswith(self._folder) and "site-packages" not in filename:
                return not _is_ours(filename)
            if not _library_frame(frame):
                return False
            frame = frame.f_back
        return False

    # -- following values --------------------------------------------------------------------------------

    def _follow(self, func: Any, args: tuple, kwargs: dict) -> Any:
        # Dynamo traces a mode it finds on the stack (a call compiled another way than torch.compile, which runs
        # outside it): what it traces must be the operation alone.
        if self._aside or _compiling():
            return func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        if name in WHOLE:
            result = func(*args, **kwargs)
            kept = self.record(WHOLE[name], args[:2], bool(result))
            return True if kept and self.holding else result
        origin = self._origin_of_arguments(args, kwargs)
        if origin and self._kernels_defined:
            origin |= self._references_among(args, kwargs, origin) | then_operation(name, func, args, kwargs, origin)
        pending = self._pending_of(args) if self._pending else None
        mark = self._writes.writes_noted if self._writes is not None else 0
        result = func(*args, **kwargs)
        if name in AUTOGRAD and self._writes is not None and self._writes.writes_noted != mark:
            # A kernel wrote while autograd ran (a backward kernel, or one writing into a saved tensor): what
            # autograd computed went through it, though no operation the script called shows it.
            origin |= {f"kernel {k}" for k in self._writes.kernels_since(mark)} | self._writes.events_since(mark)
        if origin and self._kernels_defined and spreads_a_suspect(name, args, result, self.origin_of):
            origin |= {SPREAD}
        if origin and self._kernels_defined and self._writes is not None and _differs_where_unwritten(args[:2], self._writes):
            origin |= {UNWRITTEN}
        if self._kernels_defined:
            results = _tensors_in(result)
            self._draws.follow(name, name in FACTORIES, args, kwargs, results)
            self._alike.follow(name, func, args, kwargs, results)
            if name not in FACTORIES:
                self._note_operations(name, func, args, kwargs, results)
                self._note_extent(name, args, kwargs, results)
            if name == "numpy":
                # ... and what it saw of what a launch was given, as the tensor did (``_reads_launch``), whatever
                # its origin (one from history is no suspect's at the comparison, ``oracles.events``).
                seen = self._ops.get(args[0], frozenset()) | self._reads_launch.get(args[0], frozenset())
                self._array_ops[id(result)] = (weakref.ref(result), seen)
                _drop_oldest(self._array_ops)
        if name == "__get__":
            return self._attribute_read(func, args, result)
        if name == "backward" and origin:
            self._note_gradients(args, kwargs, origin)
        if pending is not None and name in TRUTH and isinstance(result, bool):
            return self._truth_read(pending, result)
        if name in NUMBERS and isinstance(result, float) and not isinstance(result, TracedFloat):
            number = TracedFloat(result, origin, frozenset() if origin else self._ops.get(args[0], frozenset()))
            self._alike.carry_into(args[0], number)
            return number
        if not origin:
            return result
        if name == "__float__" and isinstance(result, float):
            self._read_numbers[result] = origin
            _drop_oldest(self._read_numbers)
        if name == "numpy":
            self._arrays[id(result)] = (weakref.ref(result), origin)
            return result
        self._taint_results(name, func, args, kwargs, result, origin, pending)
        return result

    def _taint_results(self, name: str, func: Any, args: tuple, kwargs: dict, result: Any, origin: frozenset,
                       pending: Any) -> None:
        if name in FACTORIES:
            return
        for tensor in _tensors_in(result):
            self._origins[tensor] = self._origins.get(tensor, frozenset()) | origin
        written = kwargs.get("out")
        if written is None and args and (name == "__setitem__" or name.startswith("__i") or in_place(name)):
            written = args[0]
        for tensor in _tensors_in(written):
            self._origins[tensor] = self._origins.get(tensor, frozenset()) | origin
        symbol = COMPARISONS.get(name)
        tensors = _tensors_in(result)
        if symbol is not None:
            for tensor in tensors:
                self._pending[tensor] = (symbol, args[:2])
        elif pending is not None:
            for tensor in tensors:
                self._pending[tensor] = pending

    def _attribute_read(self, func: Any, args: tuple, result: Any) -> Any:
        attribute = getattr(getattr(func, "__self__", None), "__name__", "")
        torch = sys.modules["torch"]
        if not isinstance(result, torch.Tensor):
            if attribute == "requires_grad" and args and self.origin_of(args[0]):
                self.record("requires_grad", (args[0],), None)
            return result
        origin = self._origin_of_arguments(args, {})
        if attribute == "grad" and args:
            origin |= self._grads_from.get(args[0], frozenset())
        if origin:
            self._origins[result] = self._origins.get(result, frozenset()) | origin
        return result

    def _note_operations(self, name: str, func: Any, args: tuple, kwargs: dict, tensors: list[Any]) -> None:
        """``result`` computed by ``name`` from the arguments: their operations and this one, with what it was told
        (``clamp(max=5)``; ``cpu``, ``view`` compute nothing; a tensor a kernel was given is where following stops)."""

        if not tensors:
            return
        operation = named_operation(name, func, args, kwargs)
        found: frozenset = frozenset({operation}) if operation else frozenset()
        read = [(v, self._given_to_the_suspect(v)) for v in _shallow(args, kwargs) if hasattr(v, "untyped_storage")]
        # A tensor the launch was given, or another view of its storage (`w.detach()` read twice), was computed by
        # what the launch saw computing it (``operations_of``) or, a view itself, saw that.
        seen = frozenset().union(*(operations_of([v]) | self._reads_launch.get(v, frozenset()) if given
                                   else self._reads_launch.get(v, frozenset()) for v, given in read))
        for tensor in tensors if seen else ():
            self._reads_launch[tensor] = seen
        for value, given in read:
            if not given:
                computed = self._ops.get(value, frozenset())
                # Broadcast over more elements (`h * scale + shift`, `h` shrunk to one, `shift` not): another reference.
                spread = computed and operation_name(name) in ELEMENT_WISE and value.numel() < tensors[0].numel()
                found |= computed | ({SPREAD} if spread else frozenset())
        if found:
            for tensor in tensors:
                self._ops[tensor] = found

    def _note_extent(self, name: str, args: tuple, kwargs: dict, tensors: list[Any]) -> None:
        """A single number computed from larger tensors (``.sum()``, ``.max()``, a dot product) keeps their
        extent: a kernel's output and its reference each summed to one number still compare an extent each (a
        reference broadcast over two elements against a kernel's one, `h * scale` with `h` shrunk, is another)."""

        if len(tensors) != 1 or tensors[0].numel() != 1 or operation_name(name) is None:
            return
        extents = [self._extent(v) for v in _shallow(args, kwargs) if hasattr(v, "untyped_storage")]
        self._extents[tensors[0]] = max(extents, default=1)

    def _note_gradients(self, args: tuple, kwargs: dict, origin: frozenset) -> None:
        """A backward of the suspect's value: the leaves of its graph get gradients that went through it."""

        torch = sys.modules["torch"]
        roots = [t for t in _shallow(args[:1], {"tensors": kwargs.get("tensors", ())}) if isinstance(t, torch.Tensor)]
        pending = [t.grad_fn for t in roots if t.grad_fn is not None]
        seen: set[int] = set()
        while pending:
            node = pending.pop()
            if node is None or id(node) in seen:
                continue
            seen.add(id(node))
            leaf = getattr(node, "variable", None)
            if isinstance(leaf, torch.Tensor):
                self._grads_from[leaf] = self._grads_from.get(leaf, frozenset()) | origin
            pending.extend(next_node for next_node, _ in getattr(node, "next_functions", ()))

    def _truth_read(self, pending: tuple, result: bool) -> bool:
        symbol, operands = pending
        held = bool(result) if symbol in ("==", "isclose") else (not result) if symbol == "!=" else None
        kept = self.record(symbol, tuple(operands), held)
        return _held(symbol) if kept and self.holding and held is not None else result

    def _origin_of_arguments(self, args: tuple, kwargs: dict) -> frozenset:
        values = [v for v in _shallow(args, kwargs) if isinstance(v, TracedFloat) or hasattr(v, "untyped_storage")]
        return frozenset().union(*self._current_origins(values))

    def _references_among(self, args: tuple, kwargs: dict, origin: frozenset) -> frozenset:
        """``{"against leaky_relu(negative_slope=0.1)"}``: the operations that computed the arguments that come from
        no suspect, combined here with one that does (``ours - reference``). A value reduced from a kernel's output
        and its reference to one number (``(ours - ref).abs().max() < tol``) is compared with a plain number; what it
        was measured against is part of what the check compares (a reference that lost its slope is another)."""

        values = [v for v in _shallow(args, kwargs) if hasattr(v, "untyped_storage")]
        tensors = [(v, bool(o)) for v, o in zip(values, self._current_origins(values))]
        ours, others = [v for v, suspect in tensors if suspect], [v for v, suspect in tensors if not suspect]
        through = measured_through_other_data(ours, others, origin, self._writes, self._draws)
        found = {THROUGH_OTHER} if through else set()
        for value in others:  # what the kernel was given is a reference still (`out - shift`), not more of its output
            given = {INPUT} if self._given_to_the_suspect(value) else set()
            found |= {AGAINST + o for o in given or self._ops.get(value, set()) | self._reads_launch.get(value, set())}
        return frozenset(found)

    def _pending_of(self, args: tuple) -> Any:
        for value in args:
            if hasattr(value, "untyped_storage"):
                pending = self._pending.get(value)
                if pending is not None:
                    return pending
        return None


def _held(symbol: str) -> bool:
    """What a comparison ``symbol`` that holds comes out as (``!=`` holds when it is false)."""

    return symbol != "!="


def _compiling() -> bool:
    compiler = getattr(sys.modules["torch"], "compiler", None)
    return bool(compiler is not None and compiler.is_compiling())


def operations_of(values: list[Any]) -> frozenset:
    """The torch operations that computed ``values`` and the inputs of the kernels they come from (a block's kernel
    fed by the one before went through its layer too), as the installed recorder followed them (none: empty)."""
    ops = (_ACTIVE._ops.get(v, frozenset()) | launched_operations(_ACTIVE.origin_of(v)) for v in values) if _ACTIVE else ()
    return frozenset().union(*ops)


def launch_event(read: list[Any]) -> frozenset:
    """The event of a kernel launch that read ``read``, as an origin item (none without an installed recorder)."""
    return frozenset({_ACTIVE.launch_event(read)}) if _ACTIVE else frozenset()


def draws_of(values: list[Any]) -> frozenset:
    """The draws ``values`` were computed from, as the installed recorder followed them (none: empty)."""
    return _ACTIVE._draws.of(values) if _ACTIVE else frozenset()


def aside() -> Any:
    """The harness's own work (a kernel launch's snapshots, saved-tensor hooks): nothing followed or recorded."""
    return _ACTIVE.aside() if _ACTIVE is not None else contextlib.nullcontext()


def _top_function_mode(torch: Any) -> Any:
    try:
        from torch.overrides import _get_current_function_mode

        return _get_current_function_mode()
    except (ImportError, AttributeError):
        return None


def _differs_where_unwritten(operands: tuple, writes: Any) -> bool:
    """Whether an operation of two tensors combines a kernel's output with a value that differs from it on
    elements the kernel did not write (``oracles.compared``)."""

    tensors = [a for a in operands if hasattr(a, "untyped_storage")]
    if len(tensors) != 2:
        return False
    with aside():
        return any(_unwritten_differ(tensors[i], tensors[1 - i], writes) for i in (0, 1))


def _drop_oldest(kept: dict, most: int = _MOST_KEPT) -> None:
    while len(kept) > most:
        del kept[next(iter(kept))]


def _library_frame(frame: Any) -> bool:
    module = frame.f_globals.get("__name__", "") or ""
    return module.split(".")[0] in _LIBRARY_FRAMES


def _is_ours(filename: str) -> bool:
    return f"{os.sep}oracles{os.sep}" in filename or f"{os.sep}minimizer{os.sep}" in filename
