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
