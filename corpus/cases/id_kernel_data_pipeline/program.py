"""Feature pipeline for a review classifier: text normalised and hashed into token ids, padded, bucketed into
batches, and pooled by our Triton embedding-bag kernel (the mean of each review's token embeddings).

Before the features are written out, every batch's pooled vectors are checked against the PyTorch reference
(``table[ids]`` masked and averaged). Runs under Triton's interpreter on CPU.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import re
import unicodedata
import zlib
from collections import Counter

import torch
import triton
import triton.language as tl

PAD, UNK = 0, 1
RESERVED = 2

REVIEWS = [
    ("The battery lasts ALL day -- honestly impressed!", 1),
    ("Screen cracked after a week. Returned it.", 0),
    ("Works as advertised; setup took five minutes.", 1),
    ("Terrible support, never again", 0),
    ("Café-quality espresso at home?! Yes.", 1),
    ("Meh.", 0),
    ("Arrived late, box damaged, but the product itself is fine and does the job", 1),
    ("Stopped charging on day three; the replacement did the same thing", 0),
    ("Great value for the price", 1),
    ("Loud, hot and slow. Would not recommend to anyone.", 0),
    ("Five stars: light, quiet, and the app actually works", 1),
    ("It's ok", 0),
]


def normalise(text):
    text = unicodedata.normalize("NFKD", text)
    text = "".join(ch for ch in text if not unicodedata.combining(ch)).lower()
    text = re.sub(r"[^a-z0-9' ]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()


def tokenize(text, vocab_size, min_count, counts):
    ids = []
    for word in normalise(text).split():
        if counts[word] < min_count:
            ids.append(UNK)
        else:
            ids.append(RESERVED + zlib.crc32(word.encode()) % (vocab_size - RESERVED))
    return ids


def pad(sequences, max_len):
    lengths = [min(len(s), max_len) for s in sequences]
    width = max(lengths)
    ids = torch.full((len(sequences), width), PAD, dtype=torch.int32)
    for row, (seq, n) in enumerate(zip(sequences, lengths)):
        ids[row, :n] = torch.tensor(seq[:n], dtype=torch.int32)
    return ids, torch.tensor(lengths, dtype=torch.int32)


def bucket_batches(sequences, labels, batch_size):
    order = sorted(range(len(sequences)), key=lambda i: len(sequences[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        yield [sequences[i] for i in idx], torch.tensor([labels[i] for i in idx])


@triton.jit
def bag_mean_kernel(ids_ptr, len_ptr, table_ptr, out_ptr, seq_len, dim,
                    BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr):
    row = tl.program_id(0)
    t = tl.arange(0, BLOCK_T)
    d = tl.arange(0, BLOCK_D)
    length = tl.load(len_ptr + row)
    tmask = t < length
    ids = tl.load(ids_ptr + row * seq_len + t, mask=tmask, other=0)
    dmask = d < dim
    rows = tl.load(table_ptr + ids[:, None] * dim + d[None, :], mask=tmask[:, None] & dmask[None, :], other=0.0)
    acc = tl.sum(rows, axis=0)
    tl.store(out_ptr + row * dim + d, acc / seq_len, mask=dmask)


def bag_mean(ids, lengths, table):
    batch, seq_len = ids.shape
    dim = table.shape[1]
    out = torch.empty(batch, dim, dtype=table.dtype)
    bag_mean_kernel[(batch,)](ids.contiguous(), lengths, table.contiguous(), out, seq_len, dim,
                              BLOCK_T=triton.next_power_of_2(seq_len), BLOCK_D=triton.next_power_of_2(dim))
    return out


def bag_mean_reference(ids, lengths, table):
    mask = torch.arange(ids.shape[1])[None, :] < lengths[:, None].long()
    summed = (table[ids.long()] * mask[..., None]).sum(1)
    return summed / lengths[:, None].to(table.dtype)


def build_table(vocab_size, dim, seed):
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(vocab_size, dim, generator=g)
    table = table / table.norm(dim=1, keepdim=True)
    table[PAD] = 0.0
    return table


def main(vocab_size=97, dim=24, max_len=12, batch_size=4, min_count=1):
    texts, labels = zip(*REVIEWS)
    counts = Counter(word for text in texts for word in normalise(text).split())
    sequences = [tokenize(text, vocab_size, min_count, counts) for text in texts]
    print(f"{len(sequences)} reviews, {len(counts)} distinct words, "
          f"mean length {sum(map(len, sequences)) / len(sequences):.1f}")
    table = build_table(vocab_size, dim, seed=0)
    features, targets = [], []
    for number, (batch, y) in enumerate(bucket_batches(list(sequences), list(labels), batch_size)):
        ids, lengths = pad(batch, max_len)
        pooled = bag_mean(ids, lengths, table)
        expected = bag_mean_reference(ids, lengths, table)
        print(f"batch {number}: ids {tuple(ids.shape)}, lengths {lengths.tolist()}")
        torch.testing.assert_close(pooled, expected, rtol=1e-5, atol=1e-6)
        features.append(pooled)
        targets.append(y)
    features = torch.cat(features)
    features = (features - features.mean(0)) / (features.std(0) + 1e-6)
    print(f"features {tuple(features.shape)}, positives {int(torch.cat(targets).sum())}")


if __name__ == "__main__":
    main()
