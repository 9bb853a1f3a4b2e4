"""The workspace follows the versions, through real runs (services/checkpoints.py wired into a
real RunManager as services/runtime.py wires it, the real bridge, hermes and the scripted
model): each Workspace answer's checkpoint holds the folder its run left; a regenerate
starts from the folder before its question (the empty one on the first turn), an edit from
the previous answer's, keeping the files the edited message carries; deleting the
conversation deletes its checkpoints."""

from __future__ import annotations

import errno
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_chat.common.checkpoint_store import store_of
from agent_chat.common.checkpoints import load
from agent_chat.common.workspaces import SANDBOX_DIR
from agent_chat.runs.storage import Storage
from agent_chat.services import attachments as uploads
from agent_chat.services import checkpoints, conversations, versions
from agent_chat.services import runs as use
from tests.fakes.model_server import RunningFakeModel
from tests.support.runs import finished, new_chat

LISTED = "listed:"  # what the listing command prints before the folder's names


def script(*commands: str) -> str:
    """A question whose scripted answer runs these terminal commands in order."""
    calls = [f"CALL terminal {json.dumps({'command': c})}" for c in commands]
    return "\n".join(["Work in the folder", *calls])


def listing(path: str = ".") -> str:
    return f"echo {LISTED} $(cd {path} && find . -mindepth 1 | sort)"


def counted(root: Path, chat: str) -> str:
    """Writes a.txt = how many times this command ran in the conversation: a regenerate's
    script is its question's, so the count (kept in the conversation's sandbox home, outside
    its folder, bound at the same path inside the sandbox) tells the versions apart."""
    home = root / SANDBOX_DIR / chat
    count = home / "count"
    return (
        f"mkdir -p {home} && n=$(( $(cat {count} 2>/dev/null || echo 0) + 1 )) && "
        f"echo $n > {count} && printf $n > a.txt"
    )


def listed(fake: RunningFakeModel, since: int) -> list[str]:
    """What the listing commands run by the requests after the `since`-th found, in order
    (each tool result is sent back to the model with the next request)."""
    found = []
    for body in fake.requests()[since:]:
        last = body["messages"][-1]
        if last.get("role") == "tool" and LISTED in str(last.get("content")):
            output = json.loads(last["content"])["output"]
            found.append(output.split(LISTED, 1)[1].strip())
    return found


def held(root: Path, chat: str, answer_id: int) -> dict[str, bytes]:
    """The files of an answer's checkpoint, read from the store."""
    manifest = load(root, chat, str(answer_id))
    assert manifest is not None, f"answer {answer_id} has no checkpoint"
    store = store_of(root, chat)
    return {
        path: store.object_path(entry.sha256).read_bytes()
        for path, entry in manifest.items()
        if entry.kind == "file"
    }


async def test_a_regenerate_starts_from_the_folder_before_its_question(
    svc: Any, storage: Storage, fake_model: RunningFakeModel, user: int, workspaces: Path
) -> None:
    chat = new_chat(storage, user)
    folder = workspaces / chat
    question = script(listing(), counted(workspaces, chat))
    since = len(fake_model.requests())
    first = await use.start_run(
        svc, user_id=user, session_uuid=chat, text=question, tool_profile="workspace"
    )
    # The bridge's first workspace agent is built cold (15 s seen on a loaded machine).
    answer = await finished(storage, first.assistant_message_id, timeout=90)
    assert answer.status == "SUCCESS", answer.error
    assert (folder / "a.txt").read_text() == "1"
    assert listed(fake_model, since) == [""]  # a new conversation: nothing there
    assert held(workspaces, chat, answer.id) == {"a.txt": b"1"}

    since = len(fake_model.requests())
    again = await versions.regenerate(svc, user_id=user, message_id=answer.id)
    second = await finished(storage, again.assistant_message_id, timeout=60)
    assert second.status == "SUCCESS", second.error
    # The second version's run saw the folder as before the question: empty, no a.txt.
    assert listed(fake_model, since) == [""]
    assert (folder / "a.txt").read_text() == "2"
    assert held(workspaces, chat, answer.id) == {"a.txt": b"1"}
    assert held(workspaces, chat, second.id) == {"a.txt": b"2"}

    # Deleting the conversation deletes its checkpoints with its folder.
    await conversations.delete_conversation(svc, user_id=user, session_uuid=chat)
    assert not folder.exists() and not store_of(workspaces, chat).path.exists()


