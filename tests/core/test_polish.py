"""The stated repro reduced once more where the statement wrote the script's check anew (``stages.reduce``)."""

from types import SimpleNamespace

from minimizer.stages import reduce as stage
from minimizer.stages.state import Statement

STEP = """import torch
bank = Bank()
mismatches = []
for key in ("phase", "wave"):
    out = torch.compile(bank)(phases)
    if not torch.allclose(out[key], bank(phases)[key]):
        mismatches.append(key)
assert not mismatches
"""
STATED = """import torch
bank = Bank()
torch.testing.assert_close(torch.compile(bank)(phases)["phase"], bank(phases)["phase"])
"""
APPENDED_TO = "import torch\nout = torch.compile(f)(x)\n"
APPENDED = "import torch\ntorch.testing.assert_close(torch.compile(f)(x), f(x))\n"


def _polish(monkeypatch, statement: Statement, deadline=None):
    reduced, restarted = [], []
    monkeypatch.setattr(stage, "_reduce_source", lambda runs, text, *args, **kwargs: reduced.append(text) or "import torch\n")
    runs = SimpleNamespace(options=SimpleNamespace(reducer="auto"))
    best = SimpleNamespace(restart_from=restarted.append, work=SimpleNamespace(stopped_early=False))
    pinned = SimpleNamespace(target=None, settings=None)
    return stage.polish_the_statement(runs, statement, pinned, best, deadline), reduced, restarted


def test_a_check_written_anew_is_reduced_once_more_from_the_stated_repro(monkeypatch):
    polished, reduced, restarted = _polish(monkeypatch, Statement(STATED, True, None, STEP))
    assert polished == "import torch\n" and reduced == restarted == [STATED]


def test_a_comparison_only_added_at_the_call_or_no_statement_leaves_the_repro_as_it_is(monkeypatch):
    assert _polish(monkeypatch, Statement(APPENDED, True, None, APPENDED_TO))[:2] == (APPENDED, [])
    assert _polish(monkeypatch, Statement(STEP, False, None, STEP))[:2] == (STEP, [])
    assert _polish(monkeypatch, Statement(STATED, True, None, STEP), deadline=0.0)[:2] == (STATED, [])  # no time left
