"""A ``unittest`` test run by ``unittest.main()`` becomes its body at module level, its assertions plain asserts.

A regression script often checks its kernel or compiled model in a ``unittest.TestCase``: ``class ParityTest
(unittest.TestCase): def test_outputs_match(self): ... self.assertTrue(torch.allclose(out, ref))`` and
``unittest.main()`` at the end. Once the repro runs one test, the class, the method and the runner are words
around its body: the body at the class's place, ``self.assertTrue(x)`` as ``assert x``, ``self.assertEqual(a, b)``
as ``assert a == b``, and no ``unittest.main()``. The candidate is an assert that fails as the test failed (an
``AssertionError``); where the signature tells the two apart, the oracle refuses it.
"""

from __future__ import annotations

import ast
from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.structure.bodies import target_names
from minimizer.source.substitution import swap_nodes
from minimizer.source.traversal import find_all
from oracles.unittest_checks import spelled_assertion

__all__ = ["unittest_cases_to_statements"]

# Operands written as they are: anything else goes in parentheses (`not (x or y)`).
_ATOMS = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant, ast.List, ast.Tuple, ast.Dict, ast.JoinedStr)

_TEST_CASE = m.Arg(value=m.Attribute(value=m.Name("unittest"), attr=m.Name("TestCase")) | m.Name("TestCase"))
_MAIN = m.SimpleStatementLine(
    body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name("unittest"), attr=m.Name("main")) | m.Name("main")))]
)

def unittest_cases_to_statements(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with a ``TestCase`` class replaced by one of its test methods' bodies (at the class's place,
    its ``self.assert...`` calls as asserts, after its ``setUp``'s body, the case's attributes as names) and
    ``unittest.main()`` removed; one candidate per test method. A class with other methods (``tearDown``, helpers)
    or statements, or a test that reads ``self`` otherwise, is left alone."""

    mains = [s for s in module.body if m.matches(s, _MAIN)]
    if len(mains) != 1:
        return distinct_candidates(module, [])
    return distinct_candidates(module, _candidates(module, mains[0]))


def _candidates(module: cst.Module, main: cst.SimpleStatementLine) -> Iterator[object]:
    module_names = {name for s in module.body for name in _bound_at_top(s)}
    for case in module.body:
        if not isinstance(case, cst.ClassDef) or not any(m.matches(base, _TEST_CASE) for base in case.bases):
            continue
        set_up, tests = _methods(case)
        for test in tests:
            yield lambda case=case, test=test: _replaced(module, case, [*set_up, test], main, module_names)


def _methods(case: cst.ClassDef) -> tuple[list[cst.FunctionDef], list[cst.FunctionDef]]:
    """The class's ``setUp`` (none or one) and test methods; no tests where it holds anything else (a docstring
    and ``pass`` aside)."""

    words = m.SimpleStatementLine(body=[m.Expr(m.SimpleString()) | m.Pass()])
    members = [s for s in case.body.body if not m.matches(s, words)]
    functions = [s for s in members if isinstance(s, cst.FunctionDef)]
    set_up = [f for f in functions if f.name.value == "setUp"]
    tests = [f for f in functions if f.name.value.startswith("test")]
    if case.decorators or len(set_up) + len(tests) != len(members):
        return [], []
    return set_up, tests


def _replaced(module, case, methods: list[cst.FunctionDef], main, module_names) -> cst.Module | None:
    """The module with ``case`` replaced by ``methods``' bodies, one after the other (``setUp``'s first), the
    case's attributes as names (``self.x = ...`` in ``setUp`` and ``self.x`` in the test as ``x``)."""

    body: list[cst.BaseStatement | None] = []
    attributes: set[str] = set()
    for method in methods:
        parameters = method.params.params
        if method.decorators or len(parameters) != 1 or not isinstance(method.body, cst.IndentedBlock):
            return None
        if find_all(method.body, m.Return() | m.Yield() | m.Global() | m.Nonlocal()):
            return None
        self_name = parameters[0].name.value
        converted = [_as_assert(statement, self_name) for statement in method.body.body]
        if None in converted:
            return None
        read = m.Attribute(value=m.Name(self_name))
        attributes |= {a.attr.value for c in converted for a in find_all(c, read)}  # type: ignore
        body += [_attributes_as_names(statement, self_name) for statement in converted]  # type: ignore
    body = [statement for statement in body if not _assigns_itself(statement)]
    bound = {name for s in body if s is not None for name in _bound_at_top(s)}
    if None in body or not attributes <= bound:
        return None  # a method of the case, or an attribute no method sets (`self.maxDiff`)
    if _read_elsewhere(module, case, bound & (module_names - {case.name.value})):
        return None  # the test would rebind a name the script reads after the test's place, or in a function
    statements: list[cst.BaseStatement] = []
    for statement in module.body:
        if statement is case:
            first = body[0].with_changes(leading_lines=case.leading_lines)  # type: ignore[union-attr]
            statements += [first, *body[1:]]
        elif statement is not main:
            statements.append(statement)
    return module.with_changes(body=statements)


