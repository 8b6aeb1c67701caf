"""Write a ``GraphCase`` as a standalone script a person can read and run: ``python repro.py`` fails on its own.

The script is: the original script's prelude (imports and compiler configuration), a ``Repro`` module whose
``forward`` spells each op the public way (``torch.nn.functional.linear(x, w)``, ``a + b``, ``x.view(2, -1)``),
inputs drawn at random, the same ``torch.compile`` call as the original, and a plain check comparing compiled
with eager.
"""

from __future__ import annotations

import builtins
import keyword
import operator
from functools import lru_cache
from typing import Any

import torch
import torch.fx as fx

from minimizer.graph.case import GraphCase, InputSpec
from minimizer.graph.prelude import prelude_names
from minimizer.graph.spelling import compile_keywords, float_literal, mode_lines, shape_literal, tensor_expression


CHECK_MESSAGES = {
    "requires_grad": "compiled output lost requires_grad",
}

_BINARY = {
    operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/", operator.floordiv: "//",
    operator.mod: "%", operator.pow: "**", operator.matmul: "@", operator.and_: "&", operator.or_: "|",
    operator.xor: "^", operator.lshift: "<<", operator.rshift: ">>", operator.eq: "==", operator.ne: "!=",
    operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
}  # fmt: skip
_UNARY = {operator.neg: "-", operator.pos: "+", operator.invert: "~", operator.not_: "not "}
_RESERVED = {"torch", "self", "device", "model", "compiled", "inputs", "out", "expected", "got", "want", "operator"}
_PUBLIC_MODULES = (
    "torch.nn.functional", "torch", "torch.linalg", "torch.special", "torch.fft", "torch.nn.init",
)  # fmt: skip


def emit_script(case: GraphCase) -> str:
    """The script text for ``case`` (deterministic: equal cases give equal text)."""

    return _Emitter(case).script()


@lru_cache(maxsize=1)
def _public_index() -> dict[int, str]:
    import importlib

    index: dict[int, str] = {}
    for module_name in _PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for attr in sorted(dir(module)):
            if attr.startswith("_"):
                continue
            obj = getattr(module, attr, None)
            if callable(obj) and not isinstance(obj, type):
                index.setdefault(id(obj), f"{module_name}.{attr}")
    return index


def public_name(target: Any) -> str:
    """The public dotted name of a torch function (``torch.nn.functional.linear`` for ``torch._C._nn.linear``).

    Falls back to ``torch.ops.<ns>.<op>.<overload>`` for operator overloads and to ``module.qualname``.
    """

    found = _public_index().get(id(target))
    if found:
        return found
    if isinstance(target, torch._ops.OpOverload):
        return f"torch.ops.{target.namespace}.{target._opname}.{target._overloadname}"
    if isinstance(target, torch._ops.OpOverloadPacket):
        return f"torch.ops.{target._qualified_op_name.replace('::', '.')}"
    name = getattr(target, "__name__", None)
    module = getattr(target, "__module__", None) or ""
    if name and module.startswith("torch._C"):
        # Dynamo records some functions by their C binding; the public function of the same name does the same.
        for public in ("torch.nn.functional", "torch"):
            candidate = _resolve(f"{public}.{name}")
            if candidate is not None and callable(candidate):
                return f"{public}.{name}"
    qualname = getattr(target, "__qualname__", name)
    if module and qualname:
        if module == "torch._C._TensorBase" or module == "torch._tensor":
            return f"torch.Tensor.{name}"
        return f"{module}.{qualname}"
    raise ValueError(f"cannot name {target!r}")


def _resolve(dotted: str) -> Any:
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


