"""How the warm server makes a candidate's process: forked when its job comes, or ahead of it (spares).

A candidate's process leads its own session (a hang is killed with everything it started), with the default
signal handlers, in its run folder, with its output going to its own files and its job's environment applied;
then it runs ``minimizer.runner.child.main``. Nothing here runs in the server but the forking.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import sys


def fork_candidate(job: dict, spares: Spares) -> int:
    """Fork the process that runs ``job`` now (the slow path: no spare waits for its environment)."""

    pid = _fork_child(spares)
    if pid:
        return pid
    try:
        _enter_job(job)
    finally:
        os._exit(1)
    return 0  # unreachable


def _fork_child(spares: Spares) -> int:
    """Fork a process that will run one candidate: in the child, its own session and default signals."""

    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        spares.forget_in_child()
        for number in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)
        os.setsid()
    return pid


def _enter_job(job: dict, env_applied: bool = False) -> None:
    os.chdir(job["cwd"])
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.dup2(os.open(job["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 1)
    os.dup2(os.open(job["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), 2)
    if not env_applied:
        os.environ.update(job["env"])
    from minimizer.runner.child import main

    main(job["request"])


class Spares:
    """Candidates' processes forked ahead of their jobs, each with CUDA already started, one waiting per
    candidate that runs at once (per job environment: a job's ``CUDA_VISIBLE_DEVICES`` is part of it).

    Starting CUDA costs a candidate 0.2-0.4 s alone on an H100 host and about 1 s when eight start at once
    (``bench/cuda_context.py``); a spare pays it while the earlier candidates run. Only where the parent asks
    (``PREINIT_CUDA_VARIABLE``: the script uses CUDA and nothing after its imports changes the environment or
    forks, see ``minimizer.runner.prelude.may_start_cuda_ahead``), so the script computes what it would have:
    starting CUDA reads the environment the job gives, as the script's first CUDA call would. On a host
    without a GPU the spares are forked ahead all the same (nothing to start), which keeps this path tested.
    The driver creates contexts one after another: where many runs start (and are cancelled), spares move the
    wait out of the candidates' clocks but not out of the queue (see ``tester.speculation_for``).

    With ``resident`` (``RESIDENT_VARIABLE``) a spare stays after its job and takes the next one of its
    environment (``minimizer.runner.resident``): it says on a pipe of its own when a job is done. Jobs that must
    have a process of their own (``fresh``) get spares of their own, which run one job each.
    """

    MOST_WAITING = 8  # per job environment

    def __init__(self, enabled: bool, start_cuda: bool, resident: bool = False) -> None:
        self.enabled = enabled
        self.start_cuda = start_cuda
        self.resident = resident
        # (job env, fresh) -> waiting spares: (pid, write end of its job pipe, read end of its done pipe or -1)
        self._waiting: dict[tuple, list[tuple[int, int, int]]] = {}
        self._busy: dict[int, tuple[tuple, int, int]] = {}  # resident pid -> its key and pipes, job under way
        self._running: dict[tuple, set[int]] = {}
        self._peak: dict[tuple, int] = {}

    def hand_over(self, job: dict) -> int | None:
        """Give ``job`` to a spare forked for its environment; the spare's pid, or ``None`` if none waits."""

        if not self.enabled:
            return None
        key = _key(job)
        waiting = self._waiting.get(key, [])
        while waiting:
            pid, write_end, done = waiting.pop(0)
            try:
                os.write(write_end, (json.dumps(job) + "\n").encode())
            except OSError:  # it died waiting (reaped below as no job's)
                _close(write_end, done)
                continue
            if done >= 0:
                self._busy[pid] = (key, write_end, done)
            else:
                os.close(write_end)
            return pid
        return None

    def started(self, job: dict, pid: int) -> None:
        """``job`` runs as ``pid``: keep as many spares for its environment as candidates of it run at once."""

        if not self.enabled:
            return
        key = _key(job)
        running = self._running.setdefault(key, set())
        running.add(pid)
        self._peak[key] = min(self.MOST_WAITING, max(self._peak.get(key, 0), len(running)))

    def replenish_one(self) -> bool:
        """Fork one spare where fewer wait than are wanted; whether one was forked. One at a time, between
        reading jobs: a fork of the server takes tenths of a second, which a job that came meanwhile must not
        wait for (it is forked for at once instead)."""

        if not self.enabled:
            return False
        for key, wanted in self._peak.items():
            busy = sum(1 for busy_key, _, _ in self._busy.values() if busy_key == key)
            if len(self._waiting.get(key, [])) + busy < wanted:
                self._fork_spare(key)
                return True
        return False

    def done_pipes(self) -> dict[int, int]:
        """The done pipes of the residents with a job under way: read end -> pid."""

        return {done: pid for pid, (_key, _write_end, done) in self._busy.items()}

    def is_resident(self, pid: int) -> bool:
        return pid in self._busy

    def job_done(self, pid: int) -> bool:
        """Resident ``pid``'s done pipe can be read: whether it said its job is done (it then waits for the next
        one, or leaves where it said so or no more jobs come). ``False``: it died; its exit tells how."""

        key, write_end, done = self._busy.pop(pid)
        self._running.get(key, set()).discard(pid)
        try:
            said = os.read(done, 1)
        except OSError:
            said = b""
        if said == b"d" and self.enabled:
            self._waiting.setdefault(key, []).append((pid, write_end, done))
        else:
            _close(write_end, done)  # it sees the end of its job pipe and leaves
        return bool(said)

    def ended(self, pid: int) -> None:
        for running in self._running.values():
            running.discard(pid)
        if pid in self._busy:
            _key, write_end, done = self._busy.pop(pid)
            _close(write_end, done)
        for waiting in self._waiting.values():
            for entry in [entry for entry in waiting if entry[0] == pid]:  # a spare that died waiting
                waiting.remove(entry)
                _close(entry[1], entry[2])

    def kill_all(self) -> None:
        """Kill the waiting spares; residents with a job under way finish it, then leave."""

        self.enabled = False
        for waiting in self._waiting.values():
            for pid, write_end, done in waiting:
                _close(write_end, done)
                with contextlib.suppress(OSError):
                    os.killpg(pid, signal.SIGKILL)
        self._waiting = {}

    def forget_in_child(self) -> None:
        """In a forked child: the other spares' pipes are not ours (holding them would keep them from seeing
        the server go)."""

        for waiting in self._waiting.values():
            for _pid, write_end, done in waiting:
                _close(write_end, done)
        for _key, write_end, done in self._busy.values():
            _close(write_end, done)
        self._waiting, self._busy = {}, {}
        self.enabled = False

    def _fork_spare(self, key: tuple) -> None:
        env, fresh = key
        resident = self.resident and not fresh
        read_end, write_end = os.pipe()
        done_read, done_write = os.pipe() if resident else (-1, -1)
        server = os.getpid()
        pid = _fork_child(self)
        if pid:
            _close(read_end, done_write)
            self._waiting.setdefault(key, []).append((pid, write_end, done_read))
            return
        try:
            _close(write_end, done_read)
            # The protocol's pipes are the server's: a spare holding them would keep the parent from seeing the
            # server's end.
            devnull = os.open(os.devnull, os.O_RDWR)
            os.dup2(devnull, 0)
            os.dup2(devnull, 1)
            os.environ.update(dict(env))  # the job environment the spare waits for
            if self.start_cuda:
                _start_cuda()
            from minimizer.runner import child

            child.FORKED_AHEAD = True
            if resident:
                from minimizer.runner.resident import serve_jobs

                serve_jobs(lambda: _await_job(read_end, server), done_write)
                return
            job = _await_job(read_end, server)
            os.close(read_end)
            if job is not None:
                _enter_job(job, env_applied=True)
        finally:
            os._exit(1)


def _key(job: dict) -> tuple:
    """What a spare waits for: the job's environment, and whether the job must have a process of its own (a
    resident worker's answer checked, ``minimizer.runner.resident_trust``: never a resident then)."""

    return frozenset(job["env"].items()), bool(job.get("fresh"))


def _close(*descriptors: int) -> None:
    for descriptor in descriptors:
        if descriptor >= 0:
            with contextlib.suppress(OSError):
                os.close(descriptor)


def _start_cuda() -> None:
    """Create the CUDA context now, without allocating (the script's memory statistics stay its own)."""

    from minimizer.runner import child

    try:
        import torch

        torch.cuda.init()
        torch.cuda.synchronize()
        child.CUDA_STARTED_AHEAD = True
    except Exception:  # noqa: BLE001 - the script's own first CUDA call meets the same trouble and shows it
        pass


def _await_job(read_end: int, server: int) -> dict | None:
    """The job the server hands this spare; ``None`` once the server is gone or closed the pipe. One job at a
    time comes down a pipe: the server hands a resident its next job only after it said it was done."""

    buffer = b""
    while b"\n" not in buffer:
        readable, _, _ = select.select([read_end], [], [], 1.0)
        if os.getppid() != server:
            return None
        if readable:
            chunk = os.read(read_end, 65536)
            if not chunk:
                return None
            buffer += chunk
    return json.loads(buffer.split(b"\n", 1)[0])
