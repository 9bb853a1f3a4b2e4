"""An OpenAI-compatible streaming model for the benchmarks, with a steady token rate.

It wraps the test suite's scripted fake (`tests/fakes/model_server.py`, not modified): requests
whose last user message names a benchmark script are answered here, everything else (model
metadata, hermes' own side requests) goes to the test fake.

- ``bench-text N``: an answer of N tokens (short words, a paragraph break every 60 tokens),
  the last token is ``zzend.``; ``para=K`` in the message: a break every K tokens instead,
  ``para=0``: the whole answer is one paragraph.
- ``bench-mixed T``: T turns, each: reasoning chunks, text chunks, then a ``todo`` tool call;
  after the last turn a short answer. Every chunk carries a marker (``rq<turn>x<i>`` in the
  reasoning, ``tq<turn>x<i>`` in the text, ``dq<turn>x`` in the first TODO item) so a page can
  tell when each one reached the DOM.
- ``per=N`` in the message: N reasoning and N text chunks per mixed turn (default 30).
- ``rate=R`` in the message overrides the server's rate for that request.

Chunks are paced against an absolute schedule (``--rate`` chunks per second, 0 = as fast as
possible), so small sleep overruns do not accumulate. The time each request sent its first
and last chunk is recorded and served at ``GET /_bench/stats`` (epoch seconds).

Run: ``python benchmarks/fake_model.py --port N --rate 1000``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import uvicorn  # noqa: E402
from starlette.applications import Starlette  # noqa: E402
from starlette.requests import Request  # noqa: E402
from starlette.responses import JSONResponse, Response, StreamingResponse  # noqa: E402
from starlette.routing import Mount, Route  # noqa: E402

from tests.fakes.model_server import (  # noqa: E402
    FakeModel,
    _Chunks,
    _text_of,
    create_fake_model_app,
)

_WORD_TEXT = (
    "the of and to in is it that for on with as was at by this be are from or an have not "
    "but can all we one more time will if about which out when so up what use your how said "
    "each she do their there other many then them these some her would make like him into"
)
WORDS = _WORD_TEXT.split()
END_TOKEN = "zzend."
PARAGRAPH_EVERY = 60
MIXED_PER_KIND = 30  # reasoning chunks and text chunks per turn (``per=N`` overrides)


def answer_tokens(count: int, paragraph_every: int = PARAGRAPH_EVERY) -> list[str]:
    """`count` stream chunks of a plain answer; the last one is END_TOKEN. A blank line
    follows every `paragraph_every`-th token (0: none, one paragraph)."""
    tokens = []
    for i in range(count - 1):
        word = WORDS[(i * 7 + i // len(WORDS)) % len(WORDS)]
        brk = paragraph_every > 0 and (i + 1) % paragraph_every == 0
        tokens.append(word + ("\n\n" if brk else " "))
    tokens.append(END_TOKEN)
    return tokens


def answer_text(count: int, paragraph_every: int = PARAGRAPH_EVERY) -> str:
    return "".join(answer_tokens(count, paragraph_every))


class Recorder:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: list[dict[str, Any]] = []

    def add(self, item: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append(item)

    def snapshot(self) -> list[dict[str, Any]]:
        with self._lock:
            return [dict(r) for r in self.requests]

    def reset(self) -> None:
        with self._lock:
            self.requests.clear()


def _tool_turns_done(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "tool")


def _usage(messages: list[dict[str, Any]], pieces: list[str]) -> dict[str, int]:
    prompt = max(1, len(json.dumps(messages)) // 4)
    completion = max(1, len("".join(pieces)) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def create_app(rate: float, recorder: Recorder) -> Starlette:
    fallback = create_fake_model_app(FakeModel(token_delay=0.0))

    async def paced(deltas: list[dict[str, Any]], record: dict[str, Any], rate: float):
        """Yield the deltas on the absolute schedule start + i / rate."""
        start = time.monotonic()
        for i, delta in enumerate(deltas):
            if rate > 0:
                wait = start + i / rate - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            now = time.time()
            if i == 0:
                record["first_at"] = now
            record["last_at"] = now
            record["chunks"] = i + 1
            yield delta

    async def completions(request: Request) -> Response:
        body = await request.json()
        messages = body.get("messages") or []
        users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
        last_user = users[-1] if users else ""
        text_match = re.search(r"\bbench-text (\d+)", last_user)
        mixed_match = re.search(r"\bbench-mixed (\d+)", last_user)
        if not body.get("stream") or not (text_match or mixed_match):
            return await _forward(request, body)
        model = body.get("model") or "fake-model"
        chunks = _Chunks(f"chatcmpl-bench-{time.monotonic_ns()}", model)
        deltas: list[dict[str, Any]] = []
        tool: dict[str, Any] | None = None
        if text_match:
            para_match = re.search(r"\bpara=(\d+)", last_user)
            every = int(para_match.group(1)) if para_match else PARAGRAPH_EVERY
            deltas = [{"content": t} for t in answer_tokens(int(text_match.group(1)), every)]
        else:
            turns = int(mixed_match.group(1))
            per_match = re.search(r"\bper=(\d+)", last_user)
            per = int(per_match.group(1)) if per_match else MIXED_PER_KIND
            turn = _tool_turns_done(messages)
            if turn >= turns:
                deltas = [{"content": f"tq{turn}x{i} "} for i in range(per)]
                deltas.append({"content": END_TOKEN})
            else:
                deltas = [{"reasoning_content": f"rq{turn}x{i} "} for i in range(per)]
                deltas += [{"content": f"tq{turn}x{i} "} for i in range(per)]
                todos = [
                    {"id": "1", "content": f"dq{turn}x step one", "status": "completed"},
                    {"id": "2", "content": f"step two of turn {turn}", "status": "in_progress"},
                    {"id": "3", "content": "step three", "status": "pending"},
                ]
                tool = {
                    "name": "todo",
                    "args": {"todos": todos, "merge": False},
                    "id": f"call_b{turn}",
                }
        rate_match = re.search(r"\brate=(\d+(?:\.\d+)?)", last_user)
        req_rate = float(rate_match.group(1)) if rate_match else rate
        record: dict[str, Any] = {
            "kind": "text" if text_match else "mixed",
            "received_at": time.time(),
        }
        recorder.add(record)
        pieces = [d.get("content") or d.get("reasoning_content") or "" for d in deltas]
        usage = _usage(messages, pieces)

        async def stream():
            yield chunks.make({"role": "assistant", "content": ""})
            async for delta in paced(deltas, record, req_rate):
                yield chunks.make(delta)
            if tool:
                arguments = json.dumps(tool["args"])
                yield chunks.make(
                    {
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": tool["id"],
                                "type": "function",
                                "function": {"name": tool["name"], "arguments": arguments},
                            }
                        ]
                    }
                )
            yield chunks.make({}, finish_reason="tool_calls" if tool else "stop")
            yield chunks.make(None, usage=usage)
            yield "data: [DONE]\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream")

    async def _forward(request: Request, body: dict[str, Any]) -> Response:
        # Re-dispatch to the test fake's app with the same body.
        payload = json.dumps(body).encode()
        scope = dict(request.scope)
        sent = False

        async def receive():
            nonlocal sent
            if sent:
                # The client stays until the response ends: a disconnect at once made the
                # test fake stop a slow streamed answer half-way (its disconnect check).
                await asyncio.Event().wait()
            sent = True
            return {"type": "http.request", "body": payload, "more_body": False}

        class _Passthrough(Response):
            async def __call__(self, scope_, receive_, send_):
                await fallback(scope, receive, send_)

        return _Passthrough()

    async def stats(request: Request) -> Response:
        return JSONResponse(recorder.snapshot())

    async def reset(request: Request) -> Response:
        recorder.reset()
        return JSONResponse({"ok": True})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", completions, methods=["POST"]),
            Route("/_bench/stats", stats),
            Route("/_bench/reset", reset, methods=["POST"]),
            Mount("/", app=fallback),
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Paced OpenAI-compatible fake model.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--rate", type=float, default=1000.0, help="chunks per second, 0 = unpaced")
    args = parser.parse_args(argv)
    uvicorn.run(
        create_app(args.rate, Recorder()), host=args.host, port=args.port, log_level="warning"
    )


if __name__ == "__main__":
    main()
