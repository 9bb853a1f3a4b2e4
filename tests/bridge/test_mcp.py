"""MCP servers through hermes' own MCP client, with real servers: the reference
`mcp-server-time` from PyPI and a small server of the tests' own (tests/support/mcp_server.py)
over stdio and streamable HTTP. The scripted model calls their tools; the answers hold the
servers' real results; a crash, a hang, a wrong command and a refused credential each come
back as a reason."""

from __future__ import annotations

import base64
import json
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_chat.bridge import mcp_images
from agent_chat.common.tool_images import image_path, names_in
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge, StartBridge
from tests.support.mcp_server import FAIL_START_LINE, PICTURE
from tests.support.sse import Stream, run_answering, run_body

PY = sys.executable
TIME = {"name": "time", "transport": "stdio", "command": PY, "args": ["-m", "mcp_server_time"]}


def ours(name: str = "tst", **extra: Any) -> dict[str, Any]:
    return {
        "ask": False,
        "name": name,
        "transport": "stdio",
        "command": PY,
        "args": ["-m", "tests.support.mcp_server"],
        **extra,
    }


def calls(*steps: tuple[str, dict[str, Any]]) -> str:
    return "\n".join(["please use the tool", *(f"CALL {n} {json.dumps(a)}" for n, a in steps)])


async def run(
    bridge: RunningBridge,
    fake: RunningFakeModel,
    message: str,
    servers: list[dict[str, Any]],
    *,
    answers: list[str] | None = None,
    session: str | None = None,
) -> Stream:
    """One run to its end; approvals are answered in order from `answers`."""
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=90) as client:
        session = session or str(uuid.uuid4())
        body = run_body(bridge.model(fake), message, session, mcp_servers=servers)
        return await run_answering(client, body, answers)


def results(stream: Stream) -> list[str]:
    return [e.data["result"] for e in stream.of("tool_end")]


