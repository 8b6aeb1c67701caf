"""Stating the bug as plain code, so that ``python repro.py`` fails on its own, without minimizer.

Differential oracles (numerical, requires-grad, gradient) compare eager and compiled inside our harness; the
reduced script need not contain any comparison. This module rewrites the script so its last lines do the
comparison (``torch.testing.assert_close`` for numbers, an ``assert`` with a message otherwise), in as few
tokens as read naturally; the in-place oracle gets a saved-tensor check installed after the imports instead.
The session verifies the stated script before using it.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.patterns import TORCH_COMPILE_CALL, assigned_name
from minimizer.source.substitution import BINDS_NAMES, bind_names
from oracles.bug import Bug
from oracles.dynamo_optimize import AS_COMPILE_KEYWORDS

_MESSAGES = {
    "numerical": "compiled output differs from eager",
    "requires-grad": "compiled output's requires_grad differs from eager",
    "gradient": "compiled gradients differ from eager",
    "inplace": "a tensor saved for backward was modified in place",
}


# Every tensor autograd saves is kept with a copy (pack hooks run without grad mode: the clone records nothing);
# when backward unpacks it, a tensor that changed fails the assert. No version check: a change that bumped the
# version makes autograd raise without the hooks, which the in-place oracle does not pin, so a repro it pinned
# changes a saved tensor behind autograd's back.
_INPLACE_CHECK = '''
def _unpack_saved(saved):
    assert torch.equal(*saved), "{message}"
    return saved[0]


torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t.clone()), _unpack_saved).__enter__()
'''


# Oracles whose statement is an assert (comparing the compiled call with eager, gradients before and after an
# in-place write, or saved tensors): a repro stated so shows the bug only where it fails by that assert, not where
# the statement raises on its own (`autograd.grad` of a tensor the loss does not use).
COMPARED_BY_AN_ASSERT = frozenset({"numerical", "requires-grad", "gradient", "inplace"})
# Of those, the ones that compare the compiled call with eager: with torch.compile as the identity, they pass.
COMPARED_WITH_EAGER = COMPARED_BY_AN_ASSERT - {"inplace"}


def stated_message(oracle: str) -> str:
    """The message of the ``assert`` that states ``oracle``'s bug ("" for oracles we do not state)."""

    return _MESSAGES.get(oracle, "")


def _reverse_crash(oracle: str, bug: Bug | None) -> bool:
    """The compiled call runs where eager raises. Plain python shows it by calling eager after."""

    return oracle == "crash" and bug is not None and bug.raised_by == "eager"


def can_be_stated(oracle: str, bug: Bug | None = None) -> bool:
    """Whether ``state_bug`` writes statements for this oracle at all (its failure is not already code)."""

    return oracle in _MESSAGES or _reverse_crash(oracle, bug)


def stated_at_the_compiled_call(oracle: str, bug: Bug | None = None) -> bool:
    """Whether ``state_bug`` states this bug after a compiled call (which must then be where a statement can reach
    it, see ``has_place``); the in-place check is installed after the imports, where every script has room."""

    return can_be_stated(oracle, bug) and oracle != "inplace"


class StatementPlace:
    """Keeps a reduction where the bug can be stated: once the best script has a compiled call that a statement
    can reach, a candidate that has none is turned down (its repro could only show the bug under minimizer).

    Passes move code around freely (a call into a helper, a loop, an attribute); without this, the reduction
    ends wherever the oracle is still happy, and plain python may then see nothing.
    """

    def __init__(self, oracle: str, bug: Bug | None = None) -> None:
        self.applies = stated_at_the_compiled_call(oracle, bug)
        self._best: tuple[str, bool] = ("", False)

    def lost(self, best: str, candidate: str) -> str | None:
        """Why ``candidate`` is turned down, or ``None``."""

        if not self.applies:
            return None
        if self._best[0] != best:
            self._best = (best, has_place(best))
        if self._best[1] and not has_place(candidate):
            return "no compiled call a statement of the bug can reach"
        return None


