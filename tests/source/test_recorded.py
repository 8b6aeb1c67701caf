"""Tensors the script computed become factories of what the run recorded
(``minimizer.source.passes.values.recorded``)."""

import libcst as cst

from minimizer.source.passes.values.recorded import recorded_tensors_to_factories

SOURCE = """import torch
labels = torch.randint(1, (1,))
logits = head(embed(torch.randint(1, (1, 1))))
picked = logits.argmax(-1)
scores = head(embed(labels))
scores = scores * 2
"""
RECORDED = [
    ("labels", [1], "torch.int64", "cpu", False),
    ("logits", [1, 5], "torch.float32", "cpu", True),
    ("picked", [1], "torch.int64", "cpu", False),
    ("scores", [1, 5], "torch.float16", "cuda", False),
]


def test_a_computed_tensor_becomes_a_factory_of_its_recorded_shape_dtype_and_device():
    candidates = [c.code for c in recorded_tensors_to_factories(RECORDED)(cst.parse_module(SOURCE))]
    assert candidates == [SOURCE.replace("head(embed(torch.randint(1, (1, 1))))", "torch.randn(1, 5, requires_grad=True)")]
    # A factory already (labels), a larger one (picked: `torch.zeros(1, dtype=torch.int64)` is longer than the
    # argmax), a name assigned twice (scores): left as they are.


def test_factories_say_dtype_and_device_where_they_are_not_the_defaults():
    recorded = [("x", [], "torch.float16", "cuda", False), ("i", [3], "torch.int64", "cpu", True)]
    source = "x = a.b.c.d.e.f.g.h()\ni = a.b.c.d.e.f.g.h.i.j()\n"
    codes = [c.code for c in recorded_tensors_to_factories(recorded)(cst.parse_module(source))]
    assert 'x = torch.randn((), dtype=torch.float16, device="cuda")\n' in codes[0]
    assert "i = torch.zeros(3, dtype=torch.int64)\n" in codes[1]  # no requires_grad on an integer tensor