async def _upload(svc: Any, user: int, data: bytes, name: str) -> int:
    async def one() -> AsyncIterator[bytes]:
        yield data

    return (await uploads.upload(svc, user_id=user, name=name, chunks=one())).id


async def test_an_edit_starts_from_the_answer_before_and_keeps_its_files(
    svc: Any, storage: Storage, fake_model: RunningFakeModel, user: int, workspaces: Path
) -> None:
    chat = new_chat(storage, user)
    folder = workspaces / chat
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script("printf base > base.txt"), tool_profile="workspace", **ask
    )
    base = await finished(storage, first.assistant_message_id, timeout=90)
    notes = await _upload(svc, user, b"city,people\nGhent,265086\n", "notes.csv")
    second = await use.start_run(
        svc,
        text=script("printf extra > extra.txt && printf changed > base.txt"),
        attachment_ids=[notes],
        **ask,
    )
    replaced = await finished(storage, second.assistant_message_id, timeout=60)
    assert held(workspaces, chat, replaced.id) == {
        "attachments/notes.csv": b"city,people\nGhent,265086\n",
        "base.txt": b"changed",
        "extra.txt": b"extra",
    }

    # The edited question keeps its file (the old version's): the run finds the folder as
    # the first answer left it, with that file, and not what the replaced answer did.
    since = len(fake_model.requests())
    edited = await versions.edit_and_resend(
        svc, user_id=user, message_id=second.user_message_id, text=script(listing())
    )
    done = await finished(storage, edited.assistant_message_id, timeout=60)
    assert done.status == "SUCCESS", done.error
    assert listed(fake_model, since) == ["./attachments ./attachments/notes.csv ./base.txt"]
    assert (folder / "base.txt").read_text() == "base" and not (folder / "extra.txt").exists()
    assert held(workspaces, chat, base.id) == {"base.txt": b"base"}
    assert held(workspaces, chat, replaced.id)["extra.txt"] == b"extra"  # kept for later


async def test_a_conversation_from_before_checkpoints_is_left_as_it_is(
    svc: Any, storage: Storage, user: int, workspaces: Path
) -> None:
    """No checkpoint was ever recorded (the folder predates them): a regenerate cannot know
    what the folder held before its question, so it changes nothing."""
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script("printf 1 > a.txt"), tool_profile="workspace", **ask
    )
    answer = await finished(storage, first.assistant_message_id, timeout=90)
    shutil.rmtree(store_of(workspaces, chat).path)  # as if recorded before checkpoints
    (workspaces / chat / "older.txt").write_text("made before checkpoints")
    again = await versions.regenerate(svc, user_id=user, message_id=answer.id)
    await finished(storage, again.assistant_message_id, timeout=60)
    assert (workspaces / chat / "older.txt").read_text() == "made before checkpoints"


async def test_failed_and_stopped_runs_record_too(
    svc: Any, storage: Storage, user: int, workspaces: Path
) -> None:
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}
    (workspaces / chat).mkdir(parents=True)
    (workspaces / chat / "kept.txt").write_text("there")
    failing = await use.start_run(svc, text="error500", tool_profile="workspace", **ask)
    failed = await finished(storage, failing.assistant_message_id, timeout=90)
    assert failed.status == "FAILED"
    assert held(workspaces, chat, failed.id) == {"kept.txt": b"there"}

    slow = await use.start_run(svc, text="slow long 400", **ask)
    await use.stop(svc, user_id=user, run_id=slow.run_id)
    stopped = await finished(storage, slow.assistant_message_id, timeout=60)
    assert stopped.status == "STOPPED"
    assert held(workspaces, chat, stopped.id) == {"kept.txt": b"there"}


async def test_a_restore_that_fails_fails_the_answer_and_sends_nothing(
    svc: Any,
    storage: Storage,
    fake_model: RunningFakeModel,
    user: int,
    workspaces: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script("printf 1 > a.txt"), tool_profile="workspace", **ask
    )
    answer = await finished(storage, first.assistant_message_id, timeout=90)

    def full_disk(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(checkpoints, "restore", full_disk)
    since = len(fake_model.requests())
    again = await versions.regenerate(svc, user_id=user, message_id=answer.id)
    failed = await finished(storage, again.assistant_message_id, timeout=60)
    assert failed.status == "FAILED"
    assert "could not be put back" in failed.error and "no space left" in failed.error
    assert len(fake_model.requests()) == since  # the agent never started
    assert (workspaces / chat / "a.txt").read_text() == "1"
