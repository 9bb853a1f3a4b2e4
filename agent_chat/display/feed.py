"""One tab's window on one run: events in, small state patches and new text out.

The growing texts (answer, thinking) never travel as state vars: resending a whole var per
update costs the square of the answer. They travel one way, in one envelope: a chunk
`(stream id, offset, text)` that the page's stream store (assets/stream_text.jsx) applies
once and in place, whatever the order or repetition. A new feed (page load, reconnect)
sends each text whole from offset 0 in the same envelope: the store keeps what it has.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Any

from agent_chat.display.rows import todo_rows, tool_rows
from agent_chat.display.streams import answer_stream_id, thinking_stream_id
from agent_chat.display.subagent_rows import (
    DELEGATE_TOOL,
    LIVE_TOOLS,
    SubagentRow,
    SubToolRow,
    split_live,
    sub_tool_row,
    subagent_row,
)
from agent_chat.display.tool_views import ShapeCache
from agent_chat.protocol.events import RunEvent, RunState
from agent_chat.protocol.reducer import RunView, ToolCall, apply
from agent_chat.runs.bus import Subscription

ASKER_CHARS = 200  # an approval for a child agent names it by its goal's first line
# The live cards' parts travel together (the four lists are zipped by index on the page), a
# change held for CARDS_EVERY_S so that the changes of children working at once (which come in
# bursts, each child after its model call) go in one update, not one per batch of events; a
# person cannot read status lines faster. Other cards (a new call's) go at once
# (benchmarks/subagent_stream.py).
CARD_VARS = ("subagents", "subagent_lines", "subagent_tools", "subagent_todos")
CARDS_EVERY_S = 0.25


def js_length(text: str) -> int:
    """`text.length` in the browser: UTF-16 code units, so a character outside the BMP (an
    emoji) counts two. The store places chunks by this length, never by code points."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # in C, not per character


@dataclass(frozen=True)
class Chunk:
    stream_id: str
    offset: int  # the stream's length before this chunk, in JS string units (UTF-16)
    text: str

    def script(self) -> str:
        # Short on purpose: it travels with every update (the page defines window.acs).
        return (
            f"window.acs&&acs({json.dumps(self.stream_id)},{self.offset},"
            f"{json.dumps(self.text, ensure_ascii=False)})"
        )


@dataclass(frozen=True)
class Patch:
    values: dict[str, Any]  # LiveState var -> new value, only what changed
    chunks: tuple[Chunk, ...] = ()

    @property
    def script(self) -> str:
        """JavaScript handing the page the new text ("" when there is none)."""
        return ";".join(c.script() for c in self.chunks)

    def __bool__(self) -> bool:
        return bool(self.values or self.chunks)


