"""Programs nobody tuned the reducer for: from a seed, a realistic failing script, its hand repro and its fix.

    python bench/generate.py 17 --out /tmp/gen-17       # writes program.py, hand.py, case.json (and _planted.py)

Each program composes, drawn from the seed:

- the bug: a torch.compile backend that lowers GELU wrongly, in ``_planted.py`` beside the script or defined in the
  script itself; Inductor with a planted post-grad pass (SiLU loses a negation); a Triton kernel of the script
  with an indexing or threshold bug, run under Triton's interpreter on the CPU; or (from seed 492 on) a real
  upstream bug of torch 2.5.1 that the corpus has (``bench/upstream_bugs.py``), fixed in 2.13;
- how the call is compiled: ``torch.compile(f, ...)``, ``@torch.compile`` / ``@torch.compile(...)`` on a
  function or method, ``model.compile(...)``, ``torch.compile`` of a bound method, ``torch._dynamo.optimize``;
- where the call sits: module level, a training step, an evaluation loop, a table of cases over
  ``itertools.product``, a comprehension, a method of a dataclass, behind ``global f; f = ...``, through
  ``functools.partial``, inside ``torch.no_grad()`` or ``torch.autocast``;
- what the check is: ``assert_close`` at the end, a helper returning ``allclose``, a list of problems asserted
  empty, ``if ...: raise``, ``sys.exit(1)``, a metrics dict, a maximum error over a loop, ``unittest``,
  ``np.testing``, ``math.isclose`` on ``.item()``;
- the model: a few plain layers (an MLP, a small conv net, a gated block), or a library's: a transformers BERT from a
  config, a diffusers feed-forward block (from seed 492 on);
- noise a real script has: argument parsing, logging, a config dataclass, data helpers, unused utilities.

The hand repro is the smallest script the generator knows that shows the same bug (the buggy op, compiled as
the program compiles it, compared with eager; or the kernel's buggy line on one element); the fix is how the bug
goes away: ``torch.compile`` as the identity for a compiled bug, the kernel's line mended for a kernel.
``OPTIONS`` lists every choice; ``Program.drawn`` says which a seed took.
"""

from __future__ import annotations

import argparse
import json
import random
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

from upstream_bugs import UPSTREAM_BUGS

BUGS = ("backend_beside", "backend_in_script", "inductor_pass", "triton_kernel")
COMPILE_FORMS = ("call", "decorator", "decorator_options", "method_decorator", "module_compile", "bound_method", "dynamo_optimize")
CALL_SITES = (
    "module_level", "training_step", "evaluation_loop", "case_table", "comprehension", "dataclass_method",
    "global_rebinding", "partial", "no_grad", "autocast",
)
CHECKS = (
    "assert_close", "helper_allclose", "problems_list", "if_raise", "sys_exit", "metrics_dict", "max_error_loop",
    "unittest", "np_testing", "math_isclose",
)
MODELS = ("mlp", "conv", "gated", "bert", "diffusers")
# Seeds before this one were drawn, run and reported before diffusers was a model and before a real upstream bug
# was a bug: they stay the programs they were.
_DIFFUSERS_FROM = _UPSTREAM_FROM = 492
# Seeds before this one planted a real bug whose gradient is NaN in a training step all the same (530, 580 ran and
# were reported so); from it on, such a bug is called elsewhere (seed 585's program failed with the identity).
_UNTRAINED_FROM = 582
_LIBRARIES = {"bert": "transformers", "diffusers": "diffusers"}
_PLAIN_MODELS = ("mlp", "conv", "gated")
OPTIONS = {"bug": BUGS + ("upstream",), "compile_form": COMPILE_FORMS, "call_site": CALL_SITES, "check": CHECKS, "model": MODELS}


