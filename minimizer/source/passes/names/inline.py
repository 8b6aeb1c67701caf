"""A pass that inlines variables read exactly once: `y = f(x)` then `g(y)` becomes `g(f(x))`.

Fewer names means fewer statements for the other passes to try deleting one by one, and it puts the operations of a
repro next to each other. The pass only inlines where the evaluation count cannot change (no loops, lambdas,
comprehensions or closures between the assignment and the read) and the read sees no other binding. It does
move the evaluation later, past the statements in between: if those mutate what the expression reads, or draw
random numbers, the candidate behaves differently, and the oracle decides whether the bug survives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Mapping

import libcst as cst
import libcst.matchers as m
from libcst.metadata import Assignment, FunctionScope, GlobalScope, Scope, ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.kernels.memory import KERNEL
from minimizer.source.passes.scopes import metadata
from minimizer.source.traversal import find_all, parent_map

__all__ = ["inline_kernel_temporaries", "inline_literal_names", "inline_single_use_variables"]

# Slots that hold a whole expression, where even `a + b` or `x if c else y` needs no parentheses.
_WHOLE_EXPRESSION_SLOT = (
    m.Arg(star="") | m.Assign() | m.AnnAssign() | m.AugAssign() | m.Return() | m.Expr() | m.Element()
    | m.DictElement() | m.Index()
)
# Expressions that need parentheses even in a whole-expression slot (`f(a, b)` is not `f((a, b))`).
_NEEDS_PARENS_EVERYWHERE = m.Tuple() | m.Yield() | m.NamedExpr() | m.GeneratorExp() | m.Await()


# A value that reads the same wherever it is written: a name bound to one can be replaced at every read.
_LITERAL = (
    m.Integer() | m.Float() | m.SimpleString() | m.Name("True") | m.Name("False") | m.Name("None")
    | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())
)


@dataclass(frozen=True)
class _Inlining:
    statement: cst.SimpleStatementLine  # `name = value`, to delete
    reads: tuple[tuple[cst.Name, cst.CSTNode], ...]  # the reads of `name` (one, or all of a literal's), with parents
    value: cst.BaseExpression
    kernel_temporary: bool = False  # bound once, in a Triton kernel


def inline_single_use_variables(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one single-use variable inlined per candidate, in source order of the assignments.

    An assignment `v = expr` (one plain name target, alone on its line, at module or function level) qualifies
    when, before `v` is bound again in the same block, `v` is read exactly once, later in that block, outside any
    loop, lambda, comprehension or nested function, and no other read can see this binding. The assignment goes
    away and the read becomes `expr`, parenthesized where the read's position needs it. A name bound to a
    literal (`eps = 0.0`) is replaced at every read that sees the binding, loops included: it reads the same.
    """
    return distinct_candidates(module, _inline_candidates(module))


def inline_literal_names(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one name bound to a literal (`row = 0`, `eps = 0.0`) replaced at every read that sees
    the binding, as ``inline_single_use_variables`` does; nothing else is inlined (a line that computes stays a
    line: a fix may mend it)."""

    return distinct_candidates(module, _inline_candidates(module, literals_only=True))


def inline_kernel_temporaries(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one temporary of a Triton kernel inlined: a name the kernel binds once and reads once
    (`weight = tl.load(...)` read by the store). A name the kernel binds again (`out = out + res`) is a sequence of
    steps, each a line a fix may mend: it stays, and nothing is inlined into one of its steps."""

    return distinct_candidates(module, _inline_candidates(module, temporaries_only=True))


def _inline_candidates(module: cst.Module, literals_only: bool = False, temporaries_only: bool = False) -> Iterator[cst.Module]:
    for inlining in _find_inlinings(module):
        if literals_only and not m.matches(inlining.value, _LITERAL):
            continue
        if temporaries_only and not inlining.kernel_temporary:
            continue
        replacements: dict[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel] = {inlining.statement: cst.RemovalSentinel.REMOVE}
        replacements.update({read: _fitted(inlining.value, parent, read) for read, parent in inlining.reads})
        yield replace_nodes(module, replacements)


def _find_inlinings(module: cst.Module) -> list[_Inlining]:
    # unsafe_skip_copy keeps node identity, so the nodes found here can be replaced in `module` itself.
    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    parents = parent_map(wrapper.module)
    declared_global = {item.name.value for node in find_all(module, m.Global()) for item in node.names}  # type: ignore[union-attr]
    analysis = _Analysis(scopes, parents, declared_global)
    found = []
    for statement in find_all(module, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(m.Name())])])):
        inlining = analysis.inlining_for(statement)
        if inlining is not None:
            found.append(inlining)
    return found