class _Emitter:
    def __init__(self, case: GraphCase):
        self.case = case
        self.uses_device = any(spec.is_tensor and spec.device.startswith("cuda") for spec in case.inputs)
        self.imports: set[str] = set()
        self.single_output = False
        self.names: dict[fx.Node, str] = {}
        self.taken: set[str] = set(_RESERVED) | set(dir(builtins)) | prelude_names(case.prelude)

    # -- names -----------------------------------------------------------------------------------------

    def _fresh(self, wanted: str) -> str:
        base = _identifier(wanted)
        name = base
        counter = 1
        while name in self.taken:
            name = f"{base}_{counter}"
            counter += 1
        self.taken.add(name)
        return name

    # -- the script ------------------------------------------------------------------------------------

    def script(self) -> str:
        case = self.case
        placeholders = case.placeholders
        members = [(n, n.meta["input_spec"]) for n in placeholders if n.meta["input_spec"].kind in ("parameter", "buffer")]
        arguments = [(n, n.meta["input_spec"]) for n in placeholders if n.meta["input_spec"].kind not in ("parameter", "buffer")]
        init_lines = self._members(members)
        argument_names = []
        for node, spec in arguments:
            name = self._fresh(spec.name)
            self.names[node] = name
            argument_names.append(name)
        body = self._body()
        compile_call = self._compile_call()  # before the imports: it may need one
        lines = self._imports()
        lines.append("class Repro(torch.nn.Module):")
        if init_lines:
            lines.append("    def __init__(self):")
            lines.append("        super().__init__()")
            lines.extend(f"        {line}" for line in init_lines)
            lines.append("")
        lines.append(f"    def forward({', '.join(['self'] + argument_names)}):")
        lines.extend(f"        {line}" for line in body)
        lines.append("")
        lines.append("")
        lines.append("model = Repro()")
        made = ", ".join(self._make_input(spec) for _, spec in arguments)
        lines.append(f"inputs = [{made}]")
        lines.append(f"compiled = {compile_call}")
        lines.append("out = compiled(*inputs)")
        lines.append("expected = model(*inputs)")
        lines.extend(self._check())
        return "\n".join(lines) + "\n"

    def _members(self, members: list) -> list[str]:
        """``__init__``'s lines: a parameter or buffer per graph input that is one, named after it."""

        init_lines = []
        member_names: set[str] = set()
        for node, spec in members:
            attr = _identifier(spec.name)
            while attr in member_names:
                attr += "_"
            member_names.add(attr)
            self.names[node] = f"self.{attr}"
            if spec.kind == "parameter" and (spec.dtype.is_floating_point or spec.dtype.is_complex):
                grad = "" if spec.requires_grad else ", requires_grad=False"
                init_lines.append(f"self.{attr} = torch.nn.Parameter({self._make_tensor(spec, grad=False)}{grad})")
            else:
                init_lines.append(f'self.register_buffer("{attr}", {self._make_tensor(spec)})')
        return init_lines

    def _body(self) -> list[str]:
        """``forward``'s lines: one statement per graph node, then the return."""

        body = []
        for node in self.case.gm.graph.nodes:
            if node.op in ("placeholder",):
                continue
            if node.op == "output":
                outputs = node.args[0]
                # Dynamo's graphs return a tuple; one output reads better, and compares simpler, on its own.
                self.single_output = isinstance(outputs, (tuple, list)) and len(outputs) == 1
                body.append(f"return {self._format(outputs[0] if self.single_output else outputs)}")
                continue
            body.append(self._statement(node))
        return body

    def _imports(self) -> list[str]:
        """The lines before the module: imports, the script's prelude, the device (once the body is written)."""

        lines: list[str] = []
        prelude = self.case.prelude.strip("\n")
        if "torch" not in prelude_names(prelude):
            lines.append("import torch")
        for module in sorted(self.imports):
            lines.append(f"import {module}")
        if prelude:
            lines.append(prelude)
        lines += mode_lines(self.case.grad_enabled, self.case.autocast)
        lines.append("")
        if self.uses_device:
            lines.append('device = "cuda" if torch.cuda.is_available() else "cpu"')
            lines.append("")
        lines.append("")
        return lines

    def _compile_call(self) -> str:
        keywords, imports = compile_keywords(self.case.compile, self.case.prelude)
        self.imports |= imports
        return f"torch.compile({', '.join(['model', *keywords])})"

    def _check(self) -> list[str]:
        check = self.case.check
        if check == "allclose":
            # Tolerant of rounding (a replayed graph reorders sums), and NaN where both give NaN: the bug is what
            # fails it. assert_close takes a tuple of outputs whole, and its failure says how far apart they are.
            return ["torch.testing.assert_close(out, expected, rtol=1e-3, atol=1e-3, equal_nan=True)"]
        if check != "requires_grad":
            return []
        test = "{got}.requires_grad == {want}.requires_grad"
        message = CHECK_MESSAGES[check]
        if self.single_output:
            return [f'assert {test.format(got="out", want="expected")}, "{message}"']
        return [
            "for got, want in zip(out, expected):",
            f'    assert {test.format(got="got", want="want")}, "{message}"',
        ]

    # -- tensors ---------------------------------------------------------------------------------------

    def _make_input(self, spec: InputSpec) -> str:
        if not spec.is_tensor:
            return repr(spec.value)
        return self._make_tensor(spec, grad=spec.requires_grad)

    def _make_tensor(self, spec: InputSpec, *, grad: bool = False) -> str:
        return tensor_expression(spec, grad=grad)

    # -- statements ------------------------------------------------------------------------------------

    def _statement(self, node: fx.Node) -> str:
        target = node.target
        if node.op == "call_function" and target is operator.setitem:
            obj, index, value = node.args
            self.names[node] = "None"
            return f"{self._format(obj)}[{self._index(index)}] = {self._format(value)}"
        expression = self._expression(node)
        if not node.users:
            self.names[node] = "None"
            return expression
        name = self._fresh(node.name)
        self.names[node] = name
        return f"{name} = {expression}"

    def _expression(self, node: fx.Node) -> str:
        target = node.target
        args, kwargs = node.args, node.kwargs
        if node.op == "call_method":
            receiver, *rest = args
            return f"{self._format(receiver)}.{target}({self._arguments(rest, kwargs)})"
        if node.op == "get_attr":
            return f"self.{target}"
        if node.op == "call_module":
            return f"self.{target}({self._arguments(args, kwargs)})"
        if target in _BINARY and len(args) == 2 and not kwargs:
            return f"{self._format(args[0])} {_BINARY[target]} {self._format(args[1])}"
        if target in _UNARY and len(args) == 1 and not kwargs:
            return f"{_UNARY[target]}{self._format(args[0])}"
        if target is operator.getitem and not kwargs:
            return f"{self._format(args[0])}[{self._index(args[1])}]"
        if target is builtins.getattr and len(args) == 2 and isinstance(args[1], str):
            return f"{self._format(args[0])}.{args[1]}"
        if getattr(target, "__module__", None) in ("_operator", "operator"):
            self.imports.add("operator")
            return f"operator.{target.__name__}({self._arguments(args, kwargs)})"
        if getattr(target, "__module__", None) == "builtins":
            return f"{target.__name__}({self._arguments(args, kwargs)})"
        name = public_name(target)
        if name.split(".")[0] != "torch":
            self.imports.add(name.rsplit(".", 1)[0])
        return f"{name}({self._arguments(args, kwargs)})"

    def _arguments(self, args: Any, kwargs: dict[str, Any]) -> str:
        parts = [self._format(a) for a in args]
        parts += [f"{k}={self._format(v)}" for k, v in kwargs.items()]
        return ", ".join(parts)

    def _index(self, index: Any) -> str:
        if isinstance(index, tuple):
            if not index:
                return "()"
            text = ", ".join(self._index_item(i) for i in index)
            return text + ("," if len(index) == 1 else "")
        return self._index_item(index)

    def _index_item(self, item: Any) -> str:
        if isinstance(item, slice):
            parts = ["" if v is None else self._format(v) for v in (item.start, item.stop, item.step)]
            text = f"{parts[0]}:{parts[1]}"
            return text + (f":{parts[2]}" if item.step is not None else "")
        return self._format(item)

    def _format(self, value: Any) -> str:
        if isinstance(value, fx.Node):
            return self.names[value]
        if isinstance(value, tuple):
            inner = ", ".join(self._format(v) for v in value)
            return f"({inner},)" if len(value) == 1 else f"({inner})"
        if isinstance(value, list):
            return "[" + ", ".join(self._format(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{" + ", ".join(f"{self._format(k)}: {self._format(v)}" for k, v in value.items()) + "}"
        if isinstance(value, slice):
            return f"slice({self._format(value.start)}, {self._format(value.stop)}, {self._format(value.step)})"
        if isinstance(value, (torch.dtype, torch.layout, torch.memory_format)):
            return str(value)
        if isinstance(value, torch.device):
            if value.type == "cuda" and self.uses_device:
                return "torch.device(device)"
            return f"torch.device({str(value)!r})"
        if isinstance(value, float):
            return float_literal(value)
        if value is Ellipsis:
            return "..."
        if isinstance(value, torch.Size):
            return shape_literal(tuple(value))
        return repr(value)


def _identifier(wanted: str) -> str:
    """Dynamo's placeholder names made readable: ``L_self_modules_qkv_parameters_weight_`` -> ``qkv_weight``."""

    name = wanted
    for prefix in ("L_", "l_"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    name = name.replace("self_modules_", "").replace("self_", "")
    for piece in ("_modules_", "_parameters_", "_buffers_"):
        name = name.replace(piece, "_")
    for prefix in ("modules_", "parameters_", "buffers_"):
        if name.startswith(prefix):
            name = name[len(prefix) :]
    name = name.strip("_") or "value"
    name = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    if name[0].isdigit() or keyword.iskeyword(name):
        name = f"v_{name}"
    return name
