"""How a reduction's cost grows with the program: the same real Inductor bug inside fuzzer-style programs of 30,
120 and 400 operators (one ``nn.Module`` whose ``forward`` is a long straight line of elementwise and reduction
operators over a few live tensors), each reduced with default options; seconds, oracle calls and tokens against
the program's size.

    python bench/size_curve.py [--sizes 30,120,400] [--max-time 600] [--json-out FILE]

The bug is pytorch#186875 (torch 2.13 CPU): ``torch.remainder`` of a bfloat16 tensor by a Python float keeps the
scalar at float32 where eager rounds it, so a value equal to bf16(scalar) wraps a whole period away. It sits in
the middle of ``forward``; everything else is noise a fuzzer writes (`bench/corpus.py`'s hand repro of
today_bf16_remainder_scalar is the measure: 55 tokens).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
HAND_TOKENS_CASE = REPO / "corpus" / "cases" / "today_bf16_remainder_scalar" / "hand.py"

_UNARY = ("torch.sin({a})", "torch.cos({a})", "torch.tanh({a})", "torch.sigmoid({a})", "torch.abs({a})",
          "{a} * 0.5", "{a} + 1.0", "torch.relu({a})", "torch.exp(-torch.abs({a}))", "{a}.neg()")
_BINARY = ("{a} + {b}", "{a} * {b}", "torch.maximum({a}, {b})", "torch.minimum({a}, {b})", "{a} - {b}")
_REDUCING = ("{a} - {a}.mean()", "{a} / ({a}.abs().max() + 1.0)", "torch.softmax({a}, dim=-1)")


def program(operators: int, seed: int = 0) -> str:
    """A module of ``operators`` lines around the bug, with the check a fuzzer writes at the end."""

    draw = random.Random(seed)
    live = ["x", "y"]
    lines = []
    for i in range(operators):
        if i == operators // 2:
            lines.append("        phase = torch.remainder(x.to(torch.bfloat16), 1.7)")
            lines.append("        t_bug = phase.float()")
            live.append("t_bug")
            continue
        kind = draw.random()
        a, b = draw.choice(live), draw.choice(live)
        template = draw.choice(_UNARY if kind < 0.6 else _BINARY if kind < 0.9 else _REDUCING)
        lines.append(f"        t{i} = {template.format(a=a, b=b)}")
        live.append(f"t{i}")
    outputs = ", ".join(["t_bug", *live[-3:]])
    body = "\n".join(lines)
    return f"""import torch
import torch.nn as nn


class Fuzzed(nn.Module):
    def forward(self, x, y):
{body}
        return {outputs}


torch.manual_seed(0)
x = torch.tensor([1.703125, -1.703125] * 4)
y = torch.randn(8)
model = Fuzzed()
expected = model(x, y)
actual = torch.compile(model)(x, y)
for e, a in zip(expected, actual):
    torch.testing.assert_close(a, e)
"""


def reduce_one(operators: int, max_time: float) -> dict:
    from minimizer.metrics import measure

    with tempfile.TemporaryDirectory(prefix=f"size-{operators}-") as folder:
        script = Path(folder) / "program.py"
        script.write_text(program(operators))
        report = Path(folder) / "report.json"
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, "-m", "minimizer", "reduce", str(script), "-o", str(Path(folder) / "out.py"), "-q",
             "--report", str(report), "--max-time", str(max_time)],
            capture_output=True, text=True, cwd=REPO,
        )
        seconds = time.monotonic() - started
        data = json.loads(report.read_text()) if report.exists() else {}
        out = Path(folder) / "out.py"
        return {
            "operators": operators,
            "tokens_before": measure(script.read_text()).tokens,
            "tokens_after": measure(out.read_text()).tokens if out.exists() else None,
            "seconds": round(seconds, 1),
            "oracle_calls": data.get("oracle_calls"),
            "exit_code": done.returncode,
            "time": data.get("time", {}),
            "culprit": data.get("culprit", {}),
            "error": done.stderr.strip().splitlines()[-1] if done.returncode not in (0,) and done.stderr.strip() else "",
        }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="30,120,400")
    parser.add_argument("--max-time", type=float, default=600.0)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    from minimizer.metrics import measure

    hand = measure(HAND_TOKENS_CASE.read_text()).tokens
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        row = reduce_one(size, args.max_time)
        rows.append(row)
        ratio = f"{row['tokens_after'] / hand:.2f}x" if row["tokens_after"] else "-"
        print(f"{size:4d} operators: {row['tokens_before']:5d} -> {row['tokens_after']} tokens ({ratio} the hand repro),"
              f" {row['seconds']:6.1f} s, {row['oracle_calls']} oracle calls {row['error']}", flush=True)
    if len(rows) > 1 and all(r["seconds"] for r in rows):
        print(f"seconds grow {rows[-1]['seconds'] / rows[0]['seconds']:.2f}x from {rows[0]['operators']} to {rows[-1]['operators']} operators")
    if args.json_out:
        args.json_out.write_text(json.dumps({"hand_tokens": hand, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
