"""The page's and the API's use cases on folders (services/folders.py) and share links
(services/shares.py). For each: the owner's change is made; another person gets `NotFound`
(the same as for an id nobody has, or one that is not an id at all) and nothing changes; bad
input is the store's `ValidationFailed` naming the field, and nothing changes."""

from __future__ import annotations

import uuid
from types import SimpleNamespace

import pytest

from agent_chat.db import folders as folder_store
from agent_chat.db import sessions
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.messages import append_message
from agent_chat.db.models import ChatFolder
from agent_chat.runs.storage import Storage
from agent_chat.services import folders, shares

NOT_IDS = (10**9, "1", None, True, 1.0)  # nobody's, and what a page event might send


@pytest.fixture
def svc(storage: Storage) -> SimpleNamespace:
    return SimpleNamespace(storage=storage)


async def _folders(storage: Storage, user: int) -> list[tuple[str, bool]]:
    rows = await storage.call(folder_store.list_folders, user_id=user)
    return [(f.name, f.collapsed) for f in rows]


async def _folder(svc: SimpleNamespace, user: int, name: str = "Work") -> ChatFolder:
    return await folders.create_folder(svc, user_id=user, name=name)


# ---- folders -------------------------------------------------------------------------------


async def test_create_folder(svc: SimpleNamespace, user: int, other_user: int) -> None:
    made = await folders.create_folder(svc, user_id=user, name="  Work ")
    assert (made.name, made.owner_id) == ("Work", user)
    assert [f.id for f in await folders.list_folders(svc, user_id=user)] == [made.id]
    assert await folders.list_folders(svc, user_id=other_user) == []
    # Another person may use the same name: names are unique per person.
    await folders.create_folder(svc, user_id=other_user, name="work")
    for bad in ("", "   ", "WORK", "work\n"):
        with pytest.raises(ValidationFailed) as refused:
            await folders.create_folder(svc, user_id=user, name=bad)
        assert "name" in refused.value.field_errors
    assert await _folders(svc.storage, user) == [("Work", False)]


async def test_rename_folder(svc: SimpleNamespace, user: int, other_user: int) -> None:
    work = await _folder(svc, user)
    await _folder(svc, user, "Home")
    renamed = await folders.rename_folder(svc, user_id=user, folder_id=work.id, name="Jobs")
    assert renamed.name == "Jobs"
    for who, folder_id in [(other_user, work.id)] + [(user, n) for n in NOT_IDS]:
        with pytest.raises(NotFound, match="does not exist"):
            await folders.rename_folder(svc, user_id=who, folder_id=folder_id, name="Theirs")
    for bad in ("", "home"):
        with pytest.raises(ValidationFailed) as refused:
            await folders.rename_folder(svc, user_id=user, folder_id=work.id, name=bad)
        assert "name" in refused.value.field_errors
    assert await _folders(svc.storage, user) == [("Home", False), ("Jobs", False)]


async def test_delete_folder_unfiles_its_conversations(
    svc: SimpleNamespace, storage: Storage, user: int, other_user: int
) -> None:
    work = await _folder(svc, user)
    chat = await storage.call(sessions.create_session, user_id=user, title="Filed")
    await storage.call(
        folder_store.move_session, user_id=user, session_uuid=chat.session_uuid, folder_id=work.id
    )
    for who, folder_id in [(other_user, work.id)] + [(user, n) for n in NOT_IDS]:
        with pytest.raises(NotFound, match="does not exist"):
            await folders.delete_folder(svc, user_id=who, folder_id=folder_id)
    assert await _folders(storage, user) == [("Work", False)]
    assert await folders.delete_folder(svc, user_id=user, folder_id=work.id) == 1
    assert await _folders(storage, user) == []
    kept = await storage.call(sessions.get_session, session_uuid=chat.session_uuid, user_id=user)
    assert kept is not None and kept.folder_id is None


