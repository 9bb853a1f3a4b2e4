"""The JSON export rebuilds the tree: every message, parent, flag and log, and the logs
replay to the same thinking view as the database."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from agent_chat.db.engine import open_session
from agent_chat.db.logs import list_logs
from agent_chat.db.messages import active_branch
from agent_chat.export import to_json
from agent_chat.protocol.log_codec import row_to_event
from agent_chat.protocol.reducer import replay
from tests.support.exports import (
    EXPORTED_AT,
    TOOL_ARGS,
    build_conversation,
    db_messages,
    read_export,
)


def _rebuild_active_path(messages: list[dict[str, Any]]) -> list[int]:
    """Follow the active root and then the active child, as the app does."""
    children: dict[int | None, list[dict[str, Any]]] = {}
    for m in messages:
        children.setdefault(m["parent_id"], []).append(m)
    path: list[int] = []
    parent: int | None = None
    while active := [m for m in children.get(parent, []) if m["is_active"]]:
        assert len(active) == 1, "exactly one active sibling"
        path.append(active[0]["id"])
        parent = active[0]["id"]
    return path


def _meta_json(meta: Any) -> str | None:
    return None if meta is None else json.dumps(meta, ensure_ascii=False)


def test_json_of_the_whole_tree_rebuilds_every_message_parent_flag_and_log(engine: Engine) -> None:
    conv = build_conversation(engine)
    doc = json.loads(json.dumps(to_json(read_export(engine, conv, "all"), exported_at=EXPORTED_AT)))

    assert doc["format"] == "agent-chat-export"
    assert doc["version"] == 2
    assert doc["session"]["uuid"] == conv.uuid
    assert doc["session"]["title"] == "Trip to Rome"
    assert doc["session"]["model"]["name"] == "Test model"
    assert doc["session"]["skill_folder"] == "travel"
    db = db_messages(engine)
    exported = {m["id"]: m for m in doc["messages"]}
    assert list(exported) == [m.id for m in db]
    for message in db:
        got = exported[message.id]
        assert (
            got["parent_id"],
            got["is_active"],
            got["branch_order"],
            got["role"],
            got["status"],
            got["content"],
            got["error"],
            got["run_id"],
            got["model_id"],
            got["total_tokens"],
        ) == (
            message.parent_id,
            message.is_active,
            message.branch_order,
            message.role,
            message.status,
            message.content,
            message.error,
            message.run_id,
            message.model_id,
            message.total_tokens,
        )
        assert datetime.fromisoformat(got["created_at"]).replace(tzinfo=None) == message.created_at
        assert got["parent_id"] is None or got["parent_id"] in exported
        with open_session(engine) as session:
            rows = list_logs(session=session, message_id=message.id)
        assert [(r["seq"], r["kind"], r["content"], r["tool_name"]) for r in got["logs"]] == [
            (r.seq, r.kind, r.content, r.tool_name) for r in rows
        ]
        assert [r["meta"] for r in got["logs"]] == [
            json.loads(r.meta_json) if r.meta_json else None for r in rows
        ]
    with open_session(engine) as session:
        db_path = [m.id for m in active_branch(session=session, chat_session_id=db[0].session_id)]
    assert _rebuild_active_path(doc["messages"]) == db_path == doc["active_branch"]


def test_json_logs_replay_to_the_same_thinking_view_as_the_database(engine: Engine) -> None:
    conv = build_conversation(engine)
    doc = to_json(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    rich = next(m for m in doc["messages"] if m["id"] == conv.ids["answer_3"])
    from_json = replay(
        [
            row_to_event(r["seq"], r["kind"], r["content"], _meta_json(r["meta"]))
            for r in rich["logs"]
        ]
    )
    with open_session(engine) as session:
        rows = list_logs(session=session, message_id=conv.ids["answer_3"])
    assert from_json == replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows])
    assert from_json.thinking == "Let me think about Rome.\n\nI will look it up."
    assert from_json.tools[0].args == TOOL_ARGS
    assert from_json.answers == (("Which month?", "June"),)
    assert rich["pauses"][0] | {"created_at": None, "answered_at": None} == {
        "run_id": "r3",
        "clarify_id": "q1",
        "kind": "clarify",
        "question": "Which month?",
        "detail": None,
        "choices": ["May", "June"],
        "status": "ANSWERED",
        "answer": "June",
        "created_at": None,
        "answered_at": None,
    }


def test_json_of_the_active_branch_is_exactly_the_active_path(engine: Engine) -> None:
    conv = build_conversation(engine)
    doc = to_json(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    ids = [m["id"] for m in doc["messages"]]
    names = {v: k for k, v in conv.ids.items()}
    assert [names[i] for i in ids] == [
        "first",
        "answer_3",
        "tricky",
        "failed",
        "summary",
        "reset",
        "after_reset",
        "stopped",
    ]
    assert _rebuild_active_path(doc["messages"]) == ids
    assert [m["parent_id"] for m in doc["messages"]] == [None, *ids[:-1]]
    assert all(m["is_active"] for m in doc["messages"])
    assert doc["branch"] == "active"
