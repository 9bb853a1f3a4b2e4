"""An answer's usage is its own run's: the bridge keeps a conversation's agent between runs
(bridge/pool.py), and hermes' counters run over the agent's whole life."""

from __future__ import annotations

import httpx

from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.sse import read_events, run_body, start_run


async def test_each_run_reports_only_its_own_tokens(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    model = bridge.model(fake_model)
    usages = []
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        for text in ("hello", "hello", "hello"):
            run_id = await start_run(client, run_body(model, text, "usage-s"))
            stream = await read_events(client, run_id)
            usages.append(stream.events[-1].data["usage"])
    # The same question in a fresh context each time (no history sent): the same tokens.
    assert usages[0] == usages[1] == usages[2], usages
    assert usages[0]["output_tokens"] > 0 and usages[0]["input_tokens"] > 0


async def test_a_run_with_tool_calls_reports_its_last_prompt_as_the_context(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    """input_tokens adds up the run's model calls; context_tokens is the last one's prompt."""
    model = bridge.model(fake_model)
    body = run_body(model, 'CALL todo {"todos": [{"id": "1", "content": "a", "status": "pending"}]}',
                    "usage-tools")  # fmt: skip
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=60) as client:
        run_id = await start_run(client, body)
        stream = await read_events(client, run_id)
    assert stream.events[-1].type == "run_completed", stream.events[-1]
    assert stream.of("tool_start"), "the model called no tool"
    usage = stream.events[-1].data["usage"]
    assert 0 < usage["context_tokens"] < usage["input_tokens"], usage
