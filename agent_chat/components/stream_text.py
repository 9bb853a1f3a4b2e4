"""The one renderer of agent output (assets/stream_text.jsx), streamed or finished.

A live answer grows by chunks the server sends (`LiveFeed`, `window.acs`); a finished one
is handed over whole as `text`. Both go through the same markdown component with the same
safety rules (no raw HTML, no `javascript:` links, images only on click), so a reload never
changes how an answer looks.
"""

from __future__ import annotations

import reflex as rx


class StreamText(rx.Component):
    """Shows a stream's text: `text` (possibly empty), then whatever chunks add to it.
    An empty `stream_id` renders `text` alone (no store)."""

    library = "$/public/stream_text.jsx"
    tag = "StreamText"
    # What the .jsx files import (the versions Reflex's own rx.markdown and rx.code_block use;
    # assets/code_block.jsx highlights code blocks with react-syntax-highlighter's Prism build).
    lib_dependencies: list[str] = [
        "react-markdown@10.1.0",
        "remark-gfm@4.0.1",
        "react-syntax-highlighter@16.1.2",
    ]

    stream_id: rx.Var[str]
    text: rx.Var[str]
    markdown: rx.Var[bool]


stream_text = StreamText.create


def copy_stream(stream_id: rx.Var) -> list:
    """Client-side events: copy a stream's text (from the page's store) and say so."""
    # Built as a Var expression: the id is read in the page, not in Python.
    code = "window.agentChatStream&&agentChatStream.copy(" + stream_id.to(str).to_string() + ")"
    return [rx.call_script(code), rx.toast("Copied", duration=1500)]
