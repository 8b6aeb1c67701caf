"""Tests for `simplify_float_constants`, `fold_integer_arithmetic` and `remove_prints_and_logging`."""

from __future__ import annotations

import contextlib
import io
import itertools

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.metrics import count_tokens
from minimizer.source.passes.statements.output import remove_prints_and_logging
from minimizer.source.passes.values.constants import simplify_float_constants
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce

def candidate_codes(reduction_pass, code: str) -> list[str]:
    return [candidate.code for candidate in reduction_pass(cst.parse_module(code))]


# --- simplify_float_constants --------------------------------------------------------------------------------------


def test_each_value_goes_to_zero_one_half_jointly_then_alone():
    codes = candidate_codes(simplify_float_constants, "y = x * 0.7 + 0.7\n")
    assert codes == [
        "y = x * 0.0 + 0.0\n", "y = x * 1.0 + 1.0\n", "y = x * 0.5 + 0.5\n",
        "y = x * 0.0 + 0.7\n", "y = x * 1.0 + 0.7\n", "y = x * 0.5 + 0.7\n",
        "y = x * 0.7 + 0.0\n", "y = x * 0.7 + 1.0\n", "y = x * 0.7 + 0.5\n",
    ]


def test_simple_floats_and_ints_are_left_alone():
    assert candidate_codes(simplify_float_constants, "y = f(0.0, 1.0, .5, 1., 3)\n") == []


def test_scientific_notation_is_simplified():
    assert candidate_codes(simplify_float_constants, "eps = 1e-5\n")[0] == "eps = 0.0\n"


def test_greedy_float_simplification():
    snippet = "eps = 1e-5\nscale = 0.7071\ny = 3.3 * scale + eps\n"

    def interesting(code: str) -> bool:
        namespace: dict = {}
        exec(code, namespace)
        return namespace["y"] > 1

    assert greedy_reduce(snippet, simplify_float_constants, interesting) == "eps = 0.0\nscale = 1.0\ny = 3.3 * scale + eps\n"


# --- remove_prints_and_logging -------------------------------------------------------------------------------------

_NOISY = (
    "import logging\n"
    "def f(x):\n"
    "    print(x)\n"
    "    logger.info('x=%s', x)\n"
    "    return x\n"
    "logging.getLogger(__name__).debug('start')\n"
    "warnings.warn('careful')\n"
    "f'{f(1)}'\n"
    "if f(2): print('two')\n"
)


def test_all_output_statements_go_at_once_first():
    codes = candidate_codes(remove_prints_and_logging, _NOISY)
    assert codes[0] == "import logging\ndef f(x):\n    return x\nif f(2): pass\n"


def test_then_each_output_statement_goes_alone():
    codes = candidate_codes(remove_prints_and_logging, _NOISY)
    assert len(codes) == 1 + 6
    assert codes[1] == _NOISY.replace("    print(x)\n", "")
    assert codes[-1] == _NOISY.replace("print('two')", "pass")


def test_other_calls_and_log_functions_stay():
    assert candidate_codes(remove_prints_and_logging, "torch.log(x)\nlog(x)\ny = print\nmodel(x)\n") == []


def test_emptied_function_keeps_a_body():
    assert candidate_codes(remove_prints_and_logging, "def f():\n    print(1)\n") == ["def f():\n    pass\n"]


def test_greedy_keeps_the_print_the_bug_needs():
    snippet = "print('hello')\nprint('boom')\nlogger.info('x')\nprint('bye')\n"

    def interesting(code: str) -> bool:
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            exec(code, {"logger": _Silent()})
        return "boom" in out.getvalue()

    assert greedy_reduce(snippet, remove_prints_and_logging, interesting) == "print('boom')\n"


class _Silent:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


# --- properties ----------------------------------------------------------------------------------------------------

_names = st.sampled_from(["x", "y", "a"])
_floats = st.sampled_from(["0.7", "1e-5", "3.25", ".5", "0.0", "2.", "1_0.5", "-0.7"])
_statements = st.one_of(
    st.builds("{} = {} * {} + {}".format, _names, _names, _floats, _floats),
    st.builds("print({}, {})".format, _names, _floats),
    st.builds("logger.info({})".format, _names),
    st.builds("if {}:\n    print({})".format, _names, _names),
    st.builds("def f({}):\n    logging.debug({})".format, _names, _floats),
    st.builds("f'{{{}}}'".format, _names),
    st.builds("warnings.warn(str({})); {} = {}".format, _floats, _names, _floats),
)
_programs = st.lists(_statements, min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=30, deadline=None)
@given(_programs)
def test_float_candidates_parse_differ_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, simplify_float_constants, limit=20)