def _read_elsewhere(module: cst.Module, case: cst.ClassDef, names: set[str]) -> bool:
    """Whether a rebound name is read where the test's binding would now be seen instead of the script's: in a
    statement after the case (``unittest.main()`` aside) or in a function of the module, which may run inside the
    test. Read only before the case, the script's name is the test's to rebind (``for out, ref in PAIRS``)."""

    if not names:
        return False
    after = module.body[module.body.index(case) + 1 :]
    functions = [f for s in module.body if s is not case for f in find_all(s, m.FunctionDef())]
    places = [s for s in after if not m.matches(s, _MAIN)] + functions
    return any(n.value in names for place in places for n in find_all(place, m.Name()))  # type: ignore[attr-defined]


def _assigns_itself(statement: cst.BaseStatement | None) -> bool:
    """``x = x``: what ``x = self.x`` in a test becomes where ``setUp`` set ``self.x``."""

    one_name = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Name())])
    if not m.matches(statement, one_name):
        return False
    assign = statement.body[0]  # type: ignore[union-attr]
    return assign.value.value == assign.targets[0].target.value  # type: ignore[attr-defined]


def _attributes_as_names(statement: cst.BaseStatement, self_name: str) -> cst.BaseStatement | None:
    """``statement`` with ``self.x`` as ``x``; None where it calls a method of the case or reads ``self`` itself."""

    attribute = m.Attribute(value=m.Name(self_name), attr=m.Name())
    if find_all(statement, m.Call(func=attribute)):
        return None
    attributes = find_all(statement, attribute)
    if len(find_all(statement, m.Name(self_name))) != len(attributes):
        return None
    return swap_nodes(statement, {a: cst.Name(a.attr.value) for a in attributes})  # type: ignore[attr-defined]


def _as_assert(statement: cst.BaseStatement, self_name: str) -> cst.BaseStatement | None:
    """``statement`` with each ``self.assertX(...)`` line in it (in a loop or a ``with`` block too) as the assert it
    spells (``oracles.unittest_checks``, the capture's reading of a failed test); None where an assertion has no
    plain spelling."""

    call = m.Call(func=m.Attribute(value=m.Name(self_name), attr=m.Name()))
    lines = find_all(statement, m.SimpleStatementLine(body=[m.Expr(value=call)]))
    asserts = {line: _spelled(line) for line in lines}
    if None in asserts.values():
        return None
    return swap_nodes(statement, asserts)  # type: ignore[arg-type]


def _spelled(line: cst.SimpleStatementLine) -> cst.BaseStatement | None:
    code = f"({cst.Module([]).code_for_node(line.body[0].value)})"  # type: ignore[attr-defined]
    assertion = spelled_assertion(ast.parse(code, mode="eval").body)
    if assertion is None:
        return None
    return cst.parse_statement(_written(assertion, code)).with_changes(leading_lines=line.leading_lines)


def _written(assertion: ast.Assert, code: str) -> str:
    """``assertion`` as source, its operands and message as the script wrote them (``1e-3`` stays ``1e-3``)."""

    written: dict[str, str] = {}

    def placeholder(node: ast.expr | None, *, alone: bool = False) -> ast.expr | None:
        if node is None or not hasattr(node, "lineno"):  # a `None` the spelling added
            return node
        name, text = f"_operand{len(written)}_", ast.get_source_segment(code, node) or ast.unparse(node)
        written[name] = text if alone or isinstance(node, _ATOMS) else f"({text})"
        return ast.Name(name)

    test = assertion.test
    if isinstance(test, ast.Compare):
        test = ast.Compare(left=placeholder(test.left), ops=test.ops, comparators=[placeholder(test.comparators[0])])
    elif isinstance(test, ast.UnaryOp):
        test = ast.UnaryOp(op=test.op, operand=placeholder(test.operand))
    else:
        test = placeholder(test, alone=True)
    text = ast.unparse(ast.Assert(test=test, msg=placeholder(assertion.msg, alone=True)))
    for name, operand in written.items():
        text = text.replace(name, operand)
    return text


def _bound_at_top(statement: cst.CSTNode) -> set[str]:
    """Names a module-level statement binds (assignments, definitions, imports, loop targets)."""

    if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
        return {statement.name.value}
    bound: set[str] = set()
    for target in find_all(statement, m.AssignTarget() | m.AnnAssign() | m.AugAssign() | m.For() | m.WithItem()):
        node = getattr(target, "target", None) or getattr(getattr(target, "asname", None), "name", None)
        bound |= target_names(node) if node is not None else set()
    for alias in find_all(statement, m.ImportAlias()):
        name = alias.asname.name if alias.asname else alias.name  # type: ignore[attr-defined]
        bound.add(cst.Module([]).code_for_node(name).split(".")[0])
    return bound
