"""The repro as the regression test its fix will need: in PyTorch's own style (a ``TestCase`` method, run by
``run_tests()``) or as a pytest function, failing today and passing once the bug is fixed.

The repro's statements become the test's body, in order, and what it defines there (functions, modules,
``autograd.Function`` classes) becomes local to the test: a function defined inside another still reads the
names bound before it, as closures. What must stay at module level stays: imports, and Triton kernels (Triton
reads a kernel's source and its globals) with the module-level values they read. A repro that needs CUDA is
skipped where there is none. The header stays on top, as comments.
"""

from __future__ import annotations

import re

import libcst as cst
import libcst.matchers as m

from minimizer.output import split_header, tidy

PYTORCH, PYTEST = "pytorch", "pytest"
STYLES = (PYTORCH, PYTEST)
_MAIN = re.compile(r"""__name__\s*==\s*["']__main__["']""")


def regression_test(repro: str, *, style: str = PYTORCH, name: str = "repro") -> str:
    """The test of ``repro`` in ``style`` (``PYTORCH`` or ``PYTEST``), its one test named ``test_<name>``."""

    if style not in STYLES:
        raise ValueError(f"test style {style!r}: one of {', '.join(STYLES)}")
    header, body = split_header(repro)
    module = cst.parse_module(body)
    top, steps = _split(_without_main_guard(list(module.body)))
    needs_cuda = "cuda" in body
    test_name = "test_" + re.sub(r"\W+", "_", name).strip("_").lower()
    build = _pytorch_test if style == PYTORCH else _pytest_test
    imports, test = build(test_name, steps, needs_cuda)
    present = {_code(statement).strip() for statement in top}
    imports = [cst.parse_statement(line) for line in imports if line.strip() not in present]
    last_import = max((i + 1 for i, statement in enumerate(top) if _is_import(statement)), default=0)
    top = [*top[:last_import], *imports, *top[last_import:]]
    text = cst.Module(body=[*top, *test], header=module.header).code
    return (header + "\n" if header else "") + tidy(text)


def _without_main_guard(statements: list[cst.BaseStatement]) -> list[cst.BaseStatement]:
    """``if __name__ == "__main__":`` opened up: inside a test, the module is not ``__main__``."""

    opened: list[cst.BaseStatement] = []
    for statement in statements:
        if isinstance(statement, cst.If) and statement.orelse is None and _MAIN.fullmatch(_code(statement.test)):
            opened.extend(statement.body.body)
        else:
            opened.append(statement)
    return opened


def _split(statements: list[cst.BaseStatement]) -> tuple[list[cst.BaseStatement], list[cst.BaseStatement]]:
    """What stays at module level (imports, Triton kernels and the module-level values they read), and the
    test's steps (everything else, in order)."""

    kernels = [s for s in statements if isinstance(s, cst.FunctionDef) and _is_triton_kernel(s)]
    read_by_kernels = set().union(*(_globals_of(kernel) for kernel in kernels))
    # What comes before the last import stays before it: `os.environ["TRITON_INTERPRET"] = "1"`, then triton.
    prologue = max((i + 1 for i, statement in enumerate(statements) if _is_import(statement)), default=0)
    top, steps = [], []
    for i, statement in enumerate(statements):
        stays = i < prologue or statement in kernels or bool(_assigned(statement) & read_by_kernels)
        (top if stays else steps).append(statement)
    return top, [_spaced(step, first=not i) for i, step in enumerate(steps)]


def _spaced(statement: cst.BaseStatement, *, first: bool) -> cst.BaseStatement:
    """At most one blank line between a test's steps, none before the first (comments kept)."""

    lines = list(statement.leading_lines)
    while lines and lines[0].comment is None and (first or len(lines) > 1 and lines[1].comment is None):
        lines.pop(0)
    return statement.with_changes(leading_lines=lines)


_Built = tuple[list[str], list[cst.BaseStatement]]  # the imports the test needs, and the test


def _pytorch_test(test_name: str, steps: list[cst.BaseStatement], needs_cuda: bool) -> _Built:
    skip = ['@unittest.skipIf(not torch.cuda.is_available(), "the bug needs CUDA")\n'] if needs_cuda else []
    method = cst.parse_statement("".join(skip) + f"def {test_name}(self):\n    pass\n")
    assert isinstance(method, cst.FunctionDef)
    method = method.with_changes(body=cst.IndentedBlock(body=steps or [cst.SimpleStatementLine([cst.Pass()])]))
    test_case = cst.parse_statement("class TestRepro(TestCase):\n    pass\n")
    assert isinstance(test_case, cst.ClassDef)
    test_case = test_case.with_changes(body=cst.IndentedBlock(body=[method]), leading_lines=_blank_lines(2))
    imports = ["import unittest\n", "import torch\n"] if needs_cuda else []
    imports.append("from torch.testing._internal.common_utils import TestCase, run_tests\n")
    main = cst.parse_statement('if __name__ == "__main__":\n    run_tests()\n').with_changes(leading_lines=_blank_lines(2))
    return imports, [test_case, main]


def _pytest_test(test_name: str, steps: list[cst.BaseStatement], needs_cuda: bool) -> _Built:
    skip = ['@pytest.mark.skipif(not torch.cuda.is_available(), reason="the bug needs CUDA")\n'] if needs_cuda else []
    function = cst.parse_statement("".join(skip) + f"def {test_name}():\n    pass\n")
    assert isinstance(function, cst.FunctionDef)
    function = function.with_changes(
        body=cst.IndentedBlock(body=steps or [cst.SimpleStatementLine([cst.Pass()])]), leading_lines=_blank_lines(2)
    )
    imports = ["import pytest\n", "import torch\n"] if needs_cuda else []
    # Plain python runs it too: the test is the repro, and fails there as the repro does.
    main = cst.parse_statement(f'if __name__ == "__main__":\n    {test_name}()\n').with_changes(leading_lines=_blank_lines(2))
    return imports, [function, main]


def _is_import(statement: cst.BaseStatement) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _is_triton_kernel(function: cst.FunctionDef) -> bool:
    return any("jit" in _code(decorator.decorator) or "autotune" in _code(decorator.decorator) for decorator in function.decorators)


def _globals_of(kernel: cst.FunctionDef) -> set[str]:
    """The names a kernel reads that it neither takes nor binds: the module-level values it needs."""

    bound = {param.name.value for param in kernel.params.params}
    lines = [line for line in m.findall(kernel, m.SimpleStatementLine()) if isinstance(line, cst.SimpleStatementLine)]
    bound |= {name for line in lines for name in _assigned(line)}
    return {name.value for name in _names(kernel.body)} - bound


def _assigned(statement: cst.BaseStatement) -> set[str]:
    if not isinstance(statement, cst.SimpleStatementLine):
        return set()
    names = set()
    for small in statement.body:
        targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
        targets += [small.target] if isinstance(small, (cst.AnnAssign, cst.AugAssign)) else []
        names |= {n.value for target in targets for n in _names(target)}
    return names


def _names(node: cst.CSTNode) -> list[cst.Name]:
    return [found for found in m.findall(node, m.Name()) if isinstance(found, cst.Name)]


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _blank_lines(count: int) -> list[cst.EmptyLine]:
    return [cst.EmptyLine() for _ in range(count)]
