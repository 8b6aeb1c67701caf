"""Oscillator bank of a small bfloat16 synthesizer: phases advance per step and wrap at 2*pi, compiled.

Phase accumulators are kept in bfloat16 and wrapped with ``torch.remainder(phase, 2 * math.pi)``. The
compiled bank is compared to eager for every voice preset; the wrapped phase must agree.

Upstream: https://github.com/pytorch/pytorch/issues/186875 (CPU Inductor keeps a Python float scalar at full
precision for bf16/fp16 fmod and remainder while eager rounds it to the tensor dtype first, so a phase equal
to bf16(2*pi) wraps to 0 in eager and stays near 2*pi compiled; see also #183083 for float16).
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn

TWO_PI = 2 * math.pi


@dataclass(frozen=True)
class Voice:
    name: str
    steps: int
    increment: float  # radians per step


VOICES = (
    Voice("drone", 32, math.pi / 8),
    Voice("lead", 48, math.pi / 4),
    Voice("bass", 16, math.pi / 2),
)


class PhaseWrap(nn.Module):
    def forward(self, phase):
        return torch.remainder(phase, TWO_PI)


class Oscillator(nn.Module):
    def __init__(self):
        super().__init__()
        self.wrap = PhaseWrap()

    def forward(self, phase):
        wrapped = self.wrap(phase)
        return {"phase": wrapped, "wave": torch.sin(wrapped)}


class OscillatorBank(nn.Module):
    def __init__(self):
        super().__init__()
        self.osc = Oscillator()

    def forward(self, phases):
        out = self.osc(phases)
        out["level"] = out["wave"].abs().mean(dim=-1)
        return out


def accumulate(voice: Voice, dtype=torch.bfloat16):
    steps = torch.arange(voice.steps, dtype=torch.float32)
    return (steps * voice.increment).to(dtype).unsqueeze(0)


def run_bank():
    torch.manual_seed(0)
    bank = OscillatorBank().eval()
    compiled = torch.compile(bank)
    mismatches = []
    with torch.no_grad():
        for voice in VOICES:
            phases = accumulate(voice)
            expected = bank(phases)
            actual = compiled(phases)
            for key in ("phase", "wave", "level"):
                try:
                    torch.testing.assert_close(actual[key], expected[key])
                except AssertionError as err:
                    mismatches.append((voice.name, key, str(err).splitlines()[0]))
    return mismatches


if __name__ == "__main__":
    mismatches = run_bank()
    for voice, key, msg in mismatches:
        print(f"{voice}/{key}: {msg}")
    assert not mismatches, f"{len(mismatches)} compiled outputs differ from eager"
    print("oscillator bank ok")
