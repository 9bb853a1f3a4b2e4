"""What a tab tells its person about conversations they are not looking at: a notification
when one finishes or starts waiting for them, and how many need them (the tab title's count).
Plain Python: the tab's watcher (state/live.py) sends the result to assets/notify.js."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agent_chat.display.rows import SessionRow

NEEDS_YOU = ("waiting", "unread")


@dataclass(frozen=True)
class Notice:
    title: str
    body: str
    session_uuid: str


def notices(
    before: Mapping[str, str] | None, rows: Iterable[SessionRow], current: str
) -> tuple[list[Notice], int, dict[str, str]]:
    """Notices for state changes since `before` (None: the first look, which only records),
    the count for the title, and the states to compare with next time."""
    rows = list(rows)
    now = {row["uuid"]: row["state"] for row in rows}
    titles = {row["uuid"]: row["title"] or "New conversation" for row in rows}
    # A schedule's conversation that appears already answered (a run shorter than one look
    # apart) landed while the person was away: news as much as one seen running.
    landed = {
        row["uuid"]
        for row in rows
        if row.get("scheduled") and not row.get("archived") and row["uuid"] not in (before or {})
    }
    found: list[Notice] = []
    for uuid, state in now.items():
        if before is None or uuid == current or before.get(uuid) == state:
            continue
        if state == "waiting":
            found.append(Notice("The agent needs you", titles[uuid], uuid))
        elif state == "unread" and (before.get(uuid) in ("running", "waiting") or uuid in landed):
            found.append(Notice("An answer is ready", titles[uuid], uuid))
    count = sum(1 for uuid, state in now.items() if state in NEEDS_YOU and uuid != current)
    return found, count, now
