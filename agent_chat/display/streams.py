"""The page's stream ids: where its renderer keeps each text (assets/stream_text.jsx treats
them as opaque names; only the server makes them)."""

from __future__ import annotations


def answer_stream_id(message_id: int, segment: int) -> str:
    # The answer restarts empty after each text segment that moved to the thinking area.
    return f"a{message_id}-{segment}"


def thinking_stream_id(message_id: int) -> str:
    return f"t{message_id}"


def final_stream_id(message_id: int) -> str:
    """The stream of a finished answer whose text comes from the database."""
    return f"m{message_id}"