async def test_the_reference_time_server_answers_through_the_agent(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    script = calls(("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}))
    stream = await run(bridge, fake_model, script, [TIME])
    [result] = results(stream)
    assert "Europe/Berlin" in result and "datetime" in result, result
    assert stream.first("tool_start").data["tool"] == "mcp__time__get_current_time"
    final = stream.events[-1].data["final_text"]
    assert "Europe/Berlin" in final  # the model was given the server's real result
    # Another run without the server has no such tool: the model is not offered it.
    await run(bridge, fake_model, "hello there", [])
    offered = [t["function"]["name"] for t in fake_model.requests()[-1].get("tools") or []]
    assert not any(name.startswith("mcp__time__") for name in offered)


async def test_a_servers_environment_reaches_it_and_a_change_reconnects(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    whisper = calls(("mcp__tst__whisper", {}))
    stream = await run(bridge, fake_model, whisper, [ours(env={"MCP_TEST_SECRET": "plum"})])
    assert results(stream) == ["secret=plum"] or "secret=plum" in results(stream)[0]
    # A changed setting reaches the next run without restarting anything.
    stream = await run(bridge, fake_model, whisper, [ours(env={"MCP_TEST_SECRET": "quince"})])
    assert "secret=quince" in results(stream)[0]


async def test_a_picture_is_kept_for_its_conversation_and_the_event_names_it(
    start_bridge: StartBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    bridge = start_bridge(workspaces_root=tmp_path)
    conversation = str(uuid.uuid4())
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=90) as client:
        script = calls(("mcp__tst__picture", {}))
        body = run_body(
            bridge.model(fake_model), script, str(uuid.uuid4()), mcp_servers=[ours()],
            workspace=conversation,
        )  # fmt: skip
        stream = await run_answering(client, body)
    [result] = results(stream)
    assert "A red rectangle." in result
    [name] = names_in(result)  # the reference: hermes' cached file's name
    assert image_path(tmp_path, conversation, name).read_bytes() == PICTURE
    # The picture itself never travels in an event.
    assert base64.b64encode(PICTURE).decode() not in json.dumps([e.data for e in stream.events])


async def test_a_structured_copy_of_a_picture_carries_no_image_data(
    start_bridge: StartBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    # FastMCP's default for a tool returning content blocks: a structured copy of them beside
    # them, which hermes puts in the result with the picture's base64.
    bridge = start_bridge(workspaces_root=tmp_path)
    conversation = str(uuid.uuid4())
    server = ours(args=["-m", "tests.support.mcp_server", "--structured"])
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=90) as client:
        script = calls(("mcp__tst__picture", {}))
        body = run_body(
            bridge.model(fake_model), script, str(uuid.uuid4()), mcp_servers=[server],
            workspace=conversation,
        )  # fmt: skip
        stream = await run_answering(client, body)
    [result] = results(stream)
    [name] = names_in(result)  # the reference is kept, and so is the picture
    assert image_path(tmp_path, conversation, name).read_bytes() == PICTURE
    structured = json.loads(result)["structuredContent"]["result"]
    assert structured[0]["text"] == "A red rectangle."
    assert structured[1]["data"] == f"[image: {name} shown behind Show image]"
    data = base64.b64encode(PICTURE).decode()
    assert data not in json.dumps([e.data for e in stream.events])
    assert not any(data in json.dumps(r) for r in fake_model.requests())  # nor to the model


def test_a_servers_text_naming_a_file_copies_nothing(tmp_path: Path) -> None:
    # Only a file hermes' cache wrote for an image block is kept: a path in a server's text
    # (another person's cached picture) is not.
    elsewhere = tmp_path / "cache" / "images" / "img_0123456789ab.png"
    elsewhere.parent.mkdir(parents=True)
    elsewhere.write_bytes(PICTURE)
    conversation = str(uuid.uuid4())
    with mcp_images.for_run("task-1", tmp_path, conversation):
        assert mcp_images.keep(f'{{"result": "MEDIA:{elsewhere}"}}', "task-1") == []
    assert not (tmp_path / ".tool-images").exists()


def test_a_childs_task_id_keeps_pictures_while_it_works(tmp_path: Path) -> None:
    conversation = str(uuid.uuid4())
    with mcp_images.for_run("parent", tmp_path, conversation):
        mcp_images.adopt("parent", "child")
        mcp_images.adopt("child", "grandchild")
        assert mcp_images._runs["grandchild"] == (tmp_path, conversation)
        mcp_images.release("child")  # its end: its own children too
        assert "child" not in mcp_images._runs and "grandchild" not in mcp_images._runs
        mcp_images.adopt("parent", "late")  # one hermes gave up on (never released)
    assert "late" not in mcp_images._runs and "parent" not in mcp_images._runs
    mcp_images.adopt("parent", "orphan")  # a run with no conversation folder: nothing
    assert "orphan" not in mcp_images._runs


async def test_a_crash_mid_call_is_a_tool_error_and_the_run_goes_on(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    script = calls(("mcp__crashy__crash", {}), ("mcp__crashy__add", {"a": 2, "b": 3}))
    stream = await run(bridge, fake_model, script, [ours("crashy", timeout=20)])
    first, second = results(stream)
    assert "error" in first.lower(), first
    # The next call reached a server again (hermes reconnects it) or says why not; either
    # way the run completed with the agent reading each result.
    assert stream.events[-1].data["final_text"]
    assert second


async def test_a_hanging_call_ends_with_a_timeout(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    started = time.monotonic()
    stream = await run(
        bridge, fake_model, calls(("mcp__slow__hang", {})), [ours("slow", timeout=2)]
    )
    [result] = results(stream)
    assert "timed out" in result.lower() or "timeout" in result.lower(), result
    assert time.monotonic() - started < 40


async def test_a_server_that_cannot_start_is_said_and_the_run_goes_on(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    broken = ours("broken", args=["-m", "tests.support.mcp_server", "--fail-start"])
    stream = await run(bridge, fake_model, "hello there", [broken])
    notices = [e.data["message"] for e in stream.of("status") if e.data.get("category") == "notice"]
    assert any("'broken' is not available" in n for n in notices), notices
    # The next run does not wait for hermes' retries again: it says so at once.
    started = time.monotonic()
    again = await run(bridge, fake_model, "hello again", [broken])
    assert time.monotonic() - started < 4
    notices = [e.data["message"] for e in again.of("status") if e.data.get("category") == "notice"]
    assert any("tried" in n and "'broken' is not available" in n for n in notices), notices


# Test (Settings → Tools): connect, list the tools, disconnect; or say why not.


async def test_mcp(bridge: RunningBridge, spec: dict[str, Any]) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=90) as client:
        response = await client.post("/mcp/test", json=spec)
    assert response.status_code == 200, response.text
    return response.json()


test_mcp.__test__ = False  # a helper, not a test


async def test_test_lists_a_servers_tools(bridge: RunningBridge) -> None:
    answer = await test_mcp(bridge, ours())
    assert answer["ok"] is True, answer
    names = {tool["name"] for tool in answer["tools"]}
    assert names == {"add", "whisper", "crash", "hang", "picture"}
    assert any(t["description"] == "Add two whole numbers." for t in answer["tools"])
    time_answer = await test_mcp(bridge, TIME)
    assert {"get_current_time", "convert_time"} <= {t["name"] for t in time_answer["tools"]}
    # A test registers nothing: the bridge's status does not list it.
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        status = (await client.get("/mcp/status")).json()["servers"]
    assert all(not row["name"].startswith("agent-chat-test-") for row in status)


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ({**ours(), "command": "/no/such/mcp-server"}, "command not found"),
        (ours(args=["-m", "tests.support.mcp_server", "--fail-start"]), FAIL_START_LINE),
        (ours(args=["-c", "import time; time.sleep(60)"], connect_timeout=2), "timed out"),
    ],
    ids=["wrong-command", "exits-with-stderr", "hangs"],
)
async def test_test_says_why_a_stdio_server_fails(
    bridge: RunningBridge, spec: dict[str, Any], words: str
) -> None:
    answer = await test_mcp(bridge, spec)
    assert answer["ok"] is False and answer["tools"] == []
    assert words.lower() in answer["error"].lower(), answer["error"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def http_server() -> Iterator[str]:
    port = _free_port()
    cmd = [PY, "-m", "tests.support.mcp_server", "--http", str(port), "--token", "sesame"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.kill()
        proc.wait()


async def test_an_http_server_with_its_bearer_token(
    bridge: RunningBridge, fake_model: RunningFakeModel, http_server: str
) -> None:
    spec = {"name": "web", "transport": "http", "url": http_server}
    good = {**spec, "headers": {"Authorization": "Bearer sesame"}}
    answer = await test_mcp(bridge, good)
    assert answer["ok"] is True and "add" in {t["name"] for t in answer["tools"]}, answer
    refused = await test_mcp(bridge, {**spec, "headers": {"Authorization": "Bearer wrong"}})
    assert refused["ok"] is False and "unauthorised" in refused["error"].lower(), refused
    stream = await run(bridge, fake_model, calls(("mcp__web__add", {"a": 40, "b": 2})), [good])
    assert "The sum is 42." in results(stream)[0]


async def test_nothing_listening_is_refused(bridge: RunningBridge) -> None:
    url = f"http://127.0.0.1:{_free_port()}/mcp"
    answer = await test_mcp(
        bridge, {"name": "gone", "transport": "http", "url": url, "connect_timeout": 5}
    )
    assert answer["ok"] is False
    assert "refused" in answer["error"].lower() or "connect" in answer["error"].lower(), answer


async def test_bad_specs_are_422(bridge: RunningBridge) -> None:
    bad = [
        {"name": "Bad Name", "transport": "stdio", "command": "x"},
        {"name": "nocmd", "transport": "stdio"},
        {"name": "nourl", "transport": "http"},
        {"name": "ftp", "transport": "http", "url": "ftp://example.com"},
    ]
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        for spec in bad:
            assert (await client.post("/mcp/test", json=spec)).status_code == 422, spec
    # A validator's refusal is a 422 too (its error carried an exception object: it was a 500).
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=30) as client:
        body = {"user": 1, "session_id": "s", "model": {"base_url": "http://x", "model": "m"}}
        parts = [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}}]
        response = await client.post("/runs", json={**body, "message": parts})
    assert response.status_code == 422, response.text


# "Ask before each call": the approval card of a dangerous command.


async def test_an_asking_server_waits_for_consent_each_call(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    asking = ours("careful", ask=True)
    add = calls(("mcp__careful__add", {"a": 1, "b": 2}))
    allowed = await run(bridge, fake_model, add, [asking], answers=["once"])
    request = allowed.first("approval_request").data
    assert request["command"].startswith('careful · add {"a": 1, "b": 2}')
    assert "MCP server 'careful'" in request["description"]
    assert "The sum is 3." in results(allowed)[0]
    denied = await run(bridge, fake_model, add, [asking], answers=["deny"])
    assert "did not allow" in results(denied)[0] and "The sum" not in results(denied)[0]
    # "This conversation": the next call in the same conversation is not asked again.
    session = str(uuid.uuid4())
    await run(bridge, fake_model, add, [asking], answers=["session"], session=session)
    again = await run(bridge, fake_model, add, [asking], session=session)
    assert not again.of("approval_request") and "The sum is 3." in results(again)[0]
    # A server that does not ask: no card.
    free = await run(bridge, fake_model, calls(("mcp__tst__add", {"a": 2, "b": 2})), [ours()])
    assert not free.of("approval_request") and "The sum is 4." in results(free)[0]
