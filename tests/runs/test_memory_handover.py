"""An install from before accounts had one hermes memory for everyone: at the app's first
use of the bridge it becomes the first administrator's, once, and nobody else's (a real
bridge over an old HERMES_HOME, a real database with an administrator and a member)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_chat.db import users
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import bridges_in_threads
from tests.support.bridge import hermes_home as make_home
from tests.support.runs import MakeManager, finished, new_chat

OLD_FACT = "Name: Ada Lovelace, the first programmer"


def _system_text(request: dict) -> str:
    return " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


async def test_the_shared_memory_becomes_the_first_administrators_at_first_use(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    storage: Storage,
    fake_model: RunningFakeModel,
    fake_model_row: int,
    make_manager: MakeManager,
    hermes_home: Path,  # the session's: HERMES_HOME again after this test's bridge
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))  # create_app points it elsewhere
    old = hermes_home_of_an_old_install(tmp_path / "old")
    admin = storage.call_sync(
        users.create_first_admin, username="boss", password="a long password 1"
    ).id
    member = storage.call_sync(
        users.create_user, username="colleague", password="another long password 2"
    ).id
    with bridges_in_threads(old) as start:
        bridge = start()
        manager = await make_manager(bridge.base_url)
        # The colleague uses the agent first: the old memory is still not theirs.
        fake_model.reset()
        started = await manager.send(
            session_uuid=new_chat(storage, member), text="hi", user_id=member
        )
        assert (await finished(storage, started.assistant_message_id)).status == "SUCCESS"
        member_prompt = _system_text(fake_model.requests()[-1])
        fake_model.reset()
        started = await manager.send(
            session_uuid=new_chat(storage, admin), text="hi", user_id=admin
        )
        assert (await finished(storage, started.assistant_message_id)).status == "SUCCESS"
        admin_prompt = _system_text(fake_model.requests()[-1])
        admin_memory = await manager.client.get_memory(user_id=admin)
        member_memory = await manager.client.get_memory(user_id=member)
        # A second app process (or a restart) asks again: nothing changes.
        again = await make_manager(bridge.base_url)
        await again.memory_handover.ensure()
    assert manager.memory_handover.done and again.memory_handover.done
    assert OLD_FACT in admin_memory["user"] and member_memory["user"] == ""
    assert OLD_FACT in admin_prompt and OLD_FACT not in member_prompt
    marker = json.loads((old / "memories" / ".claimed").read_text("utf-8"))
    assert marker == {"user": admin}
    assert not (old / "memories" / "USER.md").exists()
    assert not (old / "users" / str(member) / "memories" / "USER.md").exists()


def hermes_home_of_an_old_install(root: Path) -> Path:
    home = make_home(root)
    (home / "memories").mkdir()
    (home / "memories" / "USER.md").write_text(OLD_FACT, encoding="utf-8")
    return home
