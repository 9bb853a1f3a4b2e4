"""A row id from a caller that may send anything (a page event's argument is whatever a
raw websocket client puts there): anything but an integer is the same `NotFound` as an id
nobody has, so a store query never sees it."""

from __future__ import annotations

from agent_chat.db.errors import NotFound


def row_id(value: object, what: str) -> int:
    """`value` when it is an integer (not a bool); `NotFound` naming `what` otherwise."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise NotFound(f"{what} {value!r} does not exist")
    return value
