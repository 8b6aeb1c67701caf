import json

from minimizer import metrics


def test_tensor_method_names_are_listed_once_per_torch_release_and_then_read_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setattr(metrics, "TENSOR_METHODS_CACHE", tmp_path)
    metrics._tensor_method_names.cache_clear()
    try:
        names = metrics._tensor_method_names()
        assert {"relu", "view", "backward"} <= names
        (cached,) = tmp_path.glob("tensor-methods-*.json")
        cached.write_text(json.dumps(["relu"]))  # what a later run reads, without importing torch
        metrics._tensor_method_names.cache_clear()
        assert metrics._tensor_method_names() == {"relu"}
        assert metrics.count_torch_ops("y = x.relu()\nz = x.view(2)\n") == 1
    finally:
        metrics._tensor_method_names.cache_clear()



def test_an_fstring_is_one_token_whatever_python_tokenizes_it_into(monkeypatch):
    # Python 3.12 splits `f"{name}: differs"` into its parts (PEP 701); 3.11 reads one string. Sizes must not
    # depend on the Python that measures them. The parts are made here as 3.12 makes them, on any Python.
    import tokenize

    start, end = 1001, 1002
    monkeypatch.setattr(metrics, "_FSTRING_START", start)
    monkeypatch.setattr(metrics, "_FSTRING_END", end)

    def token(kind, text):
        return tokenize.TokenInfo(kind, text, (1, 0), (1, 0), "")

    name, op, middle = tokenize.NAME, tokenize.OP, 1003
    parts = [token(start, 'f"'), token(op, "{"), token(name, "name"), token(op, "}"),
             token(start, "f'"), token(middle, "x"), token(end, "'"), token(middle, ": differs"), token(end, '"')]
    found = metrics._whole_fstrings([token(name, "assert"), token(name, "ok"), token(op, ","), *parts, token(op, "+")])
    assert found == ["assert", "ok", ",", "f\"{name}f'x': differs\"", "+"]
    assert metrics.count_tokens('assert ok, f"{name}: {x} differs"\n') == 4  # this Python, whichever it is
