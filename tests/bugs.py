"""Bugs as the oracles find them, written by hand for unit tests."""

from oracles.bug import ALSO_WITHOUT_COMPILE, ONLY_UNDER_COMPILE, Bug

ONLY, ALSO = ONLY_UNDER_COMPILE, ALSO_WITHOUT_COMPILE


def check_failed(failure: str = "AssertionError", *, comparison: str | None = None, under: str | None = None, **fields) -> Bug:
    """The ``script`` oracle's bug of a failed check: ``failure`` (its exception's type is the text before the
    first colon), ``comparison`` the failing comparison as the evidence writes it (``allclose of compiled,
    other``), ``under`` whether it needs torch.compile (``ONLY``, ``ALSO``)."""

    kind, origins = evidence_parts(comparison) if comparison else (None, [])
    return Bug(
        failure, exception=failure.split(":")[0].split(" ")[0], comparison=comparison, comparison_kind=kind,
        comparison_origins=tuple(origins), under_compile=under, **fields,
    )


def evidence_parts(signature: str) -> tuple[str, list[str]]:
    """``("allclose", ["kernel k then abs", "clamp(min=0, max=5)"])`` for ``Comparison.signature``'s text: its kind
    and each operand's origin (a comma inside an operation's arguments splits nothing)."""

    kind, _, rest = signature.partition(" of ")
    origins, depth, start = [], 0, 0
    for at, char in enumerate(rest):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and rest.startswith(", ", at):
            origins.append(rest[start:at])
            start = at + 2
    return kind, origins + [rest[start:]]