async def test_fold_folder(svc: SimpleNamespace, user: int, other_user: int) -> None:
    work = await _folder(svc, user)
    await folders.set_collapsed(svc, user_id=user, folder_id=work.id, collapsed=True)
    assert await _folders(svc.storage, user) == [("Work", True)]
    for who, folder_id in [(other_user, work.id)] + [(user, n) for n in NOT_IDS]:
        with pytest.raises(NotFound, match="does not exist"):
            await folders.set_collapsed(svc, user_id=who, folder_id=folder_id, collapsed=False)
    for bad in ("false", 0, None):
        with pytest.raises(ValidationFailed) as refused:
            await folders.set_collapsed(svc, user_id=user, folder_id=work.id, collapsed=bad)
        assert "collapsed" in refused.value.field_errors
    assert await _folders(svc.storage, user) == [("Work", True)]
    await folders.set_collapsed(svc, user_id=user, folder_id=work.id, collapsed=False)
    assert await _folders(svc.storage, user) == [("Work", False)]


# ---- share links ---------------------------------------------------------------------------


def _asked(*, session, chat_session_id: int) -> None:
    append_message(
        session=session, chat_session_id=chat_session_id, parent_id=None, role="USER",
        content="What is a haiku?", status="SENT",
    )  # fmt: skip


async def _conversation(storage: Storage, user: int, *, asked: bool = True) -> str:
    chat = await storage.call(sessions.create_session, user_id=user, title="Poems")
    if asked:
        await storage.call(_asked, chat_session_id=chat.id)
    return chat.session_uuid


async def _links(svc: SimpleNamespace, user: int, session_uuid: str | None = None) -> list[int]:
    found = await shares.list_share_links(svc, user_id=user, session_uuid=session_uuid)
    return [info.row.id for info in found]


async def test_create_share_link(svc: SimpleNamespace, user: int, other_user: int) -> None:
    chat = await _conversation(svc.storage, user)
    new = await shares.create_share_link(svc, user_id=user, session_uuid=chat, expiry="7")
    assert len(new.token) == 32 and new.row.expires_at is not None
    opened = await shares.open_share_link(svc, token=new.token)
    assert opened is not None and "What is a haiku?" in opened.snapshot_json
    for asked in (chat, str(uuid.uuid4())):
        with pytest.raises(NotFound, match="does not exist"):
            await shares.create_share_link(svc, user_id=other_user, session_uuid=asked)
    with pytest.raises(ValidationFailed) as refused:
        await shares.create_share_link(svc, user_id=user, session_uuid=chat, expiry="365")
    assert "expiry" in refused.value.field_errors
    empty = await _conversation(svc.storage, user, asked=False)
    with pytest.raises(ValidationFailed) as refused:
        await shares.create_share_link(svc, user_id=user, session_uuid=empty)
    assert "session" in refused.value.field_errors
    assert await _links(svc, user) == [new.row.id]


async def test_list_share_links(svc: SimpleNamespace, user: int, other_user: int) -> None:
    first, second = await _conversation(svc.storage, user), await _conversation(svc.storage, user)
    a = await shares.create_share_link(svc, user_id=user, session_uuid=first)
    b = await shares.create_share_link(svc, user_id=user, session_uuid=second)
    assert await _links(svc, user) == [b.row.id, a.row.id]  # newest first
    assert await _links(svc, user, first) == [a.row.id]
    assert await _links(svc, other_user) == []
    assert await _links(svc, other_user, first) == []


async def test_revoke_share_link(svc: SimpleNamespace, user: int, other_user: int) -> None:
    chat = await _conversation(svc.storage, user)
    new = await shares.create_share_link(svc, user_id=user, session_uuid=chat)
    for who, share_id in [(other_user, new.row.id)] + [(user, n) for n in NOT_IDS]:
        with pytest.raises(NotFound, match="does not exist"):
            await shares.revoke_share_link(svc, user_id=who, share_id=share_id)
    assert await shares.open_share_link(svc, token=new.token) is not None
    revoked = await shares.revoke_share_link(svc, user_id=user, share_id=new.row.id)
    assert revoked.revoked_at is not None
    assert await shares.open_share_link(svc, token=new.token) is None
    assert await _links(svc, user) == []
    # Again: nothing changes, no error.
    await shares.revoke_share_link(svc, user_id=user, share_id=new.row.id)


async def test_open_share_link_refuses_what_is_not_a_link(svc: SimpleNamespace) -> None:
    for token in ("", "x" * 32, "../" * 11, "a" * 33):
        assert await shares.open_share_link(svc, token=token) is None
