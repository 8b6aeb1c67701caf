import libcst as cst
import pytest

from minimizer.source.passes.structure.flags import inline_flag_calls
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and_computes

HELPER = '''def head(x, fused=True):
    """Doc."""
    h = x
    if fused:
        out = torch.empty_like(h)
        kernel[1,](h, out)
        return out
    return h * scale + shift
'''


def candidates(code: str) -> list[str]:
    # Blank lines are the layout's (the pass lays its candidates out to measure them as the reducer does).
    return [_lines(candidate.code) for candidate in inline_flag_calls(cst.parse_module(code))]


def _lines(code: str) -> str:
    return "".join(line for line in code.splitlines(keepends=True) if line.strip())


# The helper left with calls that all take the kernel's branch: its flag decided there.
SPECIALIZED = '''def head(x):
    """Doc."""
    h = x
    out = torch.empty_like(h)
    kernel[1,](h, out)
    return out
'''


def test_the_call_the_flag_sends_to_an_expression_becomes_that_expression():
    code = HELPER + "ok = close(head(x), head(x, False))\n"
    inlined = "ok = close(head(x), x * scale + shift)\n"
    # First with the helper's other calls, all passing the same flag, given it decided; then that call alone.
    assert candidates(code) == [_lines(SPECIALIZED + inlined), _lines(HELPER + inlined)]


def test_a_helper_left_with_calls_of_other_flags_is_not_specialized():
    code = HELPER + "ok = close(head(x), head(x, False))\nalso = head(y, True)\nother = head(z, fused=flag)\n"
    assert all("def head(x):" not in c for c in candidates(code))  # `flag` is no literal
    tail = HELPER.replace("(x, fused=True)", "(x, fused=True, scale=2)") + "ok = close(head(x, True, 3), head(x, False))\n"
    assert all("def head(x" not in c or "fused" in c for c in candidates(tail))  # the flag is not the last argument


def test_a_keyword_flag_a_negated_test_and_an_else_branch_are_read():
    code = "def f(x, *, eager=False):\n    if not eager:\n        return g(x)\n    else:\n        return x + 1\ny = f(2, eager=True) * 3\n"
    assert candidates(code) == ["y = (2 + 1) * 3\n"]  # its only call: the helper goes; parentheses where an operand


def test_the_default_decides_where_the_call_passes_no_flag():
    code = "def f(x, ref=True):\n    if ref:\n        return x.sum()\n    return k(x)\nprint(f(a), f(a, ref=False))\n"
    # Both at once lose the helper; alone, `a.sum()` is longer than `f(a)`: no step; `k(a)` is shorter than
    # `f(a, ref=False)`.
    assert candidates(code) == [
        "print(a.sum(), k(a))\n", "def f(x, ref=True):\n    if ref:\n        return x.sum()\n    return k(x)\nprint(f(a), k(a))\n"
    ]


def test_helpers_that_do_more_than_decide_and_return_are_left():
    assert candidates(HELPER + "print(head(x))\n") == []  # the kernel's branch launches it
    assert candidates("def f(x):\n    return x + 1\nf(1)\n") == []  # no flag decided: another pass's work
    assert candidates("def f(x, on=True):\n    if on:\n        print(x)\n    return x\nf(1)\n") == []
    assert candidates("def f(x, on):\n    if on:\n        return x\n    return -x\nf(1, flag)\n") == []  # not a literal
    assert candidates("def f(x, on=True):\n    y = g(x)\n    if on:\n        return y + y\n    return x\nf(1)\n") == []  # g twice
    assert candidates("def f(x, on=True):\n    if not on:\n        out = 1\n    return out\nf(1)\n") == []  # a local


def test_a_name_the_callers_scope_binds_otherwise_is_not_read_there():
    code = "def f(x, on=True):\n    if on:\n        return x * scale\n    return x\ndef user(scale):\n    return f(scale)\n"
    assert candidates(code) == []


def test_candidates_are_valid_and_not_larger():
    check_candidates_are_valid_and_not_larger(HELPER + "ok = close(head(x), head(x, False))\nhead(y, False)\n", inline_flag_calls)


