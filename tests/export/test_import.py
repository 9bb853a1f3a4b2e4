"""Import of a JSON export: export → import → export gives the same document (ids, uuids and
the new conversation's own times aside), and every bad file is refused over HTTP with a clear
message while nothing is created. Runs on SQLite and PostgreSQL (tests/export/conftest.py)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func
from sqlmodel import select

from agent_chat.api import create_api
from agent_chat.db.engine import make_engine, open_session
from agent_chat.db.imports import import_conversation
from agent_chat.db.messages import active_branch, append_message
from agent_chat.db.models import ChatMessage, ChatMessageLog, ChatSession, RunPause
from agent_chat.db.pauses import create_pause
from agent_chat.db.sessions import create_session
from agent_chat.export import to_json
from agent_chat.export.importing import MAX_IMPORT_BYTES, MAX_IMPORT_MB, RUNNING_NOTE
from agent_chat.export.importing import read_export as parse_export
from agent_chat.runs.storage import Storage
from tests.support.exports import EXPORTED_AT, build_conversation, read_export
from tests.support.exports import Conversation as Conv
from tests.support.users import acting_as

URL = "/api/chat/sessions/import"


def _export(engine: Engine, uuid: str) -> dict[str, Any]:
    return to_json(read_export(engine, Conv(uuid=uuid, ids={}), "all"), exported_at=EXPORTED_AT)


def _normalised(doc: dict[str, Any]) -> dict[str, Any]:
    """The document with ids, run ids, the uuid and the conversation's own times replaced by
    their position, so two exports of equal content compare equal."""
    doc = copy.deepcopy(doc)
    ids = {m["id"]: n for n, m in enumerate(doc["messages"])}
    runs: dict[str, str] = {}

    def run(run_id: str | None) -> str | None:
        return None if run_id is None else runs.setdefault(run_id, f"run-{len(runs)}")

    for m in doc["messages"]:
        m["id"] = ids[m["id"]]
        m["parent_id"] = None if m["parent_id"] is None else ids[m["parent_id"]]
        m["run_id"] = run(m["run_id"])
        for pause in m["pauses"]:
            pause["run_id"] = run(pause["run_id"])
    doc["active_branch"] = [ids[i] for i in doc["active_branch"]]
    for key in ("uuid", "created_at", "last_message_at", "updated_at"):
        doc["session"].pop(key)
    return doc


def _counts(engine: Engine) -> tuple[int, ...]:
    with open_session(engine) as session:
        return tuple(
            session.exec(select(func.count()).select_from(table)).one()
            for table in (ChatSession, ChatMessage, ChatMessageLog, RunPause)
        )


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    """A copy of the session's migrated database (faster than tests/export's own migrate)."""
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def client(engine: Engine, user: int) -> httpx.AsyncClient:
    storage = Storage(engine)
    api = create_api(lambda: SimpleNamespace(storage=storage))
    transport = httpx.ASGITransport(app=acting_as(api, user))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


def _with_approval(engine: Engine, conv: Conv) -> None:
    """An answered approval on the active answer, so the round trip covers that kind too."""
    with open_session(engine) as session:
        chat = session.exec(select(ChatSession).where(ChatSession.session_uuid == conv.uuid)).one()
        answer = next(m for m in active_branch(session=session, chat_session_id=chat.id or 0)
                      if m.role == "ASSISTANT")  # fmt: skip
        pause = create_pause(
            session=session,
            run_id=answer.run_id or "r",
            message_id=answer.id or 0,
            clarify_id="a1",
            question="rm -rf build/",
            choices=["once", "deny"],
            kind="approval",
            detail="recursive delete",
        )
        pause.status, pause.answer = "ANSWERED", "once"
        session.add(pause)


async def test_export_import_export_round_trip_keeps_the_whole_tree(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    conv = build_conversation(engine)
    _with_approval(engine, conv)
    before = _export(engine, conv.uuid)
    async with client:
        response = await client.post(URL, content=json.dumps(before).encode())
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["messages"] == len(before["messages"]) and body["notes"] == []
    assert body["sessionId"] != conv.uuid and body["title"] == "Trip to Rome"
    after = _export(engine, body["sessionId"])
    assert _normalised(after) == _normalised(before)
    # What the comparison covers, spelled out: versions, logs, questions, a summary, usage.
    kinds = {p["kind"] for m in after["messages"] for p in m["pauses"]}
    assert kinds == {"clarify", "approval"}
    assert any(m["status"] == "SUMMARY" for m in after["messages"])
    assert sum(len(m["logs"]) for m in after["messages"]) > 10
    assert sum(1 for m in after["messages"] if m["parent_id"] is None) == 2  # edited first
    assert after["session"]["model"]["name"] == "Test model"  # matched to the local model
    assert any(m["total_tokens"] == 30 and m["context_tokens"] == 7 for m in after["messages"])


async def test_importing_twice_makes_two_conversations(engine: Engine, user: int) -> None:
    conv = build_conversation(engine)
    raw = json.dumps(_export(engine, conv.uuid))
    with open_session(engine) as session:
        first = import_conversation(user_id=user, session=session, plan=parse_export(raw))
    with open_session(engine) as session:
        second = import_conversation(user_id=user, session=session, plan=parse_export(raw))
    assert first.chat.session_uuid != second.chat.session_uuid
    assert _normalised(_export(engine, first.chat.session_uuid)) == _normalised(
        _export(engine, second.chat.session_uuid)
    )


async def test_a_running_answer_and_a_waiting_question_come_in_finished(
    engine: Engine, user: int
) -> None:
    with open_session(engine) as session:
        chat = create_session(user_id=user, session=session, title="Half done")
        asked = append_message(
            session=session, chat_session_id=chat.id, parent_id=None, role="USER",
            content="Hi", status="SENT",
        )  # fmt: skip
        answer = append_message(
            session=session, chat_session_id=chat.id, parent_id=asked.id, role="ASSISTANT",
            content="", status="RUNNING", run_id="live",
        )  # fmt: skip
        create_pause(
            session=session,
            run_id="live",
            message_id=answer.id,
            clarify_id="q",
            question="Go?",
            choices=[],
        )
        uuid = chat.session_uuid
    with open_session(engine) as session:
        done = import_conversation(
            user_id=user, session=session, plan=parse_export(json.dumps(_export(engine, uuid)))
        )
    doc = _export(engine, done.chat.session_uuid)
    assert doc["messages"][1]["status"] == "STOPPED"
    assert doc["messages"][1]["error"] == RUNNING_NOTE
    assert doc["messages"][1]["pauses"][0]["status"] == "ABANDONED"
    assert len(done.notes) == 2


def _base(engine: Engine) -> dict[str, Any]:
    return _export(engine, build_conversation(engine).uuid)


def _mutate(doc: dict[str, Any], change: str) -> Any:
    messages = doc["messages"]
    if change == "parent_missing":
        messages[3]["parent_id"] = 999_999
    elif change == "duplicate_id":
        messages[2]["id"] = messages[1]["id"]
    elif change == "cycle":
        messages[0]["parent_id"] = messages[1]["id"]
        messages[1]["parent_id"] = messages[0]["id"]
        messages[5]["parent_id"] = None  # the other root stays, so only the cycle is wrong
        messages[5]["is_active"] = True
    elif change == "two_active_roots":
        for m in messages:
            if m["parent_id"] is None:
                m["is_active"] = True
    elif change == "wrong_version":
        doc["version"] = 7
    elif change == "bad_role":
        messages[0]["role"] = "wizard"
    elif change == "huge_number":
        messages[1]["input_tokens"] = 2**40
    elif change == "bad_date":
        messages[0]["created_at"] = "last Tuesday"
    return doc


BROKEN = {
    "parent_missing": ("broken_tree", "parent 999999"),
    "duplicate_id": ("broken_tree", "appears twice"),
    "cycle": ("broken_tree", "cycle"),
    "two_active_roots": ("broken_tree", "active version at the start"),
    "wrong_version": ("unsupported_version", "newer Agent Chat"),
    "bad_role": ("invalid_export", "messages[0].role must be one of"),
    "bad_date": ("invalid_export", "is not a date"),
    "huge_number": ("invalid_export", "input_tokens must be a whole number from 0"),
}


@pytest.mark.parametrize("change", sorted(BROKEN))
async def test_a_broken_export_is_refused_and_creates_nothing(
    engine: Engine, client: httpx.AsyncClient, change: str
) -> None:
    doc = _mutate(_base(engine), change)
    before = _counts(engine)
    async with client:
        response = await client.post(URL, json=doc)
    code, words = BROKEN[change]
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] == code
    assert words in response.json()["error"]["message"]
    assert _counts(engine) == before


FOREIGN = {
    "not_json": (b"{ this is not json", 400, "not valid JSON (line 1"),
    "binary": (b"\xff\xfe\x00garbage", 400, "not UTF-8"),
    "empty": (b"", 400, "empty"),
    "too_deep": (b"[" * 100_000 + b"]" * 100_000, 400, "nested too deeply"),
    "chatgpt": (
        json.dumps([{"title": "T", "create_time": 1.0, "mapping": {}}]).encode(),
        422,
        "ChatGPT export",
    ),
    "openai_messages": (
        json.dumps([{"role": "user", "content": "hi"}]).encode(),
        422,
        "OpenAI chat messages",
    ),
    "openai_chat": (
        json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(),
        422,
        "OpenAI-style chat",
    ),
    "other_json": (b'{"hello": "world"}', 422, "not an Agent Chat export"),
}


@pytest.mark.parametrize("name", sorted(FOREIGN))
async def test_a_file_that_is_no_export_is_refused_clearly(
    engine: Engine, client: httpx.AsyncClient, name: str
) -> None:
    raw, status, words = FOREIGN[name]
    async with client:
        response = await client.post(URL, content=raw)
    assert response.status_code == status, response.text
    assert words in response.json()["error"]["message"]
    assert _counts(engine) == (0, 0, 0, 0)


async def test_a_file_over_the_limit_is_refused_with_413(
    engine: Engine, client: httpx.AsyncClient
) -> None:
    raw = b'{"format": "agent-chat-export", "pad": "' + b"x" * MAX_IMPORT_BYTES + b'"}'
    async with client:
        response = await client.post(URL, content=raw)
        upload = await client.post(URL, files={"file": ("big.json", raw, "application/json")})
    for answer in (response, upload):
        assert answer.status_code == 413
        assert f"{MAX_IMPORT_MB} MB" in answer.json()["error"]["message"]
    assert _counts(engine) == (0, 0, 0, 0)


async def test_a_multipart_upload_imports_too(engine: Engine, client: httpx.AsyncClient) -> None:
    raw = json.dumps(_base(engine)).encode()
    async with client:
        response = await client.post(URL, files={"file": ("trip.json", raw, "application/json")})
        missing = await client.post(URL, files={"other": ("x.json", raw, "application/json")})
    assert response.status_code == 201 and response.json()["messages"] == len(
        json.loads(raw)["messages"]
    )
    assert missing.status_code == 400 and '"file"' in missing.json()["error"]["message"]
