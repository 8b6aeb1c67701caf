"""Score a small Mixtral (from a config, random weights) on held-out sequences with the MoE inference backend.

Evaluation compiles the model once with the team's ``moe`` backend and reports the perplexity over a table of
held-out sequence lengths.
"""

import math

import torch
from transformers import MixtralConfig, MixtralForCausalLM

import moe_backend  # noqa: F401  (registers the "moe" backend)

LENGTHS = [8, 16]


@torch.no_grad()
def perplexity(model, ids):
    logits = model(input_ids=ids).logits
    loss = torch.nn.functional.cross_entropy(logits[:, :-1].flatten(0, 1), ids[:, 1:].flatten())
    return math.exp(loss.item())


def evaluate(model, vocab, seed=0):
    generator = torch.Generator().manual_seed(seed)
    compiled = torch.compile(model, backend="moe")
    scores = {}
    for length in LENGTHS:
        ids = torch.randint(0, vocab, (2, length), generator=generator)
        scores[length] = perplexity(compiled, ids)
    return scores


def main():
    torch.manual_seed(0)
    config = MixtralConfig(
        vocab_size=128,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        num_local_experts=4,
        num_experts_per_tok=2,
        max_position_embeddings=64,
    )
    model = MixtralForCausalLM(config).eval()
    for length, score in evaluate(model, config.vocab_size).items():
        print(f"length {length}: perplexity {score:.2f}")


if __name__ == "__main__":
    main()
