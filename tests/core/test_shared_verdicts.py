"""The folder where candidates of one reduction leave verdicts for each other."""

from minimizer.runner.shared_verdicts import SharedVerdicts

VERDICTS = {"numerical": {"fires": True, "signature": "numerical: float32 value", "detail": "call 0 of f"}}


def test_a_verdict_put_under_a_key_is_found_under_it(tmp_path):
    table = SharedVerdicts(tmp_path / "verdicts", ["numerical"], seed=0)
    assert table.get("abc") is None
    table.put("abc", VERDICTS)
    assert table.get("abc") == VERDICTS
    assert table.get("abd") is None
    assert not list((tmp_path / "verdicts").glob("*.tmp"))  # written whole, then renamed


def test_other_oracles_or_seeds_do_not_see_the_verdict(tmp_path):
    SharedVerdicts(tmp_path, ["numerical"], seed=0).put("abc", VERDICTS)
    assert SharedVerdicts(tmp_path, ["numerical", "script"], seed=0).get("abc") is None
    assert SharedVerdicts(tmp_path, ["numerical"], seed=1).get("abc") is None
    assert SharedVerdicts(tmp_path, ["numerical"], seed=0).get("abc") == VERDICTS


def test_an_unreadable_entry_counts_as_none(tmp_path):
    table = SharedVerdicts(tmp_path, ["numerical"], seed=0)
    table.put("abc", VERDICTS)
    next(tmp_path.glob("*.json")).write_text("{not json")
    assert table.get("abc") is None
