import libcst as cst

from minimizer.source.passes.structure.inline_calls import inline_single_call_functions


def codes(source):
    # Blank lines the removed definition leaves are the layout's business (see minimizer.source.layout).
    return [candidate.code.lstrip("\n") for candidate in inline_single_call_functions(cst.parse_module(source))]


def test_a_helper_called_once_is_replaced_by_its_body_with_parameters_bound():
    source = '''import torch


def observe(weight, scale=2):
    """Eager and compiled."""
    eager = probe(weight)
    return eager * scale, compiled_probe(weight)


eager, compiled = observe(torch.ones(2))
'''
    assert codes(source) == [
        "import torch\n\n\nweight = torch.ones(2)\nscale = 2\neager = probe(weight)\n"
        "eager, compiled = eager * scale, compiled_probe(weight)\n"
    ]


def test_a_parameter_passed_its_own_name_needs_no_binding_and_a_dropped_result_goes():
    source = "def step(model, x):\n    model(x).sum().backward()\n    return x\n\n\nstep(model, inputs)\n"
    assert codes(source) == ["model(inputs).sum().backward()\n"]


def test_a_parameter_passed_another_name_is_spelled_as_that_name_even_where_the_caller_has_its_own():
    source = (
        "def row_softmax(x):\n    out = torch.empty_like(x)\n    kernel[1,](x, out)\n    return out\n\n\n"
        "x = torch.ones(3)\nlogits = x * 2\nours = row_softmax(logits)\nprint(ours, x)\n"
    )
    assert codes(source) == [
        "x = torch.ones(3)\nlogits = x * 2\nout = torch.empty_like(logits)\nkernel[1,](logits, out)\nours = out\n"
        "print(ours, x)\n"
    ]


def test_a_parameter_rebound_in_the_helper_or_passed_a_name_the_helper_binds_is_still_bound():
    rebound = "def f(x):\n    x = x + 1\n    return x\n\n\ny = f(a)\n"
    assert codes(rebound) == ["x = a\nx = x + 1\ny = x\n"]
    taken = "def f(x):\n    a = x + 1\n    return a\n\n\ny = f(a)\n"
    assert codes(taken) == []  # the helper's own `a` would overwrite the caller's


def test_inlined_into_the_function_that_calls_it():
    source = (
        "def loss_of(logits, t):\n    probs = logits.softmax(-1)\n    return ce(probs, t)\n\n\n"
        "def train(model, x, t):\n    loss = loss_of(model(x), t)\n    loss.backward()\n"
    )
    assert codes(source) == [
        "def train(model, x, t):\n    probs = model(x).softmax(-1)\n    loss = ce(probs, t)\n    loss.backward()\n"
    ]


def test_helpers_that_cannot_be_inlined_as_written_stay():
    sources = [
        "def f(x):\n    return x + 1\n\n\na = f(1)\nb = f(2)\n",  # called twice
        "def f(x):\n    if x:\n        return 1\n    return 2\n\n\na = f(1)\n",  # two returns
        "def f(x):\n    yield x\n\n\na = f(1)\n",  # a generator
        "def f(*xs):\n    return xs\n\n\na = f(1)\n",  # star parameters
        "def f(x):\n    y = x\n    return y\n\n\ny = 3\na = f(1)\nprint(y)\n",  # its local would clobber the caller's
        "def f(x):\n    return x\n\n\na = c and f(1)\n",  # may not run
        "def f(x):\n    return x\n\n\na = [f(i) for i in range(3)]\n",  # runs many times
        "@cache\ndef f(x):\n    return x\n\n\na = f(1)\n",  # decorated
        "def f(x):\n    return w * x\n\n\ndef g():\n    w = 2\n    return f(1)\n",  # its global is local there
    ]
    for source in sources:
        assert codes(source) == [], source


def test_a_generator_of_one_value_taken_by_unpacking_becomes_that_value():
    source = "def batches(length=4):\n    x = torch.ones(length)\n    yield x * 2\n\n\ntokens, = batches()\nprint(tokens)\n"
    assert codes(source) == ["x = torch.ones(4)\ntokens = x * 2\nprint(tokens)\n"]
    assert codes(source.replace("tokens, = batches()", "tokens = list(batches())")) == []
    taken = "x = torch.ones(4)\ntokens = x * 2\nprint(tokens)\n"
    assert codes(source.replace("tokens, = batches()", "tokens = next(batches())")) == [taken]
    assert codes(source.replace("tokens, = batches()", "tokens = list(batches())[0]")) == [taken]
    assert codes(source.replace("tokens, = batches()", "tokens = list(batches())[1]")) == []


