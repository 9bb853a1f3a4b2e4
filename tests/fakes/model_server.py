"""A scripted OpenAI-compatible model server for tests.

Behaviour is chosen by whole-word keywords in the LAST user message (case-insensitive):

- default: ``Echo: <last user message>``, streamed word by word.
- ``recall``: ``Earlier you said: <first user message>`` (or ``I have no earlier message.``).
- ``think``: reasoning deltas, then the answer.
- ``todo``: a little text, then a ``todo`` tool call with 3 items; after the tool result
  ``Plan made.``
- ``ask``: a ``clarify`` tool call (``Which color do you prefer?``, red/green/blue); after the
  tool result ``You chose <answer>.``
- ``slow`` / ``long <N>``: N words (default 200) with a per-token delay (0.05 s for ``slow``
  unless the server has a delay of its own).
- ``delay=<seconds>``: per-request token delay.
- ``error500``: HTTP 500 with an OpenAI-style error body.
- ``error401`` / ``error429``: HTTP 401 (bad API key) / 429 (rate limited, ``Retry-After: 1``)
  with an OpenAI-style error body.
- ``cutstream``: a few chunks, then the connection is dropped (no ``[DONE]``, an incomplete
  chunked body).
- ``malformed``: a few chunks, then a ``data:`` line that is not valid JSON, then the rest.
- ``emptyanswer``: a well-formed answer with no content at all (``finish_reason: stop``).
- ``cutthenempty``: the answer breaks off after a few chunks (as ``cutstream``), and hermes'
  continuation requests get empty answers.
- ``slowfirst=<seconds>``: the response starts, then waits that long before the first chunk.
- ``once``: with one of the faults above, only the first request carrying this exact message
  is faulty; later ones (hermes' retries) are answered normally.

The fault keywords act only on a request whose last message is the user's (not on the call
after a tool result), and only in its last paragraph: hermes merges two user turns in a row
(the question of a FAILED answer, which history leaves out, and the next one) with a blank
line, and the newer message decides. A base URL ``http://host:port/fault/<keywords>/v1`` (keywords joined by
``+``) applies them to every chat request through it whatever the message says, while the
models list stays healthy: for probing an endpoint that lists models but cannot answer.
The URL keyword ``noimages`` makes it a text-only model: a request with an ``image_url`` part
in any message gets HTTP 400 with an OpenAI-shaped error (``NO_IMAGES_ERROR``), others are
answered as usual (``http://host:port/fault/noimages/v1``).
- a summarization prompt (hermes' context compression): a short summary.
- ``CALL <tool> <json arguments>`` lines: those tool calls, one per request in order (the
  n-th after n tool results since the user's message), then ``Tool <name> done. Result:
  <the last tool result, cut to 400 characters>``: real tool calls for any hermes tool.
  A child agent of hermes' ``delegate_task`` starts its own conversation whose user message
  is its task's goal, so each child is scripted by its goal: ``CALL delegate_task`` with
  goals that hold ``CALL`` lines (and ``delay=``) of their own gives each child its own
  replies, and tells two children's requests apart (``child_requests``).

Run it with ``python -m tests.fakes.model_server --port N``, or in-process with
``running_fake_model()``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import logging
import re
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Mount, Route

logger = logging.getLogger(__name__)

MODEL_ID = "fake-model"
CONTEXT_LENGTH = 131072
SLOW_TOKEN_DELAY = 0.05
DEFAULT_LONG_TOKENS = 200

CLARIFY_QUESTION = "Which color do you prefer?"
CLARIFY_CHOICES = ["red", "green", "blue"]
TODO_ITEMS = [
    {"id": "1", "content": "Gather the facts", "status": "completed"},
    {"id": "2", "content": "Write the plan", "status": "in_progress"},
    {"id": "3", "content": "Review the result", "status": "pending"},
]
REASONING_TEXT = "Let me think about this. The user wants an answer."
SUMMARY_TEXT = (
    "## Goal\nThe user is chatting with the assistant to test the system.\n"
    "## Progress\nEarlier turns were echoed back.\n## Next steps\nContinue the conversation."
)


@dataclass
class Script:
    """What one completion says: reasoning, text, an optional tool call."""

    reasoning: list[str] = field(default_factory=list)
    text: list[str] = field(default_factory=list)
    tool_name: str | None = None
    tool_args: dict[str, Any] | None = None
    token_delay: float = 0.0


FAULT_WORDS = ("error401", "error429", "error500", "cutstream", "malformed", "emptyanswer")
CUT_AFTER_CHUNKS = 3


class _CutStream(Exception):
    """Raised inside a streaming body to drop the connection on purpose."""


class _QuietCuts(logging.Filter):
    """Keeps uvicorn from logging a traceback for a stream cut on purpose."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        while exc is not None:
            if isinstance(exc, _CutStream):
                return False
            exc = exc.__cause__ or exc.__context__
        return True


