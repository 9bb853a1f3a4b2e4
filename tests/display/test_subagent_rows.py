"""Child agents and MCP tools as the thinking panel shows them: a card per child under its
delegate_task call (live from the feed, finished from the stored log: the same rows), the
fold line, and `mcp__<server>__<tool>` shown as the tool with its server."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_chat.display.feed import CARDS_EVERY_S, LiveFeed, paced_patches
from agent_chat.display.rows import panel_fields, tool_row
from agent_chat.display.subagent_rows import fold_line, mcp_name
from agent_chat.protocol.events import RunEvent
from agent_chat.protocol.reducer import ToolCall, replay
from agent_chat.runs.bus import LocalRunBus


def ev(seq: int, type_: str, **data: Any) -> dict[str, Any]:
    return {"type": type_, "seq": seq, "ts": 1000.0 + seq, "run_id": "r1", **data}


def events(dicts: list[dict[str, Any]]) -> list[RunEvent]:
    return [
        RunEvent(e["seq"], e["type"], {k: v for k, v in e.items() if k != "type"}) for e in dicts
    ]


def delegation() -> list[dict[str, Any]]:
    return [
        ev(1, "tool_start", call_id="d1", tool="delegate_task", args={"tasks": []}),
        ev(2, "subagent_start", subagent="sa-0", parent_call_id="d1", goal="Count", index=0),
        ev(3, "subagent_start", subagent="sa-1", parent_call_id="d1", goal="Read", index=1),
        ev(4, "subagent_status", subagent="sa-0", category="info", message="Looking around"),
        ev(5, "subagent_tool_start", subagent="sa-0", call_id="t1", tool="terminal",
           args={"command": "ls -la"}),
        ev(6, "subagent_tool_start", subagent="sa-1", call_id="t2", tool="mcp__time__get_time",
           args={}),
        ev(7, "subagent_todo_update", subagent="sa-1",
           todos=[{"id": "1", "content": "read it", "status": "in_progress"}]),
    ]  # fmt: skip


def ending() -> list[dict[str, Any]]:
    return [
        ev(8, "subagent_tool_end", subagent="sa-0", call_id="t1", result="{}", duration_ms=400),
        ev(9, "subagent_tool_end", subagent="sa-1", call_id="t2", result="{}", duration_ms=100),
        ev(10, "subagent_end", subagent="sa-0", parent_call_id="d1", state="succeeded",
           summary="12 files", usage={"input_tokens": 1200, "output_tokens": 85},
           duration_s=41.2),
        ev(11, "subagent_end", subagent="sa-1", parent_call_id="d1", state="failed",
           error="The model did not answer.", usage={"input_tokens": 10, "output_tokens": 1},
           duration_s=3.0),
        ev(12, "tool_end", call_id="d1", result="{}", duration_ms=42_000),
        ev(13, "run_completed", final_text="done", usage={"input_tokens": 5, "output_tokens": 5}),
    ]  # fmt: skip


def test_mcp_tools_show_their_own_name_and_server() -> None:
    assert mcp_name("mcp__time__get_current_time") == ("get_current_time", "time")
    assert mcp_name("mcp__my_server__do__it") == ("do__it", "my_server")
    assert mcp_name("terminal") == ("terminal", "")
    assert mcp_name("mcp__broken") == ("mcp__broken", "")
    row = tool_row(ToolCall(call_id="c", tool="mcp__time__get_current_time", args={}))
    assert (row["tool"], row["name"], row["server"]) == (
        "mcp__time__get_current_time",
        "get_current_time",
        "time",
    )


def test_live_cards_update_per_child_and_the_history_is_not_resent() -> None:
    feed = LiveFeed("r1", 7)
    feed.add(RunEvent(e["seq"], e["type"], {k: v for k, v in e.items() if k != "type"})
             for e in delegation())  # fmt: skip
    first = feed.patch(now=0.0)
    cards, lines = first.values["subagents"], first.values["subagent_lines"]
    assert [c["goal"] for c in cards] == ["Count", "Read"]
    assert [c["status"] for c in cards] == ["running", "running"]
    assert lines[0]["line"] == "Running terminal"  # the status line follows its tools
    assert (lines[0]["current"], lines[0]["current_label"]) == ("terminal", "ls -la")
    assert (lines[1]["current"], lines[1]["current_server"]) == ("get_time", "time")
    assert first.values["subagent_todos"][1] == [{"content": "read it", "status": "in_progress"}]
    assert first.values["subagent_tools"] == [{"tools": [], "earlier": 0}] * 2  # none ended
    # The running delegate_task row carries no cards: a child's change resends the cards only.
    assert first.values["tools"][0]["children"] == []
    # A call's end: its child's line and calls; the rest of the cards are not sent again.
    feed.add([RunEvent(8, "subagent_tool_end", {**ending()[0], "seq": 8})])
    assert not feed.patch(now=1.0).values  # held a moment (below)
    second = feed.patch(now=1.0 + CARDS_EVERY_S)
    assert set(second.values) == {"subagent_lines", "subagent_tools"}
    ended = second.values["subagent_tools"][0]["tools"]
    assert [(t["name"], t["state"], t["label"]) for t in ended] == [("terminal", "ok", "ls -la")]


def test_a_finished_answer_shows_the_same_cards_folded_with_usage() -> None:
    events = delegation() + ending()
    view = replay(events)
    tools = panel_fields(view)["tools"]
    (delegate,) = tools
    assert delegate["fold"] == "2 subagents · 41 s · 2 tools" == fold_line(view, "d1")
    done, failed = delegate["children"]
    assert (done["status"], done["summary"], done["usage"]) == (
        "completed",
        "12 files",
        "1.2K in · 85 out tokens",
    )
    assert (failed["status"], failed["error"]) == ("failed", "The model did not answer.")
    assert [t["name"] for t in failed["tools"]] == ["get_time"]
    assert view.usage["input_tokens"] == 1215  # the answer's usage counts its children's
    # The live feed's history ends with the same rows once the call is done.
    feed = LiveFeed("r1", 7)
    feed.add(RunEvent(e["seq"], e["type"], {k: v for k, v in e.items() if k != "type"})
             for e in events)  # fmt: skip
    assert feed.patch().values["tools"][0]["children"] == delegate["children"]


def test_an_approval_for_a_child_names_it_and_its_card_waits() -> None:
    feed = LiveFeed("r1", 7)
    asked = ev(9, "approval_request", clarify_id="c1", command="rm -rf x", subagent="sa-1")
    feed.add(RunEvent(e["seq"], e["type"], {k: v for k, v in e.items() if k != "type"})
             for e in [*delegation(), asked])  # fmt: skip
    values = feed.patch().values
    assert values["pause_kind"] == "approval" and values["asker"] == "Read"
    assert [c["status"] for c in values["subagents"]] == ["running", "waiting"]
    assert values["subagent_lines"][1]["line"] == "Waiting for your approval"


def test_children_moving_together_update_their_cards_in_one_patch() -> None:
    """Children working at once change their cards in bursts: each change waits
    CARDS_EVERY_S, so a burst goes in one update instead of one per batch of events."""
    feed = LiveFeed("r1", 7)
    feed.add(events(delegation()))
    assert "subagents" in feed.patch(now=10.0).values  # new cards: at once
    assert feed.held_for(now=10.0) is None
    feed.add(events(ending()[:1]))  # sa-0's call ends
    held = feed.patch(now=10.01)
    assert not held.values  # held back, nothing lost
    assert feed.held_for(now=10.01) == pytest.approx(CARDS_EVERY_S)
    feed.add(events(ending()[1:2]))  # then sa-1's
    assert not feed.patch(now=10.1).values
    due = feed.patch(now=10.01 + CARDS_EVERY_S)
    assert [t["tools"][0]["name"] for t in due.values["subagent_tools"]] == ["terminal", "get_time"]
    assert feed.held_for(now=10.3) is None
    # What else changes meanwhile is not held: the answer's own status.
    feed.add(events([ev(10, "subagent_status", subagent="sa-0", category="info", message="C"),
                     ev(11, "todo_update", todos=[{"id": "1", "content": "Sum up",
                                                   "status": "pending"}])]))  # fmt: skip
    mixed = feed.patch(now=10.4)
    assert [todo["content"] for todo in mixed.values["todos"]] == ["Sum up"]
    assert not any(k.startswith("subagent") for k in mixed.values)
    # The call's end takes its cards away at once (its row in `tools` carries them then).
    feed.add(events(ending()[2:5]))
    ended = feed.patch(now=10.41)
    assert ended.values["subagents"] == [] and ended.values["tools"][0]["children"]


async def test_held_card_parts_go_when_due_without_another_event() -> None:
    bus = LocalRunBus()
    bus.open("r1")
    feed = LiveFeed("r1", 7)
    patches = paced_patches(feed, bus.subscribe("r1"), 0.01, 16_000)
    for event in events(delegation()):
        bus.publish("r1", event)
    first = await anext(patches)
    assert len(first.values["subagents"]) == 2
    bus.publish("r1", events(ending()[1:2])[0])  # sa-1's call ends
    nothing_yet = await anext(patches)
    assert "subagent_tools" not in nothing_yet.values
    due = await asyncio.wait_for(anext(patches), timeout=CARDS_EVERY_S + 2)
    assert due.values["subagent_tools"][1]["tools"][0]["name"] == "get_time"
    bus.close("r1")
    assert [p async for p in patches] == []
