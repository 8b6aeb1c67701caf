"""A compared kernel's first launch in the original program, replayed on a candidate's kernel: one program of it.

The reducer's stage for compared kernels (``minimizer.stages.own_kernels``) keeps an edit of a kernel where the values
the script compares stay the same. By then the inputs have shrunk, often to one row or one element, where a buggy
index computes what a simpler one does (``offs // n_cols`` is ``offs`` for one column, ``cols * 0`` is ``cols``
for one): held to those values alone, the stage would drop the very line the kernel's author must fix.

So the original program's first launch of each compared kernel is recorded (its arguments by parameter name, and
what one program of it, the first, wrote), and every candidate of that stage replays it on its own kernel:
the candidate's kernel must write the same values there (to rounding). One program, not the whole grid: an edit that drops the
program's offset (``pid * stride``) computes the same in the first program, and a repro of one row needs no
offset; an edit that changes what a program computes from realistic data does not.

The stage asks through the environment (``LAUNCHES_VARIABLE``, read by ``oracles.kernel_launches``): record into
a file, or replay from it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Callable

LAUNCHES_VARIABLE = "MINIMIZER_KERNEL_LAUNCHES"
# A first launch whose tensors are larger than this in all is not recorded: replaying it costs more than it tells.
_MOST_BYTES = 64 * 2**20
_ONE_PROGRAM = (1, 1, 1)
_RTOL, _ATOL = 1e-4, 1e-6


def asking(mode: str, path: str, kernels: list[str]) -> tuple[str, str]:
    """The environment entry that asks a run to ``record`` the first launches of ``kernels`` into ``path``, or
    to ``replay`` them from there."""

    return LAUNCHES_VARIABLE, json.dumps({"mode": mode, "path": path, "kernels": sorted(kernels)})


@dataclass
class FirstLaunches:
    """Per kernel named in the request, its first launch recorded or replayed; ``differences`` says which
    candidate kernels wrote otherwise than the original (empty when all wrote the same)."""

    mode: str
    path: str
    kernels: frozenset[str]
    differences: list[str] = field(default_factory=list)
    _seen: set[str] = field(default_factory=set)

    @classmethod
    def requested(cls) -> FirstLaunches | None:
        asked = os.environ.get(LAUNCHES_VARIABLE)
        if not asked:
            return None
        request = json.loads(asked)
        return cls(request["mode"], request["path"], frozenset(request["kernels"]))

    def on_launch(self, name: str, bound: dict[str, Any], launch_on: Callable[[tuple], Callable[..., Any]]) -> None:
        """Before a launch of kernel ``name`` with the arguments ``bound`` (by parameter name): record or replay
        its first launch; ``launch_on(grid)`` launches this kernel, as the candidate defined it, on ``grid``."""

        if name not in self.kernels or name in self._seen:
            return
        self._seen.add(name)
        if self.mode == "record":
            self._record(name, bound, launch_on)
        else:
            self._replay(name, bound, launch_on)

    def _record(self, name: str, bound: dict[str, Any], launch_on: Callable[[tuple], Callable[..., Any]]) -> None:
        import torch

        tensors = [v for v in bound.values() if isinstance(v, torch.Tensor)]
        if sum(t.numel() * t.element_size() for t in tensors) > _MOST_BYTES:
            return
        before = _on_cpu(bound)
        given = _on_device(before, bound)
        launch_on(_ONE_PROGRAM)(**given)
        recorded = _load(self.path)
        recorded[name] = {"before": before, "after": _on_cpu(given)}
        _save(recorded, self.path)

    def _replay(self, name: str, bound: dict[str, Any], launch_on: Callable[[tuple], Callable[..., Any]]) -> None:
        import torch

        recorded = _load(self.path).get(name)
        if recorded is None:
            return  # not recorded (too large, or the original never launched it): nothing to hold it to
        before, after = recorded["before"], recorded["after"]
        missing = [parameter for parameter in bound if parameter not in before]
        if missing:
            self.differences.append(f"{name} takes {', '.join(missing)}, which its first launch in the original did not")
            return
        given = _on_device({p: before[p] for p in bound}, bound)
        try:
            launch_on(_ONE_PROGRAM)(**given)
        except Exception as exc:  # noqa: BLE001 - a kernel that cannot run the original's launch is not the same
            self.differences.append(f"{name} fails on its first launch in the original ({type(exc).__name__})")
            return
        for parameter, wrote in after.items():
            if not isinstance(wrote, torch.Tensor):
                continue
            now = given[parameter] if parameter in given else before[parameter]
            if not _same_values(now.detach().cpu(), wrote):
                self.differences.append(
                    f"{name} writes other values into {parameter} than the original did on its first launch"
                )
                return


def _on_cpu(bound: dict[str, Any]) -> dict[str, Any]:
    """Each tensor argument copied to the CPU (one copy for a tensor given twice), other arguments as given."""

    import torch

    copies: dict[int, Any] = {}
    return {
        name: copies.setdefault(id(value), value.detach().cpu().clone()) if isinstance(value, torch.Tensor) else value
        for name, value in bound.items()
    }


def _on_device(values: dict[str, Any], like: dict[str, Any]) -> dict[str, Any]:
    """``values`` as fresh tensors on the devices of the arguments ``like`` gives (one for a tensor given twice)."""

    import torch

    copies: dict[int, Any] = {}
    moved = {}
    for name, value in values.items():
        device = getattr(like.get(name), "device", None) or "cpu"
        moved[name] = (
            copies.setdefault(id(value), value.clone().to(device)) if isinstance(value, torch.Tensor) else value
        )
    return moved


def _same_values(a: Any, b: Any) -> bool:
    """Equal, or for floating point close to rounding: an edit that computes the same in another order (a
    softmax without its max subtracted) rounds otherwise; a wrong index or threshold is far off."""

    import torch

    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.allclose(a, b, rtol=_RTOL, atol=_ATOL, equal_nan=True)
    return torch.equal(a, b)


def _load(path: str) -> dict[str, Any]:
    import torch

    if not os.path.exists(path):
        return {}
    return torch.load(path, weights_only=False)


def _save(recorded: dict[str, Any], path: str) -> None:
    import torch

    partial = f"{path}.{os.getpid()}.part"
    torch.save(recorded, partial)
    os.replace(partial, path)
