"""Retrieval scorer over tagged embeddings: a marker Tensor subclass flows into a compiled similarity search.

The embedding store tags its vectors with a bare ``torch.Tensor`` subclass (``as_subclass``, no
``__torch_dispatch__``) so that callers can tell store-owned tensors apart. The store unit-normalizes queries and
keys; the scorer takes the top matches of ``(queries @ keys.t()) / temperature``; it is compiled, and for each index configuration
its scores must equal eager's.

Upstream: https://github.com/pytorch/pytorch/issues/193932 (torch.compile raises "Multiple dispatch failed for
'torch._ops.aten.mm.out'" from the generated code when a matmul takes a bare tensor subclass input; eager
works).
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F


class StoreEmbedding(torch.Tensor):
    """Marker type for tensors owned by the embedding store."""

    @staticmethod
    def __new__(cls, x):
        return torch.Tensor._make_subclass(cls, x, require_grad=False)


@dataclass(frozen=True)
class IndexConfig:
    keys: int
    dim: int
    top_k: int


CONFIGS = (IndexConfig(16, 8, 3), IndexConfig(32, 4, 5))


class EmbeddingStore:
    def __init__(self, config: IndexConfig, seed: int):
        gen = torch.Generator().manual_seed(seed)
        keys = F.normalize(torch.randn(config.keys, config.dim, generator=gen), dim=-1)
        self.keys = keys.as_subclass(StoreEmbedding)

    def queries(self, n, seed):
        gen = torch.Generator().manual_seed(seed + 100)
        q = F.normalize(torch.randn(n, self.keys.shape[1], generator=gen), dim=-1)
        return q.as_subclass(StoreEmbedding)


TEMPERATURE = 0.07


def score(queries, keys):
    """Temperature-scaled cosine similarity (inputs are unit-normalized by the store)."""
    return (queries @ keys.t()) / TEMPERATURE


def search(scores, k):
    values, indices = torch.topk(torch.as_tensor(scores), k, dim=-1)
    return values, indices


def run_suite():
    compiled_score = torch.compile(score)
    results = []
    for seed, config in enumerate(CONFIGS):
        store = EmbeddingStore(config, seed)
        q = store.queries(4, seed)
        expected = search(score(q, store.keys), config.top_k)
        actual = search(compiled_score(q, store.keys), config.top_k)
        torch.testing.assert_close(torch.as_tensor(actual[0]), torch.as_tensor(expected[0]))
        assert torch.equal(torch.as_tensor(actual[1]), torch.as_tensor(expected[1]))
        results.append((config, expected[1][0].tolist()))
    return results


if __name__ == "__main__":
    for config, top in run_suite():
        print(config, "first query top keys", top)
