"""A small real MCP server (the `mcp` SDK's FastMCP) for the tests, over stdio or streamable
HTTP: `python -m tests.support.mcp_server [--http PORT] [--token T] [--fail-start]`.

Tools: `add(a, b)`; `whisper()` returns the value of the env variable `MCP_TEST_SECRET`
(so a test can see that a configured variable reached the server); `crash()` exits the
process in the middle of the call; `hang()` never answers; `picture()` returns a small PNG
(an MCP image block, `PICTURE`) and a line of text (with `--structured`, also FastMCP's
structured copy of both blocks, the picture's base64 in it). `--fail-start` writes a line to
stderr and exits before speaking MCP. `--token` makes the HTTP server refuse requests without
`Authorization: Bearer <token>` (401).
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
import time
from typing import Any

from tests.support.pictures import png

FAIL_START_LINE = "mcp test server: refusing to start (--fail-start)"


PICTURE = png(24, 16, lambda x, y: (200, 60, 30))


def build(port: int = 8000, *, structured: bool = False) -> Any:
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

    @server.tool()
    def hang() -> str:
        """Never answer."""
        while True:
            time.sleep(60)

    return server


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
    args = parser.parse_args()
    if args.fail_start:
        print(FAIL_START_LINE, file=sys.stderr, flush=True)
        sys.exit(2)
    server = build(args.http or 8000, structured=args.structured)
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
