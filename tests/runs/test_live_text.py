"""Coalesced live text: the page's copy (a mirror of assets/stream_text.jsx's store) always
ends equal to the run's texts, whatever the tick boundaries, segment breaks or dropped
chunks followed by a reconnect."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_chat.protocol.reducer import RunView, apply
from agent_chat.runs.live_text import LiveText


class PageStore:
    """The JS store's rules: chunks by offset (buffered until contiguous), seeds never shorten."""

    def __init__(self) -> None:
        self.text: dict[str, str] = {}
        self.pending: dict[str, dict[int, str]] = {}

    def _drain(self, stream: str) -> None:
        pending = self.pending.setdefault(stream, {})
        progressed = True
        while progressed:
            progressed = False
            for offset in sorted(pending):
                current = self.text.get(stream, "")
                if offset <= len(current):
                    chunk = pending.pop(offset)
                    if offset + len(chunk) > len(current):
                        self.text[stream] = current[:offset] + chunk
                    progressed = True

    def append(self, stream: str, offset: int, chunk: str) -> None:
        self.pending.setdefault(stream, {})[offset] = chunk
        self._drain(stream)

    def seed(self, stream: str, text: str) -> None:
        if len(text) > len(self.text.get(stream, "")):
            self.text[stream] = text
        self._drain(stream)


events = st.lists(
    st.one_of(
        st.tuples(st.just("text_delta"), st.text(min_size=1, max_size=8)),
        st.tuples(st.just("reasoning_delta"), st.text(min_size=1, max_size=8)),
        st.tuples(st.just("text_break"), st.just("")),
        st.tuples(st.just("tool_start"), st.just("")),
    ),
    max_size=60,
)


def tick(text: LiveText, page: PageStore, view: RunView, *, reconnected: bool, drop) -> bool:
    """One follower update, as ChatState.follow_run does it; True if a chunk was dropped."""
    if reconnected:  # chunks sent while the websocket was down were lost: start over whole
        answer, thinking = text.seed(view)
        page.seed(text.answer_id, answer)
        page.seed(text.thinking_id, thinking)
    elif text.needs_answer_seed(view):
        answer = text.seed_answer(view)
        page.seed(text.answer_id, answer)
    dropped = False
    for chunk in text.chunks(view):
        if drop():
            dropped = True
            continue
        page.append(chunk.stream_id, chunk.offset, chunk.text)
    return dropped


@settings(max_examples=300, deadline=None)
@given(
    events=events,
    ticks=st.lists(st.integers(0, 3), max_size=60),
    drops=st.lists(st.booleans(), max_size=60),
)
def test_page_text_ends_equal_to_the_run_whatever_the_coalescing(events, ticks, drops) -> None:
    view = RunView()
    text = LiveText(message_id=7)
    page = PageStore()
    tick_sizes, drop_flags = iter(ticks), iter(drops)
    dropped = tick(text, page, view, reconnected=True, drop=lambda: False)
    since_tick = 0
    for seq, (kind, body) in enumerate(events, start=1):
        event = {"type": kind, "seq": seq, "text": body, "call_id": f"c{seq}", "tool": "todo"}
        view = apply(view, event)
        since_tick += 1
        if since_tick <= next(tick_sizes, 0):
            continue  # coalesced into a later tick
        since_tick = 0
        dropped = tick(text, page, view, reconnected=dropped, drop=lambda: next(drop_flags, False))
    tick(text, page, view, reconnected=dropped, drop=lambda: False)  # the last update
    assert page.text.get(text.answer_id, "") == view.answer
    assert page.text.get(text.thinking_id, "") == view.thinking


def test_chunks_carry_only_new_text_with_offsets() -> None:
    view = RunView()
    text = LiveText(message_id=1)
    text.seed(view)
    view = apply(view, {"type": "text_delta", "seq": 1, "text": "Hello "})
    assert [(c.stream_id, c.offset, c.text) for c in text.chunks(view)] == [("a1-0", 0, "Hello ")]
    view = apply(view, {"type": "text_delta", "seq": 2, "text": "world"})
    assert [(c.offset, c.text) for c in text.chunks(view)] == [(6, "world")]
    assert text.chunks(view) == []  # nothing new, nothing sent
    view = apply(view, {"type": "text_break", "seq": 3})
    assert text.needs_answer_seed(view)
    assert text.seed_answer(view) == ""
    assert [(c.stream_id, c.offset, c.text) for c in text.chunks(view)] == [
        ("t1", 0, "Hello world")
    ]
