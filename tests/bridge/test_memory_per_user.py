"""hermes' memory per person (bridge/homes.py): a real turn whose scripted model calls the
`memory` tool writes into that person's home only, another person's agent never sees it in
its system prompt, agents are pooled per (person, conversation), `/memory` answers per person,
and a missing or bad user is 422. The shared memory of an install from before accounts goes
to one person, once (`POST /memory/claim-shared`)."""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from agent_chat.bridge.app import create_app
from agent_chat.bridge.homes import claim_shared, user_home
from agent_chat.bridge.settings import BridgeSettings
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import read_events, run_body, start_run


def _ids() -> tuple[int, int]:
    # Fresh people per test: the session's HERMES_HOME is shared by every test.
    base = uuid.uuid4().int % 10**8 + 1000
    return base, base + 1


def _system_text(request: dict) -> str:
    return " ".join(str(m["content"]) for m in request["messages"] if m["role"] == "system")


def _remember(fact: str) -> str:
    note = {"action": "add", "target": "user", "content": fact}
    return f"CALL memory {json.dumps(note)}"


async def _turn(client: httpx.AsyncClient, bridge: RunningBridge, fake, text, session, user):
    body = run_body(bridge.model(fake), text, session, user=user)
    stream = await read_events(client, await start_run(client, body))
    assert stream.events[-1].type == "run_completed", stream.events[-1]
    return stream


async def test_a_memory_tool_call_writes_the_persons_home_and_no_one_elses(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    a, b = _ids()
    fact = f"The user's name is Ada {a}, she likes teal."
    conversation = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        stream = await _turn(client, bridge, fake_model, _remember(fact), conversation, a)
        ends = stream.of("tool_end")
        assert ends and not ends[0].data["is_error"], ends
        mine = (await client.get("/memory", params={"user": a})).json()
        theirs = (await client.get("/memory", params={"user": b})).json()
        # B in the same conversation id, then A in a new one: built after the write.
        fake_model.reset()
        await _turn(client, bridge, fake_model, "hello", conversation, b)
        b_prompt = _system_text(fake_model.requests()[-1])
        fake_model.reset()
        await _turn(client, bridge, fake_model, "hello", str(uuid.uuid4()), a)
        a_prompt = _system_text(fake_model.requests()[-1])
    users = hermes_home / "users"
    assert fact in (users / str(a) / "memories" / "USER.md").read_text("utf-8")
    assert not (users / str(b) / "memories" / "USER.md").exists()
    shared = hermes_home / "memories" / "USER.md"
    assert not shared.exists() or fact not in shared.read_text("utf-8")
    assert fact in mine["user"] and theirs["user"] == "" and theirs["memory"] == ""
    assert fact not in b_prompt  # B's agent was built from B's (empty) memory
    assert fact in a_prompt and "USER PROFILE" in a_prompt  # A's next agent reads it
    # One pool entry per (person, conversation): B's agent is not A's.
    pool = bridge.app.state.pool
    agent_a, agent_b = pool.get(a, conversation), pool.get(b, conversation)
    assert agent_a is not None and agent_b is not None and agent_a is not agent_b
    assert agent_a._memory_store is not agent_b._memory_store


async def test_a_persons_home_links_the_shared_settings_and_persona(
    bridge: RunningBridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    (user, _) = _ids()
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        await _turn(client, bridge, fake_model, "hello", str(uuid.uuid4()), user)
    home = hermes_home / "users" / str(user)
    for name in ("config.yaml", "SOUL.md"):
        assert (home / name).is_symlink(), name
        assert (home / name).resolve() == (hermes_home / name).resolve()
    # hermes writes config through the link (utils.atomic_replace): the rule stays shared.
    from agent_chat.bridge import homes

    with homes.entered(hermes_home, user):
        from tools.approval import load_permanent_allowlist, save_permanent_allowlist

        before = load_permanent_allowlist()
        save_permanent_allowlist(before | {"test pattern per user"})
    try:
        assert (home / "config.yaml").is_symlink()
        assert "test pattern per user" in (hermes_home / "config.yaml").read_text("utf-8")
    finally:
        save_permanent_allowlist(before)


async def test_editing_one_persons_memory_leaves_the_others_agents_pooled(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    a, b = _ids()
    conversation = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        await _turn(client, bridge, fake_model, "hello", conversation, a)
        await _turn(client, bridge, fake_model, "hello", conversation, b)
        put = await client.put("/memory", params={"user": a}, json={"user": "A likes tea"})
        got_b = (await client.get("/memory", params={"user": b})).json()
    pool = bridge.app.state.pool
    assert put.status_code == 200 and put.json()["user"] == "A likes tea"
    assert got_b["user"] == ""
    assert pool.get(a, conversation) is None  # rebuilt with the new memory next time
    assert pool.get(b, conversation) is not None


@pytest.mark.parametrize("bad", [None, 0, -3, "7", "../../etc", 1.5, True, [1], 10**80])
async def test_a_missing_or_bad_user_in_a_body_is_422(
    bridge: RunningBridge, fake_model: RunningFakeModel, bad: object
) -> None:
    model = bridge.model(fake_model)
    run = run_body(model, "hello", str(uuid.uuid4()))
    run.pop("user")
    person = {} if bad is None else {"user": bad}
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        answers = [
            await client.post("/runs", json={**run, **person}),
            await client.post("/sessions/s/prepare", json={"model": model, **person}),
            await client.post("/memory/claim-shared", json=person),
        ]
    for response in answers:
        assert response.status_code == 422, response.text
        assert "user" in response.json()["detail"], response.json()
    assert bridge.app.state.registry.counts()["active_runs"] == 0


@pytest.mark.parametrize("bad", [None, "0", "-3", "../../etc", "1.5", "abc", "true", "9" * 300])
async def test_a_missing_or_bad_user_in_the_memory_query_is_422(
    bridge: RunningBridge, hermes_home: Path, bad: str | None
) -> None:
    query = {} if bad is None else {"user": bad}
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        got = await client.get("/memory", params=query)
        put = await client.put("/memory", params=query, json={"user": "x"})
    for response in (got, put):
        assert response.status_code == 422, response.text
        assert "user" in response.json()["detail"], response.json()
    assert not (hermes_home / "etc").exists()


def test_the_shared_memory_goes_to_one_person_once(tmp_path: Path) -> None:
    root = tmp_path / "home"
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "MEMORY.md").write_text("The project is called Kite", "utf-8")
    (root / "memories" / "USER.md").write_text("Name: Ada\n§\nLikes tea", "utf-8")
    # The first administrator already noted something of their own meanwhile.
    mine = user_home(root, 1) / "memories"
    (mine / "USER.md").write_text("Works at night\n§\nLikes tea", "utf-8")
    first = claim_shared(root, 1)
    again = claim_shared(root, 2)
    assert first == {"claimed": True, "by": 1, "moved": ["MEMORY.md", "USER.md"]}
    assert again == {"claimed": False, "by": 1, "moved": []}
    assert (mine / "MEMORY.md").read_text("utf-8") == "The project is called Kite"
    assert (mine / "USER.md").read_text("utf-8") == "Works at night\n§\nLikes tea\n§\nName: Ada"
    assert not (root / "memories" / "USER.md").exists()  # hermes reads it no more
    assert (root / "memories" / "USER.md.claimed-by-1").exists()  # kept beside
    assert not (root / "users" / "2" / "memories" / "USER.md").exists()


def test_a_new_install_has_nothing_to_hand_over(tmp_path: Path) -> None:
    root = tmp_path / "home"
    assert claim_shared(root, 1) == {"claimed": False, "by": None, "moved": []}
    assert claim_shared(root, 1)["claimed"] is False
    assert not (root / "users" / "1" / "memories" / "USER.md").exists()


async def test_claiming_over_http_drops_the_persons_agents_and_shows_the_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, hermes_home: Path
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))  # create_app points it elsewhere
    root = tmp_path / "old-install"
    (root / "memories").mkdir(parents=True)
    (root / "memories" / "USER.md").write_text("Name: Grace", "utf-8")
    app = create_app(replace(BridgeSettings(hermes_home=root), warm_up=False))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        claimed = await client.post("/memory/claim-shared", json={"user": 5})
        shown = (await client.get("/memory", params={"user": 5})).json()
        other = (await client.get("/memory", params={"user": 6})).json()
        twice = await client.post("/memory/claim-shared", json={"user": 6})
    assert claimed.status_code == 200 and claimed.json()["claimed"] is True
    assert shown["user"] == "Name: Grace" and other["user"] == ""
    assert twice.json() == {"claimed": False, "by": 5, "moved": []}


