"""An MCP tool's audio, embedded files and long base64 strings never reach the model or the
page as base64 (bridge/mcp_blobs.py), through hermes' real MCP client and the tests' own
server (tests/support/mcp_server.py `--blobs`): hermes already writes an audio block and a
resource's blob to its caches and names them in the text; a structured copy of the result
carries them as they came, and the bridge leaves their data out with a placeholder."""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

from agent_chat.bridge.mcp_blobs import MIN_CHARS, without_binary_data
from tests.bridge.test_mcp import calls, ours, results, run
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge
from tests.support.mcp_server import BLOB, DOCUMENT, DOCUMENT_URI, EXPORT_URI, SOUND
from tests.support.sse import Stream

BLOBS = [base64.b64encode(data).decode() for data in (SOUND, DOCUMENT, BLOB)]
ALL = calls(("mcp__tst__sound", {}), ("mcp__tst__document", {}), ("mcp__tst__payload", {}))


def assert_no_data_reached(stream: Stream, fake: RunningFakeModel) -> None:
    events = json.dumps([e.data for e in stream.events])
    asked = json.dumps(fake.requests())
    for data in BLOBS:
        assert data not in events  # the page and the database get the events
        assert data not in asked  # the model


def contents(path: str) -> bytes:
    return Path(path).read_bytes()


async def test_hermes_keeps_audio_and_a_blob_out_of_its_text(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # Content blocks only: hermes' own text, as it builds it (no help from the bridge).
    script = calls(
        ("mcp__tst__sound", {}),
        ("mcp__tst__document", {}),
        ("mcp__tst__read_resource", {"uri": DOCUMENT_URI}),
    )
    server = ours(args=["-m", "tests.support.mcp_server", "--blobs"])
    stream = await run(bridge, fake_model, script, [server])
    sound, document, read = (json.loads(r)["result"] for r in results(stream))
    # The audio: written to hermes' audio cache and named.
    assert sound.startswith("A short beep.\nMEDIA:"), sound
    assert contents(sound.split("MEDIA:")[1]) == SOUND
    # The blob: written to hermes' document cache, its path, type and size said.
    said = re.search(r"\[MCP resource saved to (\S+) \(application/pdf, (\d+) bytes\)", document)
    assert said and int(said[2]) == len(DOCUMENT), document
    assert contents(said[1]) == DOCUMENT
    assert "(application/pdf, " in read and "saved to" in read, read  # the same for a read
    assert_no_data_reached(stream, fake_model)


async def test_a_structured_copy_carries_placeholders_not_data(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    server = ours(args=["-m", "tests.support.mcp_server", "--blobs", "--structured"])
    stream = await run(bridge, fake_model, ALL, [server])
    sound, document, payload = (json.loads(r) for r in results(stream))
    audio = sound["structuredContent"]["result"][1]
    assert audio["type"] == "audio" and audio["mimeType"] == "audio/wav"
    assert audio["data"] == f"[audio left out: audio/wav, {len(SOUND)} bytes]"
    resource = document["structuredContent"]["result"][1]["resource"]
    assert resource["uri"] == DOCUMENT_URI and resource["mimeType"] == "application/pdf"
    assert resource["blob"] == (
        f"[blob left out: application/pdf, {len(DOCUMENT)} bytes, uri={DOCUMENT_URI}]"
    )
    # A dict: FastMCP's structured copy and its text (the same dict as JSON) both had it.
    structured = payload["structuredContent"]
    assert structured["name"] == "export.bin"
    assert structured["data"] == f"[base64 data left out: {len(BLOB)} bytes]"
    assert structured["preview"] == (
        f"[base64 data left out: application/octet-stream, {len(BLOB)} bytes]"
    )
    assert json.loads(payload["result"]) == structured
    assert_no_data_reached(stream, fake_model)
    asked = json.dumps(fake_model.requests())
    assert "[audio left out: audio/wav" in asked and "uri=file:///reports/q3.pdf]" in asked


async def test_a_text_resource_and_a_prompt_carry_no_long_base64(
    bridge: RunningBridge, fake_model: RunningFakeModel
) -> None:
    # hermes' utility tools: a text resource comes back as it is, a prompt's image block as
    # its repr (base64 and all).
    script = calls(
        ("mcp__tst__read_resource", {"uri": EXPORT_URI}),
        ("mcp__tst__get_prompt", {"name": "poster"}),
    )
    server = ours(args=["-m", "tests.support.mcp_server", "--blobs"])
    stream = await run(bridge, fake_model, script, [server])
    read, prompt = (json.loads(r) for r in results(stream))
    left_out = f"[base64 data left out: application/octet-stream, {len(BLOB)} bytes]"
    assert read["result"] == left_out
    [message] = prompt["messages"]
    assert message["role"] == "user" and "mimeType='image/png'" in message["content"]
    assert f"[base64 data left out: {len(BLOB)} bytes]" in message["content"]
    assert_no_data_reached(stream, fake_model)


def test_image_data_outside_the_text_is_left_out_and_nothing_else_changes() -> None:
    text = "see this image: not JSON"
    assert without_binary_data(text) == text
    plain = json.dumps({"result": 'a "image" word', "structuredContent": {"type": "image"}})
    assert without_binary_data(plain) == plain  # no data to leave out
    # Structured content only (hermes' shape when no block had text or a picture it cached).
    only = json.dumps({"result": {"shot": {"type": "image", "data": "AAAA", "mimeType": "x"}}})
    shot = json.loads(without_binary_data(only))["result"]["shot"]
    assert shot == {"type": "image", "data": "[image left out: x, 3 bytes]", "mimeType": "x"}


def test_only_long_base64_runs_are_left_out() -> None:
    def stripped(value: Any) -> Any:
        return json.loads(without_binary_data(json.dumps({"result": value})))["result"]

    short = "QUJD" * (MIN_CHARS // 4 - 1)  # an id or a token: kept
    words = "word " * MIN_CHARS  # long, but not one run
    hashes = "\n".join(["0123456789abcdef" * 4] * 100)  # a run per line
    for kept in (short, words, hashes, {"blob": "not a resource's"}):
        assert stripped(kept) == kept
    long = "QUJD" * (MIN_CHARS // 4) + "QQ=="
    assert stripped(f"before {long} after") == "before [base64 data left out: 1537 bytes] after"
    assert stripped([{"deep": long}]) == [{"deep": "[base64 data left out: 1537 bytes]"}]
    assert without_binary_data(long) == "[base64 data left out: 1537 bytes]"  # not JSON
