"""Candidates (and triage's checks) as Ray tasks, on a local Ray or a cluster the user already has.

Each task runs ``run_candidate`` on a Ray worker exactly as it runs here: its own process, folder and limits,
forked from a warm server that the worker keeps for its lifetime. A task asks for one GPU where the cluster has
GPUs. Cancelling a question cancels its task (the worker's fork server then kills the candidate). The reducer
asks the same questions in the same order as with ``--jobs``, so the result is the same as with ``-j 1``.

The workers read the script's folder and the run's compile cache by path: on one host that always holds; on
several hosts those paths must be on a shared filesystem.
"""

from __future__ import annotations

import threading
from typing import Any

from minimizer.errors import MinimizerError
from minimizer.runner.run_types import RunResult, RunSettings

_POLL_SECONDS = 0.2
_WORKER_LAUNCHER: Any = None
_WORKER_LOCK = threading.Lock()


def _run_on_worker(source: str, settings: RunSettings) -> RunResult:
    """The task: one candidate, forked from this worker's warm server (made on its first task)."""

    global _WORKER_LAUNCHER
    from minimizer.runner.process import run_candidate
    from minimizer.runner.warm import ForkServerLauncher

    with _WORKER_LOCK:
        if _WORKER_LAUNCHER is None:
            _WORKER_LAUNCHER = ForkServerLauncher()
    return run_candidate(source, settings, launcher=_WORKER_LAUNCHER)


def _check_reachable(address: str) -> None:
    """Fail at once on a cluster that is not there (Ray itself retries for minutes)."""

    import os
    import socket

    target = os.environ.get("RAY_ADDRESS", "") if address == "auto" else address
    if not target:
        raise MinimizerError("--ray auto needs RAY_ADDRESS (or give the address, or --ray local)")
    host, _, port = target.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return  # a form Ray understands and we do not parse: let Ray try
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as error:
        raise MinimizerError(f"cannot start or join Ray at {address!r}: {target} does not answer ({error})") from None


def _call_on_worker(function: Any, args: tuple, kwargs: dict) -> Any:
    return function(*args, **kwargs)


class RayBackend:
    """``address``: ``"local"`` starts a Ray cluster on this host for the run; anything else (an address, or
    ``"auto"`` for ``RAY_ADDRESS``) joins an existing one."""

    def __init__(self, address: str):
        try:
            import ray
        except ImportError:
            raise MinimizerError("--ray needs Ray: pip install -e '.[ray]' (or pip install ray)") from None
        self._ray = ray
        # A Ray this process already joined (triage's, for its checks) is reused and left running.
        self._owns_ray = not ray.is_initialized()
        try:
            if not self._owns_ray:
                pass
            elif address == "local":
                ray.init(include_dashboard=False, log_to_driver=False, configure_logging=False)
            else:
                _check_reachable(address)
                ray.init(address=address, log_to_driver=False, configure_logging=False)
        except MinimizerError:
            raise
        except Exception as error:  # noqa: BLE001 - Ray's own errors, to one line
            raise MinimizerError(f"cannot start or join Ray at {address!r}: {str(error).splitlines()[0]}") from None
        resources = ray.cluster_resources()
        self.cpus = int(resources.get("CPU", 1))
        self.gpus = int(resources.get("GPU", 0))
        self.nodes = len([n for n in ray.nodes() if n.get("Alive")])
        options = {"num_gpus": 1, "num_cpus": 0} if self.gpus else {"num_cpus": 1}
        self._candidate = ray.remote(_run_on_worker).options(max_retries=0, **options)
        self._call = ray.remote(_call_on_worker).options(max_retries=0, num_cpus=1)

    @property
    def slots(self) -> int:
        """Tasks the cluster runs at once: one per GPU where it has GPUs, else one per CPU."""

        return max(1, self.gpus or self.cpus)

    def describe(self) -> dict:
        return {"backend": "ray", "nodes": self.nodes, "cpus": self.cpus, "gpus": self.gpus}

    def run(self, source: str, settings: RunSettings, cancel: threading.Event | None = None) -> RunResult:
        ref = self._candidate.remote(source, settings)
        return self._wait(ref, cancel, cancelled=lambda: RunResult(seconds=0.0, cancelled=True))

    def call(self, function: Any, *args: Any, **kwargs: Any) -> Any:
        """``function(*args, **kwargs)`` as a task (it must be importable on the workers)."""

        return self._wait(self._call.remote(function, args, kwargs), None, cancelled=lambda: None)

    def _wait(self, ref: Any, cancel: threading.Event | None, cancelled: Any) -> Any:
        ray = self._ray
        while True:
            ready, _ = ray.wait([ref], timeout=_POLL_SECONDS)
            if ready:
                return ray.get(ref)
            if cancel is not None and cancel.is_set():
                ray.cancel(ref, force=True)
                return cancelled()

    def close(self) -> None:
        if self._owns_ray and self._ray.is_initialized():
            self._ray.shutdown()
