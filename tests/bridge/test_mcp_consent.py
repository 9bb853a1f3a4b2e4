"""A server set to ask before each call also asks before hermes' own tools for it reach it
(bridge/mcp_consent.py): reading a resource, getting a prompt, listing either. Through
hermes' real MCP client and the tests' server (tests/support/mcp_server.py), which writes
down each read and prompt it serves, so a refused one is seen never to reach it. The
consent for the server's own tools: tests/bridge/test_mcp.py."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

from agent_chat.bridge import mcp_consent
from tests.bridge.test_mcp import calls, ours, results, run
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.mcp_server import NOTE, NOTE_URI

READ = calls(("mcp__careful__read_resource", {"uri": NOTE_URI}))
PROMPT_ARGS = {"name": "greet", "arguments": {"name": "Ada"}}
PROMPT = calls(("mcp__careful__get_prompt", PROMPT_ARGS))


def careful(log: Path, **extra: Any) -> dict[str, Any]:
    return ours("careful", ask=True, env={"MCP_TEST_READS": str(log)}, **extra)


def heard(log: Path) -> list[str]:
    """What the server served: a read resource, a prompt got."""
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


async def test_a_resource_read_waits_for_consent_and_a_refused_one_never_reaches_the_server(
    bridge: RunningBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    log = tmp_path / "heard"
    server = careful(log)
    denied = await run(bridge, fake_model, READ, [server], answers=["deny"])
    request = denied.first("approval_request").data
    assert request["command"] == f'careful · read_resource {{"uri": "{NOTE_URI}"}}'
    assert request["description"] == "read a resource of the MCP server 'careful'"
    [refusal] = results(denied)
    assert "did not allow" in refusal and NOTE not in refusal
    assert heard(log) == []  # the server never got the read
    allowed = await run(bridge, fake_model, READ, [server], answers=["once"])
    assert NOTE in results(allowed)[0] and heard(log) == [f"read {NOTE_URI}"]
    # "Once" is that call only: the next read asks again.
    again = await run(bridge, fake_model, READ, [server], answers=["deny"])
    assert again.of("approval_request") and heard(log) == [f"read {NOTE_URI}"]


async def test_this_conversation_covers_later_reads_there_and_nothing_else(
    bridge: RunningBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    log = tmp_path / "heard"
    server = careful(log)
    session = str(uuid.uuid4())
    await run(bridge, fake_model, READ, [server], answers=["session"], session=session)
    later = await run(bridge, fake_model, READ, [server], session=session)  # a card would fail
    assert NOTE in results(later)[0]
    assert heard(log) == [f"read {NOTE_URI}"] * 2
    # Not a prompt of the same server, in the same conversation...
    held = await run(bridge, fake_model, PROMPT, [server], answers=["deny"], session=session)
    request = held.first("approval_request").data
    assert (
        request["command"] == 'careful · get_prompt {"name": "greet", "arguments": {"name": "Ada"}}'
    )
    assert request["description"] == "get a prompt of the MCP server 'careful'"
    assert "did not allow" in results(held)[0]
    # ...nor a read in another conversation.
    await run(bridge, fake_model, READ, [server], answers=["deny"])
    assert heard(log) == [f"read {NOTE_URI}"] * 2


async def test_a_prompt_and_the_listings_wait_for_consent_too(
    bridge: RunningBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    log = tmp_path / "heard"
    server = careful(log)
    allowed = await run(bridge, fake_model, PROMPT, [server], answers=["once"])
    assert "Say hello to Ada." in results(allowed)[0] and heard(log) == ["prompt greet Ada"]
    # A listing is the server's text too (names, uris, descriptions), asked for at the call.
    lists = calls(("mcp__careful__list_resources", {}), ("mcp__careful__list_prompts", {}))
    denied = await run(bridge, fake_model, lists, [server], answers=["deny", "deny"])
    cards = [e.data["description"] for e in denied.of("approval_request")]
    assert cards == [
        "list the resources of the MCP server 'careful'",
        "list the prompts of the MCP server 'careful'",
    ]
    resources, prompts = results(denied)
    assert NOTE_URI not in resources and "greet" not in prompts
    shown = await run(bridge, fake_model, lists, [server], answers=["once", "once"])
    resources, prompts = results(shown)
    assert NOTE_URI in resources and "greet" in prompts


async def test_a_long_uri_is_cut_in_the_card(
    bridge: RunningBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    uri = "note://" + "x" * (mcp_consent.ARGS_SHOWN + 500)
    script = calls(("mcp__careful__read_resource", {"uri": uri}))
    denied = await run(bridge, fake_model, script, [careful(tmp_path / "heard")], answers=["deny"])
    command = denied.first("approval_request").data["command"]
    prefix = "careful · read_resource "
    assert command.startswith(prefix + '{"uri": "note://xxx') and command.endswith("…")
    assert len(command) == len(prefix) + mcp_consent.ARGS_SHOWN + 1


async def test_a_server_that_does_not_ask_is_not_asked(
    bridge: RunningBridge, fake_model: RunningFakeModel, tmp_path: Path
) -> None:
    log = tmp_path / "heard"
    free = ours("free", env={"MCP_TEST_READS": str(log)})
    script = calls(
        ("mcp__free__read_resource", {"uri": NOTE_URI}),
        ("mcp__free__get_prompt", PROMPT_ARGS),
        ("mcp__free__list_resources", {}),
        ("mcp__free__list_prompts", {}),
    )
    stream = await run(bridge, fake_model, script, [free])  # a card would fail the run
    read, prompt, resources, prompts = results(stream)
    assert NOTE in read and "Say hello to Ada." in prompt
    assert NOTE_URI in resources and "greet" in prompts
    assert heard(log) == [f"read {NOTE_URI}", "prompt greet Ada"]


def test_a_server_never_told_about_asks_and_with_no_one_to_ask_is_refused() -> None:
    # Fail closed: the gate was never told whether "stranger" asks. Without it hermes'
    # handler would answer that the server is not connected.
    import tools.mcp_tool as mcp

    mcp_consent.install()
    for tool in ("read_resource", "get_prompt", "list_resources", "list_prompts"):
        handler = getattr(mcp, f"_make_{tool}_handler")("stranger", 5.0)
        answer = json.loads(handler({"uri": NOTE_URI, **PROMPT_ARGS}))
        assert "needs a person's consent" in answer["error"], (tool, answer)
