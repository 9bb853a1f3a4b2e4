"""AGENT_CHAT_BRIDGE=embedded without a browser: the in-process transport streams the real
bridge's SSE (nothing buffered, Last-Event-ID, a closed stream frees the app), the token
check stays, the services start and stop the bridge with the app, and a web restart ends a
running answer FAILED with the restart sentence."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from agent_chat import config
from agent_chat.bridge.settings import BridgeSettings
from agent_chat.config import load_settings
from agent_chat.runs.asgi_stream import StreamingASGITransport
from agent_chat.runs.bridge_watch import EMBEDDED_HINT
from agent_chat.runs.client import BridgeClient, BridgeError
from agent_chat.runs.consumer import BRIDGE_RESTARTED
from agent_chat.runs.embedded import EmbeddedBridge
from agent_chat.runs.storage import Storage
from agent_chat.services.runtime import start_services, stop_services
from tests.fakes.model_server import RunningFakeModel
from tests.support import runs
from tests.support.processes import ROOT
from tests.support.users import default_owner

MODEL_OF = {"model": "fake-model"}


@pytest.fixture
async def embedded(hermes_home: Path):
    bridge = EmbeddedBridge(BridgeSettings(hermes_home=hermes_home, warm_up=False))
    await bridge.start()
    client = bridge.client()
    yield bridge, client
    await client.aclose()
    await bridge.stop()


def model(fake: RunningFakeModel) -> dict[str, str]:
    return {"base_url": fake.base_url, **MODEL_OF}


async def start(client: BridgeClient, fake: RunningFakeModel, text: str) -> str:
    session = f"embedded-{uuid.uuid4().hex[:8]}"
    return await client.start_run(
        user_id=1, session_id=session, message=text, history=[], model=model(fake)
    )


async def test_events_stream_while_the_run_waits_and_replay_after_last_event_id(
    embedded: tuple[EmbeddedBridge, BridgeClient], fake_model: RunningFakeModel
) -> None:
    _, client = embedded
    run_id = await start(client, fake_model, "ask me a question")
    seen = []

    async def until_question() -> None:
        async for event in client.events(run_id):
            seen.append(event)
            if event.type == "clarify_request":
                return

    # httpx's own ASGITransport would hold the body until the run ends: never, here.
    await asyncio.wait_for(until_question(), 30)
    assert (await client.run_state(run_id))["status"] == "waiting_input"
    await client.answer_clarify(run_id, seen[-1].data["clarify_id"], "red")
    rest = [event async for event in client.events(run_id, last_event_id=seen[-1].seq)]
    assert [e.seq for e in seen + rest] == list(range(1, len(seen) + len(rest) + 1))
    assert rest[-1].type == "run_completed"
    assert rest[-1].data["final_text"] == "You chose red."


async def test_a_closed_stream_ends_the_apps_reader(
    embedded: tuple[EmbeddedBridge, BridgeClient], fake_model: RunningFakeModel
) -> None:
    bridge, client = embedded
    run_id = await start(client, fake_model, "slow long 400")
    events = client.events(run_id)
    async for event in events:
        if event.seq >= 3:
            break
    await events.aclose()
    run = bridge.app.state.registry.get(run_id)
    await runs.wait_for(lambda: run.buffer.readers == 0, timeout=5)
    assert not run.finished  # the run goes on without a reader
    await client.stop(run_id)
    last = [event async for event in client.events(run_id)][-1]
    assert last.type == "run_stopped"


async def test_the_token_is_random_per_process_and_checked(hermes_home: Path) -> None:
    settings = BridgeSettings(hermes_home=hermes_home, warm_up=False, token="operator's")
    one, two = EmbeddedBridge(settings), EmbeddedBridge(settings)
    assert one.settings.token != two.settings.token != "operator's"
    assert one.settings.token not in os.environ.values()
    good = one.client()
    wrong = BridgeClient(
        "http://127.0.0.1", token=two.settings.token, transport=StreamingASGITransport(one.app)
    )
    none = BridgeClient("http://127.0.0.1", transport=StreamingASGITransport(one.app))
    try:
        assert (await good.health())["status"] == "ok"
        assert await good.always_allowed() == []
        assert set(await good.get_memory(user_id=1)) >= {"memory", "user"}
        for client in (wrong, none):
            with pytest.raises(BridgeError) as caught:
                await client.get_memory(user_id=1)
            assert caught.value.status_code == 401
    finally:
        for client in (good, wrong, none):
            await client.aclose()


def test_the_apps_variables_survive_hermes_env_file(tmp_path: Path) -> None:
    """hermes loads $HERMES_HOME/.env with override=True when imported: in a fresh process
    (this one has hermes imported already) the app's variables are put back, and hermes'
    INFO lines stay off the console (its own warnings and the app's do not)."""
    home = tmp_path / "hermes"
    home.mkdir()
    (home / ".env").write_text(
        "AGENT_CHAT_DB_URL=sqlite:////tmp/not-the-apps.db\nFROM_HERMES_ENV=yes\n",
        encoding="utf-8",
    )
    script = textwrap.dedent(
        """
        import logging, os
        logging.basicConfig(level=logging.INFO)
        from agent_chat.bridge.settings import BridgeSettings, prepare_hermes_home
        from agent_chat.runs.embedded import import_hermes
        prepare_hermes_home(BridgeSettings(hermes_home=__import__("pathlib").Path(os.environ["HERMES_HOME"])))
        print("restored", import_hermes())
        print("db", os.environ["AGENT_CHAT_DB_URL"])
        print("hermes", os.environ.get("FROM_HERMES_ENV"))
        """
    )
    env = {**os.environ, "HERMES_HOME": str(home), "AGENT_CHAT_DB_URL": "sqlite:///apps.db"}
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "restored ['AGENT_CHAT_DB_URL']" in lines
    assert "db sqlite:///apps.db" in lines
    assert "hermes yes" in lines  # hermes' own variables are hermes' business
    assert "web app keeps its own values" in done.stderr
    assert "INFO:hermes_cli" not in done.stderr and "INFO:run_agent" not in done.stderr


def test_the_mode_is_read_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_CHAT_BRIDGE", raising=False)
    monkeypatch.delenv("AGENT_CHAT_REDIS_URL", raising=False)
    monkeypatch.delenv("REFLEX_REDIS_URL", raising=False)
    assert load_settings().bridge_mode == "external" and not load_settings().embedded_bridge
    monkeypatch.setenv("AGENT_CHAT_BRIDGE", " Embedded ")
    assert load_settings().embedded_bridge
    monkeypatch.setenv("AGENT_CHAT_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(ValueError, match="cannot be combined with AGENT_CHAT_REDIS_URL"):
        load_settings()
    monkeypatch.delenv("AGENT_CHAT_REDIS_URL")
    monkeypatch.setenv("REFLEX_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(ValueError, match="GRANIAN_WORKERS=1"):
        load_settings()
    monkeypatch.setenv("GRANIAN_WORKERS", "1")
    assert load_settings().embedded_bridge
    monkeypatch.setenv("AGENT_CHAT_BRIDGE", "inside")
    with pytest.raises(ValueError, match="'external' or 'embedded'"):
        load_settings()
    assert config.BRIDGE_EXTERNAL == "external"


async def test_services_run_the_bridge_and_a_restart_fails_the_running_answer(
    db_url: str,
    storage: Storage,
    hermes_home: Path,
    fake_model: RunningFakeModel,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    runs.fake_model_row(storage, fake_model)
    settings = dataclasses.replace(
        load_settings(), db_url=db_url, bridge_mode="embedded", bridge_url="http://nowhere:1"
    )
    svc = await start_services(settings)
    try:
        assert svc.embedded is not None and svc.bridge_watch.hint == EMBEDDED_HINT
        assert await svc.bridge_watch.check()
        chat = runs.new_chat(storage)
        owner = storage.call_sync(default_owner)
        started = await svc.runs.send(
            user_id=owner, session_uuid=chat, text="ask me before the restart"
        )
        registry = svc.embedded.app.state.registry
        await runs.wait_for(lambda: registry.counts()["waiting_runs"] == 1, timeout=30)
    finally:
        await stop_services()
    assert registry.counts() == {"active_runs": 0, "waiting_runs": 0}  # stopped with the app
    assert runs.message(storage, started.assistant_message_id).status == "RUNNING"

    svc = await start_services(settings)  # the new process' bridge knows no run
    try:
        failed = await runs.finished(storage, started.assistant_message_id)
        assert failed.status == "FAILED" and failed.error == BRIDGE_RESTARTED
        again = await svc.runs.send(user_id=owner, session_uuid=chat, text="Still there?")
        answer = await runs.finished(storage, again.assistant_message_id)
        assert answer.status == "SUCCESS" and answer.content == "Echo: Still there?"
    finally:
        await stop_services()


def test_several_workers_without_the_run_bus_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """REFLEX_REDIS_URL alone would give several workers that cannot see each other's runs."""
    for name in ("AGENT_CHAT_BRIDGE", "AGENT_CHAT_REDIS_URL", "GRANIAN_WORKERS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REFLEX_REDIS_URL", "redis://127.0.0.1:1/0")
    with pytest.raises(ValueError, match="set it too"):
        load_settings()
    monkeypatch.setenv("GRANIAN_WORKERS", "1")  # one worker: nothing to share
    assert load_settings().redis_url is None
    monkeypatch.delenv("GRANIAN_WORKERS")
    monkeypatch.setenv("AGENT_CHAT_REDIS_URL", "redis://127.0.0.1:1/0")
    assert load_settings().redis_url == "redis://127.0.0.1:1/0"
