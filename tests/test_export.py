"""Conversation export (DESIGN.md §6): JSON rebuilds the tree, Markdown keeps its structure,
the HTTP endpoint answers with downloads and clear errors, and no API key ever leaves."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

import httpx
import pytest
from markdown_it import MarkdownIt
from markdown_it.token import Token
from sqlalchemy import Engine, event
from sqlmodel import Session, col, select

from agent_chat.api import create_api
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.db.logs import append_logs, list_logs
from agent_chat.db.messages import active_branch, append_message, finish_message, set_active
from agent_chat.db.model_configs import create_model
from agent_chat.db.models import ChatMessage
from agent_chat.db.pauses import answer_pause, create_pause
from agent_chat.db.sessions import create_session
from agent_chat.export import collect, to_json, to_markdown
from agent_chat.protocol.log_codec import event_to_row, merge_rows, row_to_event
from agent_chat.protocol.reducer import replay
from agent_chat.runs.storage import Storage
from tests.databases import fresh_database

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


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    with fresh_database(tmp_path / "export.db") as url:
        migrate(url)
        engine = make_engine(url)
        yield engine
        engine.dispose()


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
                "usage": {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30},
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
            session=session, title=title, model_id=model.id, skill_folder="travel"
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
        set_active(session=session, message_id=ids["first"])
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


def _export(engine: Engine, conv: Conversation, branch: str) -> Any:
    with open_session(engine) as session:
        return collect(session=session, session_uuid=conv.uuid, branch=branch)


def _db_messages(engine: Engine) -> list[ChatMessage]:
    with open_session(engine) as session:
        return list(session.exec(select(ChatMessage).order_by(col(ChatMessage.id))).all())


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


# ---- JSON -------------------------------------------------------------------------------


def test_json_of_the_whole_tree_rebuilds_every_message_parent_flag_and_log(engine: Engine) -> None:
    conv = build_conversation(engine)
    doc = json.loads(json.dumps(to_json(_export(engine, conv, "all"), exported_at=EXPORTED_AT)))

    assert doc["format"] == "agent-chat-export"
    assert doc["version"] == 1
    assert doc["session"]["uuid"] == conv.uuid
    assert doc["session"]["title"] == "Trip to Rome"
    assert doc["session"]["model"]["name"] == "Test model"
    assert doc["session"]["skill_folder"] == "travel"
    db = _db_messages(engine)
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
    doc = to_json(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
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
        "question": "Which month?",
        "choices": ["May", "June"],
        "status": "ANSWERED",
        "answer": "June",
        "created_at": None,
        "answered_at": None,
    }


def test_json_of_the_active_branch_is_exactly_the_active_path(engine: Engine) -> None:
    conv = build_conversation(engine)
    doc = to_json(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
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


# ---- Markdown ---------------------------------------------------------------------------

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


def _parse(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("strikethrough").parse(markdown)


def _headings(tokens: list[Token], max_level: int = 4) -> list[tuple[int, str]]:
    found = []
    for opening, content in zip(tokens, tokens[1:], strict=False):
        if opening.type == "heading_open" and int(opening.tag[1]) <= max_level:
            found.append((int(opening.tag[1]), content.content))
    return found


def _details_summaries(tokens: list[Token]) -> list[str]:
    return [m for t in tokens if t.type == "html_block" for m in _SUMMARY.findall(t.content)]


def _assert_only_our_html(tokens: list[Token]) -> None:
    """Raw HTML may only be our own <details>/<summary> lines, balanced."""
    depth = 0
    for token in tokens:
        assert token.type != "html_inline"
        for child in token.children or []:
            assert child.type != "html_inline", child.content
        if token.type == "html_block":
            text = token.content.strip()
            if text == "</details>":
                depth -= 1
            else:
                assert re.fullmatch(r"<details>\n<summary>[^<>]*</summary>", text), text
                depth += 1
            assert depth in (0, 1), "details blocks are never nested or unbalanced"
    assert depth == 0


def test_markdown_has_title_and_turn_headings_in_order(engine: Engine) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    headings = _headings(tokens)
    assert headings[0] == (1, "Trip to Rome")
    assert [(level, text.split(" · ")[0]) for level, text in headings[1:]] == [
        (2, "You"),
        (2, "Assistant"),
        (2, "You"),
        (2, "Assistant"),
        (2, "You"),
        (2, "Assistant"),
    ]
    assert all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", text) for _, text in headings[1:])
    meta = next(t.content for t in tokens if t.type == "inline" and "Exported" in t.content)
    assert "Model: Test model (fake-model)" in meta
    assert "Exported: 2025-01-31 09:30 UTC" in meta


def test_markdown_keeps_thinking_tools_tasks_and_questions_as_details_blocks(
    engine: Engine,
) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    summaries = _details_summaries(tokens)
    assert summaries[:4] == [
        "Thinking",
        "Tool: web_search (0.4 s)",
        "Tasks (1/2 done)",
        "Question: Which month?",
    ]
    assert "Summary of earlier messages" in summaries[4]
    inline_texts = [t.content for t in tokens if t.type == "inline"]
    assert "Let me think about Rome." in inline_texts
    assert "I will look it up." in inline_texts
    assert "Answer: June" in inline_texts
    assert "Choices: May, June" in inline_texts
    assert "Go in June and visit the Colosseum." in inline_texts
    assert "[x] Book flights" in inline_texts
    assert "[ ] Find a hotel (in progress)" in inline_texts
    assert "[ ] ~~Rent a car~~ (cancelled)" in inline_texts
    fences = [t for t in tokens if t.type == "fence"]
    assert json.loads(next(f.content for f in fences if "query" in f.content)) == TOOL_ARGS
    assert json.loads(next(f.content for f in fences if "hits" in f.content)) == {
        "hits": ["Colosseum", "Pantheon"]
    }
    # The failed answer says so, with its error; the stopped one says it was stopped.
    assert "**This answer failed.**" in inline_texts
    assert any(f.content.strip() == "Model endpoint down" for f in fences)
    assert "Half an answ" in inline_texts
    assert "**Stopped before the answer was complete.**" in inline_texts
    assert any(t.type == "hr" for t in tokens)
    assert any(text.startswith("**Context reset**") for text in inline_texts)


def test_markdown_survives_fences_script_tags_and_headings_inside_a_message(engine: Engine) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    html = MarkdownIt("commonmark").render(markdown)
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The unclosed fence of the message ends with the message: what follows is still parsed.
    code = next(t for t in tokens if t.type == "fence" and "alert(2)" in t.content)
    assert code.info == "python"
    assert code.content == "print('<script>alert(2)</script>')\n"
    # The message's own heading sits below the export's headings.
    assert (5, "A heading of mine") in _headings(tokens, max_level=6)
    assert [text.split(" · ")[0] for _, text in _headings(tokens)][-2:] == ["You", "Assistant"]
    # The tool arguments contain ``` and still come back whole from a longer fence.
    args_fence = next(t for t in tokens if t.type == "fence" and "query" in t.content)
    assert len(args_fence.markup) > 3


def test_markdown_of_all_branches_contains_every_version_labelled(engine: Engine) -> None:
    conv = build_conversation(engine)
    active_md = to_markdown(_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    markdown = to_markdown(_export(engine, conv, "all"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    for message in _db_messages(engine):
        if message.content and message.id not in (conv.ids["tricky"], conv.ids["reset"]):
            assert message.content in markdown, message.content
    for text in ("Answer number 1", "Paris answer", "Old follow-up answer"):
        assert text not in active_md
    headings = _headings(tokens)
    assert (2, "Other versions") in headings
    labels = [text for level, text in headings if level == 3]
    assert labels == [
        "Version 1/3 of the answer to: Plan a trip to Rome",
        "Version 2/3 of the answer to: Plan a trip to Rome",
        "Version 1/2 of the message after: Go in June and visit the Colosseum.",
        "Version 2/2 of the first message",
    ]
    # Each message appears once: as many You/Assistant headings as user/assistant messages.
    turns = [text for _, text in _headings(tokens) if text.startswith(("You", "Assistant"))]
    db = _db_messages(engine)
    assert len(turns) == sum(1 for m in db if m.role in ("USER", "ASSISTANT"))
    assert any("version 3/3" in text for text in turns)


# ---- HTTP -------------------------------------------------------------------------------


@pytest.fixture
def client(engine: Engine) -> httpx.AsyncClient:
    storage = Storage(engine)
    transport = httpx.ASGITransport(app=create_api(lambda: storage))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


def _url(uuid: str, fmt: str = "md", branch: str = "active") -> str:
    return f"/api/chat/sessions/{uuid}/export?format={fmt}&branch={branch}"


async def test_export_endpoint_downloads_markdown_and_json(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        md = await client.get(_url(conv.uuid, "md"))
        js = await client.get(_url(conv.uuid, "json", "all"))
    assert md.status_code == 200
    assert md.headers["content-type"] == "text/markdown; charset=utf-8"
    assert re.fullmatch(
        r'attachment; filename="trip-to-rome-\d{4}-\d\d-\d\d\.md"',
        md.headers["content-disposition"],
    )
    assert md.text.startswith("# Trip to Rome\n")
    assert js.status_code == 200
    assert js.headers["content-type"] == "application/json"
    assert re.fullmatch(
        r'attachment; filename="trip-to-rome-\d{4}-\d\d-\d\d\.json"',
        js.headers["content-disposition"],
    )
    assert js.json()["format"] == "agent-chat-export"
    assert len(js.json()["messages"]) == len(_db_messages(engine))


async def test_export_file_name_falls_back_for_untitled_and_non_ascii_titles(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    with open_session(engine) as session:
        untitled = create_session(session=session).session_uuid
        cafe = create_session(session=session, title="Café 東京 trip!").session_uuid
    async with client:
        plain = await client.get(_url(untitled))
        fancy = await client.get(_url(cafe, "json"))
    assert re.fullmatch(
        r'attachment; filename="conversation-\d{4}-\d\d-\d\d\.md"',
        plain.headers["content-disposition"],
    )
    header = fancy.headers["content-disposition"]
    assert re.fullmatch(
        r"attachment; filename=\"cafe-trip-(\S+)\.json\"; "
        r"filename\*=UTF-8''caf%C3%A9-%E6%9D%B1%E4%BA%AC-trip-\1\.json",
        header,
    )
    assert plain.text.startswith("# New conversation\n")


async def test_export_endpoint_answers_404_for_unknown_and_malformed_sessions(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    async with client:
        unknown = await client.get(_url(str(uuid4())))
        malformed = await client.get(_url("not-a-uuid", "json"))
    for response in (unknown, malformed):
        assert response.status_code == 404
        assert response.headers["content-type"] == "application/json"
        assert "does not exist" in response.json()["detail"]


async def test_export_endpoint_answers_422_naming_the_allowed_values(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        bad_format = await client.get(_url(conv.uuid, "pdf"))
        bad_branch = await client.get(_url(conv.uuid, "md", "some"))
    assert bad_format.status_code == 422
    assert bad_format.json() == {"detail": "format must be one of: md, json (got 'pdf')"}
    assert bad_branch.status_code == 422
    assert bad_branch.json() == {"detail": "branch must be one of: active, all (got 'some')"}


async def test_no_export_contains_the_model_api_key(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    async with client:
        bodies = [
            (await client.get(_url(conv.uuid, fmt, branch))).text
            for fmt in ("md", "json")
            for branch in ("active", "all")
        ]
    assert all(body for body in bodies)
    assert not any(API_KEY in body or "api_key" in body for body in bodies)


def test_logs_of_all_messages_are_read_in_one_query(engine: Engine) -> None:
    conv = build_conversation(engine)
    statements: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        statements.append(statement)

    event.listen(engine, "before_cursor_execute", record)
    try:
        data = _export(engine, conv, "all")
    finally:
        event.remove(engine, "before_cursor_execute", record)
    log_queries = [s for s in statements if "FROM chat_message_log" in s]
    assert len(log_queries) == 1
    assert len(statements) <= 8
    assert sum(len(rows) for rows in data.logs.values()) > 10
