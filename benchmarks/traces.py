"""Reading a Chrome performance trace (CDP `Tracing`): the page's renderer main thread and
its work by kind. page_open.py and stream_profile.py read their traces with these."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from typing import Any

Event = dict[str, Any]


def renderer_trace(raw: bytes) -> tuple[list[Event], set[tuple[Any, Any]]]:
    """The trace's events, and its renderer main threads (pid, tid): the threads named
    CrRendererMain in the page's process."""
    events = json.loads(raw)
    events = events.get("traceEvents", events) if isinstance(events, dict) else events
    mains = {
        (e["pid"], e["tid"])
        for e in events
        if e.get("name") == "thread_name" and e.get("args", {}).get("name") == "CrRendererMain"
    }
    return events, mains


def main_thread_by_kind(
    events: list[Event], mains: set[tuple[Any, Any]], kinds: Mapping[str, str]
) -> tuple[Counter, Counter]:
    """Main-thread µs per kind (`kinds`: event name -> kind) and per event name. Each complete
    event counts once at the top of its nesting by kind: nested events of the same kind
    (FunctionCall inside FunctionCall) would count twice."""
    by_kind: Counter = Counter()
    by_name: Counter = Counter()
    open_until: dict[tuple, float] = {}
    for e in sorted(
        (e for e in events if (e.get("pid"), e.get("tid")) in mains and e.get("ph") == "X"),
        key=lambda e: e["ts"],
    ):
        kind = kinds.get(e["name"])
        if kind is None:
            continue
        key = (e["pid"], e["tid"], kind)
        if e["ts"] < open_until.get(key, -1):
            continue
        open_until[key] = e["ts"] + e.get("dur", 0)
        by_kind[kind] += e.get("dur", 0)
        by_name[e["name"]] += e.get("dur", 0)
    return by_kind, by_name