def has_place(source: str) -> bool:
    """Whether ``state_bug`` finds a compiled call to state the bug at."""

    try:
        return _locate_compiled_call(cst.parse_module(source)) is not None
    except cst.ParserSyntaxError:
        return False


def compiled_function_call(source: str) -> tuple[str, int] | None:
    """The name of what the call ``state_bug`` would state at compiles, and how many arguments the call gives it
    (``("score", 2)`` for ``torch.compile(score)(q, k)``), where that is a plain name; else ``None``."""

    try:
        located = _locate_compiled_call(cst.parse_module(source))
    except cst.ParserSyntaxError:
        return None
    if located is None or not isinstance(located.model, cst.Name):
        return None
    return located.model.value, len(located.args)


def state_bug(source: str, oracle: str, bug: Bug | None = None) -> list[str]:
    """Versions of ``source`` with the bug of ``oracle`` stated as plain code; ``[]`` if we cannot. The caller
    keeps the first that still shows the bug.

    A reverse crash (``crash`` whose bug was raised by eager) is stated by calling eager after the compiled
    call, which then raises under plain python. For the compiler oracles the script must contain one call of a
    compiled callable, written
    ``torch.compile(F, ...)(ARGS)`` (alone or assigned) or ``C = torch.compile(F, ...)`` then ``C(ARGS)``.
    Numbers are compared by ``torch.testing.assert_close`` with its default, dtype-aware tolerances (stricter
    than the numerical oracle's, so it fails wherever the oracle fires); it takes tuples and its message says
    how far apart the outputs are.
    """

    reverse_crash = _reverse_crash(oracle, bug)
    if not can_be_stated(oracle, bug):
        return []
    module = cst.parse_module(source)
    if oracle == "inplace":
        return [*_state_inplace_by_gradients(module), _state_inplace(module)]
    located = _locate_compiled_call(module)
    if located is None:
        return []
    return _state_compiled_call(module, located, "eager-raised" if reverse_crash else oracle, bug)


def _state_compiled_call(module: cst.Module, located: _Located, oracle: str, bug: Bug | None = None) -> list[str]:
    index, model, args, kwargs, eager_edits = located.index, located.model, located.args, located.kwargs, located.eager_edits
    # The compiled callable made eager where the script compiled it in place (a decorator, `model.compile()`):
    # the statement compiles it itself and compares with it as it is.
    body = [eager_edits.get(i, statement) for i, statement in enumerate(module.body)]
    body = [statement for statement in body if not isinstance(statement, cst.RemovalSentinel)]
    index -= sum(1 for i in eager_edits if i < index and isinstance(eager_edits[i], cst.RemovalSentinel))
    hoisted: dict[str, cst.BaseExpression] = {}
    code = module.code_for_node

    def name_for(expr: cst.BaseExpression, wanted: str) -> str:
        if m.matches(expr, m.Name()):
            return expr.value  # type: ignore[attr-defined]
        hoisted[wanted] = expr
        return wanted

    model_name = name_for(model, "model")
    arg_names = [arg.star + name_for(arg.value, f"arg{i}") for i, arg in enumerate(args)]
    kwarg_text = "".join(f", {code(k.with_changes(comma=cst.MaybeSentinel.DEFAULT))}" for k in kwargs)
    call_args = ", ".join(arg_names)
    compiled = f"torch.compile({model_name}{kwarg_text})({call_args})"
    comparisons = []
    # NaN where eager has NaN too is no difference (the oracles compare where NaNs are): a comparison that fails on
    # it fails with the identity as well, which the stated repro's check refuses; the NaN-equal spelling comes next.
    single_leaves = _single_leaves(arg_names, model_name) if oracle == "gradient" else []
    for nan in ("", ", equal_nan=True") if oracle in ("numerical", "gradient") else ("",):
        comparisons += [_gradient_of(leaves, compiled, model_name, call_args, nan) for leaves in single_leaves]
        comparisons.append(_comparison(oracle, compiled, model_name, call_args, arg_names, nan))
    eager_requires_grad = bug.eager_requires_grad if oracle == "requires-grad" and bug is not None else None
    if eager_requires_grad is not None:
        # What eager gives is in the bug, and the harness sees eager give it: the compiled call alone says it.
        # The line says what it claims, as a person writes it: no message.
        negation = "" if eager_requires_grad else "not "
        comparisons[:0] = [[f"assert {negation}{compiled}.requires_grad"]]
    versions = []
    for comparison in comparisons:
        statements = _with_hoisted([cst.parse_statement(line + "\n") for line in comparison], hoisted)
        # What came after the compiled call is left out: the stated comparison is the end of the repro.
        stated = [*body[:index], *statements]
        versions.append(module.with_changes(body=_without_unread_bindings(stated, located.bindings)).code)
    return versions


