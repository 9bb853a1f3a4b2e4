"""The thinking panel gets the same tool views live and after a reload: the live feed and
a replay of the stored log build them with the same code from the same calls."""

from __future__ import annotations

import json

from agent_chat.display.feed import LiveFeed
from agent_chat.display.rows import panel_fields, tool_row
from agent_chat.protocol.events import EventType, RunEvent
from agent_chat.protocol.log_codec import event_to_row, stored_event
from agent_chat.protocol.reducer import replay

WRITE = {"path": "notes.md", "content": "# Notes\n\nfirst\n"}
WRITE_RESULT = json.dumps({"bytes_written": 16, "files_modified": ["/w/notes.md"]})
CAT_RESULT = json.dumps({"output": "# Notes\n\nfirst", "exit_code": 0, "error": None})


def run_events() -> list[RunEvent]:
    data = [
        (EventType.RUN_STARTED, {"model": "m"}),
        (EventType.TOOL_START, {"call_id": "a", "tool": "write_file", "args": WRITE}),
        (
            EventType.TOOL_END,
            {
                "call_id": "a",
                "tool": "write_file",
                "result": WRITE_RESULT,
                "duration_ms": 3.0,
                "is_error": False,
            },
        ),  # fmt: skip
        (
            EventType.TOOL_START,
            {"call_id": "b", "tool": "terminal", "args": {"command": "cat notes.md"}},
        ),
        (
            EventType.TOOL_END,
            {
                "call_id": "b",
                "tool": "terminal",
                "result": CAT_RESULT,
                "duration_ms": 40.0,
                "is_error": False,
            },
        ),  # fmt: skip
        (EventType.TOOL_START, {"call_id": "c", "tool": "todo", "args": {"todos": []}}),
        (EventType.TOOL_END, {"call_id": "c", "tool": "todo", "result": '{"todos": []}'}),
        (EventType.RUN_COMPLETED, {"final_text": "Done."}),
    ]
    return [RunEvent(seq, kind, fields) for seq, (kind, fields) in enumerate(data, start=1)]


def test_live_rows_equal_the_rows_rebuilt_from_the_stored_log() -> None:
    events = run_events()
    feed = LiveFeed("run-1", 7)
    for event in events:  # one at a time, as a live tab gets them
        feed.add([event])
        feed.patch()
    live = feed.values()["tools"]
    stored = []
    for event in events:
        row = event_to_row(event.type, event.seq, event.data)
        stored.append(stored_event(row.seq, row.kind, row.content, row.meta_json).as_dict())
    assert live == panel_fields(replay(stored))["tools"]
    assert [r["view"]["kind"] for r in live] == ["diff", "terminal", "generic"]
    # A call its view shows whole does not travel twice; others keep their JSON.
    assert live[0]["args"] == live[0]["result"] == ""
    assert live[2]["args"] != ""


def test_the_running_tool_is_shown_with_its_view() -> None:
    feed = LiveFeed("run-1", 7)
    feed.add(run_events()[:4])
    current = feed.values()["tool"]
    assert current["tool"] == "terminal"
    assert current["view"]["code"] == "cat notes.md" and current["view"]["exit_code"] == ""


def test_tool_row_alone_still_carries_the_json_and_a_view() -> None:
    view = replay([e.as_dict() for e in run_events()])
    row = tool_row(view.tools[1])
    assert json.loads(row["args"]) == {"command": "cat notes.md"}
    assert row["view"]["output"] == "# Notes\n\nfirst"
