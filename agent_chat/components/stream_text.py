"""The live text of a run, fed with deltas by `rx.call_script` (assets/stream_text.jsx)."""

from __future__ import annotations

import json

import reflex as rx

from agent_chat.runs.live_text import Chunk


class StreamText(rx.Component):
    """Shows a stream's text: `initial` from the state, then appended chunks."""

    library = "$/public/stream_text.jsx"
    tag = "StreamText"

    stream_id: rx.Var[str]
    initial: rx.Var[str]
    markdown: rx.Var[bool]


stream_text = StreamText.create


def append_script(chunk: Chunk) -> str:
    """JavaScript that appends a chunk (the stream's text from its offset) in the page."""
    # Short on purpose: this wrapper travels with every update (assets/stream_text.jsx
    # defines window.acs).
    return (
        f"window.acs&&acs({json.dumps(chunk.stream_id)},{chunk.offset},"
        f"{json.dumps(chunk.text, ensure_ascii=False)})"
    )