@settings(max_examples=30, deadline=None)
@given(_programs)
def test_output_candidates_parse_differ_and_shrink(code):
    check_candidates_are_valid_and_not_larger(code, remove_prints_and_logging, limit=20)
    for candidate in itertools.islice(remove_prints_and_logging(cst.parse_module(code)), 10):
        assert count_tokens(candidate.code) < count_tokens(code)


def test_integer_arithmetic_on_literals_is_computed_in_one_candidate():
    from minimizer.source.passes.values.constants import fold_integer_arithmetic

    source = "r = torch.randint(-10, -10 + 1, (2,)) + 10\nx = (1 + 2) * 3 - -4\ny = a + 1\nq = (1 + 2).bit_length()\n"
    (code,) = [c.code for c in fold_integer_arithmetic(cst.parse_module(source))]
    assert code == "r = torch.randint(-10, -9, (2,)) + 10\nx = 13\ny = a + 1\nq = (3).bit_length()\n"
    assert eval("(1 + 2) * 3 - -4") == 13 and (3).bit_length() == (1 + 2).bit_length()
    assert list(fold_integer_arithmetic(cst.parse_module("y = a + 1\nz = 2 ** b\n"))) == []


def test_integer_functions_of_literals_fold_unless_the_script_binds_their_name():
    from minimizer.source.passes.values.constants import fold_integer_arithmetic

    source = (
        "k[triton.cdiv(7, 2),](x, BLOCK=triton.next_power_of_2(3))\nn = max(1, 5 // 2) + min(4, 2 ** 3) % 3\n"
        "m = abs(-3) + max(4) + triton.next_power_of_2(n) + 1 // 0\n"
    )
    (code,) = [c.code for c in fold_integer_arithmetic(cst.parse_module(source))]
    assert code == "k[4,](x, BLOCK=4)\nn = 3\nm = 3 + max(4) + triton.next_power_of_2(n) + 1 // 0\n"
    import triton

    assert triton.cdiv(7, 2) == 4 and [triton.next_power_of_2(v) for v in (1, 2, 3, 4, 5)] == [1, 2, 4, 4, 8]
    assert max(1, 5 // 2) + min(4, 2**3) % 3 == 3
    shadowed = "def max(*a):\n    return 0\n\n\nn = max(1, 2)\n"
    assert list(fold_integer_arithmetic(cst.parse_module(shadowed))) == []
    imported = "from numpy import max\nimport triton\nn = max(1, 2)\nb = triton.cdiv(3, 2)\n"
    (code,) = [c.code for c in fold_integer_arithmetic(cst.parse_module(imported))]
    assert code == "from numpy import max\nimport triton\nn = max(1, 2)\nb = 2\n"
    assert list(fold_integer_arithmetic(cst.parse_module("import numpy as triton\nb = triton.cdiv(3, 2)\n"))) == []


_INTEGERS = st.integers(-9, 9).map(str)


def _expressions(children):
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "//", "%", "**"]), children).map(
        lambda t: f"({t[0]} {t[1]} {t[2]})"
    )
    calls = st.tuples(st.sampled_from(["max", "min"]), st.lists(children, min_size=2, max_size=3)).map(
        lambda t: f"{t[0]}({', '.join(t[1])})"
    )
    return binary | calls | children.map(lambda e: f"abs({e})")


@settings(max_examples=200, deadline=None)
@given(expression=st.recursive(_INTEGERS, _expressions, max_leaves=6))
def test_folding_keeps_the_value_python_computes(expression):
    from minimizer.source.passes.values.constants import fold_integer_arithmetic

    def value(code):
        try:
            return ("ok", eval(code, {}))
        except (ZeroDivisionError, OverflowError, ValueError) as exc:
            return ("raises", type(exc))

    before = value(expression)
    for candidate in fold_integer_arithmetic(cst.parse_module(f"v = {expression}\n")):
        folded = candidate.code.removeprefix("v = ").strip()
        if before[0] == "ok" and isinstance(before[1], int):
            assert value(folded) == before, (expression, folded)


def test_identity_operations_fold_inside_a_kernel_only():
    from minimizer.source.passes.values.constants import fold_integer_arithmetic

    source = (
        "@triton.jit\ndef k(x_ptr, out_ptr):\n    cols = tl.arange(0, 2)\n"
        "    x = tl.load(x_ptr + 0 * 2 + cols)\n    tl.store(out_ptr + (cols - 0) * 1, x // 1 + 0.0)\n\n\n"
        "out = x * 1\ny = 0 + x\n"
    )
    (code,) = [c.code for c in fold_integer_arithmetic(cst.parse_module(source))]
    assert "tl.load(x_ptr + cols)" in code and "tl.store(out_ptr + (cols), x + 0.0)" in code
    assert code.endswith("out = x * 1\ny = 0 + x\n")  # a copy outside a kernel may be written into
