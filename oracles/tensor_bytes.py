"""A CPU tensor's bytes without NumPy: torch runs without it, and so must the harness's digests."""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["tensor_bytes"]


def tensor_bytes(tensor: Any) -> bytes:
    """The bytes of ``tensor``'s elements in order (read from a contiguous CPU copy). ``.numpy().tobytes()``
    says the same where NumPy is installed; a user's environment need not have it (torch 2.5.1 installs
    without it, and the script's run then ended in the harness's "Numpy is not available")."""

    flat = tensor.detach().cpu().contiguous()
    size = flat.numel() * flat.element_size()
    return ctypes.string_at(flat.data_ptr(), size) if size else b""
