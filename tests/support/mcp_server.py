"""A small real MCP server (the `mcp` SDK's FastMCP) for the tests, over stdio or streamable
HTTP: `python -m tests.support.mcp_server [--http PORT] [--token T] [--fail-start]`.

Tools: `add(a, b)`; `whisper()` returns the value of the env variable `MCP_TEST_SECRET`
(so a test can see that a configured variable reached the server); `crash()` exits the
process in the middle of the call; `hang()` never answers; `picture()` returns a small PNG
(an MCP image block, `PICTURE`) and a line of text (with `--structured`, also FastMCP's
structured copy of both blocks, the picture's base64 in it). A text resource `NOTE_URI` (`NOTE`)
and a prompt `greet(name)`; each read of the one and get of the other appends a line to the
file named by `MCP_TEST_READS`, if set (so a test sees what reached the server). With `--blobs`, also: `sound()`
a short WAV (an audio block, `SOUND`) and `document()` a PDF's bytes (an embedded resource
with a blob, `DOCUMENT` at `DOCUMENT_URI`), each beside a line of text and structured the same
way; `payload()` a dict (always structured) with `BLOB` as base64 and as a `data:` URL; the
resources `DOCUMENT_URI` (the PDF's bytes) and `EXPORT_URI` (text: `BLOB` as a `data:` URL);
the prompt `poster` (a user message holding an image block of `BLOB`'s base64).
`--fail-start` writes a line to
stderr and exits before speaking MCP. `--token` makes the HTTP server refuse requests without
`Authorization: Bearer <token>` (401).
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import sys
import time
import wave
from typing import Any

from tests.support.pictures import png

FAIL_START_LINE = "mcp test server: refusing to start (--fail-start)"


PICTURE = png(24, 16, lambda x, y: (200, 60, 30))
DOCUMENT = b"%PDF-1.4\n% a test document\n" + bytes(range(256))
DOCUMENT_URI = "file:///reports/q3.pdf"
EXPORT_URI = "data://export"
NOTE_URI = "note://hello"
NOTE = "A note from the test server."
BLOB = bytes(range(256)) * 12  # 3 KB: over the bridge's threshold for a bare base64 string


def _wav() -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(1)
        sound.setframerate(8000)
        sound.writeframes(bytes(128 + (i % 16) for i in range(400)))
    return out.getvalue()


SOUND = _wav()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def build(port: int = 8000, *, structured: bool = False, blobs: bool = False) -> Any:
    from mcp.server.fastmcp import FastMCP

    server = FastMCP("agent-chat-test", host="127.0.0.1", port=port, log_level="WARNING")

    @server.tool()
    def add(a: int, b: int) -> str:
        """Add two whole numbers."""
        return f"The sum is {a + b}."

    @server.tool()
    def whisper() -> str:
        """Say the secret this server was started with."""
        return f"secret={os.environ.get('MCP_TEST_SECRET', '<unset>')}"

    @server.tool()
    def crash() -> str:
        """Exit in the middle of the call."""
        os._exit(3)

    # Content blocks only, as an image-making server answers; `structured`: FastMCP's default
    # for a tool returning a list of blocks, a structured copy of them (the picture's data too).
    @server.tool(structured_output=structured)
    def picture() -> list[Any]:
        """Draw a small picture."""
        from mcp.types import ImageContent, TextContent

        data = base64.b64encode(PICTURE).decode()
        return [
            TextContent(type="text", text="A red rectangle."),
            ImageContent(type="image", data=data, mimeType="image/png"),
        ]

    @server.resource(NOTE_URI, mime_type="text/plain")
    def note() -> str:
        _heard(f"read {NOTE_URI}")
        return NOTE

    @server.prompt()
    def greet(name: str) -> str:
        """Greet someone."""
        _heard(f"prompt greet {name}")
        return f"Say hello to {name}."

    if blobs:
        _add_blobs(server, structured)

    @server.tool()
    def hang() -> str:
        """Never answer."""
        while True:
            time.sleep(60)

    return server


def _heard(line: str) -> None:
    if path := os.environ.get("MCP_TEST_READS"):
        with open(path, "a", encoding="utf-8") as log:
            log.write(line + "\n")


def _add_blobs(server: Any, structured: bool) -> None:
    @server.tool(structured_output=structured)
    def sound() -> list[Any]:
        """Play a short beep."""
        from mcp.types import AudioContent, TextContent

        return [
            TextContent(type="text", text="A short beep."),
            AudioContent(type="audio", data=_b64(SOUND), mimeType="audio/wav"),
        ]

    @server.tool(structured_output=structured)
    def document() -> list[Any]:
        """Fetch a report."""
        from mcp.types import BlobResourceContents, EmbeddedResource, TextContent

        blob = BlobResourceContents(
            uri=DOCUMENT_URI, blob=_b64(DOCUMENT), mimeType="application/pdf"
        )  # fmt: skip
        return [
            TextContent(type="text", text="The quarterly report."),
            EmbeddedResource(type="resource", resource=blob),
        ]

    # A dict: FastMCP returns it structured and as JSON text, the base64 in both.
    @server.tool()
    def payload() -> dict[str, Any]:
        """Export some data."""
        data = _b64(BLOB)
        return {
            "name": "export.bin",
            "data": data,
            "preview": f"data:application/octet-stream;base64,{data}",
        }

    @server.resource(DOCUMENT_URI, mime_type="application/pdf")
    def report() -> bytes:
        return DOCUMENT

    @server.resource(EXPORT_URI, mime_type="text/plain")
    def export() -> str:
        return f"data:application/octet-stream;base64,{_b64(BLOB)}"

    @server.prompt()
    def poster() -> Any:
        """Ask about a poster."""
        from mcp.server.fastmcp.prompts.base import UserMessage
        from mcp.types import ImageContent

        return [UserMessage(ImageContent(type="image", data=_b64(BLOB), mimeType="image/png"))]


def _with_token(app: Any, token: str) -> Any:
    async def guarded(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorised"})
                return
        await app(scope, receive, send)

    return guarded


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=0, help="serve streamable HTTP on this port")
    parser.add_argument("--token", default="")
    parser.add_argument("--fail-start", action="store_true")
    parser.add_argument("--structured", action="store_true")
    parser.add_argument("--blobs", action="store_true")
    args = parser.parse_args()
    if args.fail_start:
        print(FAIL_START_LINE, file=sys.stderr, flush=True)
        sys.exit(2)
    server = build(args.http or 8000, structured=args.structured, blobs=args.blobs)
    if not args.http:
        server.run("stdio")
        return
    import uvicorn

    app = server.streamable_http_app()
    if args.token:
        app = _with_token(app, args.token)
    uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")


if __name__ == "__main__":
    main()
