"""What the evidence recorder makes of a torch operation's name: a comparison, a check that returns a bool, a
factory, a number read, a move that computes nothing, or the operation a reference went through (``mul`` for
``__rmul__``).
"""

from __future__ import annotations

# Tensor operations whose result compares its operands element by element, by the symbol a check reads.
COMPARISONS = {
    "eq": "==", "__eq__": "==", "ne": "!=", "__ne__": "!=", "not_equal": "!=", "lt": "<", "__lt__": "<", "less": "<",
    "le": "<=", "__le__": "<=", "less_equal": "<=", "gt": ">", "__gt__": ">", "greater": ">", "ge": ">=",
    "__ge__": ">=", "greater_equal": ">=", "isclose": "isclose",
}
# Operations that return whether two tensors agree, as a bool.
WHOLE = {"allclose": "allclose", "equal": "equal"}
# Autograd's entry points: the gradients they compute go through whatever ran in the backward.
AUTOGRAD = frozenset({"backward", "grad"})
# Reading a tensor's truth or value: where an element-wise comparison of the suspect becomes the script's bool.
TRUTH = frozenset({"__bool__", "item"})  # a bool, not a number: `(a == b).float().mean().item()` is a rate
# `.item()` comes back traced (a number computed from tensors is not one the script wrote); `float(t)` cannot
# (Python turns a subclass back into a float), so its values are kept to be matched.
NUMBERS = frozenset({"item"})
# Factories, and initializers that fill a tensor in place (nn.Linear's weights): their result comes from no
# operand, whatever the arguments.
FACTORIES = frozenset({
    "uniform_", "normal_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_", "xavier_normal_", "trunc_normal_",
    "orthogonal_", "zero_", "fill_", "random_", "bernoulli_", "exponential_", "manual_seed", "zeros", "ones", "empty",
    "full", "arange", "linspace", "eye", "randn", "rand", "randint", "zeros_like", "ones_like", "empty_like",
    "full_like", "randn_like", "rand_like", "randint_like", "randperm",
})
# Operations that move, convert or reshape a tensor: they compute nothing of a reference.
LOOKED_THROUGH = frozenset({
    "cpu", "cuda", "to", "float", "double", "half", "bfloat16", "detach", "clone", "contiguous", "view", "reshape",
    "flatten", "squeeze", "unsqueeze", "expand", "expand_as", "__getitem__", "numpy", "requires_grad_",
})
# Element-wise operations: one operand broadcast over more elements than it has computes another value.
ELEMENT_WISE = frozenset({"add", "sub", "mul", "div", "pow", "remainder", "maximum", "minimum", "where"})

# Python's operators as the torch operation they run (`__rmul__`: `mul`).
_DUNDER_OPERATIONS = {
    "add": "add", "radd": "add", "iadd": "add", "sub": "sub", "rsub": "sub", "isub": "sub", "mul": "mul",
    "rmul": "mul", "imul": "mul", "truediv": "div", "rtruediv": "div", "itruediv": "div", "neg": "neg",
    "pow": "pow", "rpow": "pow", "matmul": "matmul", "rmatmul": "matmul", "abs": "abs", "mod": "remainder",
    "floordiv": "floor_divide", "and": "logical_and", "or": "logical_or", "invert": "logical_not",
}


# Python's operators as their AST spells them, by the dunder method they call (``a * b``: ``__mul__``).
_AST_DUNDERS = {
    "Add": "add", "Sub": "sub", "Mult": "mul", "Div": "truediv", "Pow": "pow", "MatMult": "matmul", "Mod": "mod",
    "FloorDiv": "floordiv", "USub": "neg", "Invert": "invert", "BitAnd": "and", "BitOr": "or",
}


def operator_name(operator: object) -> str | None:
    """The torch operation an operator of Python's AST runs, named as a run names it (``ast.Mult()``: ``mul``,
    ``ast.Div()``: ``div``): the static reading of a check and the run's must agree on names."""

    dunder = _AST_DUNDERS.get(type(operator).__name__)
    return operation_name(f"__{dunder}__") if dunder is not None else None


def operation_name(name: str) -> str | None:
    """``mul`` for ``__rmul__``, ``softmax`` for itself; ``None`` for what computes nothing (``cpu``,
    ``__getitem__``, an attribute read)."""

    if name in LOOKED_THROUGH:
        return None
    if name.startswith("__") and name.endswith("__"):
        return _DUNDER_OPERATIONS.get(name.strip("_"))
    return name


def in_place(name: str) -> bool:
    """``add_``, ``copy_``: an operation that writes into its first argument."""

    return name.endswith("_") and not name.startswith("_") and name not in ("requires_grad_",)
