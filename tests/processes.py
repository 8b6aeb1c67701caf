"""Processes as /proc shows them, for tests that check what a run leaves behind (Linux)."""

import os
import time
from pathlib import Path


def descendants(pid: int) -> set[int]:
    """Every process below ``pid``, now."""

    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """Running (a zombie has ended)."""

    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


class LingeringHandle:
    """A candidate's handle whose process never exits by itself (as after its answer, or a resident worker's);
    ``killed`` says whether the run killed it."""

    pid = 0
    killed = False

    def __init__(self, resident: bool = False):
        self.resident = resident

    def poll(self):
        return None

    def wait_briefly(self, seconds):
        time.sleep(seconds)

    def kill(self):
        self.killed = True
