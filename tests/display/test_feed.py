"""One tab's live feed: the page's copy of the texts (assets/stream_text.jsx's store, run in
node by tests.support.js_store with the very scripts the feed sends) always ends equal to
the run's texts, whatever the coalescing, segment breaks, or
chunks dropped while the websocket was down followed by a new feed (reconnect); vars are
sent only when they change."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_chat.display.feed import LiveFeed, Patch
from agent_chat.display.streams import answer_stream_id, thinking_stream_id
from agent_chat.protocol.events import RunEvent
from tests.support.js_store import JsPage, JsPages


@pytest.fixture(scope="module")
def pages() -> Iterator[JsPages]:
    """Pages whose store is assets/stream_text.jsx's own, run in node."""
    js = JsPages()
    yield js
    js.close()


def apply(page: JsPage, patch: Patch, *, dropped: bool = False) -> None:
    """The page runs the patch's script, as `rx.call_script(patch.script)` makes it do,
    unless the websocket was down and it never came."""
    if not dropped:
        page.run(patch.script)


# Any text, emoji included: a character outside the Basic Multilingual Plane is two UTF-16
# units in the JS store, and the feed counts offsets as the store does (`js_length`).
delta_text = st.text(min_size=1, max_size=8)


event_kinds = st.lists(
    st.one_of(
        st.tuples(st.just("text_delta"), delta_text),
        st.tuples(st.just("reasoning_delta"), delta_text),
        st.tuples(st.just("text_break"), st.just("")),
        st.tuples(st.just("tool_start"), st.just("")),
    ),
    max_size=60,
)


def as_events(kinds: list[tuple[str, str]]) -> list[RunEvent]:
    return [
        RunEvent(seq, kind, {"text": body, "call_id": f"c{seq}", "tool": "todo"})
        for seq, (kind, body) in enumerate(kinds, start=1)
    ]


@settings(max_examples=300, deadline=None)
@given(
    kinds=event_kinds,
    ticks=st.lists(st.integers(0, 3), max_size=60),
    drops=st.lists(st.booleans(), max_size=60),
)
def test_page_text_ends_equal_to_the_run_whatever_the_coalescing(
    pages: JsPages, kinds, ticks, drops
) -> None:
    events = as_events(kinds)
    page = pages.new_page()
    feed = LiveFeed("r", 7)
    tick_sizes, drop_flags = iter(ticks), iter(drops)
    batch: list[RunEvent] = []
    lost = False
    for index, event in enumerate(events):
        batch.append(event)
        if len(batch) <= next(tick_sizes, 0):
            continue  # coalesced into a later tick
        feed.add(batch)
        batch = []
        dropped = next(drop_flags, False)
        apply(page, feed.patch(), dropped=dropped)
        if dropped:
            lost = True
        if lost and next(drop_flags, False):
            # The page reconnects: Reflex re-runs on_load, a new feed replays the run from
            # its first event and sends each text whole (offset 0), the page keeps its store.
            feed = LiveFeed("r", 7)
            feed.add(events[: index + 1])
            apply(page, feed.patch())
            lost = False
    feed.add(batch)
    apply(page, feed.patch())  # the last update
    if lost:  # the run's end reloads the page's conversation: a new feed, or the stored text
        fresh = LiveFeed("r", 7)
        fresh.add(events)
        apply(page, fresh.patch())
        feed = fresh
    view = feed.view
    answer, thinking = answer_stream_id(7, view.segment), thinking_stream_id(7)
    texts = page.texts(answer, thinking)
    assert texts[answer] == view.answer
    assert texts[thinking] == view.thinking
    assert feed.page_has_answer(view.answer) == bool(view.answer)


def test_chunks_carry_only_new_text_with_offsets() -> None:
    feed = LiveFeed("run", 1)
    first = feed.patch()
    assert first.chunks == ()
    assert first.values["run_id"] == "run" and first.values["answer_stream"] == "a1-0"
    feed.add([RunEvent(1, "text_delta", {"text": "Hello "})])
    patch = feed.patch()
    assert [(c.stream_id, c.offset, c.text) for c in patch.chunks] == [("a1-0", 0, "Hello ")]
    assert "run_id" not in patch.values  # unchanged vars are not sent again
    feed.add([RunEvent(2, "text_delta", {"text": "world"})])
    assert [(c.offset, c.text) for c in feed.patch().chunks] == [(6, "world")]
    assert not feed.patch()  # nothing new, nothing sent
    feed.add([RunEvent(3, "text_break", {})])
    patch = feed.patch()
    assert patch.values["answer_stream"] == "a1-1"  # a new, empty answer stream
    assert [(c.stream_id, c.offset, c.text) for c in patch.chunks] == [("t1", 0, "Hello world")]