def test_a_last_starred_argument_binds_the_parameters_it_fills_together():
    source = "def check(model, tokens, labels):\n    return model(tokens) - labels\n\n\nloss = check(net, *data[0])\n"
    assert codes(source) == ["tokens, labels = data[0]\nloss = net(tokens) - labels\n"]
    assert codes(source.replace("*data[0])", "*data[0], 1)")) == []  # not last
    assert codes(source.replace("(net, *data[0])", "(net, x, y, *data[0])")) == []  # fills nothing


def test_a_helper_called_in_an_asserts_test_is_inlined_before_it_but_not_from_its_message():
    helper = "def outcome(fn, x):\n    fn(x)\n\n\n"
    in_test = helper + "assert model == outcome(torch.compile(model), x), 'accepted'\n"
    assert codes(in_test) == [
        "torch.compile(model)(x)\nassert model == None, 'accepted'\n"
    ]
    in_message = helper + "assert ok, outcome(torch.compile(model), x)\n"
    assert codes(in_message) == []


def test_a_helper_whose_value_a_for_loop_iterates_runs_before_the_loop():
    source = "def collect(x):\n    h = k(x)\n    return [('a', h)]\n\n\nfor name, out in collect(a):\n    check(out)\n"
    assert codes(source) == ["h = k(a)\nfor name, out in [('a', h)]:\n    check(out)\n"]
    # A name the loop binds is one the helper binds too: the loop's value is taken before the loop rebinds it.
    rebinding = source.replace("h = k(x)\n    return [('a', h)]", "out = k(x)\n    return [('a', out)]")
    assert codes(rebinding) == ["out = k(a)\nfor name, out in [('a', out)]:\n    check(out)\n"]


def test_a_helper_called_in_an_if_test_runs_before_the_if_but_not_before_an_elif():
    source = "def head(x):\n    out = k(x)\n    return out\n\n\nif not close(head(a), ref):\n    problems.append(1)\n"
    assert codes(source) == ["out = k(a)\nif not close(out, ref):\n    problems.append(1)\n"]
    elif_test = "def head(x):\n    out = k(x)\n    return out\n\n\nif a:\n    pass\nelif head(a):\n    pass\n"
    assert codes(elif_test) == []


def test_an_expression_read_once_at_the_helpers_start_takes_the_parameters_place():
    # Generated seed 381: the caller has its own `x` and passes `x * 0.5`: binding `x = x * 0.5` would clash.
    source = (
        "def scaled_head(x):\n    h = x\n    kernel[1,](h, h)\n    return h\n\n\n"
        "x = torch.ones(2)\nout = scaled_head(x * 0.5)\nref = x * 0.5\n"
    )
    assert codes(source) == ["x = torch.ones(2)\nh = x * 0.5\nkernel[1,](h, h)\nout = h\nref = x * 0.5\n"]
    later = source.replace("    h = x\n    kernel[1,](h, h)\n", "    kernel[1,](x, x)\n    h = x\n")
    assert codes(later) == []  # read after the helper's first statement: the clash with the caller's `x` stays
    inside = source.replace("h = x\n", "h = x.sum(0) + 1\n")
    assert "h = (x * 0.5).sum(0) + 1\n" in codes(inside)[0]


def test_a_helper_called_in_a_comprehensions_first_iterable_runs_before_its_statement():
    # Generated seed 408: the outputs paired with their references in a comprehension over `zip`.
    source = "def head(x):\n    h = k(x)\n    return h\n\n\npairs = [(o, r) for o, r in zip([head(a)], [b])]\n"
    assert codes(source) == ["h = k(a)\npairs = [(o, r) for o, r in zip([h], [b])]\n"]
    inside = "def head(x):\n    h = k(x)\n    return h\n\n\npairs = [head(o) for o in outs]\n"
    assert codes(inside) == []  # runs once per item
    later = "def head(x):\n    h = k(x)\n    return h\n\n\npairs = [o for o in outs for p in head(o)]\n"
    assert codes(later) == []  # a later iterable runs once per item of the first