def _with_hoisted(statements: list[cst.CSTNode], hoisted: dict[str, cst.BaseExpression]) -> list[cst.CSTNode]:
    """``statements`` after the lines binding what they read of ``hoisted`` (``arg0 = x * 2``): a value read by
    both sides is evaluated once, so both see the same input; one passed once as an argument or element, and read
    nowhere else, is written in place (where no name a statement binds could capture it: ``bind_names``)."""

    def count(pattern: m.BaseMatcherNode) -> int:
        return sum(len(m.findall(statement, pattern)) for statement in statements)

    once = {
        name: expr for name, expr in hoisted.items()
        if count(m.Arg(value=m.Name(name)) | m.Element(value=m.Name(name))) == 1 == count(m.Name(name))
    }
    written = [bind_names(statement, once) for statement in statements]
    if any(statement is None for statement in written):
        once, written = {}, statements
    bindings = [
        cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], expr)])
        for name, expr in hoisted.items() if name not in once
    ]
    return [*bindings, *written]


def _without_unread_bindings(body: list[cst.CSTNode], bindings: frozenset[int]) -> list[cst.CSTNode]:
    """``body`` without the lines that bound the compiled callable (``c = torch.compile(f)``, ``fn = c``; ids of
    the statements in ``bindings``) where nothing reads them any more: the statement spells ``torch.compile``."""

    kept = list(body)
    while True:
        unread = [
            statement for statement in kept
            if id(statement) in bindings
            and not any(other is not statement and m.findall(other, m.Name(assigned_name(statement))) for other in kept)
        ]
        if not unread:
            return kept
        gone = {id(statement) for statement in unread}
        kept = [statement for statement in kept if id(statement) not in gone]




def _comparison(oracle: str, compiled: str, model: str, call_args: str, arg_names: list[str], nan: str = "") -> list[str]:
    """The statements that end the repro (``nan``: the comparison's NaN-equal keyword, or ""). The compiled call
    stays first: a model whose state a call changes (batch norm's running statistics) must see the same order as in
    the script."""

    eager = f"{model}({call_args})"
    if oracle == "eager-raised":
        # The compiled call runs; eager then raises what the compiled one should have.
        return [compiled, eager]
    message = _MESSAGES[oracle]
    if oracle == "numerical":
        return [f"torch.testing.assert_close({compiled}, {eager}{nan})"]
    if oracle == "requires-grad":
        return [f'assert {compiled}.requires_grad == {eager}.requires_grad, "{message}"']
    leaves = ", ".join(arg_names + [f'*getattr({model}, "parameters", list)()'])
    return [  # every leaf, whatever the model is: the compact versions (``_gradient_of``) are tried first
        f"out = {compiled}",
        f"expected = {eager}",
        f"leaves = [t for t in [{leaves}] if isinstance(t, torch.Tensor) and t.requires_grad]",
        "grads = torch.autograd.grad(out.sum(), leaves, allow_unused=True)",
        "expected_grads = torch.autograd.grad(expected.sum(), leaves, allow_unused=True)",
        f"assert all(a is None and b is None or torch.allclose(a, b, rtol=1e-3, atol=1e-3{nan})"
        f' for a, b in zip(grads, expected_grads)), "{message}"',
    ]


def _single_leaves(arg_names: list[str], model: str) -> list[str]:
    """The leaves a compact gradient statement may compare the gradients of: each argument alone, then the
    model's parameters (a function has none: that version fails on its own and is not kept)."""

    return [*(name for name in arg_names if not name.startswith("*")), f"[*{model}.parameters()]"]