def test_a_new_feed_sends_everything_whole_in_the_same_envelope() -> None:
    events = [RunEvent(1, "text_delta", {"text": "abc"}), RunEvent(2, "text_delta", {"text": "d"})]
    feed = LiveFeed("run", 3)
    feed.add(events)
    patch = feed.patch()
    assert [(c.stream_id, c.offset, c.text) for c in patch.chunks] == [("a3-0", 0, "abcd")]
    assert patch.script == 'window.acs&&acs("a3-0",0,"abcd")'


def test_the_question_and_the_waiting_state_come_as_vars() -> None:
    feed = LiveFeed("run", 4)
    feed.add(
        [
            RunEvent(1, "run_started", {"model": "m"}),
            RunEvent(
                2,
                "clarify_request",
                {"clarify_id": "q1", "question": "Which?", "choices": ["A", "B"]},
            ),
        ]
    )
    values = feed.patch().values
    assert values["waiting"] is True
    assert (values["clarify_id"], values["question"], values["choices"]) == (
        "q1",
        "Which?",
        ["A", "B"],
    )
    feed.add([RunEvent(3, "clarify_resolved", {"clarify_id": "q1", "answer": "A"})])
    values = feed.patch().values
    assert values["waiting"] is False and values["clarify_id"] == ""


def test_a_lost_bridge_link_shows_as_reconnecting_until_it_is_back() -> None:
    feed = LiveFeed("run", 5)
    feed.add([RunEvent(0, "bridge_link", {"connected": False})])
    assert feed.patch().values["reconnecting"] is True
    feed.add([RunEvent(0, "bridge_link", {"connected": True})])
    assert feed.patch().values["reconnecting"] is False


def test_script_escapes_the_text_as_json() -> None:
    feed = LiveFeed("run", 6)
    feed.add([RunEvent(1, "text_delta", {"text": 'a"</script>\n'})])
    assert feed.patch().script == 'window.acs&&acs("a6-0",0,"a\\"</script>\\n")'


def test_a_final_text_that_replaces_the_streamed_one_is_not_patched_into_it(
    pages: JsPages,
) -> None:
    """hermes' final text may differ from what streamed (here: leading blank lines): the
    page's stream is not corrupted, and the end hands over the stored answer instead."""
    feed = LiveFeed("run", 8)
    page = pages.new_page()
    feed.add([RunEvent(1, "text_delta", {"text": "\n\nPlan "})])
    apply(page, feed.patch())
    feed.add(
        [
            RunEvent(2, "text_delta", {"text": "made."}),
            RunEvent(3, "run_completed", {"final_text": "Plan made."}),
        ]
    )
    apply(page, feed.patch())
    assert page.text("a8-0") == "\n\nPlan "  # never "\n\nPlan de."
    assert feed.view.answer == "Plan made."
    assert not feed.page_has_answer(feed.view.answer)


def test_the_store_applies_chunks_by_offset_and_never_shortens(pages: JsPages) -> None:
    """The rules the page's store keeps: a chunk ahead of the text waits until the text
    reaches it, a repeated or older chunk changes nothing, and whole text from offset 0
    (a new feed) is taken only when it is longer."""
    page = pages.new_page()
    page.run('window.acs&&acs("s",6,"world")')  # ahead: kept until "Hello " is there
    assert page.text("s") == ""
    page.run('window.acs&&acs("s",0,"Hello ")')
    assert page.text("s") == "Hello world"
    page.run('window.acs&&acs("s",0,"Hello ")')  # again, and shorter: nothing changes
    page.run('window.acs&&acs("s",0,"Hello world, again")')  # a new feed's whole text
    assert page.texts("s", "other") == {"s": "Hello world, again", "other": ""}


def test_a_character_outside_the_bmp_keeps_the_text_that_follows(pages: JsPages) -> None:
    feed = LiveFeed("run", 9)
    page = pages.new_page()
    for seq, text in enumerate(["Done \N{GRINNING FACE}", " and", " more."], start=1):
        feed.add([RunEvent(seq, "text_delta", {"text": text})])
        apply(page, feed.patch())
    assert feed.view.answer == "Done \N{GRINNING FACE} and more."
    assert page.text("a9-0") == feed.view.answer
