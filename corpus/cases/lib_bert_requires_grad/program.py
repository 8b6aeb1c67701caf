"""Fine-tune a small BERT classifier (from a config, random weights) through the serving backend.

The fine-tuning loop compiles the classifier with the serving team's backend so that training and serving
share kernels; each step computes the loss on a batch of synthetic sentences and takes an optimizer step.
"""

import torch
from transformers import BertConfig, BertForSequenceClassification

from serve_backend import serve


def synthetic_batches(count, batch, length, vocab, labels, seed=0):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        ids = torch.randint(1, vocab, (batch, length), generator=generator)
        yield {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": ids[:, 0] % labels}


def fine_tune(model, batches, lr=2e-4):
    model.train()
    step = torch.compile(model, backend=serve)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    history = []
    for batch in batches:
        loss = step(**batch).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


def main():
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=256,
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=64,
        num_labels=3,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = BertForSequenceClassification(config)
    history = fine_tune(model, synthetic_batches(3, batch=4, length=12, vocab=config.vocab_size, labels=3))
    print("losses", [round(v, 4) for v in history])


if __name__ == "__main__":
    main()
