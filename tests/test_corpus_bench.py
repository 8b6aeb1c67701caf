"""bench/corpus.py's reading of a report's culprit against what the case says (the bench itself runs for hours)."""

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("bench_corpus", Path(__file__).parent.parent / "bench" / "corpus.py")
corpus = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = corpus  # dataclasses look their module up
spec.loader.exec_module(corpus)


def result(culprit: dict, layer="Inductor", subsystem="post_grad_passes", torch="2.13.0"):
    return corpus.CaseResult("c", "planted", torch, None, 100, 50, culprit=culprit, layer_known=layer,
                             subsystem_known=subsystem)


def test_the_bisected_subsystem_is_compared_by_its_name_not_its_application():
    bisected = {"layer": "Inductor", "subsystem": "post_grad_passes, application 1 (post_grad_custom_pre_pass)"}
    assert result(bisected).subsystem_named is True
    lowering = {"layer": "Inductor", "subsystem": "lowerings, application 3"}
    assert result(lowering).subsystem_named is False


def test_a_subsystem_not_bisected_is_not_checked_but_one_that_failed_is_not_named():
    assert result({"layer": "Inductor"}).subsystem_named is None
    assert result({"layer": "Inductor", "detail": "subsystem not named: no run failed"}).subsystem_named is False
    assert result({"layer": "Inductor", "subsystem": "post_grad_passes"}, subsystem=None).subsystem_named is None
    no_bisector = {"layer": "Inductor", "detail": "this torch has no compiler bisector to name the subsystem"}
    assert result(no_bisector, torch="2.5.1").subsystem_named is None


def test_the_layer_is_named_only_where_the_case_knows_it():
    assert result({"layer": "Inductor"}).layer_named is True
    assert result({"layer": "Dynamo"}).layer_named is False
    assert result({"layer": "Dynamo"}, layer=None).layer_named is None


def test_a_repro_past_its_smallest_step_and_statement_is_counted():
    stated = corpus.CaseResult("c", "planted", "2.13.0", None, 100, 50, output_tokens=60, smallest_step=40, stated_tokens=20)
    assert stated.beyond_its_smallest_step == 0
    earlier = corpus.CaseResult("c", "planted", "2.13.0", None, 100, 50, output_tokens=90, smallest_step=40, stated_tokens=20)
    assert earlier.beyond_its_smallest_step == 30
    assert corpus.CaseResult("c", "planted", "2.13.0", None, 100, 50).beyond_its_smallest_step is None
