"""Regenerate, edit, versions and reset through the RunManager, with the real bridge and the
fake model recording exactly what context the agent got (docs/architecture.md §5)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlmodel import select

from agent_chat.db import messages, sessions
from agent_chat.db.models import ChatMessage
from agent_chat.runs.manager import RunRefused
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import MakeManager, chat_messages, finished, new_chat
from tests.support.users import default_owner


def all_messages(storage: Storage, session_uuid: str) -> list[ChatMessage]:
    def read(*, session: Any) -> list[ChatMessage]:
        chat = sessions.get_session(
            user_id=default_owner(session=session), session=session, session_uuid=session_uuid
        )
        return list(session.exec(select(ChatMessage).where(ChatMessage.session_id == chat.id)))

    return storage.call_sync(read)


def assert_tree_invariants(storage: Storage, session_uuid: str) -> None:
    """Exactly one active sibling per parent (roots included); the branch is a root→leaf path."""
    rows = all_messages(storage, session_uuid)
    groups: dict[int | None, list[ChatMessage]] = {}
    for row in rows:
        groups.setdefault(row.parent_id, []).append(row)
    for parent_id, group in groups.items():
        assert sum(m.is_active for m in group) == 1, f"siblings under {parent_id}"
        assert sorted(m.branch_order for m in group) == list(range(len(group)))
    branch = chat_messages(storage, session_uuid)
    assert branch[0].parent_id is None
    for parent, child in zip(branch, branch[1:], strict=False):
        assert child.parent_id == parent.id
    assert not any(m.parent_id == branch[-1].id and m.is_active for m in rows)


def context_of(fake: RunningFakeModel, text: str) -> list[tuple[str, str]]:
    """(role, content) of the conversation the model got with `text` as the last user turn."""
    for body in reversed(fake.requests()):
        turns = [(m["role"], m.get("content") or "") for m in body.get("messages", [])]
        users = [c for r, c in turns if r == "user"]
        if users and users[-1] == text:
            return [(r, c) for r, c in turns if r in ("user", "assistant")]
    raise AssertionError(f"no request ended with {text!r}")


async def ask(manager, storage: Storage, session_uuid: str, text: str) -> ChatMessage:
    started = await manager.send(
        session_uuid=session_uuid, text=text, user_id=storage.call_sync(default_owner)
    )
    return await finished(storage, started.assistant_message_id)


@pytest.fixture
async def chat_with_two_turns(
    make_manager: MakeManager, bridge: RunningBridge, storage: Storage, fake_model_row: int
):
    manager = await make_manager(bridge.base_url)
    session_uuid = new_chat(storage)
    await ask(manager, storage, session_uuid, "first question")
    await ask(manager, storage, session_uuid, "second question")
    return manager, session_uuid


async def test_regenerate_adds_a_version_and_keeps_the_old_one(
    chat_with_two_turns, storage: Storage, fake_model: RunningFakeModel, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    before = len(all_messages(storage, session_uuid))
    old_answer = chat_messages(storage, session_uuid)[-1]

    started = await manager.regenerate(
        session_uuid=session_uuid, message_id=old_answer.id, user_id=user
    )
    new_answer = await finished(storage, started.assistant_message_id)
    assert new_answer.parent_id == old_answer.parent_id
    assert new_answer.branch_order == old_answer.branch_order + 1
    assert new_answer.content == "Echo: second question"
    # The agent got the branch up to the question: the first turn, then the question itself.
    assert context_of(fake_model, "second question") == [
        ("user", "first question"),
        ("assistant", "Echo: first question"),
        ("user", "second question"),
    ]
    # Regenerating the regenerated answer gives a third version.
    third = await manager.regenerate(
        session_uuid=session_uuid, message_id=new_answer.id, user_id=user
    )
    await finished(storage, third.assistant_message_id)
    group = storage.call_sync(messages.siblings, user_id=user, message_id=old_answer.id)
    assert [m.id for m in group] == [old_answer.id, new_answer.id, third.assistant_message_id]
    assert [m.is_active for m in group] == [False, False, True]
    assert len(all_messages(storage, session_uuid)) == before + 2  # nothing deleted
    assert_tree_invariants(storage, session_uuid)


async def test_edit_of_the_first_message_starts_a_new_root_without_history(
    chat_with_two_turns, storage: Storage, fake_model: RunningFakeModel, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    old_branch = chat_messages(storage, session_uuid)
    started = await manager.edit(
        session_uuid=session_uuid,
        message_id=old_branch[0].id,
        text="a better first question",
        user_id=user,
    )
    answer = await finished(storage, started.assistant_message_id)
    assert answer.content == "Echo: a better first question"
    assert context_of(fake_model, "a better first question") == [
        ("user", "a better first question")
    ]
    branch = chat_messages(storage, session_uuid)
    assert [m.content for m in branch] == [
        "a better first question",
        "Echo: a better first question",
    ]
    assert branch[0].parent_id is None and branch[0].branch_order == 1
    assert_tree_invariants(storage, session_uuid)

    # Switching back to version 1 brings back its whole continuation.
    storage.call_sync(messages.switch_version, user_id=user, message_id=branch[0].id, step=-1)
    assert [m.id for m in chat_messages(storage, session_uuid)] == [m.id for m in old_branch]
    assert_tree_invariants(storage, session_uuid)


async def test_edit_in_the_middle_sends_only_the_branch_above_it(
    chat_with_two_turns, storage: Storage, fake_model: RunningFakeModel, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    second_question = chat_messages(storage, session_uuid)[2]
    started = await manager.edit(
        session_uuid=session_uuid, message_id=second_question.id, text="recall please", user_id=user
    )
    answer = await finished(storage, started.assistant_message_id)
    assert answer.content == "Earlier you said: first question"
    assert context_of(fake_model, "recall please") == [
        ("user", "first question"),
        ("assistant", "Echo: first question"),
        ("user", "recall please"),
    ]
    assert_tree_invariants(storage, session_uuid)


async def test_after_reset_the_agent_sees_nothing_before_the_marker(
    chat_with_two_turns, storage: Storage, fake_model: RunningFakeModel, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    hermes_before = storage.call_sync(
        sessions.get_session, user_id=user, session_uuid=session_uuid
    ).hermes_session
    await manager.reset(session_uuid=session_uuid, user_id=user)
    chat = storage.call_sync(sessions.get_session, user_id=user, session_uuid=session_uuid)
    assert chat.hermes_session != hermes_before
    answer = await ask(manager, storage, session_uuid, "recall anything?")
    assert answer.content == "I have no earlier message."
    assert context_of(fake_model, "recall anything?") == [("user", "recall anything?")]
    # The earlier messages stay, with the marker between.
    branch = chat_messages(storage, session_uuid)
    assert [m.status for m in branch][4] == "RESET"
    assert len(branch) == 7
    # A second reset right after a reset has nothing to do.
    await manager.reset(session_uuid=session_uuid, user_id=user)
    with pytest.raises(RunRefused, match="nothing to reset"):
        await manager.reset(session_uuid=session_uuid, user_id=user)


async def test_regenerate_edit_and_reset_are_refused_while_the_session_runs(
    chat_with_two_turns, storage: Storage, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    branch = chat_messages(storage, session_uuid)
    running = await manager.send(session_uuid=session_uuid, text="slow please", user_id=user)
    with pytest.raises(RunRefused, match="still running"):
        await manager.regenerate(session_uuid=session_uuid, message_id=branch[-1].id, user_id=user)
    with pytest.raises(RunRefused, match="still running"):
        await manager.edit(
            session_uuid=session_uuid, message_id=branch[0].id, text="x", user_id=user
        )
    with pytest.raises(RunRefused, match="stop it"):
        await manager.reset(session_uuid=session_uuid, user_id=user)
    await manager.stop(running.run_id, user_id=user)
    await finished(storage, running.assistant_message_id)


async def test_regenerate_refuses_a_message_of_another_session(
    chat_with_two_turns, storage: Storage, user: int
) -> None:
    manager, session_uuid = chat_with_two_turns
    answer = chat_messages(storage, session_uuid)[-1]
    other = new_chat(storage)
    with pytest.raises(RunRefused, match="not part of this conversation"):
        await manager.regenerate(session_uuid=other, message_id=answer.id, user_id=user)
    with pytest.raises(RunRefused, match="not part of this conversation"):
        await manager.edit(session_uuid=session_uuid, message_id=answer.id, text="x", user_id=user)
