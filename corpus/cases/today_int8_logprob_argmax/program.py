"""Decoder for a quantized language-ID model: int8 log-probabilities in, predicted language and confidence out.

The model ships its log-probabilities quantized to int8 (scale 1/8, so every value is negative). The decoder
picks the best language per utterance with ``argmax`` and reports its log-probability with ``max``; it is
compiled, and its predictions are compared with eager over several evaluation batches.

Upstream: https://github.com/pytorch/pytorch/issues/191499 (CPU Inductor's vectorized int8/uint8 min/max and
argmin/argmax reductions start from 0 instead of the dtype's extreme once the reduction has 16 or more
elements, so an all-negative int8 row gets max 0 and a garbage argmax).
"""

from dataclasses import dataclass

import torch

LANGUAGES = (
    "en", "de", "fr", "es", "it", "pt", "nl", "sv", "da", "no",
    "fi", "pl", "cs", "sk", "hu", "ro", "bg", "el", "tr", "uk",
)


@dataclass
class EvalConfig:
    batches: tuple = (3, 5)
    scale: float = 1 / 8
    seed: int = 0


def quantize_logprobs(logits, scale):
    logp = torch.log_softmax(logits, dim=-1)
    return torch.clamp(torch.round(logp / scale), -128, 127).to(torch.int8)


def decode(logp_q):
    best = logp_q.max(dim=-1).values
    pred = logp_q.argmax(dim=-1)
    return {"pred": pred, "best": best}


def evaluate(config: EvalConfig):
    torch.manual_seed(config.seed)
    compiled_decode = torch.compile(decode)
    mismatches = []
    for batch_index, size in enumerate(config.batches):
        logits = torch.randn(size, len(LANGUAGES)) * 2
        logp_q = quantize_logprobs(logits, config.scale)
        expected = decode(logp_q)
        actual = compiled_decode(logp_q)
        for key in ("pred", "best"):
            if not torch.equal(actual[key], expected[key]):
                mismatches.append((batch_index, key, expected[key].tolist(), actual[key].tolist()))
        labels = [LANGUAGES[i] for i in expected["pred"].tolist()]
        print(f"batch {batch_index}: {labels}")
    return mismatches


if __name__ == "__main__":
    mismatches = evaluate(EvalConfig())
    for batch_index, key, e, a in mismatches:
        print(f"batch {batch_index} {key}: eager {e} compiled {a}")
    assert not mismatches, "compiled decoder disagrees with eager"
