"""What a test that hangs was doing, in its failure report.

pytest-timeout (`timeout` in pyproject.toml) fails a test that runs past its limit, so one
hang costs minutes instead of CI's whole 90. Its own dump goes to the terminal, which an
xdist worker does not show; this adds every thread's stack and every pending asyncio task's
stack to the test's captured stderr, which the failure report does show.
"""

from __future__ import annotations

import asyncio
import io
import sys
import threading
import traceback

import pytest

from agent_chat.runs.awaiting import awaiting


def hang_report() -> str:
    out = io.StringIO()
    names = {t.ident: t.name for t in threading.enumerate()}
    for ident, frame in sys._current_frames().items():
        out.write(f"\n--- thread {names.get(ident, ident)} ---\n")
        out.write("".join(traceback.format_stack(frame)))
    loop = asyncio._get_running_loop()  # the signal handler runs in the loop's thread
    if loop is not None:
        for task in asyncio.all_tasks(loop):
            out.write(f"\n--- asyncio task {task.get_name()}, awaiting ---\n")
            out.write("\n".join(awaiting(task)) + "\n")
    return out.getvalue()


def pytest_configure(config: pytest.Config) -> None:
    try:
        import pytest_timeout
    except ImportError:  # run without the plugin: no limit, nothing to add
        return
    original = pytest_timeout.timeout_sigalrm

    def timeout_sigalrm(item: pytest.Item, settings: object) -> None:
        __tracebackhide__ = True
        sys.stderr.write(f"\n+++ {item.nodeid} timed out; threads and tasks:\n{hang_report()}")
        original(item, settings)

    # The plugin's handler looks the function up by name when the alarm rings.
    pytest_timeout.timeout_sigalrm = timeout_sigalrm