class LiveFeed:
    """Per tab and run: the reduced view, and what the page has been sent of it."""

    def __init__(self, run_id: str, message_id: int) -> None:
        self.run_id = run_id
        self.message_id = message_id
        self.view = RunView()
        self._shown: dict[str, Any] = {}  # var -> value the page has
        self._page: dict[str, str] = {}  # stream id -> the text the page was sent
        self._units: dict[str, int] = {}  # stream id -> its js_length (kept, not recounted)
        self._shapes = ShapeCache()  # tool views, shaped once per changed call
        # (child id, call id) -> (the call, its card row): call ids repeat across children.
        self._child_tools: dict[tuple[str, str], tuple[ToolCall, SubToolRow]] = {}
        self._child_rows: dict[str, tuple[object, SubagentRow]] = {}  # id -> (child, row)
        self._cards_due: float | None = None  # when held card parts go (monotonic time)

    def add(self, events: Iterable[RunEvent]) -> None:
        for event in events:
            self.view = apply(self.view, event.as_dict())

    @property
    def finished(self) -> bool:
        return self.view.finished

    @property
    def answer_stream(self) -> str:
        return answer_stream_id(self.message_id, self.view.segment)

    def values(self) -> dict[str, Any]:
        """Every LiveState var as the view says now."""
        view = self.view
        current = view.current_tool
        clarify = view.clarify
        # A finished delegate_task call carries its children's cards; the running one's go
        # apart (`subagents`), so a child's progress does not resend the whole history.
        tools = tool_rows(view.tools, self._shapes, run=view, children_of_running=False)
        running = current is not None and not current.done
        return {
            "run_id": self.run_id,
            "message_id": self.message_id,
            "answer_stream": self.answer_stream,
            "thinking_stream": thinking_stream_id(self.message_id),
            "status": view.status,
            "waiting": view.state == RunState.WAITING_INPUT,
            "reconnecting": view.reconnecting,
            "tool": next((t for t in tools if t["call_id"] == current.call_id), None)
            if running
            else None,
            "tools": tools,
            **dict(
                zip(
                    ("subagents", "subagent_lines", "subagent_tools", "subagent_todos"),
                    split_live(self._live_children(current) if running else []),
                    strict=True,
                )
            ),
            "todos": todo_rows(view),
            "clarify_id": clarify.clarify_id if clarify else "",
            "question": clarify.question if clarify else "",
            "choices": list(clarify.choices) if clarify else [],
            "steers": [list(steer) for steer in view.steers],
            "pause_kind": clarify.kind if clarify else "",
            "danger": clarify.description if clarify else "",
            "asker": self._asker(clarify.subagent if clarify else ""),
        }

    def _asker(self, subagent_id: str) -> str:
        """The goal of the child agent a pause is for, as its card begins; "" for the answer's."""
        child = self.view.subagent(subagent_id) if subagent_id else None
        return "" if child is None else (child.goal.strip().splitlines() or [""])[0][:ASKER_CHARS]

    def _live_children(self, call: ToolCall) -> list[SubagentRow]:
        """The cards of the delegate_task call running now, each with its newest calls only
        (`LIVE_TOOLS`: a card's size stays bounded however long its child works); a child
        unchanged since the last patch keeps its row, a changed one its unchanged calls'."""
        if call.tool != DELEGATE_TOOL:
            return []
        rows = []
        for child in self.view.children_of(call.call_id):
            kept = self._child_rows.get(child.subagent_id)
            if kept is not None and kept[0] is child:
                rows.append(kept[1])
                continue
            done = [tool for tool in child.tools if tool.done]  # the running one: `current`
            tools = []
            for tool in done[-LIVE_TOOLS:]:
                key = (child.subagent_id, tool.call_id)
                kept_tool = self._child_tools.get(key)
                if kept_tool is None or kept_tool[0] is not tool:
                    kept_tool = self._child_tools[key] = (tool, sub_tool_row(tool))
                tools.append(kept_tool[1])
            row = subagent_row(child, tools, len(done) - len(tools))
            self._child_rows[child.subagent_id] = (child, row)
            rows.append(row)
        return rows

    def patch(self, now: float | None = None) -> Patch:
        """What changed since the last patch: var values, and new text as chunks. Changed
        card parts wait for their turn (`held_for`) unless they are other children's."""
        now = time.monotonic() if now is None else now
        changed = {k: v for k, v in self.values().items() if self._shown.get(k, _NONE) != v}
        if not any(k in changed for k in CARD_VARS):
            self._cards_due = None
        elif "subagents" in changed and _ids(changed["subagents"]) != _ids(
            self._shown.get("subagents")
        ):
            self._cards_due = None  # other cards (a new call's, or none): at once
        else:
            if self._cards_due is None:
                self._cards_due = now + CARDS_EVERY_S
            if now < self._cards_due:
                for k in CARD_VARS:
                    changed.pop(k, None)
            else:
                self._cards_due = None
        self._shown.update(changed)
        chunks = [
            c
            for c in (
                self._chunk(self.answer_stream, self.view.answer),
                self._chunk(thinking_stream_id(self.message_id), self.view.thinking),
            )
            if c is not None
        ]
        return Patch(changed, tuple(chunks))

    def held_for(self, now: float | None = None) -> float | None:
        """Seconds until the card parts held back by the last patch are due; None if none."""
        if self._cards_due is None:
            return None
        now = time.monotonic() if now is None else now
        return max(self._cards_due - now, 0.0)

    def _chunk(self, stream_id: str, text: str) -> Chunk | None:
        has = self._page.get(stream_id, "")
        if len(text) <= len(has) or not text.startswith(has):
            # Nothing new, or the text was replaced (a final text that differs from what
            # streamed): the store never shortens a stream, so the end hands over the stored
            # answer instead (`page_has_answer` is False).
            return None
        new = text[len(has) :]
        offset = self._units.get(stream_id, 0)
        self._page[stream_id] = text
        self._units[stream_id] = offset + js_length(new)
        return Chunk(stream_id, offset, new)

    def page_has_answer(self, answer: str) -> bool:
        """Whether the page's answer stream already shows `answer` (the stored final text),
        so the finished message can keep showing it instead of receiving it again."""
        shown = self._page.get(self.answer_stream, "")
        return bool(answer) and shown.rstrip() == answer.rstrip()


_NONE = object()  # "never sent": differs from every value, None included


def _ids(cards: object) -> list[str] | None:
    """The cards' children (None: never sent)."""
    if not isinstance(cards, list):
        return None
    return [card["id"] for card in cards]


async def paced_patches(
    feed: LiveFeed, events: Subscription, gather_s: float, long_answer: int
) -> AsyncIterator[Patch]:
    """A follower's patches while its run lasts: after each event it lets a burst gather for
    `gather_s` (twice that once the answer is `long_answer` characters), so one patch
    carries them all; held card parts are sent when due even if no event comes."""
    while True:
        held = feed.held_for()
        try:
            if held is None:
                first = await anext(events)
            else:
                async with asyncio.timeout(held):  # the subscriptions lose nothing on a cancel
                    first = await anext(events)
        except StopAsyncIteration:
            return
        except TimeoutError:
            yield feed.patch()
            continue
        long = len(feed.view.answer) >= long_answer
        await asyncio.sleep(2 * gather_s if long else gather_s)
        feed.add([first, *events.take_ready()])
        yield feed.patch()
