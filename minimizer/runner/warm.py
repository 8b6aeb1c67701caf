"""The parent's side of the warm workers: start the fork server, hand it jobs, track the children it forks."""

from __future__ import annotations

import itertools
import json
import os
import select
import subprocess
import sys
import threading

from minimizer.errors import MinimizerError
from minimizer.runner.process import Handle, kill_process_group

_READY_TIMEOUT = 300.0


class WarmServerError(MinimizerError):
    """The fork server could not be started."""


class _ForkedHandle:
    def __init__(self, job_id: int):
        self.job_id = job_id
        self.pid = 0
        self.forked = threading.Event()
        self.ended = threading.Event()
        self.status: int | None = None
        self.lost = False  # the server died before reporting how the candidate ended

    @property
    def returncode(self) -> int | None:
        return None if self.status is None else os.waitstatus_to_exitcode(self.status)

    def poll(self) -> int | None:
        return self.returncode

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
    """Launches candidates by forking a warm server; restarts the server if it dies.

    The server is started lazily with the environment of the first job, which is the same for every job of
    one reduction (per-job differences such as ``CUDA_VISIBLE_DEVICES`` travel with the job).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._server: subprocess.Popen | None = None
        self._handles: dict[int, _ForkedHandle] = {}
        self._ids = itertools.count()

    def launch(
        self, *, request: str, cwd: str, stdout: str, stderr: str, env: dict[str, str], base_env: dict[str, str]
    ) -> Handle:
        with self._lock:
            server = self._ensure_server(base_env)
            handle = _ForkedHandle(next(self._ids))
            self._handles[handle.job_id] = handle
            job = {"id": handle.job_id, "request": request, "cwd": cwd, "stdout": stdout, "stderr": stderr, "env": env}
            try:
                assert server.stdin is not None
                server.stdin.write((json.dumps(job) + "\n").encode())
                server.stdin.flush()
            except (BrokenPipeError, OSError):
                handle.server_died()
                return handle
        handle.forked.wait()
        return handle

    def close(self) -> None:
        with self._lock:
            server, self._server = self._server, None
        if server is not None:
            for handle in list(self._handles.values()):
                if handle.status is None and handle.pid:
                    kill_process_group(handle.pid)
            kill_process_group(server.pid)
            server.wait()

    def _ensure_server(self, base_env: dict[str, str]) -> subprocess.Popen:
        if self._server is not None and self._server.poll() is None:
            return self._server
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
        self._server = server
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
                handle.forked.set()
            if "status" in reply:
                handle.status = reply["status"]
                handle.ended.set()
                self._handles.pop(reply["id"], None)
        # The server is gone: nothing it forked will be reported any more.
        for handle in list(self._handles.values()):
            handle.server_died()
        self._handles.clear()
