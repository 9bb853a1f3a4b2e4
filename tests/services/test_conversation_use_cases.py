"""The sidebar's and the API's use cases on one conversation (services/conversations.py):
rename, archive, pin, move to a folder, change the model or skill, and its run state. For
each: the owner's change is made; another person gets `NotFound` (the same as for a uuid
nobody has) and nothing changes; bad input is the store's `ValidationFailed`, saying which
field and why, and nothing changes."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from agent_chat.db import folders, model_configs, sessions
from agent_chat.db.errors import NotFound, ValidationFailed
from agent_chat.db.models import ChatSession
from agent_chat.runs.storage import Storage
from agent_chat.services import conversations as use
from agent_chat.services.errors import Busy
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import fake_model_row, managers


def _skills(root: Path) -> Path:
    """A skills dir with one usable skill ("haiku") and one without a SKILL.md ("broken")."""
    (root / "haiku").mkdir(parents=True)
    (root / "haiku" / "SKILL.md").write_text("---\nname: Haiku\n---\nAnswer in haiku.\n")
    (root / "broken").mkdir()
    return root


@pytest.fixture
def svc(storage: Storage, tmp_path: Path) -> SimpleNamespace:
    # No run goes on in these tests: `running_in` answers as a RunManager with none.
    async def running_in(session_uuid: str, *, user_id: int) -> None:
        return None

    return SimpleNamespace(
        storage=storage,
        runs=SimpleNamespace(running_in=running_in, start_lock=asyncio.Lock()),
        settings=SimpleNamespace(skills_dir=_skills(tmp_path / "skills")),
    )


async def _chat(storage: Storage, user: int, title: str = "Mine") -> ChatSession:
    return await storage.call(sessions.create_session, user_id=user, title=title)


async def _stored(storage: Storage, user: int, chat: ChatSession) -> ChatSession:
    found = await storage.call(sessions.get_session, session_uuid=chat.session_uuid, user_id=user)
    assert found is not None
    return found


def _fields(chat: ChatSession) -> tuple:
    return (
        chat.title,
        chat.status,
        chat.pinned_at,
        chat.folder_id,
        chat.model_id,
        chat.skill_folder,
    )


async def _refused_to(svc: SimpleNamespace, who: int, chat: ChatSession, change, **kwargs):
    """`change` by `who` on `chat` (and on a uuid nobody has) is NotFound."""
    for asked in (chat.session_uuid, str(uuid.uuid4())):
        with pytest.raises(NotFound, match="does not exist"):
            await change(svc, user_id=who, session_uuid=asked, **kwargs)


async def test_rename(svc: SimpleNamespace, storage: Storage, user: int, other_user: int) -> None:
    chat = await _chat(storage, user)
    renamed = await use.rename_conversation(
        svc, user_id=user, session_uuid=chat.session_uuid.upper(), title="  Plans\nfor May "
    )
    assert renamed.title == "Plans for May"  # one line, trimmed
    assert (await _stored(storage, user, chat)).title == "Plans for May"

    await _refused_to(svc, other_user, chat, use.rename_conversation, title="Theirs")
    for empty in ("", "   \n "):
        with pytest.raises(ValidationFailed) as refused:
            await use.rename_conversation(
                svc, user_id=user, session_uuid=chat.session_uuid, title=empty
            )
        assert refused.value.field_errors == {"title": "The title must not be empty."}
    assert (await _stored(storage, user, chat)).title == "Plans for May"


async def test_archive_and_bring_back(
    svc: SimpleNamespace, storage: Storage, user: int, other_user: int
) -> None:
    chat = await _chat(storage, user)
    done = await use.set_archived(svc, user_id=user, session_uuid=chat.session_uuid, archived=True)
    assert done.status == (await _stored(storage, user, chat)).status == "ARCHIVED"

    await _refused_to(svc, other_user, chat, use.set_archived, archived=False)
    assert (await _stored(storage, user, chat)).status == "ARCHIVED"
    # Nothing to validate but the uuid: a malformed one is "not found" too.
    with pytest.raises(NotFound):
        await use.set_archived(svc, user_id=user, session_uuid="not-a-uuid", archived=False)

    await use.set_archived(svc, user_id=user, session_uuid=chat.session_uuid, archived=False)
    assert (await _stored(storage, user, chat)).status == "ACTIVE"


async def test_pin_and_unpin(
    svc: SimpleNamespace, storage: Storage, user: int, other_user: int
) -> None:
    chat = await _chat(storage, user)
    pinned = await use.set_pinned(svc, user_id=user, session_uuid=chat.session_uuid, pinned=True)
    assert pinned.pinned_at is not None
    # Pinning again keeps the first pin's time (its place among the pins).
    again = await use.set_pinned(svc, user_id=user, session_uuid=chat.session_uuid, pinned=True)
    assert again.pinned_at == pinned.pinned_at

    await _refused_to(svc, other_user, chat, use.set_pinned, pinned=False)
    assert (await _stored(storage, user, chat)).pinned_at == pinned.pinned_at
    with pytest.raises(NotFound):
        await use.set_pinned(svc, user_id=user, session_uuid="", pinned=False)

    await use.set_pinned(svc, user_id=user, session_uuid=chat.session_uuid, pinned=False)
    assert (await _stored(storage, user, chat)).pinned_at is None


async def test_move_into_a_folder_and_out(
    svc: SimpleNamespace, storage: Storage, user: int, other_user: int
) -> None:
    chat = await _chat(storage, user)
    work = await storage.call(folders.create_folder, user_id=user, name="Work")
    theirs = await storage.call(folders.create_folder, user_id=other_user, name="Theirs")
    moved = await use.move_conversation(
        svc, user_id=user, session_uuid=chat.session_uuid, folder_id=work.id
    )
    assert moved.folder_id == (await _stored(storage, user, chat)).folder_id == work.id

    # Another person cannot file it, not even in their own folder.
    await _refused_to(svc, other_user, chat, use.move_conversation, folder_id=theirs.id)
    await _refused_to(svc, other_user, chat, use.move_conversation, folder_id=None)
    # The owner cannot file it in another person's folder, nor in one that does not exist.
    for folder_id in (theirs.id, theirs.id + 1000):
        with pytest.raises(ValidationFailed) as refused:
            await use.move_conversation(
                svc, user_id=user, session_uuid=chat.session_uuid, folder_id=folder_id
            )
        assert refused.value.field_errors == {"folderId": f"There is no folder {folder_id}."}
    assert (await _stored(storage, user, chat)).folder_id == work.id

    await use.move_conversation(svc, user_id=user, session_uuid=chat.session_uuid, folder_id=None)
    assert (await _stored(storage, user, chat)).folder_id is None


async def test_change_the_model_and_skill(
    svc: SimpleNamespace, storage: Storage, user: int, other_user: int
) -> None:
    chat = await _chat(storage, user)
    model = await storage.call(
        model_configs.create_model, name="Small", base_url="http://127.0.0.1:9/v1", model_name="s"
    )
    changed = await use.change_conversation(
        svc, user_id=user, session_uuid=chat.session_uuid, model_id=model.id, skill_folder="haiku"
    )
    assert (changed.model_id, changed.skill_folder) == (model.id, "haiku")
    before = _fields(await _stored(storage, user, chat))

    await _refused_to(svc, other_user, chat, use.change_conversation, model_id=None)
    for bad, field, message in (
        ({"model_id": model.id + 1000}, "modelId", f"There is no model {model.id + 1000}."),
        ({"skill_folder": "broken"}, "skillFolder", "There is no usable skill 'broken'."),
        ({"skill_folder": "../haiku"}, "skillFolder", "There is no usable skill '../haiku'."),
    ):
        with pytest.raises(ValidationFailed) as refused:
            await use.change_conversation(svc, user_id=user, session_uuid=chat.session_uuid, **bad)
        assert refused.value.field_errors == {field: message}
    assert _fields(await _stored(storage, user, chat)) == before

    # None: the default model, no skill.
    await use.change_conversation(
        svc, user_id=user, session_uuid=chat.session_uuid, model_id=None, skill_folder=None
    )
    stored = await _stored(storage, user, chat)
    assert (stored.model_id, stored.skill_folder) == (None, None)


async def test_several_changes_are_all_or_nothing(
    svc: SimpleNamespace, storage: Storage, user: int
) -> None:
    """The API's PATCH: one refused field leaves the others unchanged too."""
    chat = await _chat(storage, user)
    before = _fields(await _stored(storage, user, chat))
    with pytest.raises(ValidationFailed) as refused:
        await use.change_conversation(
            svc,
            user_id=user,
            session_uuid=chat.session_uuid,
            title="New title",
            archived=True,
            pinned=True,
            folder_id=999_999,
        )
    assert set(refused.value.field_errors) == {"folderId"}
    assert _fields(await _stored(storage, user, chat)) == before

    changed = await use.change_conversation(
        svc, user_id=user, session_uuid=chat.session_uuid, title="New title", pinned=True
    )
    assert (changed.title, changed.pinned_at is not None, changed.status) == (
        "New title",
        True,
        "ACTIVE",  # not given: unchanged
    )