# A kernel that returns its output (its branch reads as an expression) and one that writes it (statements).
RETURNS = ("def kernel(h):\n    return h * scale + shift + 1\n", "        out = kernel(h)\n        return out\n")
WRITES = ("def kernel(h, out):\n    out.append(h * scale + shift + 1)\n", "        out = []\n        kernel(h, out)\n        return out[0]\n")


@pytest.mark.parametrize("kernel, branch, helper_left, last_line", [
    (*RETURNS, None, "result = kernel(3), 3 * scale + shift\n"),  # every call inlined: the helper goes
    (*WRITES, "def head(x):\n", "result = head(3), 3 * scale + shift\n"),  # the helper decided for its kernel's call
])
def test_the_inlined_reference_computes_the_same(kernel, branch, helper_left, last_line):
    code = (
        "scale, shift = 2, 1\n" + kernel + "def head(x, fused=True):\n    h = x\n    if fused:\n" + branch
        + "    return h * scale + shift\nresult = (head(3), head(3, False))\n"
    )
    reduced = greedy_reduce(code, inline_flag_calls, runs_and_computes("result", (8, 7)))
    assert reduced.endswith(last_line) and "fused" not in reduced
    assert (helper_left in reduced) if helper_left else "def head" not in reduced


def test_a_computed_argument_read_once_where_the_flag_leads_is_substituted():
    code = HELPER + "ok = close(head(x * 0.5), head(x * 0.5, False))\n"
    specialized, found = candidates(code)
    assert found.endswith("ok = close(head(x * 0.5), x * 0.5 * scale + shift)\n") and specialized.startswith("def head(x):")
    twice = HELPER.replace("return h * scale + shift", "return h * scale + h") + "ok = close(head(x), head(x * 0.5, False))\n"
    assert candidates(twice) == []  # `x * 0.5` would be computed twice


def test_a_conditional_expression_on_the_flag_is_decided_and_every_call_inlined_at_once_drops_the_helper():
    # check_max_error_loop_kernel: `tabular_net(batch)` against `tabular_net(batch, False)`, the flag deciding
    # inside the return. Written out alone, either call is longer than it; both at once lose the helper.
    code = (
        "def net(x, fused=True):\n    h = fc1(x)\n    return fc2(act(h) if fused else F.leaky_relu(h, 0.1))\n"
        "assert (net(batch) - net(batch, False)).abs().max() < 1e-5\n"
    )
    assert candidates(code) == ["assert (fc2(act(fc1(batch))) - fc2(F.leaky_relu(fc1(batch), 0.1))).abs().max() < 1e-5\n"]


def test_every_call_at_once_computes_the_same():
    code = (
        "def fc(x):\n    return x * 2\ndef net(x, fused=True):\n    h = fc(x)\n    return h + 1 if fused else h - 1\n"
        "result = (net(3), net(3, False))\n"
    )
    reduced = greedy_reduce(code, inline_flag_calls, runs_and_computes("result", (7, 5)))
    assert "def net" not in reduced


def test_one_name_unpacked_from_a_sequence_reads_as_its_item():
    # check_lambda_all_kernel: `width, = widths` in the helper the check calls fused and not.
    code = (
        "def outputs(widths, fused):\n    width, = widths\n    x = torch.ones(width)\n"
        "    return [scale(x, torch.ones(width)) if fused else x]\n"
        "assert all(close(o, r) for o, r in zip(outputs(widths, True), outputs(widths, False)))\n"
    )
    assert candidates(code)[0] == (
        "assert all(close(o, r) for o, r in zip([scale(torch.ones(widths[0]), torch.ones(widths[0]))], "
        "[torch.ones(widths[0])]))\n"
    )


def test_one_name_unpacked_computes_the_same():
    code = "def first(items, twice):\n    item, = items\n    return item * 2 if twice else item\nresult = (first([3], True), first([4], False))\n"
    reduced = greedy_reduce(code, inline_flag_calls, runs_and_computes("result", (6, 4)))
    assert "def first" not in reduced
