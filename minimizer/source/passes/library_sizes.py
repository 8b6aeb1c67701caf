"""The sizes a script gives a library's model, told from its other arguments: a count (`n_layer=2`) or a width
(`n_embd=64`) passed by keyword to a class the script does not define.

Such a size is shrunk, never deleted: deleting it builds the model at the library's default, which means big
(`configs.library` shrinks them, `signatures.arguments` leaves them when it deletes arguments).
"""

from __future__ import annotations

import libcst as cst

__all__ = ["LIBRARY_COUNTS", "LIBRARY_WIDTHS", "is_library_size", "script_names"]


# Counts a model repeats or splits into: one is the smallest that builds.
LIBRARY_COUNTS = frozenset(
    {
        "n_layer", "n_layers", "num_layers", "num_hidden_layers", "depth", "layers", "num_blocks", "n_head",
        "n_heads", "num_heads", "num_attention_heads", "num_key_value_heads", "n_kv_heads", "num_experts",
        "num_local_experts", "num_experts_per_tok", "encoder_layers", "decoder_layers", "encoder_attention_heads",
        "decoder_attention_heads", "num_encoder_layers", "num_decoder_layers", "nhead", "layers_per_block",
    }
)
# Widths and table sizes: halved (a width must stay divisible by whatever still splits it). Not a patch or
# kernel size: a smaller patch makes more of them, a longer sequence.
LIBRARY_WIDTHS = frozenset(
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

    if arg.keyword is None or arg.keyword.value not in LIBRARY_COUNTS | LIBRARY_WIDTHS:
        return False
    callee = call.func
    name = callee.attr.value if isinstance(callee, cst.Attribute) else getattr(callee, "value", None)
    return isinstance(name, str) and name[:1].isupper() and name not in script_names


def script_names(module: cst.Module) -> set[str]:
    """The names the script defines at module level with `def` or `class`."""

    return {
        statement.name.value
        for statement in module.body
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef))
    }