def _gradient_of(leaves: str, compiled: str, model: str, call_args: str, nan: str = "") -> list[str]:
    """The compact gradient statement: the gradients of ``leaves`` through the compiled call and through eager,
    compared by ``assert_close``. It holds only where it fails by that assert (``shows_bug``): a leaf that
    needs no gradient makes ``autograd.grad`` raise instead."""

    return [
        f"torch.testing.assert_close(torch.autograd.grad({compiled}.sum(), {leaves}), "
        f"torch.autograd.grad({model}({call_args}).sum(), {leaves}){nan})"
    ]


@dataclass(frozen=True)
class _Located:
    """Where the script calls its compiled callable: the top-level statement ``index`` of the call, the callable
    given to ``torch.compile`` (``model``), the call's ``args`` and the compile ``kwargs``, the ``eager_edits`` (by
    statement index) that make the callable's name eager, and the ids of the lines that bind a compiled callable
    to a name (``bindings``)."""

    index: int
    model: cst.BaseExpression
    args: list[cst.Arg]
    kwargs: list[cst.Arg]
    eager_edits: dict[int, cst.CSTNode]
    bindings: frozenset[int]


def _locate_compiled_call(module: cst.Module) -> _Located | None:
    """Where the script calls its compiled callable (``_Located``).

    The call is the statement's value (``torch.compile(m)(x)``, ``out = c(x)``) or lies inside it (``expected,
    actual = x, torch.compile(m)(x)``, an ``assert``'s test): the stated comparison then takes the whole
    statement's place. The callable is compiled in any of the forms ``_compile_form`` reads.
    """

    compiled_names: dict[str, cst.Call] = {}
    eager_edits: dict[str, tuple[int, cst.CSTNode]] = {}
    bindings: set[int] = set()
    for index, statement in enumerate(module.body):
        in_place = _compiled_in_place(statement)
        if in_place is not None:
            name, compile_call, eager = in_place
            compiled_names[name], eager_edits[name] = compile_call, (index, eager)
            continue
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        value = small.value if isinstance(small, (cst.Assign, cst.Expr)) else getattr(small, "test", None)
        if value is None:
            continue
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            # `c = torch.compile(m)` (or `torch._dynamo.optimize(b)(m)`), or an alias of such a name (`fn = c`).
            compiled = _compile_form(value) or compiled_names.get(getattr(value, "value", None))
            if isinstance(compiled, cst.Call):
                compiled_names[small.targets[0].target.value] = compiled
                bindings.add(id(statement))
                continue
        calls = [value] if isinstance(value, cst.Call) else []
        calls += [c for c in m.findall(value, m.Call()) if c is not value]  # type: ignore[misc]
        for call in _outside_scopes_of_their_own(value, calls):
            located = _compiled_call_parts(call, compiled_names)  # type: ignore[arg-type]
            if located is not None:
                name = getattr(located[0], "value", None)
                edits = dict([eager_edits[name]]) if name in eager_edits else {}
                return _Located(index, *located, edits, frozenset(bindings))
    return None


_OPTIMIZE = m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("_dynamo")), attr=m.Name("optimize"))


def _compile_form(expr: cst.BaseExpression) -> cst.Call | None:
    """``expr`` as the ``torch.compile(f, ...)`` call it spells: itself, or ``torch._dynamo.optimize(b, ...)(f)``
    as ``torch.compile(f, backend=b, ...)``; ``None`` for anything else."""

    if m.matches(expr, TORCH_COMPILE_CALL):
        return expr  # type: ignore[return-value]
    if not m.matches(expr, m.Call(func=m.Call(func=_OPTIMIZE), args=[m.Arg(keyword=None, star="")])):
        return None
    keywords = _compile_keywords(expr.func)  # type: ignore[attr-defined]
    return None if keywords is None else cst.Call(func=_TORCH_COMPILE, args=[expr.args[0], *keywords])  # type: ignore[attr-defined]


_TORCH_COMPILE = cst.Attribute(value=cst.Name("torch"), attr=cst.Name("compile"))


