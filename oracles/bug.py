"""A bug as a value: what an oracle found, in fields, and the one rule that says whether two runs show the same bug.

Every stage that asks "is this still the bug?" (the source reducer, the graph reducer, the lift, the statement,
the confirmation) asks ``same_bug(pinned, seen)``. Readers take fields (``bug.comparison``, ``bug.kernels``);
nothing reads them back out of the signature, which is only the identity written out for people and logs.

What identifies a bug: the oracle's failure (the exception's type and normalized message, or the kind of
mismatch), the compiler stage, for a failing check the comparison that failed it (its kind and where each
operand comes from: the suspect, a reference, a number), the kernels that ran and what they read out of bounds,
the compiled target it is held to, and whether it goes away with ``torch.compile`` as the identity. What does
not: the text of what a failed check read where the run knows which comparison failed (a problems list's
messages carry case names and numbers, which change as the program shrinks), which compiled call of the run it
showed in, and anything said for people.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

# How a bug tells whether it goes away with torch.compile replaced by the identity.
ONLY_UNDER_COMPILE = "only"
ALSO_WITHOUT_COMPILE = "also"
_UNDER_COMPILE_TEXT = {ONLY_UNDER_COMPILE: "[only under torch.compile]", ALSO_WITHOUT_COMPILE: "[also without torch.compile]"}
# Fields never part of the identity: what is said for people, and where in the run the bug showed (which call of
# the compiled target: the lift records that call's arguments; an earlier call removed moves it, the bug stays).
_WORDS = frozenset({"words", "call"})


@dataclass(frozen=True)
class Bug:
    """What an oracle found. ``failure`` is the oracle's own words for it (``numerical: float32 value``,
    ``crash: compiled raised: TypeError: ...``, ``AssertionError: assert < N``); the other fields say, where
    they apply, what the failure is made of."""

    failure: str
    exception: str | None = None  # the type of the exception that is the failure (a check's, a crash's)
    raised_by: str | None = None  # for a crash: compiled, eager, compiled backward, eager backward
    stage: str | None = None  # the compiler stage an exception arose in
    gradient_of: str | None = None  # for a wrong gradient: parameter or input
    eager_requires_grad: bool | None = None  # for a lost requires_grad: what eager gives
    operands: str | None = None  # what a failed assert read that names what failed (``mismatched=['focal']``)
    kernels: tuple[str, ...] = ()  # the script's Triton kernels that ran before the failure
    strays: tuple[str, ...] = ()  # what they read or wrote out of bounds
    compared: str | None = None  # where each operand of a failing comparison of a kernel's output comes from
    compared_kernels: tuple[str, ...] = ()  # the kernels whose output it compares
    comparison: str | None = None  # the failing comparison of the suspect's values (``allclose of compiled, other``)
    comparison_kind: str | None = None  # its kind (``allclose``, ``<``, ``assert_close``)
    comparison_origins: tuple[str, ...] = ()  # each operand's origin
    only_compile: str | None = None  # the compiled target the failure is held to
    under_compile: str | None = None  # ONLY_UNDER_COMPILE or ALSO_WITHOUT_COMPILE, where the script compiles
    held: str | None = None  # the values or the difference a comparison of a kernel's output is held to
    words: str = ""  # what fails, for people (``Bug.in_words``)
    # Where an oracle of calls found it: which call of its compiled target it showed in (0: the target's first).
    call: int | None = None

    @property
    def signature(self) -> str:
        """The identity written out: the failure, then each part that identifies it in brackets."""

        parts = [
            (self.operands and self.comparison is None, f"[operands: {self.operands}]"),
            (self.kernels, f"[kernels: {', '.join(sorted(self.kernels))}]"),
            (self.strays, f"[out of bounds: {'; '.join(self.strays)}]"),
            (self.compared, f"[compared: {self.compared}]"),
            (self.comparison, f"[evidence: {self.comparison}]"),
            (self.only_compile, f"[with only {self.only_compile} compiled]"),
            (self.under_compile, _UNDER_COMPILE_TEXT.get(self.under_compile or "", "")),
            (self.held, self.held or ""),
        ]
        return " ".join([self.failure, *(text for present, text in parts if present)])

    def identity(self) -> tuple:
        """The fields that identify the bug; the words for people and, where the failing comparison is known,
        the text of what the check read are left out."""

        return tuple(
            None if f.name == "operands" and self.comparison is not None else getattr(self, f.name)
            for f in fields(self)
            if f.name not in _WORDS
        )

    @property
    def is_assertion(self) -> bool:
        return self.exception == "AssertionError"

    @property
    def by_a_comparison(self) -> bool:
        """The failure is a check whose failing comparison of the suspect's values the run recorded."""

        return self.comparison is not None

    @property
    def compares_compiled(self) -> bool:
        return any(origin.startswith("compiled") for origin in self.comparison_origins)

    def in_words(self, most: int = 160) -> str:
        """One line for people, at most ``most`` characters: what differs or what raised, at which call or kernel."""

        return shortened(self.words or self.failure, most)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: list(v) if isinstance(v, tuple) else v for k, v in data.items()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Bug:
        known = {f.name for f in fields(cls)}
        values = {k: tuple(v) if isinstance(v, list) else v for k, v in data.items() if k in known}
        return cls(**values)

    def with_(self, **changes: Any) -> Bug:
        return replace(self, **changes)


def shortened(text: str, most: int) -> str:
    """``text`` cut to at most ``most`` characters, ending in ``...`` where it was cut."""

    return text if len(text) <= most else text[: most - 3].rstrip() + "..."


def same_bug(pinned: Bug, seen: Bug, *, parameters_as_inputs: bool = False) -> bool:
    """Whether ``seen`` is the bug ``pinned`` is: the same identity. ``parameters_as_inputs``: a program whose
    parameters became inputs (the graph reducer's emitted program) shows a parameter's wrong gradient as an
    input's."""

    if pinned.identity() == seen.identity():
        return True
    return parameters_as_inputs and as_input_gradient(pinned).identity() == seen.identity()


def as_input_gradient(bug: Bug) -> Bug:
    """A parameter's wrong gradient as the same wrong gradient of an input."""

    if bug.gradient_of != "parameter":
        return bug
    return bug.with_(gradient_of="input", failure=bug.failure.replace("gradient: parameter", "gradient: input", 1))
