"""Stating the bug as code: pure rewrites on source text (running them is the session's job)."""

import ast

import pytest

from minimizer.source.statement import has_place, state_bug
from oracles.bug import Bug

DIRECT = """import torch
x = torch.randn(4)
y = torch.compile(torch.nn.SiLU(), mode="default")(x * 2)
print(y)
"""

NAMED = """import torch
f = torch.nn.functional.silu
c = torch.compile(f)
x = torch.randn(4)
c(x)
"""


def test_numerical_hoists_model_and_arguments_and_ends_with_assert_close():
    stated = state_bug(DIRECT, "numerical")
    assert len(stated) == 2  # then with NaN equal to NaN
    assert stated[1].strip().splitlines()[-1].endswith("model(arg0), equal_nan=True)")
    lines = stated[0].strip().splitlines()
    assert "model = torch.nn.SiLU()" in lines
    assert "arg0 = x * 2" in lines  # evaluated once: both sides see the same input
    assert lines[-1] == 'torch.testing.assert_close(torch.compile(model, mode="default")(arg0), model(arg0))'
    assert "print(y)" not in stated[0]  # the stated comparison ends the repro


def test_a_named_compiled_callable_is_found():
    stated = state_bug(NAMED, "requires-grad")[0]
    last = stated.strip().splitlines()[-1]
    assert last == 'assert torch.compile(f)(x).requires_grad == f(x).requires_grad, "compiled output\'s requires_grad differs from eager"'


def test_a_compiled_call_inside_a_statement_is_found():
    # What a reduction left of `expected, actual = model(x), torch.compile(model)(x)` once eager was bypassed.
    source = "import torch\nx = torch.randn(1)\nexpected, actual = x, torch.compile(torch.nn.GELU())(x)\n"
    lines = state_bug(source, "numerical")[0].strip().splitlines()
    assert lines[-2:] == ["model = torch.nn.GELU()", "torch.testing.assert_close(torch.compile(model)(x), model(x))"]
    assert not any(line.startswith("expected, actual") for line in lines)


def test_gradient_statements_compare_one_leaf_first_then_every_leaf():
    versions = state_bug(DIRECT, "gradient")
    assert len(versions) == 6  # the three again, NaN equal to NaN: eager's NaN is no difference
    assert all(v.strip().splitlines()[-1].count("equal_nan=True") == 1 for v in versions[3:])
    versions = versions[:3]
    compact = [v.strip().splitlines()[-1] for v in versions[:-1]]
    assert compact == [
        'torch.testing.assert_close(torch.autograd.grad(torch.compile(model, mode="default")(arg0).sum(), leaves), '
        "torch.autograd.grad(model(arg0).sum(), leaves))".replace("leaves", leaves)
        for leaves in ["arg0", "[*model.parameters()]"]
    ]
    assert "torch.autograd.grad(out.sum()" in versions[-1] and "torch.autograd.grad(expected.sum()" in versions[-1]
    for version in versions:
        ast.parse(version)