class _Analysis:
    """Def-use questions about one module, answered from libcst scope and parent metadata."""

    def __init__(
        self,
        scopes: Mapping[cst.CSTNode, Scope | None],
        parents: Mapping[cst.CSTNode, cst.CSTNode],
        declared_global: set[str],
    ):
        self._scopes = scopes
        self._parents = parents
        self._declared_global = declared_global  # names some function declares `global`

    def inlining_for(self, statement: cst.SimpleStatementLine) -> _Inlining | None:
        """The inlining of the assignment `statement` (`name = value`), or None when it is not safe."""
        assign = statement.body[0]
        name = assign.targets[0].target.value
        scope = self._scopes.get(assign)
        block = self._parents.get(statement)
        if not isinstance(scope, (GlobalScope, FunctionScope)) or not m.matches(block, m.Module() | m.IndentedBlock()):
            return None
        body = list(block.body)
        here = body.index(statement)
        reads = self._reads(scope, name)
        if reads and m.matches(assign.value, _LITERAL) and self._only_binding(scope, name, assign):
            if not any(self._scopes.get(read) is scope and (self._index_in_block(read, body) or 0) <= here for read in reads):
                # A module constant (`WIDTH = 0`) reads the same everywhere, functions and loops included.
                return _Inlining(statement, tuple((read, self._parents[read]) for read in reads), assign.value)
        # A read from a nested scope (closure, lambda, comprehension) can run any number of times, at any moment; a
        # binding from one (`global name`) can happen at any moment too.
        if reads is None or any(self._scopes.get(node) is not scope for node in reads + self._bindings(scope, name)):
            return None
        window = self._reads_seeing(assign, reads, scope, block, here)
        if window and m.matches(assign.value, _LITERAL):
            return _Inlining(statement, tuple((read, self._parents[read]) for read in window), assign.value)
        if window is None or len(window) != 1 or self._repeated_in(window[0], block):
            return None
        read = window[0]
        use_at = self._index_in_block(read, body)
        if self._operands_rebound(assign.value, scope, body, here, use_at):
            return None
        temporary = (
            len(scope.assignments[name]) == 1 and m.matches(getattr(scope, "node", None), KERNEL)
            and not self._steps_a_name(body[use_at], scope)
        )
        return _Inlining(statement, ((read, self._parents[read]),), assign.value, temporary)

    def _steps_a_name(self, statement: cst.BaseStatement, scope: Scope) -> bool:
        """Whether `statement` binds a name that `scope` binds more than once (`out = out + res`): a step."""

        targets = find_all(statement, m.AssignTarget(target=m.Name())) if m.matches(statement, m.SimpleStatementLine(body=[m.Assign()])) else []
        return any(len(scope.assignments[target.target.value]) > 1 for target in targets)

    def _reads_seeing(self, assign: cst.Assign, reads: list[cst.Name], scope: Scope, block, here: int) -> list[cst.Name] | None:
        """The reads among `reads` that see the binding made by `assign` (statement `here` of `block`); None when
        some read might or might not see it."""
        name = assign.targets[0].target.value
        body = list(block.body)
        rebind_at = self._next_rebinding(scope, name, assign, body, here)
        if rebind_at is not None and not _rebinds_unconditionally(body[rebind_at], name):
            return None
        in_loop = self._inside_loop(block, scope)
        seeing = []
        for read in reads:
            index = self._index_in_block(read, body)
            if index is None:
                return None  # read after the enclosing if/with/try: it may or may not see this binding
            if index <= here:
                if in_loop:
                    return None  # it may see this binding from the previous iteration
                continue
            if rebind_at is not None and (index > rebind_at or (index == rebind_at and not _in_assigned_value(read, body[rebind_at], self._parents))):
                continue
            seeing.append(read)
        # Without its only binding a function-local name turns global, and an earlier read (an error until now)
        # would start reading the global.
        if isinstance(scope, FunctionScope) and len(scope.assignments[name]) == 1 and len(reads) != len(seeing):
            return None
        return seeing

    def _reads(self, scope: Scope, name: str) -> list[cst.Name] | None:
        """Every read of `name` that may see a binding in `scope`, from `scope` itself or a nested one; None when
        one is not a plain name (a string annotation, a dotted import), which this pass does not follow."""
        accesses = set(scope.accesses[name])
        for assignment in scope.assignments[name]:
            accesses.update(assignment.references)
        nodes = [access.node for access in accesses]
        return nodes if all(m.matches(node, m.Name(name)) for node in nodes) else None

    def _only_binding(self, scope: Scope, name: str, assign: cst.Assign) -> bool:
        """Whether `assign` is the one binding of `name` that any read of it may see: the only one in `scope`, at
        module level, and no function declares the name `global` (which could bind it again)."""

        if not isinstance(scope, GlobalScope) or len(scope.assignments[name]) != 1:
            return False
        only = next(iter(scope.assignments[name]))
        if not isinstance(only, Assignment) or only.node is not assign.targets[0].target:
            return False
        return name not in self._declared_global

    def _bindings(self, scope: Scope, name: str) -> list[cst.CSTNode]:
        return [assignment.node for assignment in scope.assignments[name] if isinstance(assignment, Assignment)]

    def _next_rebinding(self, scope: Scope, name: str, assign: cst.Assign, body: list, here: int) -> int | None:
        later = []
        for assignment in scope.assignments[name]:
            if assignment.node is assign.targets[0].target:
                continue
            index = self._index_in_block(assignment.node, body)
            if index is not None and index > here:
                later.append(index)
        return min(later, default=None)

    def _index_in_block(self, node: cst.CSTNode, body: list[cst.BaseStatement]) -> int | None:
        """Index of the statement of `body` that contains `node`; None when none does."""
        child = node
        while child is not None:
            for index, statement in enumerate(body):
                if statement is child:
                    return index
            child = self._parents.get(child)
        return None

    def _inside_loop(self, block: cst.CSTNode, scope: Scope) -> bool:
        node = block
        while node is not None and self._scopes.get(node) is scope:
            if m.matches(node, m.For() | m.While()):
                return True
            node = self._parents.get(node)
        return False

    def _repeated_in(self, read: cst.Name, block: cst.CSTNode) -> bool:
        """Whether `read` sits in a loop body or condition inside `block`, so it is evaluated more than once."""
        child = read
        while child is not block:
            parent = self._parents[child]
            if m.matches(parent, m.While()) or (m.matches(parent, m.For()) and child is not parent.iter):
                return True
            child = parent
        return False

    def _operands_rebound(self, value: cst.BaseExpression, scope: Scope, body: list, here: int, use_at: int) -> bool:
        """Whether a name that `value` reads is bound again before the read, which would change what it means.

        The assignment that holds the read may rebind such a name (`x = x + y`): its targets are bound after the
        value is computed.
        """
        use_statement = body[use_at]
        for operand in {n.value for n in m.findall(value, m.Name())}:
            for assignment in scope.assignments[operand]:
                index = self._index_in_block(assignment.node, body)
                if index is None or not here < index <= use_at:
                    continue
                if index < use_at or not _is_plain_target_of(assignment.node, use_statement):
                    return True
        return False


