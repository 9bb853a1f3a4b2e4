"""The use cases on MCP servers (services/mcp_servers.py) over a real database, a real
RunManager and bridge, and the tests' own MCP server (tests/support/mcp_server.py):
an administrator saves, tests and sees the status of a server; a member is refused; a
secret is never read back and an edit keeps it unless replaced; bad input names its field
and saves nothing; a conversation's run gets the servers of its profile, and the answer
holds the server's real result."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from types import SimpleNamespace

import pytest
from sqlalchemy import Engine

from agent_chat.db.errors import Forbidden, ValidationFailed
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage
from agent_chat.services import mcp_servers as use
from agent_chat.services import runs as run_use
from agent_chat.services.mcp_servers import McpValues
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.runs import fake_model_row, finished, managers, new_chat
from tests.support.users import default_owner, user_on

OURS = ["-m", "tests.support.mcp_server"]


@pytest.fixture
async def svc(
    db_url: str, storage: Storage, bridge: RunningBridge, fake_model: RunningFakeModel
) -> AsyncIterator[SimpleNamespace]:
    fake_model_row(storage, fake_model)
    async with managers(db_url, storage) as make:
        runs: RunManager = await make(bridge.base_url)
        yield SimpleNamespace(storage=storage, runs=runs, settings=runs.settings)


@pytest.fixture
def admin(storage: Storage) -> int:
    return storage.call_sync(default_owner)


def stdio(name: str = "tst", **extra: object) -> McpValues:
    values = {"name": name, "transport": "stdio", "command": sys.executable, "args": OURS}
    return McpValues(**{**values, **extra})  # type: ignore[arg-type]


async def test_a_secret_is_kept_never_shown_and_replaced_only_when_typed(
    svc: SimpleNamespace, admin: int
) -> None:
    saved = await use.save_server(
        svc, user_id=admin, server_id=None, values=stdio(env={"MCP_TEST_SECRET": "plum"})
    )
    assert saved.env_names == ["MCP_TEST_SECRET"]
    assert "plum" not in repr(saved) and "plum" not in repr(
        await use.list_servers(svc, user_id=admin)
    )
    # An edit that leaves the value out (None) keeps it: the server still says it.
    kept = stdio(env={"MCP_TEST_SECRET": None}, ask=False)
    await use.save_server(svc, user_id=admin, server_id=saved.id, values=kept)
    result = await use.test_server(svc, user_id=admin, server_id=saved.id)
    assert result.ok and {t["name"] for t in result.tools} == {
        "add",
        "whisper",
        "crash",
        "hang",
        "picture",
    }
    assert "whisper" in {t["name"] for t in result.tools}
    # Test before Save: the form's values, the stored secret filled in.
    preview = await use.test_server(
        svc, user_id=admin, server_id=saved.id, values=stdio(env={"MCP_TEST_SECRET": None})
    )
    assert preview.ok, preview
    # Leaving the name out removes the secret.
    gone = await use.save_server(svc, user_id=admin, server_id=saved.id, values=stdio())
    assert gone.env_names == []


@pytest.mark.parametrize(
    ("values", "field"),
    [
        (stdio(name="Not OK"), "name"),
        (stdio(command=""), "command"),
        (McpValues(name="web", transport="http"), "url"),
        (McpValues(name="web", transport="http", url="ftp://x"), "url"),
        (McpValues(name="web", transport="carrier-pigeon"), "transport"),
        (stdio(include=["add"], exclude=["hang"]), "exclude"),
        (stdio(profiles=["nonsense"]), "profiles"),
        (stdio(env={"NEVER_STORED": None}), "env"),
        (stdio(env={"BAD NAME": "x"}), "env"),
        (McpValues(name="web", transport="http", url="http://x", headers={"X": "a\nb"}), "headers"),
        (stdio(timeout=0), "timeout"),
    ],
)
async def test_bad_input_names_its_field_and_saves_nothing(
    svc: SimpleNamespace, admin: int, values: McpValues, field: str
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        await use.save_server(svc, user_id=admin, server_id=None, values=values)
    assert field in refused.value.field_errors, refused.value.field_errors
    assert await use.list_servers(svc, user_id=admin) == []


async def test_a_name_is_unique(svc: SimpleNamespace, admin: int) -> None:
    await use.save_server(svc, user_id=admin, server_id=None, values=stdio())
    with pytest.raises(ValidationFailed) as refused:
        await use.save_server(svc, user_id=admin, server_id=None, values=stdio())
    assert "already exists" in refused.value.field_errors["name"]


async def test_a_member_is_refused_everything_but_their_conversations_names(
    svc: SimpleNamespace, admin: int, engine: Engine
) -> None:
    saved = await use.save_server(svc, user_id=admin, server_id=None, values=stdio())
    member = user_on(engine, "mallory")
    for call in (
        use.list_servers(svc, user_id=member),
        use.save_server(svc, user_id=member, server_id=None, values=stdio("other")),
        use.set_enabled(svc, user_id=member, server_id=saved.id, enabled=False),
        use.delete_server(svc, user_id=member, server_id=saved.id),
        use.test_server(svc, user_id=member, server_id=saved.id),
        use.status(svc, user_id=member),
    ):
        with pytest.raises(Forbidden):
            await call
    assert [s.name for s in await use.list_servers(svc, user_id=admin)] == ["tst"]
    chat = new_chat(svc.storage, member)
    assert await use.conversation_servers(svc, user_id=member, session_uuid=chat) == ["tst"]


async def test_a_profile_names_its_enabled_servers(svc: SimpleNamespace, admin: int) -> None:
    # What the composer shows for the profile chosen there (names only, sorted).
    await use.save_server(svc, user_id=admin, server_id=None, values=stdio("tst"))
    await use.save_server(
        svc, user_id=admin, server_id=None, values=stdio("docs", profiles=["workspace"])
    )
    off = await use.save_server(svc, user_id=admin, server_id=None, values=stdio("off"))
    await use.set_enabled(svc, user_id=admin, server_id=off.id, enabled=False)
    assert await use.profile_servers(svc, profile="chat") == ["tst"]
    assert await use.profile_servers(svc, profile="workspace") == ["docs", "tst"]


async def test_a_run_gets_its_profiles_servers_and_their_real_results(
    svc: SimpleNamespace, admin: int, fake_model: RunningFakeModel
) -> None:
    await use.save_server(svc, user_id=admin, server_id=None, values=stdio(ask=False))
    only_workspace = stdio("elsewhere", profiles=["workspace"])
    await use.save_server(svc, user_id=admin, server_id=None, values=only_workspace)
    chat = new_chat(svc.storage, admin)
    assert await use.conversation_servers(svc, user_id=admin, session_uuid=chat) == ["tst"]
    text = 'please add\nCALL mcp__tst__add {"a": 19, "b": 23}'
    started = await run_use.send_message(svc, user_id=admin, session_uuid=chat, text=text)
    answer = await finished(svc.storage, started.assistant_message_id, timeout=60)
    assert answer.status == "SUCCESS", answer.error
    assert "The sum is 42." in answer.content
    offered = {t["function"]["name"] for t in fake_model.requests()[-1].get("tools") or []}
    assert "mcp__tst__add" in offered and not any("elsewhere" in n for n in offered)
    rows = {(r.name, r.connected) for r in await use.status(svc, user_id=admin)}
    assert ("tst", True) in rows
    # Disabled: the next run is not given it.
    saved = (await use.list_servers(svc, user_id=admin))[-1]
    await use.set_enabled(svc, user_id=admin, server_id=saved.id, enabled=False)
    assert await use.conversation_servers(svc, user_id=admin, session_uuid=chat) == []
