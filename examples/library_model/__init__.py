"""A stand-in for a model library: the layers live here, not in the failing script."""

from library_model.blocks import FeedForward, SelfAttention, TransformerBlock, TinyTransformer

__all__ = ["FeedForward", "SelfAttention", "TransformerBlock", "TinyTransformer"]
