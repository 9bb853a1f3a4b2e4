"""Where a command's CPU goes, by kind of process: `python scripts/suite_cpu.py ./test.sh`.

The suite keeps both cores of the test machine busy, so its time follows its CPU; this says
whose it is (test processes, app and bridge starts, the browser, the databases). Every second
it reads each process's CPU time from /proc (so daemons such as PostgreSQL count too, which
the shell's `time` misses) and keeps the last figure per process; a process that lives less
than a second between two reads is missed. Linux only; it prints the table when the command
ends, with the machine's busy share over the run (/proc/stat) and the command's wall time.
"""

from __future__ import annotations

import collections
import os
import subprocess
import sys
import time

KINDS = (  # the first that the command line contains names the kind
    ("headless-shell", "browser (chromium-headless-shell)"),
    ("chromium", "browser (chromium)"),
    ("agent_chat.bridge", "bridge process"),
    ("agent_chat.agent_chat", "app process"),
    ("reflex_workers", "app process"),
    ("reflex", "reflex CLI (build)"),
    ("bun", "bun (build)"),
    ("playwright", "playwright driver (node)"),
    ("postgres", "postgresql"),
    ("redis-server", "redis"),
    ("pytest", "pytest main"),
    ("python", "test workers and other python"),
)
HZ = os.sysconf("SC_CLK_TCK")


def _kind(command_line: str) -> str:
    return next((kind for key, kind in KINDS if key in command_line), "other")


def _busy_and_total() -> tuple[int, int]:
    with open("/proc/stat") as stat:
        ticks = [int(n) for n in stat.readline().split()[1:9]]
    idle = ticks[3] + ticks[4]
    return sum(ticks) - idle, sum(ticks)


def stat_fields(pid: int | str) -> list[str]:
    """/proc/<pid>/stat's fields after the command name (which may hold ')'), from the state
    on: [1] the parent pid, [11] + [12] the process's CPU ticks, [13] + [14] its reaped
    children's, [19] its start time."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rpartition(")")[2].split()


def _sample(seen: dict[tuple[int, int], list]) -> None:
    """seen[(pid, start time)] = [kind, CPU ticks]: the start time tells a reused pid."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            fields = stat_fields(name)
            ticks = int(fields[11]) + int(fields[12])  # utime + stime of the process
            key = (int(name), int(fields[19]))
            if key not in seen:
                with open(f"/proc/{name}/cmdline") as cmdline:
                    seen[key] = [_kind(cmdline.read().replace("\0", " ")), ticks]
            seen[key][1] = max(seen[key][1], ticks)
        except (OSError, ValueError, IndexError):
            pass  # gone meanwhile


def main(command: list[str]) -> int:
    seen: dict[tuple[int, int], list] = {}
    _sample(seen)
    before = {key: entry[1] for key, entry in seen.items()}  # what ran before is not counted
    busy0, total0 = _busy_and_total()
    start = time.monotonic()
    child = subprocess.Popen(command)
    while child.poll() is None:
        _sample(seen)
        time.sleep(1)
    wall = time.monotonic() - start
    busy1, total1 = _busy_and_total()
    by_kind: collections.Counter[str] = collections.Counter()
    count: collections.Counter[str] = collections.Counter()
    for key, (kind, ticks) in seen.items():
        used = ticks - before.get(key, 0)
        if used > 0:
            by_kind[kind] += used / HZ
            count[kind] += 1
    print(f"\n{'CPU-s':>8}  {'procs':>5}  kind", file=sys.stderr)
    for kind, seconds in by_kind.most_common():
        print(f"{seconds:8.1f}  {count[kind]:5d}  {kind}", file=sys.stderr)
    print(f"{sum(by_kind.values()):8.1f}         in all", file=sys.stderr)
    share = 100 * (busy1 - busy0) / max(total1 - total0, 1)
    print(f"wall {wall:.0f} s, the machine {share:.0f} % busy", file=sys.stderr)
    return child.returncode


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