def _compile_keywords(decorator: cst.BaseExpression) -> list[cst.Arg] | None:
    """The keywords of ``torch.compile`` a decorator (``@torch.compile``, ``@torch.compile(...)``,
    ``@torch._dynamo.optimize(...)``) compiles with; ``None`` for another decorator."""

    if m.matches(decorator, m.Attribute(value=m.Name("torch"), attr=m.Name("compile"))):
        return []
    if m.matches(decorator, TORCH_COMPILE_CALL) and all(arg.keyword is not None for arg in decorator.args):  # type: ignore[attr-defined]
        return list(decorator.args)  # type: ignore[attr-defined]
    if not m.matches(decorator, m.Call(func=_OPTIMIZE)):
        return None
    keywords = []
    for position, arg in enumerate(decorator.args):  # type: ignore[attr-defined]
        name = arg.keyword.value if arg.keyword is not None else ("backend" if position == 0 and not arg.star else None)
        if name not in AS_COMPILE_KEYWORDS:
            return None
        keywords.append(cst.Arg(value=arg.value, keyword=cst.Name(AS_COMPILE_KEYWORDS[name]), equal=_EQUAL))
    return keywords


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _compiled_in_place(statement: cst.CSTNode) -> tuple[str, cst.Call, cst.CSTNode] | None:
    """For a function the script compiles where it defines it (a compile decorator) or a module compiled in
    place (``model.compile(...)``, keywords only): its name, the ``torch.compile`` call that compiles it, and
    the statement without the compiling (the ``def`` undecorated; nothing, for ``model.compile()``)."""

    if isinstance(statement, cst.FunctionDef) and len(statement.decorators) == 1:
        keywords = _compile_keywords(statement.decorators[0].decorator)
        if keywords is None:
            return None
        name = statement.name.value
        call = cst.Call(func=_TORCH_COMPILE, args=[cst.Arg(cst.Name(name)), *keywords])
        return name, call, statement.with_changes(decorators=())
    in_place = m.SimpleStatementLine(body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("compile"))))])
    if not m.matches(statement, in_place):
        return None
    call = statement.body[0].value  # type: ignore[attr-defined]
    if any(arg.keyword is None for arg in call.args):
        return None  # `re.compile(pattern)`: not a module compiled in place
    name = call.func.value.value
    return name, cst.Call(func=_TORCH_COMPILE, args=[cst.Arg(cst.Name(name)), *call.args]), cst.RemovalSentinel.REMOVE


def _outside_scopes_of_their_own(value: cst.BaseExpression, calls: list[cst.Call]) -> list[cst.Call]:
    """``calls`` but those inside a comprehension or lambda of ``value``: their arguments may be names bound
    there (``[c(b) for b in batches]``), which a statement after the line cannot read."""

    inside = {id(call) for scope in m.findall(value, BINDS_NAMES) for call in m.findall(scope, m.Call())}
    return [call for call in calls if id(call) not in inside]


def _compiled_call_parts(
    call: cst.Call, compiled_names: dict[str, cst.Call]
) -> tuple[cst.BaseExpression, list[cst.Arg], list[cst.Arg]] | None:
    """For a call of a compiled callable: the callable given to ``torch.compile``, the call's args and the
    compile kwargs; else ``None``."""

    compile_call = _compile_form(call.func)
    if compile_call is None and isinstance(call.func, cst.Name):
        compile_call = compiled_names.get(call.func.value)
    if compile_call is None or not compile_call.args or compile_call.args[0].keyword is not None:  # type: ignore[union-attr]
        return None
    args = _expand_literal_stars(call.args)
    if args is None:
        return None
    return compile_call.args[0].value, args, list(compile_call.args[1:])  # type: ignore[union-attr]


def _expand_literal_stars(args: Sequence[cst.Arg]) -> list[cst.Arg] | None:
    """``f(*[a, b], c)`` -> the args ``a, b, c``; a star over a name stays (``f(*inputs)``: the statement passes
    it on alike); ``None`` for keywords or a star over anything else."""

    expanded: list[cst.Arg] = []
    for arg in args:
        if arg.keyword is not None or arg.star == "**":
            return None
        if arg.star == "*" and isinstance(arg.value, cst.Name):
            expanded.append(arg)
        elif arg.star == "*":
            if not isinstance(arg.value, (cst.List, cst.Tuple)):
                return None
            if any(not isinstance(el, cst.Element) for el in arg.value.elements):
                return None
            expanded += [cst.Arg(value=el.value) for el in arg.value.elements]
        else:
            expanded.append(arg)
    return expanded


