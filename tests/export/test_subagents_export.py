"""Child agents (hermes' delegate_task) in the exports: the Markdown lists each child after its
delegate_task call (goal, outcome, summary or error), the JSON keeps every child event, and an
import of it replays to the same children. Runs on SQLite and PostgreSQL."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import httpx
from sqlalchemy import Engine

from agent_chat.api import create_api
from agent_chat.db.engine import open_session
from agent_chat.db.logs import append_logs
from agent_chat.db.messages import append_message, finish_message
from agent_chat.db.sessions import create_session
from agent_chat.export import to_json, to_markdown
from agent_chat.protocol.log_codec import event_to_row, merge_rows
from agent_chat.runs.storage import Storage
from tests.support.exports import EXPORTED_AT, Conversation, read_export
from tests.support.users import acting_as

EVENTS: list[tuple[str, dict[str, Any]]] = [
    ("run_started", {"session_id": "h", "model": "fake-model"}),
    ("tool_start", {"call_id": "d1", "tool": "delegate_task", "args": {"tasks": []}}),
    ("subagent_start", {"subagent": "sa-0", "parent_call_id": "d1", "goal": "Count the files",
                        "index": 0}),
    ("subagent_start", {"subagent": "sa-1", "parent_call_id": "d1", "goal": "Read <notes>",
                        "index": 1}),
    ("subagent_text_delta", {"subagent": "sa-0", "text": "Counting "}),
    ("subagent_text_delta", {"subagent": "sa-1", "text": "Reading"}),
    ("subagent_text_delta", {"subagent": "sa-0", "text": "now"}),
    ("subagent_tool_start", {"subagent": "sa-0", "call_id": "t1", "tool": "terminal",
                             "args": {"command": "ls"}}),
    ("subagent_tool_end", {"subagent": "sa-0", "call_id": "t1", "result": "{}",
                           "duration_ms": 300}),
    ("subagent_end", {"subagent": "sa-0", "parent_call_id": "d1", "state": "succeeded",
                      "summary": "There are **12** files.", "duration_s": 41.0,
                      "usage": {"input_tokens": 1200, "output_tokens": 85}}),
    ("subagent_end", {"subagent": "sa-1", "parent_call_id": "d1", "state": "failed",
                      "error": "The model did not answer.", "usage": {"input_tokens": 7}}),
    ("tool_end", {"call_id": "d1", "result": "{}", "duration_ms": 42_000}),
    ("text_delta", {"text": "12 files."}),
    ("run_completed", {"final_text": "12 files.",
                       "usage": {"input_tokens": 1217, "output_tokens": 95}}),
]  # fmt: skip


def _conversation(engine: Engine, user: int) -> Conversation:
    with open_session(engine) as session:
        chat = create_session(user_id=user, session=session, title="Delegated")
        asked = append_message(
            session=session, chat_session_id=chat.id, parent_id=None, role="USER",
            content="How many files?", status="SENT",
        ).id  # fmt: skip
        answer = append_message(
            session=session, chat_session_id=chat.id, parent_id=asked, role="ASSISTANT",
            content="", status="RUNNING", run_id="r1",
        ).id  # fmt: skip
        rows = [event_to_row(k, seq, {"run_id": "r1", **d}) for seq, (k, d) in enumerate(EVENTS, 1)]
        # As the batch writer stores them: one child's consecutive deltas merge, never two's.
        assert merge_rows(rows[4], rows[5]) is None
        append_logs(session=session, message_id=answer, rows=rows)
        finish_message(
            session=session, message_id=answer, content="12 files.", status="SUCCESS",
            input_tokens=1217, output_tokens=95, total_tokens=1312,
        )  # fmt: skip
        return Conversation(uuid=chat.session_uuid, ids={"answer": answer or 0})


def test_markdown_lists_each_child_under_its_call(engine: Engine, user: int) -> None:
    conv = _conversation(engine, user)
    text = to_markdown(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    call = text.index("<summary>Tool: delegate_task")
    first = text.index(
        "<summary>Subagent 1/2: Count the files (completed, 1 tool, 41 s, 1200 in · 85 out tokens)"
    )
    second = text.index("<summary>Subagent 2/2: Read &lt;notes&gt; (failed, 0 tools")
    assert call < first < second < text.index("12 files.")
    assert "There are **12** files." in text and "The model did not answer." in text
    assert "Tools: `terminal`" in text


async def test_json_export_import_export_keeps_the_children(engine: Engine, user: int) -> None:
    conv = _conversation(engine, user)
    before = to_json(read_export(engine, conv, "all"), exported_at=EXPORTED_AT)
    storage = Storage(engine)
    api = create_api(lambda: SimpleNamespace(storage=storage))
    transport = httpx.ASGITransport(app=acting_as(api, user))
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        response = await client.post(
            "/api/chat/sessions/import", content=json.dumps(before).encode()
        )
    assert response.status_code == 201, response.text
    imported = Conversation(uuid=response.json()["sessionId"], ids={})
    data = read_export(engine, imported, "all")
    after = to_json(data, exported_at=EXPORTED_AT)

    def logs(doc: dict[str, Any]) -> list[list[dict[str, Any]]]:
        return [[{**row, "created_at": None} for row in m["logs"]] for m in doc["messages"]]

    assert logs(after) == logs(before)
    answer = next(m for m in data.messages if m.role == "ASSISTANT")
    view = data.view(answer.id or 0)
    first, second = view.children_of("d1")
    assert (first.goal, first.state, first.summary) == ("Count the files", "succeeded",
                                                        "There are **12** files.")  # fmt: skip
    assert first.text == "Counting now" and second.text == "Reading"
    assert (second.state, second.error) == ("failed", "The model did not answer.")
    assert view.usage["input_tokens"] == 1217 + 1200 + 7  # its own plus its children's
