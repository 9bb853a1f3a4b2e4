"""Importing an export keeps a message's files: with their bytes ("with files") they are
stored again for the importing person, byte for byte and in order; without, or refused like
an upload (a program), they are named in the message; a version 1 export (no files) still
imports; a file whose bytes are not the file it names refuses the whole import."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from types import SimpleNamespace
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, func
from sqlmodel import select

from agent_chat.api import create_api
from agent_chat.db.attachment_models import Attachment
from agent_chat.db.engine import open_session
from agent_chat.db.models import ChatSession
from agent_chat.export import collect
from agent_chat.runs.storage import Storage
from tests.export.attached import CSV, PNG, attached_conversation, backend, download
from tests.support.users import acting_as

IMPORT = "/api/chat/sessions/import"


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return backend(storage)


def _client(svc: SimpleNamespace, user: int) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=acting_as(create_api(lambda: svc), user))
    return httpx.AsyncClient(transport=transport, base_url="http://test")


async def _export(svc: SimpleNamespace, user: int, uuid: str, *, files: bool) -> dict[str, Any]:
    url = f"/api/chat/sessions/{uuid}/export?format=json&branch=all&files={str(files).lower()}"
    async with _client(svc, user) as client:
        response = await client.get(url)
    assert response.status_code == 200, response.text
    return response.json()


async def _import(svc: SimpleNamespace, user: int, doc: dict[str, Any]) -> httpx.Response:
    async with _client(svc, user) as client:
        return await client.post(IMPORT, content=json.dumps(doc).encode())


def _question(engine: Engine, uuid: str, user: int):
    """The imported conversation's first message and its files."""
    with open_session(engine) as session:
        data = collect(session=session, session_uuid=uuid, user_id=user, branch="all")
    message = next(m for m in data.messages if m.content.startswith("Where are these?"))
    return message, data.attachments.get(message.id or 0, [])


def _question_json(doc: dict[str, Any]) -> dict[str, Any]:
    return next(m for m in doc["messages"] if m["content"] == "Where are these?")


async def test_round_trip_with_files_stores_them_again_for_the_importer(
    engine, svc, user, other_user
) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=True)
    response = await _import(svc, other_user, doc)
    assert response.status_code == 201, response.text
    assert response.json()["notes"] == []
    message, files = _question(engine, response.json()["sessionId"], other_user)
    assert message.content == "Where are these?"
    assert [(f.name, f.owner_id) for f in files] == [
        ("cities.csv", other_user),
        ("map.png", other_user),
    ]
    assert [await download(svc, other_user, f.id) for f in files] == [CSV, PNG]
    assert [f.sha256 for f in files] == [hashlib.sha256(b).hexdigest() for b in (CSV, PNG)]
    # The owner's own files are untouched; the importer's are new rows of their own.
    originals = _question(engine, conv.uuid, user)[1]
    assert {f.id for f in originals}.isdisjoint({f.id for f in files})
    # Exported again, the new conversation names the same files (and carries the same bytes).
    again = await _export(svc, other_user, response.json()["sessionId"], files=True)
    assert _question_json(again)["attachments"] == _question_json(doc)["attachments"]


async def test_importing_the_same_files_twice_reuses_the_persons_rows(
    engine, svc, user, other_user
) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=True)
    first = (await _import(svc, other_user, doc)).json()["sessionId"]
    second = (await _import(svc, other_user, doc)).json()["sessionId"]
    ids = [[f.id for f in _question(engine, uuid, other_user)[1]] for uuid in (first, second)]
    assert ids[0] == ids[1]  # dedup per owner, bytes and name, as an upload
    with open_session(engine) as session:
        query = select(func.count()).select_from(Attachment)
        assert session.exec(query.where(Attachment.owner_id == other_user)).one() == 2


async def test_without_files_the_message_names_them(engine, svc, user, other_user) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=False)
    response = await _import(svc, other_user, doc)
    assert response.status_code == 201, response.text
    assert response.json()["notes"] == [
        "Files whose bytes were not in the export are named in their messages."
    ]
    message, files = _question(engine, response.json()["sessionId"], other_user)
    assert files == []
    assert message.content == (
        "Where are these?\n\n"
        "[file cities.csv was not included in the export]\n"
        "[file map.png was not included in the export]"
    )


async def test_a_program_is_named_and_the_import_goes_on(engine, svc, user, other_user) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=True)
    program = b"MZ" + bytes(200)
    _question_json(doc)["attachments"].insert(
        1,
        {
            "name": "setup.exe",
            "size": len(program),
            "media_type": "application/x-msdownload",
            "sha256": hashlib.sha256(program).hexdigest(),
            "data": base64.b64encode(program).decode(),
        },
    )
    response = await _import(svc, other_user, doc)
    assert response.status_code == 201, response.text
    message, files = _question(engine, response.json()["sessionId"], other_user)
    assert [f.name for f in files] == ["cities.csv", "map.png"]
    assert message.content.startswith("Where are these?\n\n[file setup.exe was not imported: ")
    assert "programs cannot be attached" in message.content
    assert any("program" in note for note in response.json()["notes"])


async def test_an_old_export_without_files_still_imports(engine, svc, user, other_user) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=False)
    old = copy.deepcopy(doc)
    old["version"] = 1
    for message in old["messages"]:
        message.pop("attachments", None)
    response = await _import(svc, other_user, old)
    assert response.status_code == 201, response.text
    message, files = _question(engine, response.json()["sessionId"], other_user)
    assert (message.content, files) == ("Where are these?", [])
    assert response.json()["notes"] == []


@pytest.mark.parametrize(
    ("change", "where"),
    [
        ("cut", "messages[0].attachments[0].data is not the file it names"),
        ("not_base64", "messages[0].attachments[0].data is not valid base64"),
        ("bad_sha", "messages[0].attachments[0].sha256 must be 64 lower-case hex digits"),
        ("on_answer", "messages[1].attachments is only for a user message"),
    ],
)
async def test_a_broken_file_refuses_the_import_and_keeps_nothing(
    engine, svc, user, other_user, change: str, where: str
) -> None:
    conv = await attached_conversation(engine, svc, user)
    doc = await _export(svc, user, conv.uuid, files=True)
    first = doc["messages"][0]["attachments"][0]
    if change == "cut":
        first["data"] = base64.b64encode(CSV[:-1]).decode()
    elif change == "not_base64":
        first["data"] = "not base64!"
    elif change == "bad_sha":
        first["sha256"] = "ABC"
    else:
        doc["messages"][1]["attachments"] = [first]
    response = await _import(svc, other_user, doc)
    assert response.status_code == 422
    assert where in response.json()["error"]["message"]
    with open_session(engine) as session:
        owned = (
            select(func.count()).select_from(Attachment).where(Attachment.owner_id == other_user)
        )
        assert session.exec(owned).one() == 0
        chats = select(func.count()).select_from(ChatSession)
        assert session.exec(chats.where(ChatSession.owner_id == other_user)).one() == 0
