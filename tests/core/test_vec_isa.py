"""Inductor's CPU probe answered once per host and environment: recorded, then replayed."""

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SETTLE_THEN_PICK = (
    "from minimizer.runner.vec_isa import settle_vec_isa\n"
    "settle_vec_isa()\n"
    "from torch._inductor import cpu_vec_isa\n"
    "print([str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()])\n"
)


def _run(code: str, home: Path) -> list[str]:
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(REPO))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"'))


def test_the_probe_is_recorded_once_then_replayed(tmp_path):
    plain = _run("from torch._inductor import cpu_vec_isa\nprint([str(i) for i in cpu_vec_isa.valid_vec_isa_list()])\n", tmp_path)
    assert _run(SETTLE_THEN_PICK, tmp_path) == plain  # probed, and recorded
    (record,) = (tmp_path / ".cache" / "minimizer" / "vec-isa-probe").glob("answers-*.json")
    answers = json.loads(record.read_text())
    assert {key.rsplit(" ", 1)[0] for key, works in answers.items() if works} == set(plain)
    # A later process replays the record instead of probing: a record saying no to everything shows it.
    record.write_text(json.dumps({key: False for key in answers}))
    assert _run(SETTLE_THEN_PICK, tmp_path) == []
