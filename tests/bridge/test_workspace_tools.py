"""The Workspace profile with the real hermes-agent: files and commands in the conversation's
own folder, writes outside it refused, dangerous commands approved or denied by a person,
and the Chat profile's skills tools reading the app's skills folder."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge, StartBridge
from tests.support.sse import Received, Stream, read_events, run_answering, run_body, start_run


def calls(*steps: tuple[str, dict[str, Any]], text: str = "please work") -> str:
    return "\n".join([text, *(f"CALL {name} {json.dumps(args)}" for name, args in steps)])


@pytest.fixture
def roots(tmp_path: Path) -> tuple[Path, Path]:
    skills = tmp_path / "skills"
    (skills / "haiku").mkdir(parents=True)
    (skills / "haiku" / "SKILL.md").write_text(
        "---\nname: haiku\ndescription: Answer in a haiku.\n---\nWrite a haiku.\n",
        encoding="utf-8",
    )
    return tmp_path / "workspaces", skills


@pytest.fixture
def work_bridge(start_bridge: StartBridge, roots: tuple[Path, Path]) -> RunningBridge:
    workspaces, skills = roots
    return start_bridge(
        keepalive_interval_s=0.5,
        tool_profiles=("chat", "workspace"),
        workspaces_root=workspaces,
        skills_dir=skills,
    )


async def run(
    bridge: RunningBridge,
    fake: RunningFakeModel,
    message: str,
    session: str,
    *,
    profile: str = "workspace",
    answers: list[str] | None = None,
) -> Stream:
    """One run to its end; approvals are answered in order from `answers`."""
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        body = run_body(bridge.model(fake), message, session, tool_profile=profile)
        return await run_answering(client, body, answers)


def results(stream: Stream) -> list[str]:
    return [e.data["result"] for e in stream.of("tool_end")]


async def test_files_and_commands_happen_in_the_conversations_own_folder(
    work_bridge: RunningBridge, fake_model: RunningFakeModel, roots: tuple[Path, Path]
) -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    script = calls(
        ("write_file", {"path": "hello.py", "content": "print('hello from the workspace')\n"}),
        ("terminal", {"command": "python3 hello.py && pwd"}),
    )
    stream = await run(work_bridge, fake_model, script, first)
    folder = roots[0] / first
    assert (folder / "hello.py").read_text() == "print('hello from the workspace')\n"
    output = json.loads(results(stream)[1])
    assert "hello from the workspace" in output["output"]
    assert str(folder.resolve()) in output["output"]
    assert output["exit_code"] == 0
    # Another conversation has its own folder: the file is not there.
    other = await run(work_bridge, fake_model, calls(("terminal", {"command": "ls; pwd"})), second)
    listing = json.loads(results(other)[0])["output"]
    assert "hello.py" not in listing and str((roots[0] / second).resolve()) in listing


@pytest.mark.parametrize("target", ["../escape.txt", "ABSOLUTE", "link/escape.txt"])
async def test_a_write_outside_the_workspace_is_refused(
    work_bridge: RunningBridge,
    fake_model: RunningFakeModel,
    roots: tuple[Path, Path],
    tmp_path: Path,
    target: str,
) -> None:
    session = str(uuid.uuid4())
    folder = roots[0] / session
    folder.mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (folder / "link").symlink_to(outside)  # a symlink that leads out
    path = str(roots[0] / "escape.txt") if target == "ABSOLUTE" else target
    script = calls(("write_file", {"path": path, "content": "x"}))
    stream = await run(work_bridge, fake_model, script, session)
    assert "outside this conversation's workspace" in results(stream)[0]
    assert not (roots[0] / "escape.txt").exists() and not (outside / "escape.txt").exists()
    # The refusal reached the agent as the tool's result.
    assert "outside this conversation" in fake_model.requests()[-1]["messages"][-1]["content"]


async def test_dangerous_commands_wait_for_a_person(
    work_bridge: RunningBridge, fake_model: RunningFakeModel, roots: tuple[Path, Path]
) -> None:
    session, elsewhere = str(uuid.uuid4()), str(uuid.uuid4())
    for name in (session, elsewhere):
        victim = roots[0] / name / "victim"
        victim.mkdir(parents=True)
        (victim / "keep.txt").write_text("data")
    rm = ("terminal", {"command": "rm -rf victim"})

    denied = await run(work_bridge, fake_model, calls(rm), session, answers=["deny"])
    request = denied.first("approval_request").data
    assert request["command"] == "rm -rf victim"
    assert request["description"] and request["choices"] == ["once", "session", "always", "deny"]
    assert denied.first("approval_resolved").data["answer"] == "deny"
    assert (roots[0] / session / "victim" / "keep.txt").exists()
    assert "BLOCKED" in results(denied)[0]  # the agent's next step sees the denial

    once = await run(work_bridge, fake_model, calls(rm, rm), session, answers=["once", "once"])
    assert len(once.of("approval_request")) == 2  # allowed once: the next one asks again
    assert not (roots[0] / session / "victim").exists()

    (roots[0] / session / "victim").mkdir()
    await run(work_bridge, fake_model, calls(rm, rm), session, answers=["session"])
    # Allowed for this conversation: no second question here, but one in another.
    await run(work_bridge, fake_model, calls(rm), elsewhere, answers=["deny"])


async def test_always_allow_is_listed_and_revocable(
    work_bridge: RunningBridge, fake_model: RunningFakeModel, roots: tuple[Path, Path]
) -> None:
    first, second = str(uuid.uuid4()), str(uuid.uuid4())
    chmod = ("terminal", {"command": "chmod 777 notes.txt"})
    for name in (first, second):
        (roots[0] / name).mkdir(parents=True)
        (roots[0] / name / "notes.txt").write_text("n")
    stream = await run(work_bridge, fake_model, calls(chmod), first, answers=["always"])
    pattern = stream.first("approval_request").data["description"]
    async with httpx.AsyncClient(base_url=work_bridge.base_url, timeout=30) as client:
        listed = (await client.get("/approvals/always")).json()["patterns"]
        assert listed, "the always-allowed pattern is listed"
        await run(work_bridge, fake_model, calls(chmod), second)  # no question anywhere
        for key in listed:
            assert (await client.delete(f"/approvals/always/{key}")).status_code == 200
        assert (await client.get("/approvals/always")).json()["patterns"] == []
        assert (await client.delete("/approvals/always/never-allowed")).status_code == 404
    third = str(uuid.uuid4())
    (roots[0] / third).mkdir(parents=True)
    (roots[0] / third / "notes.txt").write_text("n")
    again = await run(work_bridge, fake_model, calls(chmod), third, answers=["deny"])
    assert again.first("approval_request").data["description"] == pattern


async def test_a_stop_during_an_approval_denies_it(
    work_bridge: RunningBridge, fake_model: RunningFakeModel, roots: tuple[Path, Path]
) -> None:
    session = str(uuid.uuid4())
    (roots[0] / session / "victim").mkdir(parents=True)
    async with httpx.AsyncClient(base_url=work_bridge.base_url, timeout=60) as client:
        message = calls(("terminal", {"command": "rm -rf victim"}))
        body = run_body(work_bridge.model(fake_model), message, session, tool_profile="workspace")
        run_id = await start_run(client, body)

        async def stop(event: Received) -> None:
            if event.type == "approval_request":
                state = (await client.get(f"/runs/{run_id}")).json()
                assert state["status"] == "waiting_input"
                assert state["pending_clarify"]["kind"] == "approval"
                wrong = {"clarify_id": event.data["clarify_id"], "answer": "yes please"}
                assert (await client.post(f"/runs/{run_id}/clarify", json=wrong)).status_code == 422
                await client.post(f"/runs/{run_id}/stop")

        stream = await read_events(client, run_id, on_event=stop)
    resolved = stream.first("approval_resolved").data
    assert resolved["answer"] == "deny" and resolved["cancelled"] is True
    assert stream.events[-1].type == "run_stopped"
    assert (roots[0] / session / "victim").exists()


async def test_profiles_the_bridge_has_not_enabled_are_refused(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        body = run_body(bridge.model(fake_model), "hi", str(uuid.uuid4()), tool_profile="workspace")
        response = await client.post("/runs", json=body)
    assert response.status_code == 422
    assert "not enabled" in response.json()["detail"]


async def test_the_chat_profile_lists_the_apps_skills_and_cannot_run_commands(
    work_bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    session = str(uuid.uuid4())
    script = calls(("skills_list", {}), ("terminal", {"command": "echo hi"}))
    stream = await run(work_bridge, fake_model, script, session, profile="chat")
    listed = results(stream)
    assert "haiku" in listed[0]
    tools = {t["function"]["name"] for t in fake_model.requests()[-1].get("tools") or []}
    assert "skills_list" in tools and "skill_view" in tools
    assert not tools & {"terminal", "write_file", "execute_code"}


async def test_a_command_never_sees_the_apps_settings(
    work_bridge: RunningBridge, fake_model: RunningFakeModel, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`env` in a Workspace run: the app's secrets (here in this process's environment, as
    in the bridge's or the embedded app's) are gone, the ordinary variables are there."""
    secrets = {
        "AGENT_CHAT_ADMIN_PASSWORD": "admin-pw-31337",
        "AGENT_CHAT_BRIDGE_TOKEN": "bridge-token-31337",
        "AGENT_CHAT_DB_URL": "postgresql://u:dbpw31337@db/agent_chat",
        "AGENT_CHAT_OIDC_CLIENT_SECRET": "oidc-31337",
        "REFLEX_REDIS_URL": "redis://:redispw31337@cache:6379/0",
        "DATABASE_URL": "postgresql://u:other31337@db/x",
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("AGENT_CHAT_TEST_PLAIN_MARKER", "x")  # prefixed: hidden too
    monkeypatch.setenv("ORDINARY_VARIABLE_31337", "visible")
    script = calls(("terminal", {"command": "env | sort"}))
    stream = await run(work_bridge, fake_model, script, str(uuid.uuid4()))
    output = json.loads(results(stream)[0])["output"]
    assert output.count("\n") > 3, output  # the command ran and printed the environment
    assert "ORDINARY_VARIABLE_31337=visible" in output
    assert "PATH=" in output
    for name in [*secrets, "AGENT_CHAT_TEST_PLAIN_MARKER"]:
        assert f"{name}=" not in output, f"{name} reached the command"
    assert "31337" not in output.replace("ORDINARY_VARIABLE_31337", "")