def _state_inplace_by_gradients(module: cst.Module) -> list[str]:
    """The in-place bug stated where the script ends in ``loss.backward()`` of one leaf ``x`` made at module
    level: the gradient taken right after ``loss`` is computed (``torch.autograd.grad(loss, x,
    retain_graph=True)``) must equal ``x.grad`` after backward; a saved tensor changed in between makes them
    differ. Shorter than the saved-tensor hooks, and it says what the user loses; ``[]`` where the script has
    no such shape (the hooks then state it)."""

    body = list(module.body)
    backward = next((i for i in reversed(range(len(body))) if _backward_of(body[i]) is not None), None)
    if backward is None:
        return []
    loss = _backward_of(body[backward])
    made = [i for i in range(backward) if assigned_name(body[i]) == loss]
    leaves = {assigned_name(body[i]) for i in range(made[-1] if made else 0) if _makes_a_leaf(body[i])}
    if not made or len(leaves) != 1:
        return []
    leaf = leaves.pop()
    before = "grad_before"
    while before in module.code:
        before += "_"
    taken = cst.parse_statement(f"{before} = torch.autograd.grad({loss}, {leaf}, retain_graph=True)[0]\n")
    check = cst.parse_statement(f'assert torch.equal({leaf}.grad, {before}), "{_MESSAGES["inplace"]}"\n')
    stated = [*body[: made[-1] + 1], taken, *body[made[-1] + 1 : backward + 1], check, *body[backward + 1 :]]
    return [module.with_changes(body=stated).code]


def _backward_of(statement: cst.CSTNode) -> str | None:
    """``loss`` for a statement ``loss.backward()``."""

    call = m.SimpleStatementLine(body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("backward")), args=[]))])
    return statement.body[0].value.func.value.value if m.matches(statement, call) else None  # type: ignore[attr-defined]


def _makes_a_leaf(statement: cst.CSTNode) -> bool:
    """``x = torch.ones(2, requires_grad=True)``: a name bound to a call that asks for a gradient."""

    asks = m.Call(args=[m.ZeroOrMore(), m.Arg(keyword=m.Name("requires_grad"), value=m.Name("True")), m.ZeroOrMore()])
    return assigned_name(statement) is not None and m.matches(statement.body[0].value, asks)  # type: ignore[attr-defined]


def _state_inplace(module: cst.Module) -> str:
    body = list(module.body)
    after_imports = 0
    for index, statement in enumerate(body):
        if m.matches(statement, m.SimpleStatementLine(body=[m.OneOf(m.Import(), m.ImportFrom())])):
            after_imports = index + 1
    check = cst.parse_module(_INPLACE_CHECK.format(message=_MESSAGES["inplace"])).body
    return module.with_changes(body=body[:after_imports] + list(check) + body[after_imports:]).code


_SEEDING = re.compile(r"\b(manual_seed|seed|set_seed|default_rng)\s*\(")


def seeds_random_numbers(source: str) -> bool:
    """Whether the script seeds a random generator itself (``torch.manual_seed``, ``random.seed``, ...)."""

    return bool(_SEEDING.search(source))


# What may draw from torch's generator: random factories and in-place samplers, dropout, weight init (any torch.nn
# layer; not `nn.functional`, whose drawing functions are named here), a generator object. Read as words of the
# source, so it errs on the side of seeding.
_TORCH_DRAWS = re.compile(
    r"\b(\w*rand\w*|normal_?|bernoulli_?|multinomial|poisson|uniform_|exponential_|geometric_|cauchy_|log_normal_"
    r"|\w*[Dd]ropout\w*|\w*[Rr][Rr]e[Ll][Uu]|gumbel\w*|init|nn(?!\.functional\b)|Generator|sample\w*)\b"
)
# What draws from NumPy's global generator.
_NUMPY_DRAWS = re.compile(r"\b(random|default_rng)\b")
# Modules that never draw from torch's or NumPy's generator behind the script's back (a library that builds
# layers may): torch's own, NumPy, and Python's standard library (`unittest`, `logging`, `argparse`, ...; its
# `random` has a generator of its own, seeded apart).
_DRAW_FREE_MODULES = {"torch", "triton", "functorch", "numpy", *sys.stdlib_module_names}