logging.getLogger("uvicorn.error").addFilter(_QuietCuts())


@dataclass(frozen=True)
class Fault:
    """What goes wrong with one chat request (nothing, by default)."""

    kind: str | None = None  # one of FAULT_WORDS
    slow_first_s: float = 0.0
    once: bool = False

    def __bool__(self) -> bool:
        return self.kind is not None or self.slow_first_s > 0


def find_fault(text: str) -> Fault:
    """The fault keywords in ``text`` (the last user message, or a /fault/ URL segment)."""
    kind = next((word for word in FAULT_WORDS if _has_word(text, word)), None)
    slow = 0.0
    if match := re.search(r"\bslowfirst=(\d+(?:\.\d+)?)", text, re.IGNORECASE):
        slow = float(match.group(1))
    return Fault(kind=kind, slow_first_s=slow, once=_has_word(text, "once"))


class FakeModel:
    """Shared state of one fake server: recorded requests and the default token delay."""

    def __init__(self, token_delay: float = 0.0) -> None:
        self.token_delay = token_delay
        self._lock = threading.Lock()
        self._requests: list[dict[str, Any]] = []
        self._ids = itertools.count(1)
        self._faulted_once: set[str] = set()

    def first_time(self, key: str) -> bool:
        """True the first time ``key`` is seen (for ``once`` faults)."""
        with self._lock:
            if key in self._faulted_once:
                return False
            self._faulted_once.add(key)
            return True

    def record(self, body: dict[str, Any]) -> None:
        with self._lock:
            self._requests.append(body)

    def requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return list(self._requests)

    def child_requests(self, goal_start: str) -> list[dict[str, Any]]:
        """The recorded requests of the delegate_task child whose goal starts so (its
        conversation's first user message)."""
        found = []
        for body in self.requests():
            users = [m for m in body.get("messages") or [] if m.get("role") == "user"]
            if users and _text_of(users[0].get("content")).startswith(goal_start):
                found.append(body)
        return found

    def reset(self) -> None:
        with self._lock:
            self._requests.clear()

    def next_id(self) -> int:
        with self._lock:
            return next(self._ids)


