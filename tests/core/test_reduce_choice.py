"""Between the source reducer's repro and the graph stage's: the smaller, the graph's (torch only) at equal size."""

from types import SimpleNamespace

from oracles.bug import Bug
from minimizer.stages.best_so_far import Work
from minimizer.stages.pin import Target
from minimizer.stages.reducers import smaller_of

SOURCE = "import torch\nfrom transformers import GPT2Model\nm = GPT2Model(cfg)\nassert m(x).isfinite().all()\n"


def _choose(graph_text: str):
    messages: list[str] = []
    runs = SimpleNamespace(progress=SimpleNamespace(message=messages.append))
    best = SimpleNamespace(work=Work(reducers=["source"]))
    target = Target("numerical", "numerical: float32 value")

    def graph_stage() -> str:  # as _reduce_graph does: runs two reducers and re-pins
        best.work.reducers += ["graph", "source"]
        target.bug = Bug("numerical: float32 nan")
        return graph_text

    return smaller_of(runs, best, target, SOURCE, graph_stage), best.work.reducers, target.signature, messages


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


def test_a_lift_that_runs_out_of_its_share_without_a_smaller_repro_leaves_the_program_to_the_source_reducer(monkeypatch):
    import time

    from minimizer.reduce.scheduler import OutOfTime
    from minimizer.stages import lift as stage

    def slow_graph_stage(runs, text, target, settings, best, deadline, captured, polish_until=None):
        assert deadline is not None and deadline < time.monotonic() + 60  # half of the 100 s left
        raise OutOfTime()

    monkeypatch.setattr(stage, "recorded_run", lambda *args, **kwargs: SimpleNamespace(graphs=["a graph"], calls=[]))
    monkeypatch.setattr(stage, "reduce_graph_safely", slow_graph_stage)
    messages: list[str] = []
    runs = SimpleNamespace(progress=SimpleNamespace(message=messages.append))
    best = SimpleNamespace(best_text=SOURCE)
    target = Target("numerical", "numerical: float32 value")
    assert stage.lift(runs, SOURCE, target, None, best, time.monotonic() + 100, "buried") is None
    assert "reducing the program as it is" in messages[-1]
    best.best_text = "import torch\n"  # a lifted repro was accepted before the time ran out: it stands
    try:
        stage.lift(runs, SOURCE, target, None, best, time.monotonic() + 100, "buried")
    except OutOfTime:
        pass
    else:
        raise AssertionError("the lifted repro so far must stand")


STORE = """import torch


class Store:
    def __init__(self, config):
        self.keys = torch.ones(config.keys, config.dim)
        self.values = torch.zeros(config.keys, config.dim)

    def queries(self, rows):
        return torch.ones(rows, self.keys.shape[1]) * self.values.mean()


def score(queries, keys):
    return queries @ keys


store = Store(Config(keys=4, dim=8))
torch.compile(score)(store.queries(2), store.keys)
"""
PLAIN = "import torch\n\n\ndef score(queries, keys):\n    return queries @ keys\n\n\nq = torch.ones(2, 8)\ntorch.compile(score)(q, q.T)\n"


def test_a_placed_call_is_lifted_after_the_source_reducer_only_where_its_program_may_be_smaller(monkeypatch):
    from minimizer.metrics import count_tokens
    from minimizer.stages import lift as stage

    captures, asked = [], []
    monkeypatch.setattr(stage, "recorded_run", lambda *args, **kwargs: captures.append(1) or SimpleNamespace(graphs=[], calls=["call"]))

    def lift_source(runs, text, target, settings, best, deadline, calls, smaller_than=None):
        asked.append(smaller_than)
        return "import torch\nassert torch.compile(torch.sin)(x).isfinite().all()\n"

    monkeypatch.setattr(stage, "_lift_source", lift_source)
    runs = SimpleNamespace(progress=SimpleNamespace(message=lambda _: None))
    best = SimpleNamespace(work=Work(reducers=["source"]))
    target = Target("numerical", "numerical: float32 value")
    assert stage.lifted_if_smaller(runs, PLAIN, target, None, best, None) == PLAIN and not captures  # nothing to drop
    lifted = stage.lifted_if_smaller(runs, STORE, target, None, best, None)
    assert lifted.startswith("import torch\nassert torch.compile") and asked == [count_tokens(STORE)]
