"""See and undo what an answer changed, through real runs (the fixtures of conftest.py):
"N files changed" compares the answer's checkpoint with the one it started from; undo puts
the folder back as before it and records that as the answer's files, so a switch away and
back, and a regenerate below it, start from the undone state."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest

from agent_chat.common import checkpoint_diff
from agent_chat.common.checkpoint_store import Entry, Store
from agent_chat.db import messages, sessions
from agent_chat.runs.storage import Storage
from agent_chat.services import runs as use
from agent_chat.services import versions, workspace_changes
from agent_chat.services.runs import InvalidRunInput, RunConflict
from tests.checkpoints.test_versions import script
from tests.support.runs import finished, new_chat


async def test_changes_listed_and_undone(
    svc: Any, storage: Storage, user: int, workspaces: Path
) -> None:
    chat = new_chat(storage, user)
    folder = workspaces / chat
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc,
        text=script("printf 'one\\ntwo\\n' > a.txt && printf 'gone' > old.txt"),
        tool_profile="workspace",
        **ask,
    )
    base = await finished(storage, first.assistant_message_id, timeout=90)
    second = await use.start_run(
        svc,
        text=script("printf 'one\\nTWO\\n' > a.txt && rm old.txt && head -c 300 /dev/zero > z.bin"),
        **ask,
    )
    answer = await finished(storage, second.assistant_message_id, timeout=60)
    assert answer.status == "SUCCESS", answer.error

    seen = await workspace_changes.changes_of(svc, user_id=user, message_id=answer.id)
    assert seen.parent_id == base.id and seen.known and seen.can_undo and not seen.undone
    by_path = {c.path: c for c in seen.changes}
    assert {p: c.change for p, c in by_path.items()} == {
        "a.txt": "changed",
        "old.txt": "deleted",
        "z.bin": "added",
    }
    assert "-two\n+TWO\n" in by_path["a.txt"].diff
    assert by_path["z.bin"].binary and by_path["z.bin"].size_after == 300
    first_seen = await workspace_changes.changes_of(svc, user_id=user, message_id=base.id)
    assert first_seen.parent_id is None and not first_seen.can_undo  # not the shown files
    assert {c.path for c in first_seen.changes} == {"a.txt", "old.txt"}

    labels = workspace_changes.footer_labels(chat, _branch(storage, chat, user))
    assert labels == {str(base.id): "2 files changed", str(answer.id): "3 files changed"}

    with pytest.raises(RunConflict, match="last workspace answer"):
        await workspace_changes.undo_changes(svc, user_id=user, message_id=base.id)
    with pytest.raises(InvalidRunInput):
        await workspace_changes.undo_changes(svc, user_id=user, message_id=first.user_message_id)

    undone = await workspace_changes.undo_changes(svc, user_id=user, message_id=answer.id)
    assert undone.undone and not undone.can_undo
    assert (folder / "a.txt").read_text() == "one\ntwo\n" and (folder / "old.txt").exists()
    assert not (folder / "z.bin").exists()
    again = await workspace_changes.undo_changes(svc, user_id=user, message_id=answer.id)
    assert again.undone  # twice is once
    labels = workspace_changes.footer_labels(chat, _branch(storage, chat, user))
    assert labels[str(answer.id)] == "Changes undone"

    # Recorded: a regenerate of the answer and a switch back find the undone state.
    regen = await versions.regenerate(svc, user_id=user, message_id=answer.id)
    other = await finished(storage, regen.assistant_message_id, timeout=60)
    assert (folder / "z.bin").exists()  # the new version's own run
    back = await versions.switch(svc, user_id=user, message_id=other.id, step=-1)
    assert back.files.restored
    assert not (folder / "z.bin").exists() and (folder / "old.txt").exists()


def _branch(storage: Storage, chat: str, user: int) -> list[Any]:
    def read(*, session: Any) -> list[Any]:
        row = sessions.get_session(session=session, session_uuid=chat, user_id=user)
        return messages.active_branch(session=session, chat_session_id=row.id)

    return storage.call_sync(read)


def test_a_diff_is_limited_and_binaries_are_sizes(tmp_path: Path) -> None:
    store = Store(tmp_path / "store")
    store.ensure()

    def put(data: bytes) -> Entry:
        sha = hashlib.sha256(data).hexdigest()
        path = store.object_path(sha)
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)
        return Entry("file", 0o644, len(data), sha)

    many_old = put("".join(f"{i}\n" for i in range(2000)).encode())
    many_new = put("".join(f"{i}!\n" for i in range(2000)).encode())
    old = {"long.txt": many_old, "pic.png": put(b"\x89PNG\x00"), "same.txt": put(b"s")}
    new = {"long.txt": many_new, "pic.png": put(b"\x89PNG\x00\x01"), "same.txt": put(b"s")}
    found = {c.path: c for c in checkpoint_diff.changes(store, old, new)}
    assert set(found) == {"long.txt", "pic.png"}
    assert found["long.txt"].truncated
    assert found["long.txt"].diff.count("\n") == checkpoint_diff.MAX_DIFF_LINES
    assert found["pic.png"].binary and (
        found["pic.png"].size_before,
        found["pic.png"].size_after,
    ) == (5, 6)
