"""Between the source reducer's repro and the graph stage's: the smaller, the graph's (torch only) at equal size."""

from types import SimpleNamespace

from minimizer.stages.best_so_far import Work
from minimizer.stages.pin import Target
from minimizer.stages.reduce import _smaller_of

SOURCE = "import torch\nfrom transformers import GPT2Model\nm = GPT2Model(cfg)\nassert m(x).isfinite().all()\n"


def _choose(graph_text: str):
    messages: list[str] = []
    runs = SimpleNamespace(progress=SimpleNamespace(message=messages.append))
    best = SimpleNamespace(work=Work(reducers=["source"]))
    target = Target("numerical", "numerical: float32 value")

    def graph_stage() -> str:  # as _reduce_graph does: runs two reducers and re-pins
        best.work.reducers += ["graph", "source"]
        target.signature = "numerical: float32 nan"
        return graph_text

    return _smaller_of(runs, best, target, SOURCE, graph_stage), best.work.reducers, target.signature, messages


def test_a_larger_graph_repro_gives_way_to_the_source_reducers_with_its_signature():
    larger = SOURCE + "y = torch.ones(2) * torch.zeros(2) + torch.ones(2)\n"
    chosen, reducers, signature, messages = _choose(larger)
    assert chosen == SOURCE and reducers == ["source"] and signature == "numerical: float32 value"
    assert "keeping the source reducer's" in messages[0]


def test_a_graph_repro_no_larger_wins_needing_only_torch():
    torch_only = "import torch\nassert torch.compile(torch.sin)(x).isfinite().all()\n"  # fewer tokens than SOURCE
    chosen, reducers, signature, _ = _choose(torch_only)
    assert chosen == torch_only and reducers == ["source", "graph", "source"] and signature == "numerical: float32 nan"
    same_size = "import torch\nassert torch.compile(torch.sin)(-x - y).isfinite().all()\n"  # 25 tokens, as SOURCE
    assert _choose(same_size)[0] == same_size