def test_a_compact_gradient_statement_fails_by_its_assert_where_the_gradients_differ():
    import torch

    class WrongGradient(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    source = "import torch\nx = torch.ones(2, requires_grad=True)\ntorch.compile(f, backend=backend)(x)\n"

    def backend(gm, example_inputs):  # compiled: the wrong gradient; eager: the right one
        return lambda *args: WrongGradient.apply(*args)

    compact = state_bug(source, "gradient")[0]
    namespace = {"f": lambda x: x * 2, "backend": backend}
    with pytest.raises(AssertionError, match="not close"):
        exec(compile(compact, "stated", "exec"), namespace)
    torch._dynamo.reset()


def test_inplace_check_is_installed_after_the_imports():
    stated = state_bug("import torch\nfrom x import y\nz = 1\n", "inplace")[0]
    body = ast.parse(stated).body
    assert [type(s).__name__ for s in body[:2]] == ["Import", "ImportFrom"]
    assert "saved_tensors_hooks(" in stated


def test_the_stated_inplace_check_catches_a_saved_tensor_changed_without_a_version_bump():
    import torch

    check = state_bug("import torch\n", "inplace")[0]
    for corrupt, fails in [(False, False), (True, True)]:
        script = check + (
            "x = torch.ones(3, requires_grad=True)\ny = torch.softmax(x, 0)\n"
            + ("y.data.mul_(2)\n" if corrupt else "")
            + "y.sum().backward()\n"
        )
        namespace = {}
        try:
            exec(compile(script, "stated", "exec"), namespace)
            failed = False
        except AssertionError:
            failed = True
        finally:  # the script entered the hooks for good: take them off this test process
            torch._C._autograd._pop_saved_tensors_default_hooks()
        assert failed is fails


@pytest.mark.parametrize("oracle", ["script", "crash"])
def test_oracles_whose_failure_is_already_code_are_left_alone(oracle):
    assert state_bug(DIRECT, oracle) == []


def test_no_compiled_call_means_no_statement():
    assert state_bug("import torch\nx = torch.ones(2)\n", "numerical") == []


def test_starred_literal_arguments_are_spelled_out():
    stated = state_bug("import torch\ny = torch.compile(M())(*[torch.randn(1), 2])\n", "requires-grad")[0]
    assert "arg0 = torch.randn(1)" in stated and "torch.compile(model)(arg0, arg1).requires_grad" in stated


def test_a_reverse_crash_is_stated_by_calling_eager_after_the_compiled_call():
    reverse = Bug("crash: eager raised: RuntimeError: matN and matN must have the same dtype", raised_by="eager")
    stated = state_bug(NAMED, "crash", reverse)[0]
    assert stated.strip().splitlines()[-2:] == ["torch.compile(f)(x)", "f(x)"]
    # A crash of the compiled side is already code: the compiled call raises under python.
    assert state_bug(NAMED, "crash", Bug("crash: compiled raised: RuntimeError: boom", raised_by="compiled")) == []


def test_a_script_that_seeds_its_generators_is_recognized():
    from minimizer.source.statement import seeds_random_numbers

    assert seeds_random_numbers("import torch\ntorch.manual_seed(config.seed)\n")
    assert seeds_random_numbers("import random\nrandom.seed(0)\n")
    assert not seeds_random_numbers("import torch\nx = torch.randn(3)\nseeded = 1\n")


def test_once_the_best_has_a_place_for_the_statement_candidates_must_keep_one():
    from minimizer.source.statement import StatementPlace

    best = "import torch\nf = torch.compile(g)\ny = f(x)\n"
    hidden = "import torch\nf = torch.compile(g)\n\n\ndef run(x):\n    return f(x)\n\n\ny = run(x)\n"
    place = StatementPlace("numerical")
    assert place.lost(best, "import torch\ny = torch.compile(g)(x)\n") is None
    assert place.lost(best, hidden) is not None
    assert place.lost(hidden, "import torch\nf = torch.compile(g)\nfor x in xs:\n    f(x)\n") is None  # nothing to keep yet
    assert StatementPlace("inplace").lost(best, hidden) is None  # its check goes after the imports, anywhere
    assert StatementPlace("crash", Bug("crash: compiled raised: X", raised_by="compiled")).lost(best, hidden) is None  # a crash states itself


def test_a_call_through_an_alias_of_the_compiled_callable_is_stated():
    source = "import torch\ncompiled = torch.compile(model)\nfn = compiled\nfn(x)\n"
    (stated,) = state_bug(source, "crash", Bug("crash: eager raised: RuntimeError: dtype", raised_by="eager"))
    assert stated.endswith("torch.compile(model)(x)\nmodel(x)\n")


def test_a_compiled_call_inside_a_comprehension_has_no_place_to_state_the_bug():
    """Its arguments are bound by the comprehension: a statement after the line could not read them, so the
    script's own failure must hold until a pass brings the call out (a list of one item collapses)."""

    inside = "import torch\nm = torch.nn.Linear(1, 1)\n[torch.compile(m)(b) for b in [torch.ones(1)]]\n"
    assert not has_place(inside) and state_bug(inside, "numerical") == []
    collapsed = "import torch\nm = torch.nn.Linear(1, 1)\n[torch.compile(m)(torch.ones(1))]\n"
    assert has_place(collapsed) and state_bug(collapsed, "numerical")


def test_an_inplace_bug_before_a_backward_is_stated_by_the_gradient_it_changes():
    script = (
        "import torch\nx = torch.ones(3, requires_grad=True)\nloss = torch.logsumexp(x, 0)\n"
        "{corrupt}loss.backward()\n"
    )
    gradients, hooks = state_bug(script.format(corrupt=""), "inplace")
    assert "grad_before = torch.autograd.grad(loss, x, retain_graph=True)[0]\n" in gradients
    assert gradients.endswith('assert torch.equal(x.grad, grad_before), "a tensor saved for backward was modified in place"\n')
    assert "saved_tensors_hooks(" in hooks  # the general form, where the gradient one does not show it
    for corrupt, fails in [("", False), ("x.data.zero_()\n", True)]:
        stated = state_bug(script.format(corrupt=corrupt), "inplace")[0]
        try:
            exec(compile(stated, "stated", "exec"), {})
            failed = False
        except AssertionError:
            failed = True
        assert failed is fails
    two_leaves = "import torch\na = torch.ones(1, requires_grad=True)\nb = torch.ones(1, requires_grad=True)\n"
    assert len(state_bug(two_leaves + "loss = (a * b).sum()\nloss.backward()\n", "inplace")) == 1  # hooks only


def test_a_lost_requires_grad_is_stated_by_the_compiled_call_alone_where_the_signature_says_what_eager_gives():
    lost, compared = state_bug(NAMED, "requires-grad", Bug("requires-grad: eager=True compiled=False", eager_requires_grad=True))
    assert lost.strip().splitlines()[-1] == "assert torch.compile(f)(x).requires_grad"  # the line says it
    assert compared.strip().splitlines()[-1].startswith("assert torch.compile(f)(x).requires_grad == f(x)")
    gained = state_bug(NAMED, "requires-grad", Bug("requires-grad: eager=False compiled=True", eager_requires_grad=False))[0]
    assert gained.strip().splitlines()[-1] == "assert not torch.compile(f)(x).requires_grad"
    assert len(state_bug(NAMED, "requires-grad", Bug("requires-grad: grad_fn eager=True compiled=False"))) == 1


@pytest.mark.parametrize(
    "compiled, call, stated",
    [
        ("@torch.compile\ndef f(x):\n    return x.sin()\n", "f(x)", "torch.compile(f)(x)"),
        (
            "@torch.compile(backend=planted, fullgraph=True)\ndef f(x):\n    return x.sin()\n",
            "f(x)",
            "torch.compile(f, backend=planted, fullgraph=True)(x)",
        ),
        (
            "@torch._dynamo.optimize(planted, nopython=True)\ndef f(x):\n    return x.sin()\n",
            "f(x)",
            "torch.compile(f, backend=planted, fullgraph=True)(x)",
        ),
        ("f = torch.nn.SiLU()\nc = torch._dynamo.optimize(planted)(f)\n", "c(x)", "torch.compile(f, backend=planted)(x)"),
        ("f = torch.nn.SiLU()\n", "torch._dynamo.optimize(planted)(f)(x)", "torch.compile(f, backend=planted)(x)"),
        ("f = torch.nn.SiLU()\nf.compile(backend=planted)\n", "f(x)", "torch.compile(f, backend=planted)(x)"),
        ("f = torch.nn.SiLU()\nc = torch.compile(f, backend=planted, dynamic=False)\n", "c(x)", "torch.compile(f, backend=planted, dynamic=False)(x)"),
    ],
    ids=["decorator", "decorator-with-options", "dynamo-optimize-decorator", "dynamo-optimize", "dynamo-optimize-inline", "module-compile", "call-with-options"],
)
def test_every_compile_form_is_stated_with_the_callable_made_eager(compiled, call, stated):
    source = f"import torch\nplanted = 'eager'\nx = torch.randn(2)\n{compiled}out = {call}\nprint(out)\n"
    assert has_place(source)
    text = state_bug(source, "numerical")[0]
    assert text.strip().splitlines()[-1] == f"torch.testing.assert_close({stated}, f(x))"
    assert "@torch" not in text and ".compile(backend" not in text and "print(out)" not in text
    exec(compile(text, "<stated>", "exec"), {})  # runs as written (the backend here is a correct one)


def test_a_compiled_call_in_an_assert_has_a_place():
    source = "import torch\nx = torch.randn(2)\nc = torch.compile(torch.sin)\nassert torch.allclose(c(x), x.sin())\n"
    assert state_bug(source, "numerical")[0].strip().splitlines()[-2:] == [
        "model = torch.sin",
        "torch.testing.assert_close(torch.compile(model)(x), model(x))",
    ]


def test_a_method_named_compile_that_takes_arguments_is_not_a_module_compiled_in_place():
    source = "import re\nimport torch\nre.compile('a+')\nf = torch.sin\nout = f(torch.ones(1))\n"
    assert not has_place(source)


def test_a_call_over_a_starred_list_of_inputs_is_stated_passing_it_on():
    # The graph lift's program calls `compiled(*inputs)`; cut short before its inputs were inlined, it must still
    # be statable.
    code = "import torch\nmodel = torch.nn.Linear(2, 2)\ninputs = [torch.ones(2)]\ncompiled = torch.compile(model)\nout = compiled(*inputs)\n"
    versions = state_bug(code, "numerical")
    assert versions and versions[0].rstrip().endswith("torch.testing.assert_close(torch.compile(model)(*inputs), model(*inputs))")


def test_an_input_the_statement_reads_once_is_written_in_place():
    source = "import torch\nf = torch.nn.SiLU()\ny = torch.compile(f)(torch.ones(1, requires_grad=True))\n"
    lost, compared = state_bug(source, "requires-grad", Bug("requires-grad: eager=True compiled=False", eager_requires_grad=True))
    assert lost.strip().splitlines()[-1] == "assert torch.compile(f)(torch.ones(1, requires_grad=True)).requires_grad"
    assert "arg0 =" not in lost
    # Read by both sides, it is made once: both see the same tensor.
    assert "arg0 = torch.ones(1, requires_grad=True)" in compared.splitlines()


def test_a_name_bound_to_the_compiled_callable_goes_where_nothing_reads_it_any_more():
    source = "import torch\nf = torch.nn.SiLU()\nc = torch.compile(f)\nfn = c\nx = torch.ones(1)\nfn(x)\n"
    stated = state_bug(source, "crash", Bug("crash: eager raised: RuntimeError: boom", raised_by="eager"))[0]
    assert stated.strip().splitlines()[-3:] == ["x = torch.ones(1)", "torch.compile(f)(x)", "f(x)"]
    read_again = source.replace("x = torch.ones(1)", "print(c)\nx = torch.ones(1)")
    assert "c = torch.compile(f)" in state_bug(read_again, "crash", Bug("crash: eager raised: RuntimeError: boom", raised_by="eager"))[0]
