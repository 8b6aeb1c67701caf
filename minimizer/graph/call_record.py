"""The arguments a compiled function was called with, recorded in the capture run for the source lift.

A bug in Dynamo's tracing (a ``requires_grad`` read, a guard, a branch taken on a wrong value) is already in the
graph Dynamo hands the compiler: replaying that graph shows nothing. What shows it is the compiled function's own
source, called once with arguments like the ones the script passed (``minimizer.source.lift``). The capture run
records them here, beside the graphs: a tensor as its ``InputSpec``, a number or string as its literal, an
instance of a dataclass of the script by its fields; anything else is told apart as ``unknown`` (the call cannot
be written out). Calls of a module are not recorded: the script built the module, and only the script can.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from minimizer.graph.case import CompileCall, tensor_spec

# Distinct calls (by their arguments' specs) recorded per compiled function: a model served two shapes fails on
# the second.
MOST_CALLS_PER_TARGET = 4
_LITERALS = (bool, int, float, str, type(None))
# Whether the call the bug showed in (``Bug.call``) is running now: a graph compiled at an earlier call (the
# first system of a loop, whose values show nothing) records its inputs again as that call runs it
# (``graph.capture``).
_WANTED_RUNNING = [False]


def wanted_call_running() -> bool:
    return _WANTED_RUNNING[0]


@dataclass(frozen=True)
class Argument:
    """One argument as it can be written back: ``kind`` is ``tensor`` (``spec``; ``text``: the script's own
    ``torch.Tensor`` subclass it is an instance of, or empty), ``literal`` (``text``, its
    repr), ``sequence`` (``items``; ``text`` is ``tuple`` or ``list``), ``object`` (an instance of the script's
    dataclass ``text``, its ``fields``) or ``unknown`` (``text``: its type)."""

    kind: str
    text: str = ""
    spec: Any = None
    items: tuple[Argument, ...] = ()
    fields: tuple[tuple[str, Argument], ...] = ()

    @property
    def writable(self) -> bool:
        if self.kind == "unknown":
            return False
        return all(item.writable for item in self.items) and all(value.writable for _, value in self.fields)


@dataclass(frozen=True)
class RecordedCall:
    """A call of a function the script compiled: ``target`` is its qualified name (``pad_features``,
    ``ReturnEstimator.targets``) in ``module``; the compile options, and the modes it ran under."""

    target: str
    module: str
    args: tuple[Argument, ...]
    kwargs: tuple[tuple[str, Argument], ...]
    compile: CompileCall
    grad_enabled: bool = True
    autocast: tuple[str, ...] = field(default_factory=tuple)
    # What the compiled call returned, where it returned a bool (its repr), once it has returned: the lifted
    # program then asserts the opposite, which eager gives where the bug is the compiled call's. Where the one
    # bool sits inside what it returned (`return target, {"attached": ...}`), where it sits (`[1]['attached']`).
    returned: str = ""
    returned_at: str = ""

    @property
    def writable(self) -> bool:
        return all(a.writable for a in self.args) and all(a.writable for _, a in self.kwargs)

    def same_call(self, other: RecordedCall) -> bool:
        unreturned = {"returned": "", "returned_at": ""}
        return dataclasses.replace(self, **unreturned) == dataclasses.replace(other, **unreturned)


def argument(value: Any, name: str = "value") -> Argument:
    """``value`` as an ``Argument``."""

    if isinstance(value, torch.Tensor):
        # A tensor of the script's own subclass (`as_subclass(StoreEmbedding)`) is written as one, by its name.
        subclass = type(value).__qualname__ if type(value).__module__ == "__main__" else ""
        return Argument("tensor", subclass, spec=tensor_spec(name, value))
    if isinstance(value, _LITERALS):
        return Argument("literal", repr(value))
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return Argument("sequence", type(value).__name__, items=tuple(argument(v, name) for v in value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__ == "__main__":
        fields = tuple((f.name, argument(getattr(value, f.name), f.name)) for f in dataclasses.fields(value) if f.init)
        return Argument("object", type(value).__qualname__, fields=fields)
    built_with = value.__dict__.get(_BUILT_WITH) if isinstance(value, torch.nn.Module) else None
    if built_with is not None:  # the script's own module, built again as the script built it
        return Argument("object", type(value).__qualname__, fields=tuple((k, argument(v, k)) for k, v in built_with))
    return Argument("unknown", type(value).__qualname__)


# Where a module of the script's own class keeps the arguments its ``__init__`` was called with.
_BUILT_WITH = "_minimizer_built_with"


def record_module_construction() -> None:
    """Patch ``nn.Module.__init__`` in this process so each module of the script's own classes keeps the
    arguments its class's ``__init__`` got (``Critic(obs_dim=6)``): a compiled method's ``self`` can then be
    written back as the script built it. Read from the outermost ``__init__`` frame running for the module,
    when it calls ``super().__init__()`` (before the body rebinds its parameters, as bodies rarely do)."""

    real_init = torch.nn.Module.__init__

    @functools.wraps(real_init)
    def init(self: torch.nn.Module, *args: Any, **kwargs: Any) -> None:
        real_init(self, *args, **kwargs)
        if type(self).__module__ == "__main__":
            try:
                built_with = _init_arguments(self, sys._getframe(1))
            except Exception:  # recording must never change what the script does
                built_with = None
            if built_with is not None:
                self.__dict__[_BUILT_WITH] = built_with

    torch.nn.Module.__init__ = init  # type: ignore[method-assign]


def _init_arguments(module: torch.nn.Module, frame: Any) -> tuple[tuple[str, Any], ...] | None:
    """The named arguments of the outermost ``__init__`` frame at or above ``frame`` running for ``module``;
    ``None`` where there is none or it takes ``*args`` / ``**kwargs``."""

    outermost = None
    while frame is not None and frame.f_code.co_name == "__init__" and frame.f_locals.get("self") is module:
        outermost, frame = frame, frame.f_back
    if outermost is None:
        return None
    code = outermost.f_code
    if code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
        return None
    names = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]
    return tuple((name, outermost.f_locals[name]) for name in names)


def recording_calls(
    model: Any,
    compiled: Any,
    call: CompileCall,
    sink: Callable[[RecordedCall], None],
    autocast: Callable[[], list[str]],
    wanted_call: int | None = None,
) -> Any:
    """``compiled`` with its first distinct calls going to ``sink`` before they run (a call may crash), and its
    call number ``wanted_call`` (0: its first) whatever came before: the call the bug showed in (``Bug.call``),
    told apart from the first by its values alone where its shapes are the same. A compiled module, or anything
    without a name, as it is."""

    if isinstance(model, torch.nn.Module) or not callable(compiled) or not hasattr(model, "__qualname__"):
        return compiled
    seen: set[str] = set()
    made = [0]

    def first_record(args: tuple, kwargs: dict, wanted: bool) -> RecordedCall | None:
        """The call, sunk before it runs (it may crash), where it is one of the first distinct ones or the
        ``wanted`` one; else ``None``."""

        if len(seen) >= MOST_CALLS_PER_TARGET and not wanted:
            return None
        try:
            record = RecordedCall(
                model.__qualname__.rpartition("<locals>.")[2],
                getattr(model, "__module__", "") or "",
                tuple(argument(a, f"arg{i}") for i, a in enumerate(args)),
                tuple((k, argument(v, k)) for k, v in kwargs.items()),
                call,
                torch.is_grad_enabled(),
                tuple(autocast()),
            )
            key = repr([_told_apart_by(a) for a in record.args] + [(k, _told_apart_by(a)) for k, a in record.kwargs])
        except Exception as exc:  # recording must never change what the script does
            print(f"minimizer: could not record a call of {model.__qualname__}: {exc}", file=sys.stderr)
            return None
        if key in seen and not wanted:
            return None
        seen.add(key)
        sink(record)
        return record

    @functools.wraps(compiled)
    def recorded(*args: Any, **kwargs: Any) -> Any:
        index, made[0] = made[0], made[0] + 1
        wanted = index == wanted_call
        record = first_record(args, kwargs, wanted=wanted)
        _WANTED_RUNNING[0] = wanted
        try:
            result = compiled(*args, **kwargs)
        finally:
            _WANTED_RUNNING[0] = False
        found = _the_one_bool(result) if record is not None else None
        if record is not None and found is not None:  # the same call, now with what it returned
            sink(dataclasses.replace(record, returned=repr(found[1]), returned_at=found[0]))
        return result

    return recorded


def _the_one_bool(result: Any, place: str = "", depth: int = 0) -> tuple[str, bool] | None:
    """Where the one bool of ``result`` sits (``""`` for ``result`` itself, ``"[1]['attached']"``) and its value;
    ``None`` where it holds none or several (tuples, lists and dicts of string keys, two levels down)."""

    if isinstance(result, bool):
        return place, result
    if depth == 2 or not isinstance(result, (tuple, list, dict)) or len(result) > 8:
        return None
    items = result.items() if isinstance(result, dict) else enumerate(result)
    found = [
        one for key, value in items
        if (isinstance(key, (int, str))) and (one := _the_one_bool(value, f"{place}[{key!r}]", depth + 1)) is not None
    ]
    return found[0] if len(found) == 1 else None


def _told_apart_by(argument: Argument) -> tuple:
    """What tells two calls apart: a tensor's shape, dtype, device and ``requires_grad`` (not its values), the rest
    as written."""

    if argument.kind == "tensor":
        spec = argument.spec
        return ("tensor", argument.text, spec.shape, str(spec.dtype), spec.device, spec.requires_grad)
    items = tuple(_told_apart_by(item) for item in argument.items)
    return (argument.kind, argument.text, items, tuple((key, _told_apart_by(value)) for key, value in argument.fields))
