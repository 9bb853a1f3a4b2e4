"""The conversation every export test reads, and small helpers to read it back.

`build_conversation` makes a tree with every kind of message an export must handle; the
constants are what the tests then look for in the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from agent_chat.db.engine import open_session
from agent_chat.db.logs import append_logs
from agent_chat.db.messages import append_message, finish_message, set_active
from agent_chat.db.model_configs import create_model
from agent_chat.db.models import ChatMessage
from agent_chat.db.pauses import answer_pause, create_pause
from agent_chat.db.sessions import create_session
from agent_chat.export import SessionExport, collect
from agent_chat.protocol.log_codec import event_to_row, merge_rows
from tests.support.users import default_owner

API_KEY = "sk-export-test-SECRET-4242"
EXPORTED_AT = datetime(2025, 1, 31, 9, 30)
TRICKY = (
    "Careful: <script>alert(1)</script>\n"
    "</details>\n"
    "# A heading of mine\n"
    "Some code, never closed:\n"
    "```python\n"
    "print('<script>alert(2)</script>')\n"
)
TOOL_ARGS = {"query": "Rome ```sights``` <b>", "limit": 3}
TODOS = [
    {"id": "1", "content": "Book flights", "status": "completed"},
    {"id": "2", "content": "Find a hotel", "status": "in_progress"},
    {"id": "3", "content": "Rent a car", "status": "cancelled"},
]


@dataclass
class Conversation:
    uuid: str
    ids: dict[str, int]


def _message(session: Session, chat_id: int, parent: int | None, role: str, text: str, **kw):
    status = kw.pop("status", "SENT" if role == "USER" else "SUCCESS")
    return append_message(
        session=session,
        chat_session_id=chat_id,
        parent_id=parent,
        role=role,
        content=text,
        status=status,
        **kw,
    ).id


def _rich_run(session: Session, message_id: int, run_id: str) -> None:
    """The events of a run that thought, used a tool, kept a TODO list and asked back."""
    events: list[tuple[str, dict[str, Any]]] = [
        ("run_started", {"session_id": "h", "model": "fake-model", "ts": 1.0}),
        ("reasoning_delta", {"text": "Let me think "}),
        ("reasoning_delta", {"text": "about Rome."}),
        ("text_delta", {"text": "I will look it up."}),
        ("text_break", {}),
        ("step", {"iteration": 1, "tools": ["web_search"]}),
        ("tool_start", {"call_id": "c1", "tool": "web_search", "args": TOOL_ARGS}),
        (
            "tool_end",
            {
                "call_id": "c1",
                "tool": "web_search",
                "result": '{"hits": ["Colosseum", "Pantheon"]}',
                "duration_ms": 420.0,
                "is_error": False,
            },
        ),
        ("todo_update", {"todos": TODOS, "summary": {"total": 3}}),
        (
            "clarify_request",
            {"clarify_id": "q1", "question": "Which month?", "choices": ["May", "June"]},
        ),
        ("clarify_resolved", {"clarify_id": "q1", "answer": "June"}),
        ("text_delta", {"text": "Go in June and visit the Colosseum."}),
        (
            "run_completed",
            {
                "final_text": "Go in June and visit the Colosseum.",
                "usage": {
                    "input_tokens": 10,
                    "output_tokens": 20,
                    "total_tokens": 30,
                    "context_tokens": 7,
                },
            },
        ),
    ]
    rows = [
        event_to_row(kind, seq, {"run_id": run_id, **data})
        for seq, (kind, data) in enumerate(events, 1)
    ]
    # The batch writer merges consecutive deltas; store the reasoning as one merged row.
    merged = merge_rows(rows[1], rows[2])
    assert merged is not None
    append_logs(session=session, message_id=message_id, rows=[rows[0], merged, *rows[3:]])
    create_pause(
        session=session,
        run_id=run_id,
        message_id=message_id,
        clarify_id="q1",
        question="Which month?",
        choices=["May", "June"],
    )
    answer_pause(session=session, run_id=run_id, clarify_id="q1", answer="June")
    finish_message(
        session=session,
        message_id=message_id,
        content="Go in June and visit the Colosseum.",
        status="SUCCESS",
        input_tokens=10,
        output_tokens=20,
        total_tokens=30,
        context_tokens=7,
    )


def _simple_run(session: Session, message_id: int, run_id: str, text: str) -> None:
    rows = [
        event_to_row("text_delta", 1, {"run_id": run_id, "text": text}),
        event_to_row("run_completed", 2, {"run_id": run_id, "final_text": text}),
    ]
    append_logs(session=session, message_id=message_id, rows=rows)
    finish_message(session=session, message_id=message_id, content=text, status="SUCCESS")


def build_conversation(engine: Engine, title: str = "Trip to Rome") -> Conversation:
    """A tree with regenerated answers, an edited first message, an edited later message,
    a failed answer, a summary, a reset marker and a stopped answer.

    Active branch: first → answer_3 → tricky → failed → summary → reset → after_reset → stopped
    """
    with open_session(engine) as session:
        model = create_model(
            session=session,
            name="Test model",
            base_url="http://127.0.0.1:9/v1",
            model_name="fake-model",
            api_key=API_KEY,
        )
        chat = create_session(
            user_id=default_owner(session=session),
            session=session,
            title=title,
            model_id=model.id,
            skill_folder="travel",
        )
        c = chat.id
        ids: dict[str, int] = {}
        ids["first"] = _message(session, c, None, "USER", "Plan a trip to Rome")
        for n in (1, 2):
            ids[f"answer_{n}"] = _message(
                session, c, ids["first"], "ASSISTANT", "", status="RUNNING", run_id=f"r{n}"
            )
            _simple_run(session, ids[f"answer_{n}"], f"r{n}", f"Answer number {n} about Rome")
        ids["answer_3"] = _message(
            session,
            c,
            ids["first"],
            "ASSISTANT",
            "",
            status="RUNNING",
            run_id="r3",
            model_id=model.id,
        )
        _rich_run(session, ids["answer_3"], "r3")
        # An edited first message (a second root) with its own answer, then back to the first.
        ids["paris"] = _message(session, c, None, "USER", "Plan a trip to Paris instead")
        ids["paris_answer"] = _message(
            session, c, ids["paris"], "ASSISTANT", "", status="RUNNING", run_id="rp"
        )
        _simple_run(session, ids["paris_answer"], "rp", "Paris answer: see the Louvre")
        set_active(user_id=default_owner(session=session), session=session, message_id=ids["first"])
        # A later message edited: the old version keeps its own answer.
        ids["old_followup"] = _message(
            session, c, ids["answer_3"], "USER", "Old follow-up question"
        )
        ids["old_followup_answer"] = _message(
            session, c, ids["old_followup"], "ASSISTANT", "", status="RUNNING", run_id="ro"
        )
        _simple_run(session, ids["old_followup_answer"], "ro", "Old follow-up answer")
        ids["tricky"] = _message(session, c, ids["answer_3"], "USER", TRICKY)
        ids["failed"] = _message(
            session, c, ids["tricky"], "ASSISTANT", "", status="RUNNING", run_id="rf"
        )
        append_logs(
            session=session,
            message_id=ids["failed"],
            rows=[event_to_row("run_failed", 1, {"run_id": "rf", "error": "Model endpoint down"})],
        )
        finish_message(
            session=session,
            message_id=ids["failed"],
            content="",
            status="FAILED",
            error="Model endpoint down",
        )
        ids["summary"] = _message(
            session, c, ids["failed"], "SYSTEM", "They planned Rome.", status="SUMMARY"
        )
        ids["reset"] = _message(
            session, c, ids["summary"], "SYSTEM", "Context reset", status="RESET"
        )
        ids["after_reset"] = _message(session, c, ids["reset"], "USER", "A fresh question")
        ids["stopped"] = _message(
            session, c, ids["after_reset"], "ASSISTANT", "", status="RUNNING", run_id="rs"
        )
        finish_message(
            session=session, message_id=ids["stopped"], content="Half an answ", status="STOPPED"
        )
        return Conversation(uuid=chat.session_uuid, ids=ids)


def read_export(engine: Engine, conv: Conversation, branch: str) -> SessionExport:
    with open_session(engine) as session:
        return collect(
            user_id=default_owner(session=session),
            session=session,
            session_uuid=conv.uuid,
            branch=branch,
        )


def db_messages(engine: Engine) -> list[ChatMessage]:
    with open_session(engine) as session:
        return list(session.exec(select(ChatMessage).order_by(col(ChatMessage.id))).all())