def _text_of(content: Any) -> str:
    """Text of a message content (a string or a list of OpenAI content parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return ""


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"\b{re.escape(word)}\b", text, re.IGNORECASE) is not None


def _words(text: str) -> list[str]:
    """Split text into stream chunks that concatenate back to the text."""
    return re.findall(r"\S+\s*|\s+", text) or [text]


def _tool_name_for(messages: list[dict[str, Any]], call_id: str | None) -> str | None:
    for message in reversed(messages):
        for call in message.get("tool_calls") or []:
            if call.get("id") == call_id:
                return (call.get("function") or {}).get("name")
    return None


CALL_LINE = re.compile(r"^\s*CALL\s+(\w+)\s+(\{.*\})\s*$", re.MULTILINE)


def _scripted_calls(text: str) -> list[tuple[str, dict[str, Any]]]:
    calls = []
    for name, raw in CALL_LINE.findall(text):
        try:
            calls.append((name, json.loads(raw)))
        except ValueError:
            continue
    return calls


def _tool_results_since_user(messages: list[dict[str, Any]]) -> int:
    count = 0
    for message in reversed(messages):
        if message.get("role") == "user":
            break
        count += message.get("role") == "tool"
    return count


def plan_reply(messages: list[dict[str, Any]], default_delay: float) -> Script:
    """Decide the scripted reply to a chat-completion request."""
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    last_user = users[-1] if users else ""
    delay = default_delay
    if match := re.search(r"\bdelay=(\d+(?:\.\d+)?)", last_user, re.IGNORECASE):
        delay = float(match.group(1))

    if "summarization agent" in last_user or "context checkpoint" in last_user:
        return Script(text=_words(SUMMARY_TEXT), token_delay=delay)

    last = messages[-1] if messages else {}
    if calls := _scripted_calls(last_user):
        done = _tool_results_since_user(messages)
        if done < len(calls):
            name, args = calls[done]
            return Script(tool_name=name, tool_args=args, token_delay=delay)
        tool = _tool_name_for(messages, last.get("tool_call_id"))
        result = _text_of(last.get("content"))[:400]
        return Script(text=_words(f"Tool {tool} done. Result: {result}"), token_delay=delay)
    if last.get("role") == "tool":
        tool = _tool_name_for(messages, last.get("tool_call_id"))
        if tool == "clarify":
            try:
                answer = json.loads(_text_of(last.get("content"))).get("user_response", "")
            except (ValueError, AttributeError):
                answer = ""
            return Script(text=_words(f"You chose {answer}."), token_delay=delay)
        if tool == "todo":
            return Script(text=_words("Plan made."), token_delay=delay)
        return Script(text=_words(f"Tool {tool} done."), token_delay=delay)

    if _has_word(last_user, "todo"):
        return Script(
            text=_words("Let me make a plan."),
            tool_name="todo",
            tool_args={"todos": TODO_ITEMS, "merge": False},
            token_delay=delay,
        )
    if _has_word(last_user, "ask"):
        return Script(
            tool_name="clarify",
            tool_args={"question": CLARIFY_QUESTION, "choices": CLARIFY_CHOICES},
            token_delay=delay,
        )
    if _has_word(last_user, "recall"):
        earlier = users[:-1]
        text = f"Earlier you said: {earlier[0]}" if earlier else "I have no earlier message."
        return Script(text=_words(text), token_delay=delay)
    if _has_word(last_user, "think"):
        return Script(
            reasoning=_words(REASONING_TEXT),
            text=_words("After thinking: the answer is 42."),
            token_delay=delay,
        )
    long_match = re.search(r"\blong\s+(\d+)", last_user, re.IGNORECASE)
    if long_match or _has_word(last_user, "slow"):
        count = int(long_match.group(1)) if long_match else DEFAULT_LONG_TOKENS
        if _has_word(last_user, "slow") and delay <= 0:
            delay = SLOW_TOKEN_DELAY
        return Script(text=[f"word{i} " for i in range(1, count + 1)], token_delay=delay)
    return Script(text=_words(f"Echo: {last_user}"), token_delay=delay)


def _usage(messages: list[dict[str, Any]], script: Script) -> dict[str, int]:
    # Rough chars/4 like hermes' own estimate, so compression logic sees sane numbers.
    prompt = max(1, len(json.dumps(messages)) // 4)
    completion = max(1, len("".join(script.text + script.reasoning)) // 4)
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


class _Chunks:
    """Builds chat.completion.chunk dicts for one response."""

    def __init__(self, completion_id: str, model: str) -> None:
        self.completion_id = completion_id
        self.model = model
        self.created = int(time.time())

    def make(
        self,
        delta: dict[str, Any] | None,
        finish_reason: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> str:
        chunk: dict[str, Any] = {
            "id": self.completion_id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": []
            if delta is None
            else [{"index": 0, "delta": delta, "finish_reason": finish_reason}],
        }
        if usage is not None:
            chunk["usage"] = usage
        return f"data: {json.dumps(chunk)}\n\n"


BROKEN_CHUNK = 'data: {"id": "chatcmpl-broken", "choices": [{"delta": {"content": "oops\n\n'


async def _stream(
    script: Script,
    chunks: _Chunks,
    call_id: str,
    usage: dict[str, int] | None,
    fault: Fault = Fault(),
) -> AsyncIterator[str]:
    if fault.slow_first_s:
        await asyncio.sleep(fault.slow_first_s)
    yield chunks.make({"role": "assistant", "content": ""})
    for piece in script.reasoning:
        await asyncio.sleep(script.token_delay)
        yield chunks.make({"reasoning_content": piece})
    break_after = min(CUT_AFTER_CHUNKS, len(script.text))
    for number, piece in enumerate(script.text, start=1):
        if number > break_after and fault.kind == "cutstream":
            break
        await asyncio.sleep(script.token_delay)
        yield chunks.make({"content": piece})
        if number == break_after and fault.kind == "malformed":
            yield BROKEN_CHUNK
    if fault.kind == "cutstream":
        raise _CutStream("the fake model drops the connection (cutstream)")
    if fault.kind == "malformed" and break_after == 0:
        yield BROKEN_CHUNK
    if script.tool_name:
        arguments = json.dumps(script.tool_args or {})
        half = len(arguments) // 2
        yield chunks.make(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": script.tool_name, "arguments": arguments[:half]},
                    }
                ]
            }
        )
        yield chunks.make(
            {"tool_calls": [{"index": 0, "function": {"arguments": arguments[half:]}}]}
        )
    yield chunks.make({}, finish_reason="tool_calls" if script.tool_name else "stop")
    if usage is not None:
        yield chunks.make(None, usage=usage)
    yield "data: [DONE]\n\n"


def _completion(
    script: Script, completion_id: str, model: str, call_id: str, usage: dict[str, int]
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": "".join(script.text) or None}
    if script.reasoning:
        message["reasoning_content"] = "".join(script.reasoning)
    if script.tool_name:
        message["tool_calls"] = [
            {
                "id": call_id,
                "type": "function",
                "function": {"name": script.tool_name, "arguments": json.dumps(script.tool_args)},
            }
        ]
    return {
        "id": completion_id,
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if script.tool_name else "stop",
            }
        ],
        "usage": usage,
    }


def _model_entry() -> dict[str, Any]:
    # hermes reads the first of context_length / max_model_len / ... it finds.
    return {
        "id": MODEL_ID,
        "object": "model",
        "created": 0,
        "owned_by": "agent-chat-tests",
        "context_length": CONTEXT_LENGTH,
        "max_model_len": CONTEXT_LENGTH,
    }


ERROR_RESPONSES: dict[str, tuple[int, dict[str, str], dict[str, str]]] = {
    "error401": (
        401,
        {
            "message": "Incorrect API key provided: fake-***. (error401)",
            "type": "invalid_request_error",
            "code": "invalid_api_key",
        },
        {},
    ),
    "error429": (
        429,
        {
            "message": "Rate limit reached for fake-model on purpose (error429).",
            "type": "requests",
            "code": "rate_limit_exceeded",
        },
        {"Retry-After": "1"},
    ),
    "error500": (
        500,
        {
            "message": "The fake model failed on purpose (error500).",
            "type": "server_error",
            "code": "internal_error",
        },
        {},
    ),
}


NO_IMAGES_ERROR = {
    "message": "This model does not support image input",
    "type": "invalid_request_error",
}


def _has_image(messages: list[dict[str, Any]]) -> bool:
    return any(
        isinstance(part, dict) and part.get("type") == "image_url"
        for message in messages
        if isinstance(message.get("content"), list)
        for part in message["content"]
    )


def _request_fault(
    fake: FakeModel, messages: list[dict[str, Any]], url_faults: str
) -> tuple[Fault, str]:
    """The fault for this request and the key that identifies it for ``once``."""
    if url_faults:
        return find_fault(url_faults.replace("+", " ")), url_faults
    if not messages or messages[-1].get("role") != "user":
        return Fault(), ""
    last_user = _text_of(messages[-1].get("content"))
    users = [_text_of(m.get("content")) for m in messages if m.get("role") == "user"]
    if any(_has_word(text, "cutthenempty") for text in users):
        # The question's answer breaks off; hermes' continuation request gets nothing.
        continuation = "cut off by a network error" in last_user
        return Fault(kind="emptyanswer" if continuation else "cutstream"), last_user
    return find_fault(last_user.rsplit("\n\n", 1)[-1]), last_user


def create_fake_model_app(fake: FakeModel) -> Starlette:
    """The Starlette app serving ``fake``."""

    async def models(request: Request) -> Response:
        return JSONResponse({"object": "list", "data": [_model_entry()]})

    async def model_detail(request: Request) -> Response:
        return JSONResponse({**_model_entry(), "id": request.path_params["model_id"]})

    async def chat_completions(request: Request) -> Response:
        body = await request.json()
        fake.record(body)
        messages = body.get("messages") or []
        url_faults = request.path_params.get("faults", "")
        if _has_word(url_faults.replace("+", " "), "noimages") and _has_image(messages):
            return JSONResponse({"error": NO_IMAGES_ERROR}, status_code=400)
        fault, key = _request_fault(fake, messages, url_faults)
        if fault and fault.once and not fake.first_time(key):
            fault = Fault()
        if fault.kind in ERROR_RESPONSES:
            status, error, headers = ERROR_RESPONSES[fault.kind]
            return JSONResponse({"error": error}, status_code=status, headers=headers)
        script = plan_reply(messages, fake.token_delay)
        if fault.kind == "emptyanswer":
            script = Script(token_delay=script.token_delay)  # a well-formed, empty answer
        number = fake.next_id()
        completion_id = f"chatcmpl-fake-{number}"
        call_id = f"call_fake_{number}"
        model = body.get("model") or MODEL_ID
        usage = _usage(messages, script)
        if not body.get("stream"):
            await asyncio.sleep(fault.slow_first_s)
            if fault.kind == "malformed":
                return Response(BROKEN_CHUNK[6:], media_type="application/json")
            return JSONResponse(_completion(script, completion_id, model, call_id, usage))
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return StreamingResponse(
            _stream(
                script,
                _Chunks(completion_id, model),
                call_id,
                usage if include_usage else None,
                fault,
            ),
            media_type="text/event-stream",
        )

    async def fake_requests(request: Request) -> Response:
        return JSONResponse(fake.requests())

    async def fake_reset(request: Request) -> Response:
        fake.reset()
        return JSONResponse({"ok": True})

    api = [
        Route("/models", models),
        Route("/models/{model_id:path}", model_detail),
        Route("/chat/completions", chat_completions, methods=["POST"]),
    ]
    return Starlette(
        routes=[
            Mount("/v1", routes=api),
            Mount("/fault/{faults}/v1", routes=api),
            Route("/_fake/requests", fake_requests),
            Route("/_fake/reset", fake_reset, methods=["POST"]),
        ]
    )


@dataclass
class RunningFakeModel:
    """Handle of a fake model server running in this process."""

    base_url: str
    fake: FakeModel

    def requests(self) -> list[dict[str, Any]]:
        """JSON bodies of the chat-completion requests received so far."""
        return self.fake.requests()

    def child_requests(self, goal_start: str) -> list[dict[str, Any]]:
        return self.fake.child_requests(goal_start)

    def reset(self) -> None:
        self.fake.reset()


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1") -> Iterator[int]:
    """Run an ASGI app with uvicorn in a daemon thread; yields the port."""
    sock = socket.socket()
    sock.bind((host, 0))
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", lifespan="off", timeout_graceful_shutdown=2)
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield port
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


@contextlib.contextmanager
def running_fake_model(token_delay: float = 0.0) -> Iterator[RunningFakeModel]:
    """Start the fake model server on a free port for the duration of the block."""
    fake = FakeModel(token_delay=token_delay)
    with serve_in_thread(create_fake_model_app(fake)) as port:
        yield RunningFakeModel(base_url=f"http://127.0.0.1:{port}/v1", fake=fake)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Scripted OpenAI-compatible model server.")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--token-delay", type=float, default=0.0, help="seconds between chunks")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    app = create_fake_model_app(FakeModel(token_delay=args.token_delay))
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
