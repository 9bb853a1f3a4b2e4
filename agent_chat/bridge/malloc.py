"""Fewer malloc arenas for the bridge process (glibc).

The bridge runs every run on a thread of its own; glibc gives threads their own malloc
arenas (up to 8 per core) and keeps what they freed mapped, fragmented. Over a long day the
bridge's memory then steps up with the number of runs though nothing is leaked: in the soak
(tests/runs/test_soak.py) the bridge grew 156 → 188 MiB from 50 to 450 runs with the default
arenas, 141 → 150 MiB with two (benchmarks/RESULTS.md). `MALLOC_ARENA_MAX` in the
environment, if set, wins (glibc reads it itself).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os

logger = logging.getLogger(__name__)

M_ARENA_MAX = -8  # glibc's mallopt parameter
ARENAS = 2


def limit_arenas(arenas: int = ARENAS) -> bool:
    """Cap the process's malloc arenas (before the run threads start); False where this is
    not glibc or the environment already says."""
    if os.environ.get("MALLOC_ARENA_MAX"):
        return False
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        return bool(libc.mallopt(M_ARENA_MAX, arenas))
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to do
        logger.debug("mallopt unavailable; malloc arenas left as they are")
        return False
