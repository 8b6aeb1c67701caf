import libcst as cst
from hypothesis import given, settings

from minimizer.source.passes.signatures.arguments import delete_arguments
from tests.source.helpers import (
    check_candidates_are_valid_and_not_larger,
    greedy_reduce,
    runs_and,
    snippets,
)


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in delete_arguments(cst.parse_module(code))]


def test_all_keywords_then_each_keyword_then_positionals_from_the_last():
    assert candidates('x = torch.randn(2, 3, dtype=d, device="cpu")\n') == [
        "x = torch.randn(2, 3)\n",
        'x = torch.randn(2, 3, device="cpu")\n',
        "x = torch.randn(2, 3, dtype=d)\n",
        'x = torch.randn(2, dtype=d, device="cpu")\n',
        'x = torch.randn(3, dtype=d, device="cpu")\n',
    ]


def test_a_backend_cheaper_than_inductor_stays():
    # dyn_detach_dataclass_method: without `backend="eager"` the repro compiled with Inductor, four times the
    # seconds of the script under plain python.
    found = candidates('y = torch.compile(f, backend="eager", dynamic=True)(x)\n')
    assert 'y = torch.compile(f, backend="eager")(x)\n' in found and all('backend="eager"' in c for c in found)
    assert 'y = torch.compile(f)(x)\n' in candidates('y = torch.compile(f, backend="inductor")(x)\n')


def test_single_keyword_is_not_repeated():
    assert candidates("f(k=1)\n") == ["f()\n"]


def test_outer_call_first_then_nested_calls():
    assert candidates("f(g(a), b)\n") == ["f(g(a))\n", "f(b)\n", "f(g(), b)\n"]


def test_no_arguments_no_candidates():
    assert candidates("f()\nx = y\n") == []


@settings(max_examples=25, deadline=None)
@given(snippets)
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, delete_arguments)


def test_greedy_loop_drops_unneeded_arguments():
    code = (
        "def total(*values, scale=1, offset=0, note=None):\n"
        "    return sum(values) * scale + offset\n"
        'result = total(3, 5, scale=2, offset=1, note="x")\n'
    )
    # Interesting: an odd result above 10, which needs `scale`, `offset` and the 5, but not `note` or the 3.
    interesting = runs_and(lambda namespace: namespace["result"] % 2 == 1 and namespace["result"] > 10)
    reduced = greedy_reduce(code, delete_arguments, interesting)
    assert reduced.endswith("result = total(5, scale=2, offset=1)\n")


def test_a_first_keyword_argument_is_passed_by_position():
    from minimizer.source.passes.signatures.arguments import keywords_to_positional

    source = "y = torch.logsumexp(x, dim=-1, keepdim=True)\ng = torch.autograd.grad(outputs=out, inputs=z)\n"
    assert [c.code for c in keywords_to_positional(cst.parse_module(source))] == [
        "y = torch.logsumexp(x, -1, keepdim=True)\ng = torch.autograd.grad(outputs=out, inputs=z)\n",
        "y = torch.logsumexp(x, dim=-1, keepdim=True)\ng = torch.autograd.grad(out, inputs=z)\n",
    ]
    import torch

    x = torch.randn(2, 3)
    assert torch.equal(torch.logsumexp(x, -1, keepdim=True), torch.logsumexp(x, dim=-1, keepdim=True))
    keyword_only = "x = torch.randn(2, dtype=torch.half)\nf = torch.compile(g, backend='eager')\nh(*a, k=1)\n"
    assert list(keywords_to_positional(cst.parse_module(keyword_only))) == []