@dataclass
class Program:
    """One generated program: its files, its hand repro, what ``case.json`` says of it, and what it drew."""

    seed: int
    files: dict[str, str]
    hand: str
    meta: dict
    drawn: dict[str, str] = field(default_factory=dict)

    def write(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in self.files.items():
            (folder / name).write_text(text)
        (folder / "hand.py").write_text(self.hand)
        (folder / "case.json").write_text(json.dumps(self.meta | {"drawn": self.drawn}, indent=2) + "\n")


def draw(seed: int) -> dict[str, str]:
    """The options a seed takes (see ``OPTIONS``), the combinations that cannot be written redrawn."""

    rng = random.Random(seed)
    bug = rng.choice(BUGS)
    drawn = {"bug": bug, "call_site": rng.choice(CALL_SITES), "check": rng.choice(CHECKS)}
    if bug == "triton_kernel":
        drawn |= {"compile_form": "none", "model": "mlp"}
    else:
        forms = COMPILE_FORMS if bug == "inductor_pass" else tuple(f for f in COMPILE_FORMS if f != "decorator")
        drawn["compile_form"] = rng.choice(forms)
        # A library model is costly (seconds of import per candidate): one program in eight, for backend bugs.
        library = bug != "inductor_pass" and rng.random() < 0.125
        drawn["model"] = _library(seed) if library else rng.choice(_PLAIN_MODELS)
    drawn |= _upstream(seed, drawn)
    if drawn["call_site"] == "autocast" and (drawn["model"] in _LIBRARIES or drawn["bug"] in ("triton_kernel", "upstream")):
        # bfloat16 under the interpreter, in BERT's masks, or around a real bug's values, is another program
        drawn["call_site"] = "no_grad"
    if drawn["call_site"] == "global_rebinding" and drawn["compile_form"] in ("module_compile", "bound_method"):
        drawn["compile_form"] = "call"  # the function rebound is not a module
    drawn["noise"] = ",".join(sorted(rng.sample(_NOISE_KINDS, rng.randint(1, len(_NOISE_KINDS)))))
    drawn["size"] = str(rng.choice((4, 6, 8)))
    return drawn


def _library(seed: int) -> str:
    """Which library's model a seed that draws one takes: BERT before ``_DIFFUSERS_FROM``; from it on, BERT or a
    diffusers block, from a generator of its own (the seed's other draws stay what they were)."""

    return "bert" if seed < _DIFFUSERS_FROM else random.Random(f"library-{seed}").choice(("bert", "diffusers"))


def _upstream(seed: int, drawn: dict[str, str]) -> dict[str, str]:
    """From ``_UPSTREAM_FROM`` on, one program in five plants a real upstream bug instead of the drawn one (from a
    generator of its own, so that the seed's other draws stay what they were), in a plain model, compiled with
    Inductor in a drawn form."""

    rng = random.Random(f"upstream-{seed}")
    if seed < _UPSTREAM_FROM or rng.random() >= 0.2:
        return {}
    replaced = {"bug": "upstream", "upstream": rng.choice(sorted(UPSTREAM_BUGS))}
    if drawn["compile_form"] == "none":
        replaced["compile_form"] = rng.choice(COMPILE_FORMS)
    if drawn["model"] not in _PLAIN_MODELS:
        replaced["model"] = rng.choice(_PLAIN_MODELS)
    if drawn["call_site"] == "training_step" and not UPSTREAM_BUGS[replaced["upstream"]].trains and seed >= _UNTRAINED_FROM:
        replaced["call_site"] = rng.choice([site for site in CALL_SITES if site != "training_step"])
    return replaced


def generate(seed: int) -> Program:
    drawn = draw(seed)
    parts = _Parts(drawn, seed)
    files = {"program.py": parts.program()}
    if drawn["bug"] in ("backend_beside", "inductor_pass"):
        files["_planted.py"] = _PLANTED
    meta = {
        "torch": "2.13.0",
        "kind": "generated",
        "upstream": None,
        "family": f"generated (seed {seed}): " + ", ".join(f"{k}={v}" for k, v in drawn.items() if k != "noise"),
        "passes_on": None,
        "identity_passes": drawn["bug"] != "triton_kernel",
        "max_time": 600 if drawn["model"] in _LIBRARIES else 300,
        "compares_the_suspect": True,
        # Where it was planted (minimizer.stages.culprit's names).
        "layer": _LAYERS.get(drawn["bug"]),  # an upstream bug's own below
    }
    if drawn["bug"] == "upstream":
        bug = UPSTREAM_BUGS[drawn["upstream"]]
        meta |= {"torch": bug.torch, "upstream": bug.upstream, "passes_on": bug.passes_on, "layer": bug.layer}
        meta["compares_the_suspect"] = not bug.crash  # a crash reaches no check
    if drawn["model"] in _LIBRARIES:
        meta["needs"] = [_LIBRARIES[drawn["model"]]]
    if drawn["bug"] == "triton_kernel":
        meta["fix"] = list(_KERNEL_FIX)
    return Program(seed, files, parts.hand(), meta, drawn)


_LAYERS = {
    "backend_beside": "the script's backend or compile options",
    "backend_in_script": "the script's backend or compile options",
    "inductor_pass": "Inductor",
    "triton_kernel": "not told",
}


# -- the bug ---------------------------------------------------------------------------------------------------

# A backend that lowers GELU as SiLU: a planted miscompile, cheap to run (no Inductor), that every GELU of a
# captured graph shows.
_BACKEND = '''
def planted_backend(gm, example_inputs):
    """Lowers GELU as SiLU: a PLANTED miscompile."""
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (torch.nn.functional.gelu, torch._C._nn.gelu):
            node.target = torch.nn.functional.silu
            node.kwargs = {}
    gm.recompile()
    return gm.forward
'''

_PLANTED = '''"""PLANTED BUGS for generated programs (bench/generate.py): nothing here is a real PyTorch bug."""

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten
''' + _BACKEND + '''

class _SiluDropsNegation(CustomGraphPass):
    """Rewrites SiLU's post-grad decomposition ``x / (1 + exp(-x))`` into ``x / (1 + exp(x))``."""

    def __call__(self, graph):
        for div in list(graph.nodes):
            if div.target != aten.div.Tensor:
                continue
            x, denominator = div.args
            if getattr(denominator, "target", None) != aten.add.Tensor or denominator.args[1] != 1:
                continue
            exp = denominator.args[0]
            if getattr(exp, "target", None) != aten.exp.default:
                continue
            neg = exp.args[0]
            if getattr(neg, "target", None) == aten.neg.default and neg.args[0] is x:
                exp.replace_input_with(neg, x)
        graph.eliminate_dead_code()

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()


def plant_miscompile():
    """Make Inductor miscompile SiLU for the rest of this process."""
    inductor_config.post_grad_custom_pre_pass = _SiluDropsNegation()
'''

_KERNEL = '''
@triton.jit
def scale_shift_kernel(x_ptr, scale_ptr, shift_ptr, out_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    cols = offs % n_cols
    x = tl.load(x_ptr + offs, mask=mask)
    scale = tl.load(scale_ptr + cols, mask=mask)
    shift = tl.load(shift_ptr + offs // n_cols, mask=mask)
    tl.store(out_ptr + offs, x * scale + shift, mask=mask)


def scale_shift(x, scale, shift):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    scale_shift_kernel[(triton.cdiv(n, 64),)](x, scale, shift, out, n, x.shape[-1], BLOCK=64)
    return out
'''
_KERNEL_FIX = ("shift_ptr + offs // n_cols", "shift_ptr + cols")

_NOISE_KINDS = ["argparse", "logging", "config", "utilities", "data"]


class _Parts:
    """The program's text, piece by piece, from what was drawn."""

    def __init__(self, drawn: dict[str, str], seed: int):
        self.drawn = drawn
        self.seed = seed
        self.noise = set(drawn["noise"].split(","))
        self.size = int(drawn["size"])
        self.bug = drawn["bug"]
        self.kernel = self.bug == "triton_kernel"
        self.upstream = UPSTREAM_BUGS.get(drawn.get("upstream", ""))
        # The op the bug lives in, as the model calls it.
        self.op = self.upstream.op if self.upstream else "F.silu" if self.bug == "inductor_pass" else "F.gelu"

    # -- the whole program --------------------------------------------------------------------------------

    def program(self) -> str:
        drawn = self.drawn
        described = ", ".join(f"{k} {v}" for k, v in drawn.items() if k not in ("noise", "size"))
        pieces = [f'"""Generated program (bench/generate.py, seed {self.seed}): {described}."""\n', self.imports()]
        pieces += [self.bug_setup(), self.constants(), self.noise_code(), self.model(), self.compiled(), self.call_site()]
        pieces += [self.check(), self.main()]
        return "\n".join(p for p in pieces if p).rstrip() + "\n"

    def imports(self) -> str:
        lines = []
        if self.kernel:
            lines += ["import os", "", "import torch", "", "if not torch.cuda.is_available():",
                      '    os.environ.setdefault("TRITON_INTERPRET", "1")', ""]
        lines += ["import argparse"] if "argparse" in self.noise else []
        lines += ["import copy", "import dataclasses"]
        lines += ["import functools"] if self.drawn["call_site"] == "partial" else []
        lines += ["import itertools"] if self.drawn["call_site"] == "case_table" else []
        lines += ["import logging"] if "logging" in self.noise else []
        lines += ["import math"] if self.drawn["check"] == "math_isclose" else []
        lines += ["import sys"] if self.drawn["check"] == "sys_exit" else []
        lines += ["import unittest"] if self.drawn["check"] == "unittest" else []
        lines += ["", "import numpy as np"] if self.drawn["check"] == "np_testing" else [""]
        lines += [] if self.kernel else ["import torch"]
        lines += ["import torch.nn as nn", "import torch.nn.functional as F"]
        if self.kernel:
            lines += ["import triton", "import triton.language as tl"]
        if self.drawn["model"] == "bert":
            lines += ["from transformers import BertConfig, BertModel"]
        if self.drawn["model"] == "diffusers":
            lines += ["from diffusers.models.attention import FeedForward"]
        if self.bug == "backend_beside":
            lines += ["", "from _planted import planted_backend  # PLANTED backend bug (see _planted.py)"]
        if self.bug == "inductor_pass":
            lines += ["", "from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)"]
        return "\n".join(lines) + "\n"

    def bug_setup(self) -> str:
        if self.bug == "backend_in_script":
            return _BACKEND
        if self.bug == "inductor_pass":
            return "plant_miscompile()\n"
        if self.kernel:
            return _KERNEL
        return self.upstream.helper if self.upstream else ""

    def constants(self) -> str:
        lines = ['DEVICE = "cuda" if torch.cuda.is_available() else "cpu"']
        if "logging" in self.noise:
            lines.append('log = logging.getLogger("experiment")')
        if "config" in self.noise:
            lines += ["", "", "@dataclasses.dataclass", "class RunConfig:", f"    width: int = {self.size * 2}",
                      "    seed: int = 0", "    tolerance: float = 1e-4", '    tag: str = "nightly"']
        return "\n".join(lines) + "\n"

    def noise_code(self) -> str:
        pieces = []
        if "utilities" in self.noise:
            pieces.append(textwrap.dedent('''
                def count_parameters(module):
                    return sum(p.numel() for p in module.parameters() if p.requires_grad)


                def format_bytes(n):
                    for unit in ("B", "KB", "MB", "GB"):
                        if n < 1024:
                            return f"{n:.1f} {unit}"
                        n /= 1024
                    return f"{n:.1f} TB"
                '''))
        if "data" in self.noise:
            pieces.append(textwrap.dedent(f'''
                def synthetic_batches(count, rows, width, seed=0):
                    generator = torch.Generator().manual_seed(seed)
                    return [torch.randn(rows, width, generator=generator).to(DEVICE) for _ in range(count)]
                '''))
        return "\n".join(pieces)

    # -- the model ---------------------------------------------------------------------------------------

    def model(self) -> str:
        width = self.size * 2
        if self.kernel:
            return textwrap.dedent(f'''

                class ScaledHead(nn.Module):
                    def __init__(self, width={width}):
                        super().__init__()
                        self.proj = nn.Linear(width, width)
                        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, width))
                        self.shift = nn.Parameter(torch.linspace(-1.0, 1.0, width))

                    def forward(self, x, fused=True):
                        h = self.proj(x)
                        if fused:
                            return scale_shift(h, self.scale, self.shift)
                        return h * self.scale + self.shift
                ''')
        if self.drawn["model"] == "bert":
            return textwrap.dedent(f'''

                class Encoder(nn.Module):
                    def __init__(self, width={width * 2}):
                        super().__init__()
                        config = BertConfig(vocab_size=64, hidden_size=width, num_hidden_layers=1, num_attention_heads=2,
                                            intermediate_size=width * 2, max_position_embeddings=32, hidden_act="gelu")
                        self.bert = BertModel(config, add_pooling_layer=False)
                        self.bert.eval()

                    def forward(self, x):
                        ids = (x.abs() * 10).long().clamp(max=63)[:, :8]
                        return self.bert(input_ids=ids).last_hidden_state
                ''')
        if self.drawn["model"] == "diffusers":
            return textwrap.dedent(f'''

                class Denoiser(nn.Module):
                    def __init__(self, width={width}):
                        super().__init__()
                        self.ff = FeedForward(width, mult=2, activation_fn="gelu")

                    def forward(self, x):
                        return x + self.ff(x)
                ''')
        op = self.op
        if self.drawn["model"] == "conv":
            return textwrap.dedent(f'''

                class Model(nn.Module):
                    def __init__(self, width={width}):
                        super().__init__()
                        self.conv = nn.Conv1d(1, 2, 3, padding=1)
                        self.head = nn.Linear(2 * width, width)

                    def forward(self, x):
                        h = {op}(self.conv(x.unsqueeze(1)))
                        return self.head(h.flatten(1))
                ''')
        if self.drawn["model"] == "gated":
            return textwrap.dedent(f'''

                class Model(nn.Module):
                    def __init__(self, width={width}):
                        super().__init__()
                        self.gate = nn.Linear(width, width * 2)
                        self.up = nn.Linear(width, width * 2)
                        self.down = nn.Linear(width * 2, width)

                    def forward(self, x):
                        return self.down({op}(self.gate(x)) * self.up(x))
                ''')
        return textwrap.dedent(f'''

            class Model(nn.Module):
                def __init__(self, width={width}):
                    super().__init__()
                    self.fc1 = nn.Linear(width, width * 2)
                    self.fc2 = nn.Linear(width * 2, width)
                    self.norm = nn.LayerNorm(width)

                def forward(self, x):
                    return self.norm(x + self.fc2({op}(self.fc1(x))))
            ''')

    @property
    def model_class(self) -> str:
        if self.kernel:
            return "ScaledHead"
        return {"bert": "Encoder", "diffusers": "Denoiser"}.get(self.drawn["model"], "Model")

    # -- how the call is compiled --------------------------------------------------------------------------

    @property
    def options(self) -> str:
        return "" if self.bug in ("inductor_pass", "upstream") else "backend=planted_backend"

    def compiled(self) -> str:
        """``make_compiled(model)``: the suspect callable, compiled as drawn (the kernel's model as it is)."""

        form, options = self.drawn["compile_form"], self.options
        comma = f", {options}" if options else ""
        if self.kernel:
            return "\ndef make_compiled(model):\n    return model\n"
        if form == "call":
            return f"\ndef make_compiled(model):\n    return torch.compile(model{comma})\n"
        if form == "module_compile":
            return f"\ndef make_compiled(model):\n    model.compile({options})\n    return model\n"
        if form == "bound_method":
            return f"\ndef make_compiled(model):\n    return torch.compile(model.forward{comma})\n"
        if form == "dynamo_optimize":
            backend = "planted_backend" if options else '"inductor"'
            return f"\ndef make_compiled(model):\n    return torch._dynamo.optimize({backend})(model)\n"
        decorator = "@torch.compile" if form == "decorator" else f"@torch.compile({options})"
        if form == "method_decorator":
            return textwrap.dedent(f'''

                class Compiled:
                    def __init__(self, model):
                        self.model = model

                    {decorator}
                    def __call__(self, x):
                        return self.model(x)


                def make_compiled(model):
                    return Compiled(model)
                ''')
        return textwrap.dedent(f'''

            def make_compiled(model):
                {decorator}
                def run(x):
                    return model(x)

                return run
            ''')

    # -- where the call sits: collect_outputs() -> [(name, compiled output, eager output)] -------------------

    def call_site(self) -> str:
        site, size = self.drawn["call_site"], self.size
        cls = self.model_class
        ref = "model(x, fused=False)" if self.kernel else "reference(x)"
        build = textwrap.dedent(f'''
            def build(seed=0):
                torch.manual_seed(seed)
                model = {cls}().to(DEVICE)
                reference = copy.deepcopy(model)
                return model, reference
            ''')
        fused = "model(x)" if self.kernel else "compiled(x)"
        setup = "    model, reference = build()\n" + ("" if self.kernel else "    compiled = make_compiled(model)\n")
        inputs = f"torch.randn(3, {size * 2}, device=DEVICE)"
        bodies = {
            "module_level": None,
            "training_step": f'''
def collect_outputs():
{setup}    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    pairs = []
    for step in range(2):
        x = {inputs}
        out = {fused}
        with torch.no_grad():
            pairs.append((f"step{{step}}", out.detach(), {ref}))
        {"model(x, fused=False)" if self.kernel else "out"}.square().mean().backward()
        optimizer.step()
        optimizer.zero_grad()
        reference.load_state_dict(model.state_dict())
    return pairs
''',
            "evaluation_loop": f'''
def collect_outputs():
{setup}    model.eval()
    pairs = []
    with torch.no_grad():
        for index in range(3):
            x = {inputs}
            pairs.append((f"batch{{index}}", {fused}, {ref}))
    return pairs
''',
            "case_table": f'''
@dataclasses.dataclass
class Case:
    rows: int
    scale: float

    @property
    def name(self):
        return f"rows{{self.rows}}-scale{{self.scale}}"


def collect_outputs():
{setup}    pairs = []
    for rows, scale in itertools.product([2, 3], [1.0, 2.0]):
        case = Case(rows, scale)
        x = torch.randn(case.rows, {size * 2}, device=DEVICE) * case.scale
        with torch.no_grad():
            pairs.append((case.name, {fused}, {ref}))
    return pairs
''',
            "comprehension": f'''
def collect_outputs():
{setup}    batches = [{inputs} for _ in range(2)]
    with torch.no_grad():
        outs = [{fused.replace("(x)", "(b)")} for b in batches]
        refs = [{ref.replace("(x", "(b")} for b in batches]
    return [(f"batch{{i}}", o, r) for i, (o, r) in enumerate(zip(outs, refs))]
''',
            "dataclass_method": f'''
@dataclasses.dataclass
class Evaluator:
    model: nn.Module
    reference: nn.Module
    runner: object = None

    def evaluate(self, x):
        with torch.no_grad():
            model, reference = self.model, self.reference
            return {fused.replace("compiled", "self.runner")}, {ref}


def collect_outputs():
{setup}    evaluator = Evaluator(model, reference, {"model" if self.kernel else "compiled"})
    return [("eval", *evaluator.evaluate({inputs}))]
''',
            "global_rebinding": f'''
def forward_pass(x):
    return MODEL(x)


def collect_outputs():
    global MODEL, forward_pass
    model, reference = build()
    MODEL = model
    {"" if self.kernel else "forward_pass = make_compiled(forward_pass)"}
    x = {inputs}
    with torch.no_grad():
        return [("global", forward_pass(x), {ref})]


MODEL = None
''',
            "partial": f'''
def scaled_call(fn, scale, x):
    return fn(x * scale)


def collect_outputs():
{setup}    run = functools.partial(scaled_call, {"model" if self.kernel else "compiled"}, 0.5)
    x = {inputs}
    with torch.no_grad():
        return [("partial", run(x), {ref.replace("(x", "(x * 0.5")})]
''',
            "no_grad": f'''
@torch.no_grad()
def collect_outputs():
{setup}    x = {inputs}
    return [("no_grad", {fused}, {ref})]
''',
            "autocast": f'''
def collect_outputs():
{setup}    x = {inputs}
    with torch.autocast(DEVICE, dtype=torch.bfloat16), torch.no_grad():
        return [("autocast", {fused}.float(), {ref}.float())]
''',
        }
        body = bodies[site]
        if body is None:  # module level: the pairs are computed as the module runs
            return build + textwrap.dedent(f'''
                model, reference = build()
                {"" if self.kernel else "compiled = make_compiled(model)"}
                x = {inputs}
                with torch.no_grad():
                    PAIRS = [("module", {fused}, {ref})]


                def collect_outputs():
                    return PAIRS
                ''')
        return build + body

    # -- the check ---------------------------------------------------------------------------------------------

    def check(self) -> str:
        tolerance = "1e-3" if self.drawn["call_site"] == "autocast" else "1e-4"
        checks = {
            "assert_close": f'''
def check(pairs):
    for name, out, ref in pairs:
        torch.testing.assert_close(out, ref, atol={tolerance}, rtol={tolerance}, msg=f"{{name}} differs")
''',
            "helper_allclose": f'''
def outputs_match(out, ref):
    return torch.allclose(out, ref, atol={tolerance}, rtol={tolerance})


def check(pairs):
    for name, out, ref in pairs:
        assert outputs_match(out, ref), f"{{name}}: outputs differ"
''',
            "problems_list": f'''
def check(pairs):
    problems = []
    for name, out, ref in pairs:
        if not torch.allclose(out, ref, atol={tolerance}, rtol={tolerance}):
            problems.append(name)
    assert not problems, f"mismatched: {{problems}}"
''',
            "if_raise": f'''
class ParityError(RuntimeError):
    pass


def check(pairs):
    for name, out, ref in pairs:
        if not torch.allclose(out, ref, atol={tolerance}, rtol={tolerance}):
            raise ParityError(f"{{name}}: outputs differ")
''',
            "sys_exit": f'''
def check(pairs):
    for name, out, ref in pairs:
        err = (out - ref).abs().max().item()
        if err > {tolerance}:
            print(f"FAIL {{name}}: max error {{err:.3g}}", file=sys.stderr)
            sys.exit(1)
''',
            "metrics_dict": f'''
def check(pairs):
    metrics = {{name: {{"max_abs": (out - ref).abs().max().item(), "mean": out.mean().item()}} for name, out, ref in pairs}}
    for name, values in metrics.items():
        assert values["max_abs"] < {tolerance}, f"{{name}} drifts: {{values}}"
''',
            "max_error_loop": f'''
def check(pairs):
    worst = 0.0
    for name, out, ref in pairs:
        worst = max(worst, (out - ref).abs().max().item())
    assert worst < {tolerance}, f"max error {{worst:.3g}}"
''',
            "unittest": f'''
class ParityTest(unittest.TestCase):
    def test_outputs_match(self):
        for name, out, ref in collect_outputs():
            self.assertTrue(torch.allclose(out, ref, atol={tolerance}, rtol={tolerance}), name)


def check(pairs):
    pass
''',
            "np_testing": f'''
def check(pairs):
    for name, out, ref in pairs:
        np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().cpu().numpy(), rtol={tolerance}, atol={tolerance})
''',
            "math_isclose": f'''
def check(pairs):
    for name, out, ref in pairs:
        assert math.isclose(out.double().exp().sum().item(), ref.double().exp().sum().item(), rel_tol={tolerance}), name
''',
        }
        return checks[self.drawn["check"]]

    def main(self) -> str:
        lines = ["", "def main():"]
        if "argparse" in self.noise:
            lines += ["    parser = argparse.ArgumentParser()", '    parser.add_argument("--verbose", action="store_true")',
                      "    args = parser.parse_args()"]
        if "logging" in self.noise:
            verbose = "args.verbose" if "argparse" in self.noise else "False"
            lines += [f"    logging.basicConfig(level=logging.INFO if {verbose} else logging.WARNING)"]
        if "config" in self.noise:
            lines += ["    config = RunConfig()"]
            lines += ['    log.info("run %s", config.tag)'] if "logging" in self.noise else []
        if self.drawn["check"] == "unittest":
            lines += ['    unittest.main(argv=["parity"])']
        else:
            lines += ["    pairs = collect_outputs()"]
            lines += ['    log.info("%d outputs", len(pairs))'] if "logging" in self.noise else []
            lines += ["    check(pairs)", '    print("parity ok")']
        lines += ["", "", 'if __name__ == "__main__":', "    main()"]
        return "\n".join(lines) + "\n"

    # -- the hand repro ----------------------------------------------------------------------------------------

    def hand(self) -> str:
        if self.upstream:
            return self.upstream.hand
        if self.kernel:
            return textwrap.dedent('''\
                import os
                os.environ["TRITON_INTERPRET"] = "1"

                import torch
                import triton
                import triton.language as tl


                @triton.jit
                def kernel(shift_ptr, out_ptr, n_cols):
                    offs = tl.arange(0, 2)
                    cols = offs % n_cols
                    tl.store(out_ptr + offs, tl.load(shift_ptr + offs // n_cols))


                shift = torch.arange(2.0)
                out = torch.empty(2)
                kernel[1,](shift, out, 2)
                assert torch.allclose(out, shift)
                ''')
        if self.bug == "inductor_pass":
            return textwrap.dedent('''\
                import torch
                import torch.nn.functional as F

                from _planted import plant_miscompile

                plant_miscompile()
                x = torch.ones(1)
                assert torch.allclose(torch.compile(F.silu)(x), F.silu(x))
                ''')
        backend = "from _planted import planted_backend\n" if self.bug == "backend_beside" else textwrap.dedent('''

            def planted_backend(gm, example_inputs):
                for node in gm.graph.nodes:
                    if node.target == torch._C._nn.gelu:
                        node.target = F.silu
                gm.recompile()
                return gm.forward
            ''')
        return (
            "import torch\nimport torch.nn.functional as F\n" + backend + "\nx = torch.ones(1)\n"
            "assert torch.allclose(torch.compile(F.gelu, backend=planted_backend)(x), F.gelu(x))\n"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("seed", type=int)
    parser.add_argument("--out", type=Path, required=True, help="the folder to write the program into")
    args = parser.parse_args()
    program = generate(args.seed)
    program.write(args.out)
    print(json.dumps(program.drawn))


if __name__ == "__main__":
    main()
