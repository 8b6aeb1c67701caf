"""Triage a folder of failing programs (a fuzzer's output): which distinct bugs, one minimal repro each.

Every ``*.py`` is checked as ``minimizer check`` checks it (plain python and the oracles) and classified as a
bug (oracle + signature), passing, invalid (syntax error, cannot start here, not a compiler bug, python and
the oracles disagree) or flaky. Bugs are grouped by (oracle, signature); the smallest script of each group is
minimized. ``OUT/index.json`` and ``OUT/index.md`` say what was found; ``OUT/state.json`` remembers each
script's verdict (by its content) and each group's repro, so a second run skips finished work and Ctrl-C
keeps what is done.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import tokenize
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Callable

from minimizer.stages.check import FLAKY, NOTHING_TO_MINIMIZE, diagnose
from minimizer.errors import MinimizerError
from minimizer.metrics import count_tokens
from minimizer.files import write_atomic
from minimizer.progress import QuietProgress

BUG, PASSING, INVALID, FLAKY_KIND = "bug", "passing", "invalid", "flaky"


@dataclass
class Classified:
    script: str  # relative to the triaged folder
    digest: str
    kind: str
    oracle: str = ""
    signature: str = ""
    error: str = ""
    rate: str = ""
    tokens: int = 0


def digest_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def classify(
    path: Path, folder: Path, *, timeout: float | None, confirm: int, script_args: tuple[str, ...] = ()
) -> Classified:
    """One script's verdict, from the same check that ``minimizer reduce`` starts with (run with
    ``script_args``)."""

    from minimizer.session import Options, Session

    relative = str(path.relative_to(folder))
    base = Classified(relative, digest_of(path), INVALID)
    try:
        base.tokens = count_tokens(path.read_text())
    except (SyntaxError, ValueError, UnicodeDecodeError, tokenize.TokenError):
        pass  # the check below names what is wrong with it
    session = None
    try:
        options = Options(script=path, timeout=timeout, confirm=confirm, cold=True, script_args=script_args)
        session = Session(options, QuietProgress())
        report = session.check()
    except MinimizerError as error:
        base.error = str(error).splitlines()[0][:300]
        return base
    finally:
        if session is not None:
            session.close()
    problem = diagnose(report, explicit_oracle=False)
    if problem is None and report.pinned is not None:
        return replace(base, kind=BUG, oracle=report.pinned.spec, signature=report.pinned.signature)
    if problem.startswith(NOTHING_TO_MINIMIZE):
        return replace(base, kind=PASSING)
    if FLAKY in problem:
        rate = re.search(r"(\d+ of \d+ runs|\d+%)", problem)
        return replace(base, kind=FLAKY_KIND, error=problem, rate=rate.group(1) if rate else "")
    return replace(base, error=problem)

@dataclass
class Group:
    oracle: str
    signature: str
    scripts: list[str]
    repro: str = ""  # relative to OUT
    repro_tokens: int = 0
    error: str = ""


class Triage:
    def __init__(self, folder: Path, out: Path, *, jobs: int = 2, timeout: float | None = None, confirm: int = 2,
                 say: Callable[[str], None] = lambda _: None, ray: Any = None, script_args: tuple[str, ...] = ()):
        self.folder, self.out, self.jobs, self.timeout, self.confirm, self.say = folder, out, jobs, timeout, confirm, say
        self.script_args = script_args  # every script's own command line
        self.ray = ray  # a RayBackend: each check is a Ray task
        self.state_path = out / "state.json"
        state = json.loads(self.state_path.read_text()) if self.state_path.exists() else {}
        self.classified: dict[str, Classified] = {k: Classified(**v) for k, v in state.get("scripts", {}).items()}
        self.repros: dict[str, dict] = state.get("repros", {})

    def scripts(self) -> list[Path]:
        return sorted(p for p in self.folder.rglob("*.py") if self.out not in p.parents and ".min." not in p.name)

    def run(self, minimize: Callable[[Path, Path, str], tuple[int, str]]) -> dict:
        """Classify every script (in parallel), then minimize one script per bug; returns the index."""

        self.out.mkdir(parents=True, exist_ok=True)
        todo = [p for p in self.scripts() if self._known(p) is None]
        done = len(self.scripts()) - len(todo)
        self.say(f"{len(self.scripts())} scripts, {done} known from an earlier run, {len(todo)} to check")
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, self.jobs)) as pool:
            futures = {pool.submit(self._classify, p): p for p in todo}
            for count, future in enumerate(as_completed(futures), start=1):
                verdict = future.result()
                self.classified[verdict.script] = verdict
                self._save()
                what = f"{verdict.oracle}: {verdict.signature}" if verdict.kind == BUG else (verdict.error or verdict.kind)
                self.say(f"[{count}/{len(todo)}] {verdict.script}: {verdict.kind} ({what[:120]})")
        self.timing = {"scripts_checked": len(todo), "check_seconds": round(time.monotonic() - started, 1)}
        started = time.monotonic()
        groups = self.groups()
        for number, group in enumerate(groups, start=1):
            key = _group_key(group)
            known = self.repros.get(key)
            if known and (self.out / known["repro"]).exists():
                group.repro, group.repro_tokens = known["repro"], known["tokens"]
                continue
            smallest = min(group.scripts, key=lambda s: (self.classified[s].tokens, s))
            target = self.out / "repros" / f"bug{number:02d}.py"
            self.say(f"bug {number}/{len(groups)}: minimizing {smallest} ({len(group.scripts)} scripts, {group.oracle})")
            try:
                group.repro_tokens, signature = minimize(self.folder / smallest, target, group.oracle)
            except MinimizerError as error:
                group.error = str(error).splitlines()[0][:300]
                self.say(f"bug {number}: {group.error}")
                continue
            if signature != group.signature:
                group.error = f"the repro shows another signature: {signature}"
            group.repro = str(target.relative_to(self.out))
            self.repros[key] = {"repro": group.repro, "tokens": group.repro_tokens}
            self._save()
        self.timing["minimize_seconds"] = round(time.monotonic() - started, 1)
        index = {**self.index(groups), "timing": self.timing}
        write_atomic(self.out / "index.json", json.dumps(index, indent=2) + "\n")
        write_atomic(self.out / "index.md", self.markdown(groups))
        return index

    def _classify(self, path: Path) -> Classified:
        kwargs = {"timeout": self.timeout, "confirm": self.confirm, "script_args": self.script_args}
        if self.ray is not None:
            return self.ray.call(classify, path, self.folder, **kwargs)
        return classify(path, self.folder, **kwargs)

    def groups(self) -> list[Group]:
        grouped: dict[tuple[str, str], list[str]] = {}
        for verdict in self.classified.values():
            if verdict.kind == BUG and (self.folder / verdict.script).exists():
                grouped.setdefault((verdict.oracle, verdict.signature), []).append(verdict.script)
        return [Group(oracle, signature, sorted(scripts)) for (oracle, signature), scripts in sorted(grouped.items())]

    def index(self, groups: list[Group]) -> dict:
        live = [v for v in self.classified.values() if (self.folder / v.script).exists()]
        return {
            "bugs": [
                {"oracle": g.oracle, "signature": g.signature, "scripts": g.scripts, "repro": g.repro or None,
                 "repro_tokens": g.repro_tokens, **({"error": g.error} if g.error else {})}
                for g in groups
            ],
            "passing": sorted(v.script for v in live if v.kind == PASSING),
            "invalid": [{"script": v.script, "error": v.error} for v in sorted(live, key=lambda v: v.script) if v.kind == INVALID],
            "flaky": [{"script": v.script, "rate": v.rate} for v in sorted(live, key=lambda v: v.script) if v.kind == FLAKY_KIND],
        }

    def markdown(self, groups: list[Group]) -> str:
        index = self.index(groups)
        lines = [f"# Triage of `{self.folder}`", "",
                 f"{len(groups)} distinct bugs in {sum(len(g.scripts) for g in groups)} scripts; "
                 f"{len(index['passing'])} passing, {len(index['invalid'])} invalid, {len(index['flaky'])} flaky.", "",
                 "| bug | oracle | signature | scripts | repro tokens | repro |", "| --- | --- | --- | --- | --- | --- |"]
        for number, g in enumerate(groups, start=1):
            signature = g.signature.replace("|", "\\|")
            link = f"[{g.repro}]({g.repro})" if g.repro else (g.error or "-")
            lines.append(f"| {number} | {g.oracle} | {signature} | {len(g.scripts)} | {g.repro_tokens or '-'} | {link} |")
        for title, rows in (("Invalid", index["invalid"]), ("Flaky", index["flaky"])):
            if rows:
                lines += ["", f"## {title}", ""]
                lines += [f"- `{r['script']}`: {r.get('error') or r.get('rate')}" for r in rows]
        return "\n".join(lines) + "\n"

    def _known(self, path: Path) -> Classified | None:
        known = self.classified.get(str(path.relative_to(self.folder)))
        return known if known is not None and known.digest == digest_of(path) else None

    def _save(self) -> None:
        state = {"scripts": {k: asdict(v) for k, v in self.classified.items()}, "repros": self.repros}
        write_atomic(self.state_path, json.dumps(state, indent=2) + "\n")


def _group_key(group: Group) -> str:
    return hashlib.sha256(f"{group.oracle}\n{group.signature}".encode()).hexdigest()[:16]
