"""A JSON export "with files" carries the workspace checkpoints (manifests and the bytes
they name) and an import puts them back under the new answers' ids, with the folder as the
shown branch left it; a checkpoint whose bytes were changed in the file is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agent_chat import export
from agent_chat.db.import_plan import ImportRefused
from agent_chat.export.checkpoint_data import workspace_of
from agent_chat.runs.storage import Storage
from agent_chat.services import imports, versions
from agent_chat.services import runs as use
from tests.checkpoints.test_versions import counted, held, script
from tests.support.runs import finished, new_chat


async def _no_bytes(row: Any) -> Any:
    raise AssertionError("no attachment here")


async def _exported(storage: Storage, chat: str, user: int, root: Path) -> str:
    data = await storage.call(export.collect, session_uuid=chat, user_id=user, branch="all")
    files = await export.gather_files(data, _no_bytes)
    workspace = workspace_of(root, data, files)
    return export.to_json_text(
        data, exported_at=datetime.now(UTC), files=files, workspace=workspace
    )


async def test_an_export_with_files_carries_the_checkpoints_back(
    svc: Any, storage: Storage, user: int, workspaces: Path
) -> None:
    chat = new_chat(storage, user)
    ask = {"user_id": user, "session_uuid": chat}
    first = await use.start_run(
        svc, text=script(counted(workspaces, chat)), tool_profile="workspace", **ask
    )
    one = await finished(storage, first.assistant_message_id, timeout=90)
    again = await versions.regenerate(svc, user_id=user, message_id=one.id)
    two = await finished(storage, again.assistant_message_id, timeout=60)
    await versions.switch(svc, user_id=user, message_id=two.id, step=-1)  # 1 shown

    text = await _exported(storage, chat, user, workspaces)
    doc = json.loads(text)
    assert sorted(doc["workspace"]["checkpoints"]) == sorted([str(one.id), str(two.id)])
    assert len(doc["workspace"]["objects"]) == 2 and doc["workspace"]["left_out"] == []

    done = await imports.import_export(svc, user_id=user, raw=text.encode())
    copy = done.chat.session_uuid
    assert (workspaces / copy / "a.txt").read_text() == "1"  # the shown branch's files
    by_content = {}
    for name in (workspaces / ".checkpoints" / copy / "manifests").iterdir():
        by_content[held(workspaces, copy, int(name.stem))["a.txt"]] = int(name.stem)
    assert set(by_content) == {b"1", b"2"} and not {one.id, two.id} & set(by_content.values())
    switched = await versions.switch(svc, user_id=user, message_id=by_content[b"1"], step=1)
    assert switched.files.answer_id == by_content[b"2"]
    assert (workspaces / copy / "a.txt").read_text() == "2"

    # A changed byte in a checkpoint's file refuses the import; nothing is written.
    sha = next(iter(doc["workspace"]["objects"]))
    doc["workspace"]["objects"][sha] = "QUFB"
    with pytest.raises(ImportRefused, match="not the bytes it names"):
        await imports.import_export(svc, user_id=user, raw=json.dumps(doc))
    doc["workspace"]["objects"].pop(sha)
    doc["workspace"]["checkpoints"] = {str(one.id): {"../out": {"type": "dir", "mode": 448}}}
    with pytest.raises(ImportRefused, match="leads out"):
        await imports.import_export(svc, user_id=user, raw=json.dumps(doc))
