"""Fine-tune a small GPT-2 (built from a config, random weights) with the deployment backend, against eager.

The trainer compiles the language model once with the team's ``deploy`` backend and runs a few optimizer steps
on synthetic token batches; an eager twin takes the same steps. Their losses must agree step by step.
"""

import copy

import torch
from transformers import GPT2Config, GPT2LMHeadModel

import deploy_backend  # noqa: F401  (registers the "deploy" backend)


def make_batches(count, batch, length, vocab, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randint(0, vocab, (batch, length), generator=generator) for _ in range(count)]


def train(model, batches, compiled, lr=1e-3):
    forward = torch.compile(model, backend="deploy") if compiled else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    losses = []
    for ids in batches:
        loss = forward(input_ids=ids, labels=ids).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def main():
    torch.manual_seed(0)
    config = GPT2Config(
        n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0
    )
    model = GPT2LMHeadModel(config)
    twin = copy.deepcopy(model)
    batches = make_batches(3, batch=2, length=16, vocab=config.vocab_size)
    compiled = train(model, batches, compiled=True)
    eager = train(twin, batches, compiled=False)
    print("compiled", [round(v, 4) for v in compiled])
    print("eager   ", [round(v, 4) for v in eager])
    assert all(abs(a - b) < 1e-3 for a, b in zip(compiled, eager)), "deploy build diverges from eager"


if __name__ == "__main__":
    main()