def _rebinds_unconditionally(statement: cst.BaseStatement, name: str) -> bool:
    """`name = ...` alone on its line: after it, every read sees the new binding."""
    return m.matches(statement, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(m.Name(name))])]))


def _is_plain_target_of(node: cst.CSTNode, statement: cst.BaseStatement) -> bool:
    """Whether `node` is a whole target of the assignment `statement` (`node = ...`)."""
    targets = m.findall(statement, m.AssignTarget()) if m.matches(statement, m.SimpleStatementLine(body=[m.Assign()])) else []
    return any(target.target is node for target in targets)


def _in_assigned_value(read: cst.Name, statement: cst.SimpleStatementLine, parents) -> bool:
    """Whether `read` is in the right-hand side of the assignment `statement` (read before the rebinding)."""
    value = statement.body[0].value
    node = read
    while node is not statement:
        if node is value:
            return True
        node = parents[node]
    return False


def _fitted(value: cst.BaseExpression, parent: cst.CSTNode, read: cst.Name) -> cst.BaseExpression:
    """`value`, parenthesized if it would bind differently as a child of `parent`, in the place of `read`."""
    return _parenthesized(value) if _needs_parentheses(value, parent, read) else value


def _needs_parentheses(value: cst.BaseExpression, parent: cst.CSTNode, read: cst.Name) -> bool:
    if value.lpar:
        return False
    if m.matches(value, _NEEDS_PARENS_EVERYWHERE):
        return True
    if m.matches(parent, _WHOLE_EXPRESSION_SLOT):
        return False
    # `1.real` lexes as the float `1.` followed by a name.
    if m.matches(value, m.Integer()) and m.matches(parent, m.Attribute()):
        return True
    inner, outer = _precedence(value), _precedence(parent)
    if m.matches(parent, m.BinaryOperation() | m.BooleanOperation()):
        if inner != outer:
            return inner < outer
        # Equal precedence: fine on the side the operator associates to (the right for `**`, the left otherwise).
        right_associative = m.matches(parent, m.BinaryOperation(operator=m.Power()))
        return (parent.right is read) != right_associative
    if m.matches(parent, m.UnaryOperation()):
        return inner < outer  # `- -x` and `not not x` are fine
    if m.matches(parent, m.Comparison() | m.ComparisonTarget()):
        return inner <= _COMPARISON  # `(a < b) < c` is no chain
    return inner < _ATOM  # attribute access, subscript, call, f-string, ...: anything but an atom needs them


_ATOM = 100
_COMPARISON = 5
# Python's operator precedence, loosest first; see "Operator precedence" in the language reference.
_OPERATOR_PRECEDENCE = {
    "Or": 2, "And": 3, "Not": 4,
    "BitOr": 6, "BitXor": 7, "BitAnd": 8, "LeftShift": 9, "RightShift": 9,
    "Add": 10, "Subtract": 10, "Multiply": 11, "Divide": 11, "FloorDivide": 11, "Modulo": 11, "MatrixMultiply": 11,
    "Minus": 12, "Plus": 12, "BitInvert": 12, "Power": 13,
}


def _precedence(node: cst.CSTNode) -> int:
    if m.matches(node, m.Lambda()):
        return 0
    if m.matches(node, m.IfExp()):
        return 1
    if m.matches(node, m.Comparison() | m.ComparisonTarget()):
        return _COMPARISON
    if m.matches(node, m.BinaryOperation() | m.BooleanOperation() | m.UnaryOperation()):
        return _OPERATOR_PRECEDENCE[type(node.operator).__name__]
    if m.matches(node, m.Await()):
        return 14
    return _ATOM


def _parenthesized(value: cst.BaseExpression) -> cst.BaseExpression:
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
