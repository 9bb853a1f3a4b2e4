"""What a Workspace command can reach, tried as a member who approves their
own commands would: with the real bridge process and hermes' real terminal, file and code
tools, commands that read the bridge's environment (`/proc/<pid>/environ`, base64 so no
masking helps), an app database file, another person's hermes home and another
conversation's folder get nothing, nor does a connection to a service on the host's
loopback, while the conversation's own folder works as before.
The control runs the same commands with AGENT_CHAT_SANDBOX=off and gets the secrets, so
the test fails if the sandbox went away."""

from __future__ import annotations

import json
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_chat.bridge.sandbox import unavailable
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import hermes_home, start_bridge_process
from tests.support.secrets import reveals
from tests.support.sse import Received, read_events, run_body, start_run

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="bubblewrap is installed by scripts/setup.sh"
)

TOKEN = "bridge-token-" + uuid.uuid4().hex
SECRET = "app-secret-" + uuid.uuid4().hex


def _calls(*steps: tuple[str, dict[str, Any]]) -> str:
    return "\n".join(["please look", *(f"CALL {n} {json.dumps(a)}" for n, a in steps)])


def _places(tmp: Path) -> dict[str, Path]:
    """An app data folder with a database file, another person's hermes home, another
    conversation's folder: each holding SECRET."""
    home = hermes_home(tmp / "data" / "hermes")
    places = {
        "database": tmp / "data" / "agent_chat.db",
        "memory": home / "users" / "2" / "memories" / "MEMORY.md",
        "other folder": tmp / "data" / "workspaces" / str(uuid.uuid4()) / "notes.txt",
    }
    for path in places.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"kept here: {SECRET}", encoding="utf-8")
    return places


async def _run(url: str, fake: RunningFakeModel, message: str, session: str) -> list[str]:
    """One Workspace run to its end, every approval allowed once (the person is the one
    trying); the tool results."""
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, timeout=120, headers=headers) as client:
        model = {"base_url": fake.base_url, "model": "fake-model"}
        body = run_body(model, message, session, tool_profile="workspace")
        run_id = await start_run(client, body)

        async def allow(event: Received) -> None:
            if event.type == "approval_request":
                reply = {"clarify_id": event.data["clarify_id"], "answer": "once"}
                await client.post(f"/runs/{run_id}/clarify", json=reply)

        stream = await read_events(client, run_id, on_event=allow)
    assert stream.events[-1].type == "run_completed", stream.events[-1]
    return [e.data["result"] for e in stream.of("tool_end")]


def _revealed(results: list[str]) -> set[str]:
    """Which secrets the results show, plain or base64 (any alignment)."""
    return {secret for secret in (TOKEN, SECRET) if any(reveals(r, secret) for r in results)}


async def _attack(tmp: Path, fake: RunningFakeModel, sandbox: str) -> tuple[list[str], Path]:
    places = _places(tmp)
    workspaces = places["other folder"].parent.parent
    env = {
        **os.environ,
        "AGENT_CHAT_BRIDGE_TOKEN": TOKEN,
        "AGENT_CHAT_TOOL_PROFILES": "chat,workspace",
        "AGENT_CHAT_WORKSPACES_DIR": str(workspaces),
        "AGENT_CHAT_SANDBOX": sandbox,
    }
    home = places["memory"].parents[3]
    process, url = start_bridge_process(home, tmp / "bridge.log", env=env)
    try:
        pid, port = process.pid, url.rsplit(":", 1)[1]
        reads = " ".join(str(p) for p in places.values())
        message = _calls(
            ("terminal", {"command": f"tr '\\0' '\\n' < /proc/{pid}/environ | base64 -w0"}),
            (
                "terminal",
                {"command": "for p in /proc/[0-9]*; do cat $p/environ; done | base64 -w0"},
            ),
            ("terminal", {"command": f"cat {reads}; ls /proc"}),
            ("read_file", {"path": str(places["database"])}),
            ("read_file", {"path": f"/proc/{pid}/environ"}),
            (
                "execute_code",
                {
                    "code": "import base64\n"
                    f"for p in {[str(p) for p in places.values()]!r} + ['/proc/{pid}/environ']:\n"
                    "    try:\n"
                    "        print(base64.b64encode(open(p, 'rb').read()).decode())\n"
                    "    except OSError as e:\n"
                    "        print('refused', p, e)\n"
                },
            ),
            (
                "terminal",  # a service on the host's loopback: the bridge itself
                {"command": f"(echo > /dev/tcp/127.0.0.1/{port}) && echo loopback-answered"},
            ),
            ("terminal", {"command": "echo made here > mine.txt && cat mine.txt && pwd"}),
        )
        session = str(uuid.uuid4())
        results = await _run(url, fake, message, session)
    finally:
        process.kill()
        process.wait(10)
    return results, workspaces / session


async def test_a_workspace_command_reaches_no_secret_of_the_app(
    tmp_path: Path, fake_model: RunningFakeModel
) -> None:
    assert unavailable() is None, unavailable()
    results, folder = await _attack(tmp_path, fake_model, "auto")
    assert len(results) == 8, results
    assert _revealed(results) == set(), results
    assert "loopback-answered" not in results[-2], results[-2]  # no network inside
    # The conversation's own folder works as before, seen at its own path.
    assert "made here" in results[-1] and str(folder) in results[-1]
    assert (folder / "mine.txt").read_text(encoding="utf-8") == "made here\n"
    # The sandbox's own processes only: the bridge's pid is not there.
    assert "No such file" in results[0] or "cannot open" in results[0], results[0]


async def test_without_the_sandbox_the_same_commands_get_the_secrets(
    tmp_path: Path, fake_model: RunningFakeModel
) -> None:
    results, _ = await _attack(tmp_path, fake_model, "off")
    assert _revealed(results) == {TOKEN, SECRET}, results
    assert "loopback-answered" in results[-2], results[-2]