async def test_session_search_keeps_its_state_db_in_the_persons_home(
    start_bridge, fake_model: RunningFakeModel, hermes_home: Path
) -> None:
    # Only with an operator's AGENT_CHAT_TOOLSETS: hermes would use the shared state.db.
    import sqlite3

    bridge = start_bridge(extra_toolsets=("session_search",))
    (user, _) = _ids()
    conversation = str(uuid.uuid4())
    search = 'CALL session_search {"query": "hello"}'  # hermes opens its session store
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        stream = await _turn(client, bridge, fake_model, search, conversation, user)
    assert [e.data["tool"] for e in stream.of("tool_start")] == ["session_search"]
    agent = bridge.app.state.pool.get(user, conversation)
    assert "session_search" in agent.valid_tool_names
    own = hermes_home / "users" / str(user) / "state.db"
    assert agent._session_db.db_path == own and own.exists()

    def sessions_in(path: Path) -> list[str]:
        if not path.exists():
            return []
        with contextlib.closing(sqlite3.connect(path)) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
            if "sessions" not in tables:  # made at import, never written
                return []
            return [row[0] for row in db.execute("SELECT id FROM sessions")]

    assert conversation in sessions_in(own)
    assert conversation not in sessions_in(hermes_home / "state.db")


FIRST_IMPORT = """
import json, sys
from pathlib import Path
from agent_chat.bridge.settings import BridgeSettings, prepare_hermes_home
from agent_chat.bridge import homes
root = Path(sys.argv[1])
prepare_hermes_home(BridgeSettings(hermes_home=root))
assert "run_agent" not in sys.modules and "hermes_state" not in sys.modules
with homes.entered(root, 5):  # hermes imported for the first time inside a person's home
    import hermes_state, run_agent
    from tools import skill_manager_tool, checkpoint_manager
print(json.dumps([str(p) for p in (
    hermes_state.DEFAULT_DB_PATH.parent, run_agent._hermes_home,
    skill_manager_tool.HERMES_HOME, checkpoint_manager.CHECKPOINT_BASE.parent,
)]))
"""


def test_hermes_fixes_its_import_time_paths_in_the_shared_home(tmp_path: Path) -> None:
    # A fresh process, as the bridge's first agent may well be a person's (a prepare racing
    # the warm-up): the paths hermes fixes at import are still the shared home's.
    import subprocess
    import sys

    root = tmp_path / "home"
    done = subprocess.run(
        [sys.executable, "-c", FIRST_IMPORT, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HERMES_HOME": str(root)},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    paths = json.loads(done.stdout.strip().splitlines()[-1])
    assert paths == [str(root)] * 4
