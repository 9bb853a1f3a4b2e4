"""Warming hermes up when the bridge starts, so the first conversation does not pay hermes'
once-per-process costs (importing the OpenAI SDK and the tools, the environment probe of
the system prompt, the first streamed request: 4-6 s on a fresh process, ~1 s once warm;
`benchmarks/first_answer.py`).

One whole turn runs against a throwaway OpenAI-compatible endpoint on 127.0.0.1 in this
process (it answers "ok"): nothing leaves the machine, no model is called, and the agent is
dropped afterwards (it never serves a conversation).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from agent_chat.bridge.schemas import ModelSpec
from agent_chat.bridge.settings import BridgeSettings

logger = logging.getLogger(__name__)

MODEL = "warm-up"


class _Endpoint(BaseHTTPRequestHandler):
    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _json(self, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:  # /v1/models and hermes' other probes
        self._json({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if not body.get("stream"):
            message = {"role": "assistant", "content": "ok"}
            self._json({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for delta, finish in (({"role": "assistant", "content": "ok"}, None), ({}, "stop")):
            chunk = {
                "id": "warm-up",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": MODEL,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")


def warm_up(settings: BridgeSettings) -> None:
    from agent_chat.bridge.agent_factory import build_agent

    started = time.perf_counter()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    serving = threading.Thread(target=server.serve_forever, name="warm-up-endpoint", daemon=True)
    serving.start()
    try:
        model = ModelSpec(base_url=f"http://127.0.0.1:{server.server_port}/v1", model=MODEL)
        # In the shared home, for no one: no person's memory is read, none written.
        agent = build_agent(settings, None, "warm-up", model, "chat")
        agent.run_conversation("ok", conversation_history=[], task_id="warm-up")
    except Exception:
        logger.warning("warming hermes up failed; the first answer pays for it", exc_info=True)
        return
    finally:
        server.shutdown()
        server.server_close()
    logger.info("hermes warmed up in %.1f s", time.perf_counter() - started)
