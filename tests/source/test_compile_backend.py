"""The backend a script compiles with, named and written (``minimizer.source.compile_backend``)."""

from __future__ import annotations

from minimizer.source.compile_backend import scripts_backend, with_backend_written


def test_every_compile_that_names_no_backend_gets_the_one_written_and_one_that_names_its_own_keeps_it():
    text = (
        "import torch\n\n\n@torch.compile\ndef f(x):\n    return x\n\n\n"
        "g = torch.compile(lambda x: x, mode='reduce-overhead')\nh = torch.compile(f, backend=mine)\n"
    )
    written = with_backend_written(text, "aot_eager")
    assert '@torch.compile(backend="aot_eager")\n' in written
    assert "torch.compile(lambda x: x, mode='reduce-overhead', backend=\"aot_eager\")" in written
    assert "torch.compile(f, backend=mine)\n" in written
    assert with_backend_written("import torch\nh = torch.compile(f, backend=mine)\n", "eager") is None


def test_the_scripts_backend_as_written():
    assert scripts_backend("h = torch.compile(f, backend=planted_backend)\n") == "planted_backend"
    assert scripts_backend("h = torch.compile(f, backend='aot_eager')\n") == "'aot_eager'"
    assert scripts_backend("h = torch._dynamo.optimize(my_backend)(f)\n") == "my_backend"
    assert scripts_backend("h = torch.compile(f)\n") == "" and scripts_backend("def (:\n") == ""
