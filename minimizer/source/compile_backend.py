"""The backend a script compiles with, as its text says: named where it chooses one (``backend=my_backend``), and
written into it where the culprit found a cheaper one that shows the bug, so the repro itself says where the bug
lives (``torch.compile(f, backend="aot_eager")`` fails: not Inductor's).
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from minimizer.source.patterns import TORCH_COMPILE, TORCH_COMPILE_CALL

_OPTIMIZE = m.Call(func=m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("_dynamo")), attr=m.Name("optimize")))


def scripts_backend(text: str) -> str:
    """The backend the script's compiled calls name, as written (``planted_backend``, ``"aot_eager"``); "" where
    none names one or the text does not parse."""

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return ""
    for call in m.findall(module, TORCH_COMPILE_CALL | _OPTIMIZE):
        assert isinstance(call, cst.Call)
        chosen = [a.value for a in call.args if a.keyword is not None and a.keyword.value == "backend"]
        if m.matches(call, _OPTIMIZE) and call.args and call.args[0].keyword is None:
            chosen.insert(0, call.args[0].value)
        if chosen:
            return module.code_for_node(chosen[0])
    return ""


def with_backend_written(text: str, backend: str) -> str | None:
    """``text`` with ``backend=backend`` in every ``torch.compile`` call and decorator that names none; ``None``
    where there is none such (the script names its backend, or compiles another way)."""

    module = cst.parse_module(text)
    writer = _WriteBackend(backend)
    written = module.visit(writer)
    return written.code if writer.changed else None


class _WriteBackend(cst.CSTTransformer):
    def __init__(self, backend: str):
        tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
        self.keyword = cst.Arg(keyword=cst.Name("backend"), value=cst.SimpleString(f'"{backend}"'), equal=tight)
        self.changed = False

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        if not m.matches(updated, TORCH_COMPILE_CALL) or any(a.keyword and a.keyword.value == "backend" for a in updated.args):
            return updated
        self.changed = True
        args = list(updated.args)
        if args and args[-1].comma == cst.MaybeSentinel.DEFAULT:
            args[-1] = args[-1].with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
        return updated.with_changes(args=[*args, self.keyword])

    def leave_Decorator(self, original: cst.Decorator, updated: cst.Decorator) -> cst.Decorator:
        if not m.matches(updated.decorator, TORCH_COMPILE):
            return updated
        self.changed = True
        return updated.with_changes(decorator=cst.Call(func=updated.decorator, args=[self.keyword]))