async def test_the_run_state_and_no_new_model_while_it_runs(
    db_url: str,
    storage: Storage,
    user: int,
    other_user: int,
    bridge: RunningBridge,
    fake_model: RunningFakeModel,
    tmp_path: Path,
) -> None:
    """A real RunManager: a run that asks a question is "waiting" for its owner only; the
    model cannot change meanwhile (`Busy`, the API's 409); once stopped it is ""."""
    model = fake_model_row(storage, fake_model)
    chat = await _chat(storage, user)
    async with managers(db_url, storage) as make:
        runs = await make(bridge.base_url)
        svc = SimpleNamespace(
            storage=storage, runs=runs, settings=SimpleNamespace(skills_dir=tmp_path)
        )
        asked = {"user_id": user, "session_uuid": chat.session_uuid}
        assert await use.conversation_state(svc, **asked) == ""
        started = await runs.send(text="ask me", **asked)
        assert await use.conversation_state(svc, **asked) in ("running", "waiting")
        for _ in range(1000):
            if await use.conversation_state(svc, **asked) == "waiting":
                break
            await asyncio.sleep(0.02)
        assert await use.conversation_state(svc, **asked) == "waiting"
        with pytest.raises(NotFound):
            await use.conversation_state(svc, user_id=other_user, session_uuid=chat.session_uuid)
        with pytest.raises(NotFound):
            await use.conversation_state(svc, user_id=user, session_uuid="not-a-uuid")

        with pytest.raises(Busy, match="Changing the model or skill is not possible"):
            await use.change_conversation(svc, model_id=model, **asked)
        # What does not touch the agent may change while it runs.
        renamed = await use.rename_conversation(svc, title="Asked", **asked)
        assert renamed.title == "Asked"

        await runs.stop(started.run_id, user_id=user)
        for _ in range(1000):
            if await use.conversation_state(svc, **asked) == "":
                break
            await asyncio.sleep(0.02)
        assert await use.conversation_state(svc, **asked) == ""
        changed = await use.change_conversation(svc, model_id=model, **asked)
        assert changed.model_id == model
