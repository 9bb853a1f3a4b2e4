"""Approvals through the app's run pipeline: recorded as a pause of kind "approval", answered
through the manager, kept across an app restart, ABANDONED by a bridge restart, and the
conversation's tool profile stored per conversation and per message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_chat.db import pauses
from agent_chat.db.models import MessageStatus, PauseStatus, RunPause, utcnow
from agent_chat.export.json_export import to_json
from agent_chat.runs.manager import BRIDGE_RESTARTED, RunRefused
from agent_chat.runs.storage import Storage
from tests.support.bridge import StartBridge
from tests.support.runs import (
    MakeManager,
    finished,
    message,
    new_chat,
    run_to_end,
    stored_view,
    wait_for,
)
from tests.support.users import default_owner

PROFILES = ("chat", "workspace")
RM = 'rm it\nCALL terminal {"command": "rm -rf victim"}'


def _pauses_of(*, session: Any, message_id: int) -> list[RunPause]:
    from sqlmodel import select

    return list(session.exec(select(RunPause).where(RunPause.message_id == message_id)).all())


def _open(storage: Storage, message_id: int) -> RunPause | None:
    return storage.call_sync(pauses.open_pause, message_id=message_id)


@pytest.fixture
def workspaces(tmp_path: Path) -> Path:
    return tmp_path / "workspaces"


def _bridge(start_bridge: StartBridge, workspaces: Path) -> Any:
    return start_bridge(
        keepalive_interval_s=0.5, tool_profiles=PROFILES, workspaces_root=workspaces
    )


async def test_an_approval_is_recorded_answered_and_kept_across_an_app_restart(
    start_bridge: StartBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    workspaces: Path,
    user: int,
) -> None:
    bridge = _bridge(start_bridge, workspaces)
    first = await make_manager(bridge.base_url, tool_profiles=PROFILES)
    chat = new_chat(storage)
    (workspaces / chat / "victim").mkdir(parents=True)
    started = await first.send(session_uuid=chat, text=RM, tool_profile="workspace", user_id=user)
    answer_id = started.assistant_message_id
    # The bridge's first workspace agent is built cold (15 s seen on a loaded 2-core machine).
    await wait_for(lambda: _open(storage, answer_id) is not None, timeout=60)
    pause = _open(storage, answer_id)
    assert pause.kind == "approval" and pause.question == "rm -rf victim"
    assert pause.detail and json.loads(pause.choices_json) == ["once", "session", "always", "deny"]
    assert await first.session_states(user_id=user) == {chat: "waiting"}
    # The app restarts while the approval waits: the new one re-attaches and shows it.
    await first.close()
    second = await make_manager(bridge.base_url, tool_profiles=PROFILES)
    live = second.consumed.for_session(chat)
    assert live is not None
    await wait_for(lambda: live.view.clarify is not None)
    assert live.view.clarify.kind == "approval" and live.view.clarify.question == "rm -rf victim"
    assert stored_view(storage, answer_id).clarify == live.view.clarify

    await second.answer(started.run_id, pause.clarify_id, "deny", user_id=user)
    live = await run_to_end(second, started.run_id)
    done = message(storage, answer_id)
    assert done.status == MessageStatus.SUCCESS and "BLOCKED" in done.content
    assert (workspaces / chat / "victim").exists()
    rows = storage.call_sync(_pauses_of, message_id=answer_id)
    assert [(p.kind, p.status, p.answer) for p in rows] == [
        ("approval", PauseStatus.ANSWERED.value, "deny")
    ]
    assert done.tool_profile == "workspace"
    exported = to_json(storage.call_sync(_collect, session_uuid=chat), exported_at=utcnow())
    assert exported["session"]["tool_profile"] == "workspace"
    assert {
        m["tool_profile"] for m in exported["messages"] if m["role"].lower() == "assistant"
    } == {"workspace"}


def _collect(*, session: Any, session_uuid: str) -> Any:
    from agent_chat import export

    return export.collect(
        user_id=default_owner(session=session),
        session=session,
        session_uuid=session_uuid,
        branch="all",
    )


async def test_a_bridge_restart_abandons_a_pending_approval(
    start_bridge: StartBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    workspaces: Path,
    user: int,
) -> None:
    old = _bridge(start_bridge, workspaces)
    first = await make_manager(old.base_url, tool_profiles=PROFILES)
    chat = new_chat(storage)
    started = await first.send(session_uuid=chat, text=RM, tool_profile="workspace", user_id=user)
    await wait_for(lambda: _open(storage, started.assistant_message_id) is not None, timeout=60)
    await first.close()
    new = _bridge(start_bridge, workspaces)  # knows no runs
    await make_manager(new.base_url, tool_profiles=PROFILES)
    failed = await finished(storage, started.assistant_message_id, timeout=15)
    assert failed.status == MessageStatus.FAILED and failed.error == BRIDGE_RESTARTED
    rows = storage.call_sync(_pauses_of, message_id=failed.id)
    assert [(p.kind, p.status) for p in rows] == [("approval", PauseStatus.ABANDONED.value)]


async def test_the_profile_is_kept_per_conversation_and_a_disabled_one_is_refused(
    start_bridge: StartBridge,
    storage: Storage,
    fake_model_row: int,
    make_manager: MakeManager,
    workspaces: Path,
    user: int,
) -> None:
    bridge = _bridge(start_bridge, workspaces)
    manager = await make_manager(bridge.base_url, tool_profiles=PROFILES)
    chat = new_chat(storage)
    started = await manager.send(
        session_uuid=chat, text="hello", tool_profile="workspace", user_id=user
    )
    await run_to_end(manager, started.run_id)
    # The next message without a choice keeps the conversation's profile.
    again = await manager.send(session_uuid=chat, text="again", user_id=user)
    await run_to_end(manager, again.run_id)
    assert message(storage, again.assistant_message_id).tool_profile == "workspace"

    chat_only = await make_manager(bridge.base_url, tool_profiles=("chat",))
    with pytest.raises(RunRefused, match="not enabled"):
        await chat_only.send(
            session_uuid=new_chat(storage), text="hi", tool_profile="workspace", user_id=user
        )
    # A conversation whose profile the operator disabled since falls back to Chat.
    later = await chat_only.send(session_uuid=chat, text="and now", user_id=user)
    await run_to_end(chat_only, later.run_id)
    assert message(storage, later.assistant_message_id).tool_profile == "chat"
