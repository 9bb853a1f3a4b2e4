"""Switching versions switches files, through real runs (the fixtures and helpers of
test_versions.py: the real bridge, hermes and the scripted model): `< n/m >` on an answer or
on a question above it puts the folder as the shown branch's last Workspace answer left it;
one without a checkpoint leaves the folder and says so; the drawer's words name the version."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from agent_chat.common.checkpoint_store import store_of
from agent_chat.runs.storage import Storage
from agent_chat.services import runs as use
from agent_chat.services import versions, workspace_versions
from tests.checkpoints.test_versions import counted, script
from tests.support.runs import finished, new_chat


async def _label(svc: Any, user: int, chat: str) -> str:
    return await workspace_versions.shown_label(svc.storage, user_id=user, session_uuid=chat)


async def test_switching_versions_switches_the_folder(
    svc: Any,
    storage: Storage,
    user: int,
    workspaces: Path,
) -> None:
    chat = new_chat(storage, user)
    folder = workspaces / chat
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script(counted(workspaces, chat)), tool_profile="workspace", **ask
    )
    one = await finished(storage, first.assistant_message_id, timeout=90)
    assert one.status == "SUCCESS", one.error
    again = await versions.regenerate(svc, user_id=user, message_id=one.id)
    two = await finished(storage, again.assistant_message_id, timeout=60)
    assert (folder / "a.txt").read_text() == "2"
    assert await _label(svc, user, chat) == "Files as answer 2/2 left them"

    back = await versions.switch(svc, user_id=user, message_id=two.id, step=-1)
    assert back.message.id == one.id
    assert back.files == workspace_versions.FilesShown(True, one.id, "")
    assert (folder / "a.txt").read_text() == "1"
    assert await _label(svc, user, chat) == "Files as answer 1/2 left them"
    forth = await versions.switch(svc, user_id=user, message_id=one.id, step=1)
    assert forth.files.answer_id == two.id and (folder / "a.txt").read_text() == "2"

    # An edit of the question starts from the empty folder (the first turn) and writes a
    # third a.txt; the arrows on the question go back to its first version's branch, whose
    # shown answer is the second.
    edited = await versions.edit_and_resend(
        svc, user_id=user, message_id=first.user_message_id, text=script("printf e > b.txt")
    )
    done = await finished(storage, edited.assistant_message_id, timeout=60)
    assert done.status == "SUCCESS", done.error
    assert sorted(p.name for p in folder.iterdir()) == ["b.txt"]
    assert await _label(svc, user, chat) == "Files as the answer to question 2/2 left them"
    old = await versions.switch(svc, user_id=user, message_id=edited.user_message_id, step=-1)
    assert old.files.answer_id == two.id
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt"]
    assert (folder / "a.txt").read_text() == "2"

    # An answer whose checkpoint is missing: the folder stays, and the person is told.
    (store_of(workspaces, chat).path / "manifests" / f"{done.id}.json").unlink()
    kept = await versions.switch(svc, user_id=user, message_id=first.user_message_id, step=1)
    assert kept.files == workspace_versions.FilesShown(False, None, workspace_versions.NOT_RECORDED)
    assert (folder / "a.txt").read_text() == "2"


async def test_a_chat_conversation_switches_silently(
    svc: Any,
    storage: Storage,
    user: int,
    workspaces: Path,
) -> None:
    """No Workspace answer, no checkpoint: nothing to put back, nothing said."""
    chat = new_chat(storage, user)
    first = await use.start_run(svc, user_id=user, session_uuid=chat, text="hello")
    one = await finished(storage, first.assistant_message_id, timeout=90)
    again = await versions.regenerate(svc, user_id=user, message_id=one.id)
    await finished(storage, again.assistant_message_id, timeout=60)
    back = await versions.switch(svc, user_id=user, message_id=again.assistant_message_id, step=-1)
    assert back.files == workspace_versions.FilesShown(False) and back.message.id == one.id
    assert not (workspaces / chat).exists()


async def test_no_run_starts_while_a_switch_puts_the_folder_back(
    svc: Any,
    storage: Storage,
    user: int,
    workspaces: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A message sent while a switch is putting the folder back waits for it: its run then
    works in the switched folder, never in one half put back."""
    chat = new_chat(storage, user)
    folder = workspaces / chat
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script(counted(workspaces, chat)), tool_profile="workspace", **ask
    )
    one = await finished(storage, first.assistant_message_id, timeout=90)
    again = await versions.regenerate(svc, user_id=user, message_id=one.id)
    await finished(storage, again.assistant_message_id, timeout=60)
    assert (folder / "a.txt").read_text() == "2"

    entered, release = threading.Event(), threading.Event()
    real_restore = workspace_versions.restore

    def slow_restore(*args: Any) -> Any:
        entered.set()
        release.wait(30)
        return real_restore(*args)

    monkeypatch.setattr(workspace_versions, "restore", slow_restore)
    switching = asyncio.create_task(
        versions.switch(svc, user_id=user, message_id=again.assistant_message_id, step=-1)
    )
    assert await asyncio.to_thread(entered.wait, 30)
    sending = asyncio.create_task(
        use.start_run(svc, text=script("cat a.txt > seen.txt"), tool_profile="workspace", **ask)
    )
    await asyncio.sleep(0.5)
    assert not sending.done()  # held at the start, not sent to the agent
    release.set()
    assert (await switching).files.answer_id == one.id
    third = await sending
    done = await finished(storage, third.assistant_message_id, timeout=60)
    assert done.status == "SUCCESS", done.error
    assert (folder / "seen.txt").read_text() == "1"  # the run saw the switched folder
