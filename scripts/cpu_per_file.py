"""Where the suite's CPU goes by test file: an opt-in pytest plugin and its summary.

`python scripts/suite_cpu.py ./test.sh` says whose the CPU is by kind of process (browser,
app, bridge, test workers); this says which test files spend it. Record (each pytest process,
xdist workers included, writes one JSON file when its session ends):

    PYTHONPATH=scripts ./test.sh -p cpu_per_file          # or python -m pytest -p cpu_per_file
    python scripts/cpu_per_file.py [folder]               # the table, biggest first

Per test it reads, before and after, the CPU of the test process's whole tree from /proc:
its own, its reaped children's and every live descendant's (the stack's app and bridge, the
Playwright driver and the browser below it), so a file is charged what its tests made the
machine do, session fixtures included in the first test that uses them. Not counted: what
runs outside the tree (PostgreSQL's server, the frontend build test.sh starts, ruff), and
a process that outlives its parent (then reparented): the browser's processes come and go
between tests, so a browser file's figure can come out low; compare such files by their wall
time, or by `suite_cpu.py` around a run of the file alone. The two /proc reads per test cost a
few CPU-ms each, so the suite runs slightly slower with it. Folder: CPU_PER_FILE_OUT, by
default /tmp/cpu_per_file (emptied by hand between runs).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from suite_cpu import stat_fields

HZ = os.sysconf("SC_CLK_TCK")
OUT = Path(os.environ.get("CPU_PER_FILE_OUT", "/tmp/cpu_per_file"))


def _stat(pid: int) -> tuple[int, int, int]:
    """(parent pid, own CPU ticks, reaped children's CPU ticks) of `pid`."""
    fields = stat_fields(pid)
    return int(fields[1]), int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])


def tree_cpu_s(root: int | None = None) -> float:
    """CPU seconds of `root` (this process), its reaped children and its live descendants."""
    processes: dict[int, tuple[int, int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):  # ended meanwhile
                processes[int(name)] = _stat(int(name))
    children: dict[int, list[int]] = collections.defaultdict(list)
    for pid, (parent, _, _) in processes.items():
        children[parent].append(pid)
    ticks, todo = 0, [root or os.getpid()]
    while todo:
        pid = todo.pop()
        if pid in processes:
            ticks += processes[pid][1] + processes[pid][2]
            todo.extend(children[pid])
    return ticks / HZ


_files: dict[str, dict[str, float]] = collections.defaultdict(
    lambda: {"cpu_s": 0.0, "wall_s": 0.0, "tests": 0}
)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    cpu, wall = tree_cpu_s(), time.monotonic()
    yield
    row = _files[str(item.path.relative_to(item.config.rootpath))]
    row["cpu_s"] += tree_cpu_s() - cpu
    row["wall_s"] += time.monotonic() - wall
    row["tests"] += 1


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not _files:  # the xdist controller: its workers ran the tests
        return
    database = "postgresql" if os.environ.get("AGENT_CHAT_TEST_DB_URL") else "sqlite"
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    OUT.mkdir(parents=True, exist_ok=True)
    record = {"database": database, "session_cpu_s": tree_cpu_s(), "files": _files}
    path = OUT / f"{database}-{worker}-{os.getpid()}.json"
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def summary(folder: Path, top: int = 40) -> str:
    """The files by CPU (both databases' runs added up), with their wall time and tests."""
    rows: dict[str, list[Any]] = collections.defaultdict(lambda: [0.0, 0.0, 0, set()])
    for path in sorted(folder.glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        for name, figures in record["files"].items():
            row = rows[name]
            row[0] += figures["cpu_s"]
            row[1] += figures["wall_s"]
            row[2] += figures["tests"]
            row[3].add(record["database"])
    total = sum(row[0] for row in rows.values())
    lines = [f"{len(rows)} files, {total:.0f} CPU-s in the test processes' trees", ""]
    lines.append(f"{'CPU-s':>7} {'wall-s':>7} {'tests':>5}  databases   file")
    ranked = sorted(rows.items(), key=lambda item: -item[1][0])
    for name, (cpu, wall, tests, databases) in ranked[:top]:
        lines.append(
            f"{cpu:7.1f} {wall:7.1f} {tests:5d}  {'+'.join(sorted(databases)):17s}  {name}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT))
