"""The SSE generator without the stack: keep-alive comments while nothing comes, the
terminal event only once the subscription has ended (the answer is stored by then), the
link events without an id, and the cut of a merged row at the resume point."""

from __future__ import annotations

import asyncio
import json

from agent_chat.api.stream import Resume, events
from agent_chat.db.models import ChatMessageLog
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.log_codec import event_to_row, merge_rows
from agent_chat.runs.bus import LocalRunBus


def _parse(chunks: list[str]) -> list[tuple[str | None, str, dict | None]]:
    out = []
    for chunk in chunks:
        if chunk.startswith(":"):
            out.append((None, "comment", None))
            continue
        fields = dict(line.split(": ", 1) for line in chunk.strip().splitlines())
        out.append((fields.get("id"), fields["event"], json.loads(fields["data"])))
    return out


async def test_keepalives_link_events_and_the_terminal_event_after_the_end() -> None:
    bus = LocalRunBus()
    bus.open("r1", [RunEvent(1, "run_started"), RunEvent(2, "text_delta", {"text": "Hi"})])
    chunks: list[str] = []

    async def read() -> None:
        subscription = bus.subscribe("r1", 0)
        async for chunk in events(subscription, "r1", Resume(0, None), keepalive=0.05):
            chunks.append(chunk)

    reader = asyncio.create_task(read())
    await asyncio.sleep(0.2)  # nothing new: keep-alive comments
    bus.publish("r1", RunEvent(0, "bridge_link", {"connected": False}))
    bus.publish("r1", RunEvent(3, "run_completed", {"final_text": "Hi"}))
    await asyncio.sleep(0.1)
    assert not reader.done(), "the terminal event waits for the channel to close"
    bus.close("r1")  # what the consumer does once the outcome is stored
    await asyncio.wait_for(reader, 2)
    parsed = _parse(chunks)
    assert [p[1] for p in parsed if p[1] != "comment"] == [
        "run_started", "text_delta", "bridge_link", "run_completed",
    ]  # fmt: skip
    assert sum(1 for p in parsed if p[1] == "comment") >= 2
    link = next(p for p in parsed if p[1] == "bridge_link")
    assert link[0] is None, "app-side link events have no seq, hence no id"
    done = parsed[-1]
    assert done[0] == "3" and done[2]["final_text"] == "Hi" and done[2]["run_id"] == "r1"


async def test_a_merged_row_is_cut_at_the_resume_point() -> None:
    row = event_to_row("text_delta", 4, {"text": "ab"})
    for seq, text in ((5, "cd"), (6, "ef")):
        row = merge_rows(row, event_to_row("text_delta", seq, {"text": text}))
    stored = ChatMessageLog(message_id=1, seq=row.seq, kind=row.kind, content=row.content,
                            meta_json=row.meta_json)  # fmt: skip
    bus = LocalRunBus()
    # As after a restart: the channel's history is the stored (merged) rows.
    bus.open("r2", [RunEvent(6, "text_delta", {"text": "abcdef"}), RunEvent(7, "run_stopped")])
    subscription = bus.subscribe("r2", 5)
    bus.close("r2")
    chunks = [c async for c in events(subscription, "r2", Resume(5, stored), 1.0)]
    parsed = _parse(chunks)
    assert [(p[0], p[2].get("text")) for p in parsed] == [("6", "ef"), ("7", None)]
