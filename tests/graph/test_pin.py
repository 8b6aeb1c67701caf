"""Which signature a lifted graph must show: the original's, or where the graph form changes it, its own."""

from minimizer.graph.reduce import _Pin
from oracles.api import Verdict
from oracles.bug import Bug
from tests.bugs import check_failed


def _gradient(source: str, dtype: str, kind: str) -> Bug:
    return Bug(f"gradient: {source} {dtype} {kind}", gradient_of=source)


def test_a_parameters_gradient_is_the_same_bug_as_the_emitted_graphs_input_gradient():
    pin = _Pin("gradient", _gradient("parameter", "float32", "value"))
    assert not pin.accepts_first(Verdict(True, bug=_gradient("input", "float64", "value")))
    assert not pin.accepts_first(Verdict(False, bug=_gradient("input", "float32", "value")))
    assert pin.accepts_first(Verdict(True, bug=_gradient("input", "float32", "value")))
    assert pin.matches(Verdict(True, bug=_gradient("input", "float32", "value")))  # re-pinned
    assert not pin.matches(Verdict(True, bug=_gradient("parameter", "float32", "value")))


def test_other_signatures_must_match_as_they_are():
    pin = _Pin("numerical", Bug("numerical: float32 value"))
    assert not pin.accepts_first(Verdict(True, "numerical: float32 nan"))
    assert pin.accepts_first(Verdict(True, "numerical: float32 value"))
    script = _Pin("script", check_failed("AssertionError: weights differ"))
    assert script.accepts_first(Verdict(True, bug=check_failed("AssertionError: Tensor-likes are not close!")))


def test_a_parameters_gradient_stays_the_bug_when_the_parameter_becomes_an_input():
    pin = _Pin("gradient", _gradient("parameter", "float32", "value"))
    assert pin.accepts_first(Verdict(True, bug=_gradient("parameter", "float32", "value")))
    # parameters_to_inputs: the same wrong gradient, now of an input.
    assert pin.matches(Verdict(True, bug=_gradient("input", "float32", "value")))
    assert pin.matches(Verdict(True, bug=_gradient("parameter", "float32", "value")))
    assert not pin.matches(Verdict(True, bug=_gradient("input", "float32", "nan")))
    # Never the other way: an input's wrong gradient is not a parameter's.
    assert not _Pin("gradient", _gradient("input", "float32", "value")).matches(Verdict(True, bug=_gradient("parameter", "float32", "value")))
