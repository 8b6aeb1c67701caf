"""The serving team's backend: graphs that only look up embeddings are run as inference graphs.

PLANTED BUG (for the corpus): the check for "only looks up embeddings" is missing, so every graph holding an
embedding lookup runs under ``torch.no_grad()`` and its outputs come back detached: fine-tuning through the
compiled model loses ``requires_grad``.
"""

import torch
import torch.nn.functional as F


def _looks_up_embeddings(gm):
    return any(node.op == "call_function" and node.target is F.embedding for node in gm.graph.nodes)


def serve(gm, example_inputs):
    if not _looks_up_embeddings(gm):
        return gm.forward

    def inference(*args):
        with torch.no_grad():
            return gm.forward(*args)

    return inference
