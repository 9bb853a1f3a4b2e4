"""Server processes for tests and benchmarks: start one with its output in a log file, wait
until it answers over HTTP, stop it (terminate, then kill), the way `python -m
agent_chat.launch.serve` waits for and stops what it starts (its helpers do the work)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Sequence
from pathlib import Path

from agent_chat.launch.serve import stop, wait_until_serving
from tests.fakes.model_server import free_port

__all__ = [
    "ROOT",
    "descendants",
    "free_port",
    "listening_ports",
    "start_process",
    "stop_process",
    "wait_http",
]

ROOT = Path(__file__).resolve().parents[2]  # the checkout these tests belong to


def _tail(log: Path) -> str:
    with contextlib.suppress(OSError):
        return log.read_text(errors="replace")[-3000:]
    return "(no log)"


def wait_http(url: str, timeout: float, process: subprocess.Popen, log: Path) -> None:
    """Until `url` answers below 500; fails (with the log's tail) if `process` exits first."""
    if wait_until_serving(process, url, timeout_s=timeout, interval_s=0.2):
        return
    if process.poll() is not None:
        raise RuntimeError(f"{url}: process exited {process.returncode}:\n{_tail(log)}")
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{_tail(log)}")


def start_process(
    args: Sequence[str], *, env: dict[str, str], log: Path, health: str, timeout: float
) -> subprocess.Popen:
    """Start `args` in the checkout's root, output appended to `log`; returns once `health`
    answers (the process is stopped if it never does)."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            list(args), cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        wait_http(health, timeout, process, log)
    except BaseException:
        stop_process(process)
        raise
    return process


def stop_process(process: subprocess.Popen | None, timeout: float = 15) -> None:
    """Terminate, and kill if it is still there after `timeout` seconds."""
    if process is not None:
        stop(process, timeout_s=timeout)


def descendants(pid: int) -> list[int]:
    """The processes `pid` started, and theirs (Linux: /proc/<pid>/task/*/children)."""
    found: list[int] = []
    for children in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            for child in children.read_text().split():
                found += [int(child), *descendants(int(child))]
    return found


def listening_ports(pid: int) -> set[int]:
    """The TCP ports process `pid` listens on (Linux: its socket inodes in /proc/net/tcp*)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = fd.readlink().as_posix()
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                    ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports
