import libcst as cst

from minimizer.source.passes.signatures.arguments import delete_arguments
from minimizer.source.passes.configs.library import shrink_library_configs


def shrunk(source: str) -> list[str]:
    return [candidate.code for candidate in shrink_library_configs(cst.parse_module(source))]


def test_a_library_config_shrinks_all_its_sizes_at_once_then_each():
    source = "config = GPT2Config(n_layer=2, n_embd=64, n_head=4, resid_pdrop=0.0)\n"
    assert shrunk(source) == [
        "config = GPT2Config(n_layer=1, n_embd=32, n_head=1, resid_pdrop=0.0)\n",
        "config = GPT2Config(n_layer=1, n_embd=64, n_head=4, resid_pdrop=0.0)\n",
        "config = GPT2Config(n_layer=2, n_embd=32, n_head=4, resid_pdrop=0.0)\n",
        "config = GPT2Config(n_layer=2, n_embd=64, n_head=1, resid_pdrop=0.0)\n",
    ]


def test_sizes_already_smallest_and_the_scripts_own_classes_stay():
    assert shrunk("c = LlamaConfig(num_hidden_layers=1, hidden_size=1)\n") == []
    own = "class Block:\n    def __init__(self, hidden_size=8):\n        pass\n\n\nb = Block(hidden_size=64)\n"
    assert shrunk(own) == []


def test_argument_deletion_keeps_a_library_size_but_not_the_scripts_own():
    source = "config = BertConfig(num_hidden_layers=1, hidden_dropout_prob=0.0)\nx = torch.sum(a, dim=1)\n"
    candidates = [c.code for c in delete_arguments(cst.parse_module(source))]
    assert "config = BertConfig(num_hidden_layers=1)\nx = torch.sum(a, dim=1)\n" in candidates
    assert not any("BertConfig(hidden_dropout_prob" in c for c in candidates)
    assert "config = BertConfig(num_hidden_layers=1, hidden_dropout_prob=0.0)\nx = torch.sum(a)\n" in candidates
    own = "class Block:\n    pass\n\n\nb = Block(hidden_size=64)\n"
    assert "class Block:\n    pass\n\n\nb = Block()\n" in [c.code for c in delete_arguments(cst.parse_module(own))]


def test_each_shrunk_config_of_a_real_library_builds_a_smaller_model():
    """On transformers' own GPT2Config: every candidate builds, and holds fewer parameters than the original."""

    import pytest

    pytest.importorskip("transformers", reason="needs the models extra: pip install -e '.[models]'")
    import transformers

    def parameters(code: str) -> int:
        scope: dict = {"GPT2Config": transformers.GPT2Config}
        exec(code, scope)
        return sum(p.numel() for p in transformers.GPT2LMHeadModel(scope["config"]).parameters())

    source = "config = GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=32)\n"
    before = parameters(source)
    candidates = shrunk(source)
    assert len(candidates) == 6
    assert all(parameters(candidate) < before for candidate in candidates if "n_head=1" not in candidate)
    assert all(parameters(candidate) <= before for candidate in candidates)
