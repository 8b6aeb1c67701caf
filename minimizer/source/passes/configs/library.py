"""Shrink the sizes a script gives a library's model: `GPT2Config(n_layer=2, n_embd=64, n_head=4)` becomes
`GPT2Config(n_layer=1, n_embd=32, n_head=1)`.

A library config's defaults mean "big": deleting `n_layer=2` from a `GPT2Config` call saves three tokens and
builds the 124M-parameter model, every candidate after it three times slower. So the sizes a script passes to
a class it did not define are shrunk, never deleted (`delete_arguments` asks `is_library_size`), and this pass
runs before argument deletion: layers, heads and experts go to 1 (any width divides into one head), widths,
intermediate sizes, vocabularies and positions halve; all of a call's sizes at once first, then each alone.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, replace_nodes
from minimizer.source.traversal import find_all

__all__ = ["is_library_size", "shrink_library_configs"]

# Counts a model repeats or splits into: one is the smallest that builds.
_COUNTS = frozenset(
    {
        "n_layer", "n_layers", "num_layers", "num_hidden_layers", "depth", "layers", "num_blocks", "n_head",
        "n_heads", "num_heads", "num_attention_heads", "num_key_value_heads", "n_kv_heads", "num_experts",
        "num_local_experts", "num_experts_per_tok", "encoder_layers", "decoder_layers", "encoder_attention_heads",
        "decoder_attention_heads", "num_encoder_layers", "num_decoder_layers", "nhead", "layers_per_block",
    }
)
# Widths and table sizes: halved (a width must stay divisible by whatever still splits it). Not a patch or
# kernel size: a smaller patch makes more of them, a longer sequence.
_WIDTHS = frozenset(
    {
        "n_embd", "hidden_size", "d_model", "embed_dim", "width", "intermediate_size", "n_inner", "d_ff",
        "ffn_dim", "dim_feedforward", "encoder_ffn_dim", "decoder_ffn_dim", "vocab_size", "n_positions",
        "max_position_embeddings", "n_ctx", "block_size", "num_channels", "hidden_dim", "mlp_dim", "head_dim",
        "image_size", "sample_size", "in_channels", "out_channels", "num_labels", "num_classes",
        "block_out_channels", "cross_attention_dim", "attention_head_dim", "max_seq_len", "seq_len",
    }
)


def is_library_size(call: cst.Call, arg: cst.Arg, script_names: set[str]) -> bool:
    """Whether ``arg`` is a size keyword (`n_layer=2`) given to a class the script does not define (a config, a
    model: a capitalized name): its default is the library's, and deleting the argument may make the model far
    larger."""

    if arg.keyword is None or arg.keyword.value not in _COUNTS | _WIDTHS:
        return False
    callee = call.func
    name = callee.attr.value if isinstance(callee, cst.Attribute) else getattr(callee, "value", None)
    return isinstance(name, str) and name[:1].isupper() and name not in script_names


def shrink_library_configs(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the integer size keywords of one call to a class the script does not define made
    smaller: counts to 1 and widths halved, all of the call's at once, then each alone; calls in source order."""

    return distinct_candidates(module, _shrinkings(module))


def _shrinkings(module: cst.Module) -> Iterator[object]:
    names = script_names(module)
    for call in find_all(module, m.Call()):
        sizes = {
            arg.value: smaller
            for arg in call.args  # type: ignore[attr-defined]
            if is_library_size(call, arg, names) and (smaller := _smaller(arg)) is not None  # type: ignore[arg-type]
        }
        if len(sizes) > 1:
            yield lambda s=sizes: replace_nodes(module, s)
        for literal, smaller in sizes.items():
            yield lambda old=literal, new=smaller: replace_nodes(module, {old: new})


def _smaller(arg: cst.Arg) -> cst.Integer | None:
    if not isinstance(arg.value, cst.Integer):
        return None
    value = arg.value.evaluated_value
    target = 1 if arg.keyword.value in _COUNTS else value // 2  # type: ignore[union-attr]
    return cst.Integer(str(target)) if 0 < target < value else None


def script_names(module: cst.Module) -> set[str]:
    """The names the script defines at module level with `def` or `class`."""

    return {
        statement.name.value
        for statement in module.body
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef))
    }
