"""The parent's side of the warm workers: start the fork server, hand it jobs, track the children it forks."""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
import select
import subprocess
import sys
import threading
from concurrent.futures import Future

from minimizer.errors import MinimizerError
from minimizer.runner.process import Handle, Job, kill_process_group

_READY_TIMEOUT = 300.0


class WarmServerError(MinimizerError):
    """The fork server could not be started."""


class _ForkedHandle:
    def __init__(self, job_id: int, server: subprocess.Popen):
        self.job_id = job_id
        self.server = server
        self.pid = 0
        self.forked = threading.Event()
        self.ended = threading.Event()
        self.status: int | None = None
        self.lost = False  # the server died before reporting how the candidate ended
        self.resident = False  # a resident worker took the job (minimizer.runner.resident)

    @property
    def returncode(self) -> int | None:
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)

    def poll(self) -> int | None:
        return self.returncode

    def wait_briefly(self, seconds: float) -> None:
        self.ended.wait(seconds)

    def kill(self) -> None:
        if self.pid:
            kill_process_group(self.pid)
        self.ended.wait(timeout=10)

    def server_died(self) -> None:
        if self.status is None:
            self.lost = True
            self.status = 1 << 8  # exit status 1: the candidate did not report
        self.forked.set()
        self.ended.set()


class ForkServerLauncher:
    """Launches candidates by forking a warm server; restarts a server that died.

    A server imports torch with the environment it was started with, so there is one per distinct starting
    environment (``base_env``: the script's prelude, see ``minimizer.runner.prelude``, decides it; most
    reductions need one, a candidate that lost a line of the prelude another). At most ``max_servers`` stay
    up; the least recently used one is retired gently (its running candidates finish). Per-job differences
    such as ``CUDA_VISIBLE_DEVICES`` travel with the job.
    """

    def __init__(self, max_servers: int = 2) -> None:
        self._lock = threading.Lock()
        self._servers: dict[frozenset, subprocess.Popen] = {}  # in order of last use
        self._handles: dict[int, _ForkedHandle] = {}
        self._ids = itertools.count()
        self.max_servers = max_servers
        self._retired: list[subprocess.Popen] = []
        self._starting: dict[frozenset, Future] = {}  # servers being started, by key
        self._closed = False

    def launch(self, job: Job) -> Handle:
        while True:
            server = self._server_for(job.base_env)
            with self._lock:
                handle = _ForkedHandle(next(self._ids), server)
                if self._closed:
                    handle.server_died()  # no answer, as for a candidate cancelled
                    return handle
                if not any(server is running for running in self._servers.values()):
                    continue  # retired while this thread waited for the lock: ask again
                self._handles[handle.job_id] = handle
                sent = {"id": handle.job_id, **dataclasses.asdict(job)}
                del sent["base_env"]  # the server's own: it was started with it
                try:
                    assert server.stdin is not None
                    server.stdin.write((json.dumps(sent) + "\n").encode())
                    server.stdin.flush()
                except (BrokenPipeError, OSError):
                    handle.server_died()
                    return handle
            break
        handle.forked.wait()
        return handle

    def close(self) -> None:
        with self._lock:
            self._closed = True
            servers, self._servers = list(self._servers.values()) + self._retired, {}
            self._retired = []
        for handle in list(self._handles.values()):
            if handle.status is None and handle.pid:
                kill_process_group(handle.pid)
        for server in servers:
            kill_process_group(server.pid)
            server.wait()

    def _server_for(self, base_env: dict[str, str]) -> subprocess.Popen:
        """The running server for ``base_env``, started if there is none. A server starts outside the lock (it
        imports torch, and may settle Inductor's CPU probe): candidates of other servers keep launching, and
        those that need this one wait for the one start."""

        key = frozenset(base_env.items())
        with self._lock:
            server = self._servers.pop(key, None)
            if server is not None and server.poll() is None:
                self._servers[key] = server  # now the most recently used
                return server
            starting = self._starting.get(key)
            if starting is not None:
                owner = False
            else:
                owner, starting = True, Future()
                self._starting[key] = starting
        if not owner:
            return starting.result()
        try:
            server = self._start(base_env)
        except BaseException as exc:
            with self._lock:
                del self._starting[key]
            starting.set_exception(exc)
            raise
        with self._lock:
            del self._starting[key]
            while len(self._servers) >= self.max_servers:
                retired = self._servers.pop(next(iter(self._servers)))
                _retire(retired)
                self._retired.append(retired)
            closed = self._closed
            if not closed:
                self._servers[key] = server
        if closed:
            kill_process_group(server.pid)
            server.wait()
        starting.set_result(server)
        return server

    def _start(self, base_env: dict[str, str]) -> subprocess.Popen:
        server = subprocess.Popen(
            [sys.executable, "-m", "minimizer.runner.forkserver"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=base_env,
            start_new_session=True,
        )
        assert server.stdout is not None
        ready, _, _ = select.select([server.stdout], [], [], _READY_TIMEOUT)
        line = server.stdout.readline() if ready else b""
        try:
            started = bool(json.loads(line).get("ready")) if line else False
        except ValueError:
            started = False
        if not started:
            kill_process_group(server.pid)
            server.wait()
            raise WarmServerError("the warm worker failed to start (try --cold)")
        threading.Thread(target=self._read_replies, args=(server,), daemon=True).start()
        return server

    def _read_replies(self, server: subprocess.Popen) -> None:
        assert server.stdout is not None
        for line in server.stdout:
            reply = json.loads(line)
            handle = self._handles.get(reply["id"])
            if handle is None:
                continue
            if "pid" in reply:
                handle.pid = reply["pid"]
                handle.resident = reply.get("resident", False)
                handle.forked.set()
            if "status" in reply:
                handle.status = reply["status"]
                handle.ended.set()
                self._handles.pop(reply["id"], None)
            if "done" in reply:  # a resident worker's: its process goes on, the answer ends the run
                self._handles.pop(reply["id"], None)
        # The server is gone: nothing it forked will be reported any more.
        for job_id, handle in list(self._handles.items()):
            if handle.server is server:
                handle.server_died()
                self._handles.pop(job_id, None)


def _retire(server: subprocess.Popen) -> None:
    """Close the server's input: it exits once the candidates it forked have ended."""

    try:
        if server.stdin is not None:
            server.stdin.close()
    except OSError:
        pass
