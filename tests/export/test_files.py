"""Exports keep a message's files: the Markdown lists them under the message, the JSON names
them (name, size, type, SHA-256) and, "with files" (`files=true`), carries their bytes in
base64 within a stated limit, listing what it left out."""

from __future__ import annotations

import base64
import hashlib
from datetime import datetime
from types import SimpleNamespace

import httpx
import pytest
from sqlalchemy import Engine

from agent_chat.api import create_api
from agent_chat.db.attachment_models import MessageAttachment
from agent_chat.db.attachments import delete_chunks
from agent_chat.db.engine import open_session
from agent_chat.export import FILES_LIMIT_BYTES, collect, gather_files, to_json, to_markdown
from agent_chat.runs.storage import Storage
from agent_chat.services import attachments as use
from tests.export.attached import CSV, PNG, attached_conversation, backend
from tests.support.users import acting_as

EXPORTED_AT = datetime(2025, 1, 31, 9, 30)


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return backend(storage)


@pytest.fixture
def client(svc: SimpleNamespace, user: int) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=acting_as(create_api(lambda: svc), user))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


def _collect(engine: Engine, uuid: str, user: int, branch: str = "active"):
    with open_session(engine) as session:
        return collect(session=session, session_uuid=uuid, user_id=user, branch=branch)


async def test_markdown_lists_each_file_under_its_message(engine, svc, user) -> None:
    conv = await attached_conversation(engine, svc, user)
    markdown = to_markdown(_collect(engine, conv.uuid, user), exported_at=EXPORTED_AT)
    question, rest = markdown.split("Where are these?", 1)
    lines = rest.split("## Assistant", 1)[0].strip().splitlines()
    assert lines == [
        "📎 cities.csv (37 bytes, text/plain)  ",
        f"📎 map.png ({len(PNG) / 1000:.1f} kB, image/png)",
    ]
    assert markdown.count("📎") == 2  # the message without files lists none
    assert "/api/chat/attachments" not in markdown


async def test_json_names_the_files_of_each_user_message(engine, svc, user) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = to_json(_collect(engine, conv.uuid, user), exported_at=EXPORTED_AT)
    assert doc["version"] == 2
    by_id = {m["id"]: m for m in doc["messages"]}
    assert by_id[conv.question]["attachments"] == [
        {
            "name": "cities.csv",
            "size": len(CSV),
            "media_type": "text/plain",
            "sha256": hashlib.sha256(CSV).hexdigest(),
        },
        {
            "name": "map.png",
            "size": len(PNG),
            "media_type": "image/png",
            "sha256": hashlib.sha256(PNG).hexdigest(),
        },
    ]
    assert by_id[conv.followup]["attachments"] == []
    assert "attachments" not in by_id[conv.answer]  # only a person attaches files
    assert "files" not in doc  # no bytes without the option


async def test_export_with_files_carries_the_bytes_in_base64(engine, client, user, svc) -> None:
    conv = await attached_conversation(engine, svc, user)
    url = f"/api/chat/sessions/{conv.uuid}/export?format=json&branch=all"
    async with client:
        plain = (await client.get(url)).json()
        full = await client.get(url + "&files=true")
        markdown = await client.get(f"/api/chat/sessions/{conv.uuid}/export?files=true")
    assert full.status_code == 200, full.text
    doc = full.json()
    files = next(m for m in doc["messages"] if m["id"] == conv.question)["attachments"]
    assert [base64.b64decode(f["data"]) for f in files] == [CSV, PNG]
    assert doc["files"] == {"limit_bytes": FILES_LIMIT_BYTES, "left_out": []}
    assert all("data" not in f for m in plain["messages"] for f in m.get("attachments", []))
    assert markdown.status_code == 200 and "📎 cities.csv" in markdown.text


async def test_files_over_the_limit_or_missing_are_left_out_and_listed(engine, svc, user) -> None:
    conv = await attached_conversation(engine, svc, user)
    data = _collect(engine, conv.uuid, user)

    async def open_bytes(row):
        _, chunks = await use.open_download(svc, user_id=user, attachment_id=row.id)
        return chunks

    # The limit holds the CSV but not the picture after it.
    found = await gather_files(data, open_bytes, limit=len(CSV) + 10)
    doc = to_json(data, exported_at=EXPORTED_AT, files=found)
    files = next(m for m in doc["messages"] if m["id"] == conv.question)["attachments"]
    assert base64.b64decode(files[0]["data"]) == CSV and "data" not in files[1]
    assert doc["files"]["left_out"] == [
        {
            "message_id": conv.question,
            "name": "map.png",
            "size": len(PNG),
            "why": "over the export's limit of 47 bytes for files",
        }
    ]
    # Bytes gone from the store: named as missing, the export still made.
    csv = data.attachments[conv.question][0]
    with open_session(engine) as session:
        delete_chunks(session=session, storage_key=csv.storage_key)
    found = await gather_files(data, open_bytes)
    assert [(f["name"], f["why"]) for f in found.left_out] == [
        ("cities.csv", "its bytes are missing from the store")
    ]
    assert list(found.data) == [data.attachments[conv.question][1].id]


async def test_another_persons_file_is_never_named(engine, svc, user, other_user) -> None:
    conv = await attached_conversation(engine, svc, user)
    theirs = await use.upload(svc, user_id=other_user, name="secret.txt", chunks=_one(b"secret"))
    with open_session(engine) as session:  # a link no use case makes: the export still hides it
        session.add(
            MessageAttachment(message_id=conv.followup, attachment_id=theirs.id, position=0)
        )
    doc = to_json(_collect(engine, conv.uuid, user), exported_at=EXPORTED_AT)
    assert "secret.txt" not in str(doc)


async def _one(data: bytes):
    yield data
