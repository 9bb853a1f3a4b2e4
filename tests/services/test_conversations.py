"""The owner-checked lookup every reader of a conversation goes through: the person's own
conversation is found; another person's, an unknown, an empty and a malformed uuid are the
same `ConversationNotFound` (a `NotFound`, which the API answers with 404)."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from agent_chat.db import sessions
from agent_chat.db.errors import NotFound
from agent_chat.runs.storage import Storage
from agent_chat.services.conversations import ConversationNotFound, conversation_for


async def test_only_the_owner_gets_the_conversation(
    storage: Storage, user: int, other_user: int
) -> None:
    chat = await storage.call(sessions.create_session, user_id=user, title="Mine")
    svc = SimpleNamespace(storage=storage)
    found = await conversation_for(svc, user_id=user, session_uuid=chat.session_uuid)
    assert (found.id, found.title) == (chat.id, "Mine")
    # Upper case is the same uuid (URLs are typed and pasted).
    upper = chat.session_uuid.upper()
    assert (await conversation_for(svc, user_id=user, session_uuid=upper)).id == chat.id

    missing = []
    for who, asked in (
        (other_user, chat.session_uuid),
        (user, str(uuid.uuid4())),
        (user, ""),
        (user, "not-a-uuid"),
        (user, chat.session_uuid + "x"),
    ):
        with pytest.raises(ConversationNotFound) as refused:
            await conversation_for(svc, user_id=who, session_uuid=asked)
        assert isinstance(refused.value, NotFound)
        missing.append(str(refused.value).replace(repr(asked), "<uuid>"))
    # One answer for all of them: nobody learns that a uuid is someone's.
    assert set(missing) == {"Conversation <uuid> does not exist."}


async def test_delete_takes_the_owners_conversation_and_its_folder_only(
    db_url: str, storage: Storage, user: int, other_user: int, tmp_path, monkeypatch
) -> None:
    from agent_chat.services.conversations import delete_conversation
    from tests.support.runs import managers

    monkeypatch.setenv("AGENT_CHAT_WORKSPACES_DIR", str(tmp_path / "workspaces"))
    chat = await storage.call(sessions.create_session, user_id=user, title="Mine")
    folder = tmp_path / "workspaces" / chat.session_uuid
    folder.mkdir(parents=True)
    (folder / "notes.txt").write_text("kept until the owner deletes", encoding="utf-8")
    async with managers(db_url, storage) as make:
        svc = SimpleNamespace(storage=storage, runs=await make("http://127.0.0.1:9"))
        with pytest.raises(ConversationNotFound):
            await delete_conversation(svc, user_id=other_user, session_uuid=chat.session_uuid)
        assert (folder / "notes.txt").exists()
        assert await storage.call(
            sessions.get_session, session_uuid=chat.session_uuid, user_id=user
        )
        # The owner, with the uuid in capitals as a typed URL may have it: row and folder go.
        await delete_conversation(svc, user_id=user, session_uuid=chat.session_uuid.upper())
    assert not folder.exists()
    found = await storage.call(sessions.get_session, session_uuid=chat.session_uuid, user_id=user)
    assert found is None
