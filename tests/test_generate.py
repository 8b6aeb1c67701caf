"""bench/generate.py: programs from a seed are valid Python, the same for the same seed, and cover every option.

Whether each program and hand repro fails, and passes with its fix, is the bench's check (bench/generated.py):
it runs them, which is too slow for the suite.
"""

import ast
import importlib.util
import sys
from pathlib import Path

_BENCH = Path(__file__).parent.parent / "bench"
sys.path.insert(0, str(_BENCH))  # as when run as a script: generate.py imports its neighbour upstream_bugs
spec = importlib.util.spec_from_file_location("bench_generate", _BENCH / "generate.py")
generate = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = generate
spec.loader.exec_module(generate)

# The development range, and as many seeds from where diffusers joined the models (bench/generate.py).
SEEDS = [*range(200), *range(492, 692)]


def test_every_program_and_hand_repro_parses():
    for seed in SEEDS:
        program = generate.generate(seed)
        for name, text in [*program.files.items(), ("hand.py", program.hand)]:
            try:
                ast.parse(text)
            except SyntaxError as error:  # pragma: no cover - the message says which
                raise AssertionError(f"seed {seed}: {name} does not parse: {error}") from error


def test_a_seed_gives_the_same_program():
    for seed in (0, 7, 123):
        first, again = generate.generate(seed), generate.generate(seed)
        assert first.files == again.files and first.hand == again.hand and first.drawn == again.drawn
    assert generate.generate(1).files != generate.generate(2).files


def test_the_seeds_draw_every_option():
    drawn = {key: set() for key in generate.OPTIONS}
    for seed in SEEDS:
        for key in generate.OPTIONS:
            drawn[key].add(generate.generate(seed).drawn[key])
    for key, options in generate.OPTIONS.items():
        assert set(options) <= drawn[key], f"{key}: never drawn: {set(options) - drawn[key]}"


def test_the_seeds_drawn_before_diffusers_joined_stay_the_programs_they_were():
    # Seeds up to 491 were run and reported as they were drawn then: none of them takes the new model or bug.
    assert all(generate.draw(seed)["model"] != "diffusers" for seed in range(492))
    assert all(generate.draw(seed)["bug"] != "upstream" for seed in range(492))
    assert generate.draw(458)["model"] == "bert" and generate.draw(492)["model"] == "diffusers"


def test_a_real_bug_is_planted_in_a_plain_model_and_claimed_on_its_release():
    upstream = [program for seed in SEEDS if (program := generate.generate(seed)).drawn["bug"] == "upstream"]
    assert {program.drawn["upstream"] for program in upstream} == set(generate.UPSTREAM_BUGS)
    for program in upstream:
        bug = generate.UPSTREAM_BUGS[program.drawn["upstream"]]
        text = program.files["program.py"]
        assert f"def {bug.op}(" in text and f"{bug.op}(self." in text and "planted_backend" not in text
        assert program.drawn["model"] in ("mlp", "conv", "gated") and program.drawn["call_site"] != "autocast"
        assert (program.meta["torch"], program.meta["passes_on"]) == (bug.torch, bug.passes_on)
        assert program.meta["upstream"] == bug.upstream and program.hand == bug.hand
        assert program.meta["compares_the_suspect"] is not bug.crash


def test_a_real_bug_whose_gradient_is_nan_in_eager_is_not_trained_on_from_seed_582():
    # Seed 585: a training step spread atan2's NaN gradient into the weights; the program failed with the identity.
    drawn = [generate.draw(seed) for seed in range(582, 1200)]
    untrained = [d for d in drawn if d["bug"] == "upstream" and not generate.UPSTREAM_BUGS[d["upstream"]].trains]
    assert untrained and all(d["call_site"] != "training_step" for d in untrained)
    assert generate.draw(580)["call_site"] == "training_step"  # drawn and reported before: it stays


def test_what_a_program_draws_is_in_its_text():
    for seed in SEEDS:
        program = generate.generate(seed)
        text, drawn = program.files["program.py"], program.drawn
        form = drawn["compile_form"]
        if form == "module_compile":
            assert "model.compile(" in text
        elif form == "dynamo_optimize":
            assert "torch._dynamo.optimize(" in text
        elif form == "bound_method":
            assert "torch.compile(model.forward" in text
        if drawn["check"] == "unittest":
            assert "unittest.main(" in text
        if drawn["bug"] == "backend_in_script":
            assert "def planted_backend(" in text and "_planted.py" not in program.files
        if drawn["bug"] == "triton_kernel":
            old, _ = program.meta["fix"]
            assert old in text and old in program.hand
