"""Whether the answers of resident workers (``minimizer.runner.resident``) can be trusted, shown run by run.

A resident worker runs a job after others in one process; state they left that nothing put back could change
its answer. So an answer from a worker that ran jobs before is checked in a fresh process where it matters
most, and a sample of the others: answers that show the bug (each would change the reduction) every time until
``TRUST_AFTER`` agreed, then one in ``SHOWN_SAMPLE``; one in ``SAMPLE`` of those that do not; sampled by a hash
of the candidate's text. (Whichever are checked, an answer that agrees changes nothing: the result is the same
whatever ``--jobs`` is as long as none disagrees.) At the first disagreement the residents are given up for the rest of the reduction and the
fresh answer stands; the report says so.
"""

from __future__ import annotations

import threading
import zlib
from dataclasses import dataclass, field

SAMPLE = 8  # one in this many answers that do not show the bug is checked
TRUST_AFTER = 8  # answers that show the bug, each checked until this many agreed; then one in SHOWN_SAMPLE
SHOWN_SAMPLE = 4


@dataclass
class ResidentTrust:
    wanted: bool  # residents were asked for (options and host)
    answers: int = 0  # answers from residents that had run a job before
    checked: int = 0  # ... of them re-run in a fresh process
    shown_agreed: int = 0  # checked answers that showed the bug, both times
    given_up: str | None = None  # the first disagreement, which ended the residents' use
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def in_use(self) -> bool:
        return self.wanted and self.given_up is None

    def to_check(self, resident_jobs_before: int | None, shown: bool | None, text: str) -> bool:
        """Whether an answer (``shown``: whether it shows the bug) must be checked in a fresh process. A worker's
        first job ran as in any process forked ahead: nothing to check."""

        if not resident_jobs_before or shown is None:
            return False
        with self._lock:
            self.answers += 1
        sample = zlib.crc32(text.encode())
        if shown:
            return self.shown_agreed < TRUST_AFTER or sample % SHOWN_SAMPLE == 0
        return sample % SAMPLE == 0

    def compare(self, resident: bool, fresh: bool, key: str) -> str | None:
        """Count a check of candidate ``key``; at the first disagreement (which ends the residents' use), what
        it was."""

        with self._lock:
            self.checked += 1
            self.shown_agreed += resident and fresh
            if resident == fresh or self.given_up is not None:
                return None
            self.given_up = (
                f"candidate {key}: a resident worker said the bug {'shows' if resident else 'does not show'}, "
                f"a fresh process that it {'shows' if fresh else 'does not'}"
            )
            return self.given_up

    def to_json(self) -> dict:
        return {
            "wanted": self.wanted,
            "answers_after_other_jobs": self.answers,
            "checked_in_fresh_processes": self.checked,
            "given_up": self.given_up,
        }
