"""docs/results.md is what bench/results_page.py writes from the committed bench/results/*.json, and stays short.

The page is regenerated, never edited: a results file added without running the script, or an edit by hand, fails
here. Reads JSON only (no torch, no compile).
"""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("bench_results_page", ROOT / "bench" / "results_page.py")
page = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = page  # dataclasses look their module up
spec.loader.exec_module(page)

MOST_LINES = 300


def test_the_committed_page_is_what_the_generator_writes():
    written = page.render(ROOT / "bench" / "results")
    assert (ROOT / "docs" / "results.md").read_text() == written, (
        "docs/results.md differs from what `python bench/results_page.py` writes: run it and commit the page")


def test_the_page_is_at_most_300_lines_and_names_its_command():
    text = (ROOT / "docs" / "results.md").read_text()
    assert len(text.splitlines()) <= MOST_LINES
    assert page.COMMAND in "\n".join(text.splitlines()[:3])


def test_the_files_named_first_and_final_exist():
    for pair in page.FIRST_AND_FINAL:
        for name in pair.first + pair.final:
            assert (ROOT / "bench" / "results" / name).is_file(), name


def _corpus_file(folder: Path, name: str, date: str, cases: dict[str, int]) -> None:
    results = [{"case": case, "torch": "2.13.0", "oracle": "numerical", "hand_tokens": 10, "output_tokens": tokens,
                "ratio": tokens / 10, "seconds": 1.0, "error": None, "checks": {"fails": True}}
               for case, tokens in cases.items()]
    data = {"date": date, "commit": "abc1234", "options": {}, "summary": {}, "results": results}
    (folder / name).write_text(json.dumps(data))


def test_each_case_shows_its_latest_measurement_and_a_skip_is_none(tmp_path):
    _corpus_file(tmp_path, "2026-01-01-a.json", "2026-01-01T10:00:00", {"alpha": 30, "beta": 20})
    _corpus_file(tmp_path, "2026-01-02-b.json", "2026-01-02T09:00:00", {"alpha": 12})
    skipped = {"case": "beta", "torch": "2.5.1", "hand_tokens": 10, "error": "skipped: needs transformers",
               "checks": {}}
    (tmp_path / "2026-01-03-c.json").write_text(json.dumps(
        {"date": "2026-01-03T09:00:00", "options": {}, "summary": {}, "results": [skipped]}))
    text = page.render(tmp_path)
    alpha = next(line for line in text.splitlines() if line.startswith("| `alpha`"))
    beta = next(line for line in text.splitlines() if line.startswith("| `beta`"))
    assert "| 12 | 1.20x |" in alpha and "2026-01-02-b.json" in alpha
    assert "| 20 | 2.00x |" in beta and "2026-01-01-a.json" in beta