def may_draw_from_torch(source: str, folder: str | None = None) -> bool:
    """Whether running ``source`` may draw a random number from torch's generator (conservatively). A module
    it imports from ``folder`` (the user's backend beside the script) is read the same way."""

    return _may_draw(source, _TORCH_DRAWS, folder, frozenset())


def may_draw_from_numpy(source: str, folder: str | None = None) -> bool:
    """Whether running ``source`` may draw from NumPy's global generator: it names ``random`` (``np.random``,
    ``from numpy import random``) or imports a module that may (a script that imports NumPy for ``np.testing``
    draws nothing from it)."""

    return _may_draw(source, _NUMPY_DRAWS, folder, frozenset())


def _may_draw(source: str, draws: re.Pattern, folder: str | None, seen: frozenset) -> bool:
    if draws.search(source):
        return True
    module = cst.parse_module(source)
    for node in m.findall(module, m.Import() | m.ImportFrom()):
        if isinstance(node, cst.Import):
            names = [module.code_for_node(alias.name) for alias in node.names]
        else:
            names = [module.code_for_node(node.module)] if node.module is not None else ["."]
        if any(not _draw_free(name.split(".")[0], draws, folder, seen) for name in names):
            return True
    return False


def _draw_free(root: str, draws: re.Pattern, folder: str | None, seen: frozenset) -> bool:
    if root in _DRAW_FREE_MODULES or root in seen:
        return True  # a module being read already: whatever it draws, its own reading says
    beside = Path(folder, f"{root}.py") if folder else None
    if beside is None or not beside.is_file():
        return False
    try:
        return not _may_draw(beside.read_text(), draws, folder, seen | {root})
    except (OSError, UnicodeDecodeError, cst.ParserSyntaxError):
        return False


def seed_like_the_harness(source: str, seed: int, folder: str | None = None) -> str:
    """``source`` with the random generators seeded as minimizer's harness seeds them before a run (Python's
    ``random``, NumPy and torch, each only where the script imports it at its top level): each seed call
    follows the block of imports that brings its module in, so nothing draws a number before it and plain
    python draws the numbers the oracles saw; torch only where the script may draw from it
    (`may_draw_from_torch`, reading the modules it imports from ``folder``). ``source`` unchanged if it imports
    none of them."""

    calls = {"random": "{}.seed({})", "numpy": "{}.random.seed({})", "torch": "{}.manual_seed({})"}
    if not may_draw_from_torch(source, folder):
        del calls["torch"]  # `torch.ones(2)` draws nothing: a seed line would only be noise
    if not may_draw_from_numpy(source, folder):
        del calls["numpy"]  # imported for `np.testing`
    module = cst.parse_module(source)
    body: list = []
    pending: list[str] = []
    for statement in module.body:
        is_import = m.matches(statement, m.SimpleStatementLine(body=[m.OneOf(m.Import(), m.ImportFrom())]))
        if pending and not is_import:
            # A script that seeds right after its imports already does what the line would (no second copy).
            here = module.code_for_node(statement).strip()
            body += [cst.parse_statement(line + "\n") for line in pending if line != here]
            pending = []
        body.append(statement)
        if is_import and isinstance(statement.body[0], cst.Import):
            for alias in statement.body[0].names:
                name = module.code_for_node(alias.name)
                if name in calls:
                    bound = alias.asname.name.value if alias.asname else name  # type: ignore[union-attr]
                    pending.append(calls.pop(name).format(bound, seed))
    body += [cst.parse_statement(line + "\n") for line in pending]
    if len(body) == len(module.body):
        return source
    return module.with_changes(body=body).code
