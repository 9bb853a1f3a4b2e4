"""The model settings' test button (probe_model) against the fake model: a good endpoint, and
each fault reported with the sentence a failed run shows. Then, against a little server of
its own, what the probe shows of an answer that is not a model's: the status,
an OpenAI-shaped error's message, never anything else of the body."""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator

import pytest

from agent_chat.bridge import failures
from agent_chat.runs.model_probe import (
    PROBE_IMAGE,
    PROBE_PROMPT,
    PROVIDER_MESSAGE_CHARS,
    probe_model,
)
from tests.fakes.model_server import NO_IMAGES_ERROR, RunningFakeModel, free_port
from tests.support.http_stub import StubHandler, serving


def _faulty(fake: RunningFakeModel, keywords: str) -> str:
    """A base URL whose models list works but whose chat requests all have the fault."""
    return fake.base_url.replace("/v1", f"/fault/{keywords}/v1")


async def _probe(base_url: str, **extra: object) -> tuple[bool, str]:
    return await probe_model(base_url=base_url, model_name="fake-model", api_key="sk-test", **extra)


async def test_a_good_endpoint_lists_the_model_and_answers(fake_model: RunningFakeModel) -> None:
    fake_model.reset()
    ok, message = await _probe(fake_model.base_url)
    assert ok, message
    assert message == "Connected: the endpoint lists 1 model and fake-model answered."
    chat = fake_model.requests()[-1]
    assert chat["stream"] is True and chat["messages"][-1]["content"] == PROBE_PROMPT
    assert "max_tokens" not in chat


async def test_without_a_model_name_only_the_models_list_is_checked(
    fake_model: RunningFakeModel,
) -> None:
    fake_model.reset()
    ok, message = await probe_model(base_url=fake_model.base_url, model_name="", api_key="")
    assert ok and message == "Connected: the endpoint lists 1 model."
    assert fake_model.requests() == []


async def test_a_refused_connection_says_nothing_listens_there() -> None:
    port = free_port()
    ok, message = await _probe(f"http://127.0.0.1:{port}/v1")
    assert (ok, message) == (
        False,
        f"The connection to 127.0.0.1:{port} was refused: nothing listens there "
        "(is the server running, and the host and port right?).",
    )


@pytest.mark.parametrize(
    ("base_url", "expected"),
    [
        ("ftp://host/v1", "The base URL must start with http:// or https://."),
        ("http://:8000/v1", "The base URL has no host name."),
        ("http://host:99999/v1", "The base URL is not a valid URL: check its host and port."),
        ("http://[::1/v1", "The base URL is not a valid URL: check its host and port."),
        ("http://host:0/v1", "The base URL's port must be a number from 1 to 65535."),
    ],
)
async def test_a_bad_base_url_is_refused_before_anything_is_sent(
    base_url: str, expected: str
) -> None:
    assert await _probe(base_url) == (False, expected)


async def test_a_model_the_endpoint_does_not_list_is_named(fake_model: RunningFakeModel) -> None:
    ok, message = await probe_model(base_url=fake_model.base_url, model_name="gpt-9", api_key="")
    assert not ok and "no model named 'gpt-9'" in message and "fake-model" in message


async def test_http_401_on_chat_says_the_key_was_refused(fake_model: RunningFakeModel) -> None:
    ok, message = await _probe(_faulty(fake_model, "error401"))
    assert (ok, message) == (False, "The model endpoint refused the API key (HTTP 401).")


async def test_http_429_on_chat_says_rate_limited(fake_model: RunningFakeModel) -> None:
    ok, message = await _probe(_faulty(fake_model, "error429"))
    assert (ok, message) == (
        False,
        "The model endpoint is rate limiting requests (HTTP 429). Try again later.",
    )


async def test_http_500_on_chat_names_the_server_error_and_its_message(
    fake_model: RunningFakeModel,
) -> None:
    ok, message = await _probe(_faulty(fake_model, "error500"))
    assert (ok, message) == (
        False,
        "The model endpoint failed with a server error (HTTP 500). "
        "It said: The fake model failed on purpose (error500).",
    )


async def test_a_cut_stream_is_reported(fake_model: RunningFakeModel) -> None:
    ok, message = await _probe(_faulty(fake_model, "cutstream"))
    assert (ok, message) == (False, failures.stream_cut_sentence())
    assert message == "The model endpoint closed the connection in the middle of its answer."


async def test_a_malformed_chunk_is_reported(fake_model: RunningFakeModel) -> None:
    ok, message = await _probe(_faulty(fake_model, "malformed"))
    assert (ok, message) == (False, failures.malformed_sentence())


async def test_a_first_token_slower_than_the_probe_waits_is_reported(
    fake_model: RunningFakeModel,
) -> None:
    started = time.monotonic()
    ok, message = await _probe(_faulty(fake_model, "slowfirst=3"), chat_timeout=0.5)
    assert time.monotonic() - started < 2.5
    assert (ok, message) == (False, failures.slow_first_token_sentence(0.5))
    assert "sent nothing within" in message


async def test_a_slow_first_token_within_the_probe_wait_passes(
    fake_model: RunningFakeModel,
) -> None:
    ok, message = await _probe(_faulty(fake_model, "slowfirst=0.5"), chat_timeout=5)
    assert ok, message


ANSWERED = "Connected: the endpoint lists 1 model and fake-model answered."


def _image_parts(body: dict) -> list[dict]:
    content = body["messages"][-1]["content"]
    return [p for p in content if p.get("type") == "image_url"] if isinstance(content, list) else []


async def test_an_endpoint_that_reads_images_accepts_one(fake_model: RunningFakeModel) -> None:
    fake_model.reset()
    ok, message = await _probe(fake_model.base_url, check_image=True)
    assert (ok, message) == (True, f"{ANSWERED} The endpoint accepted an image.")
    text_check, image_check = fake_model.requests()
    assert _image_parts(text_check) == []
    assert _image_parts(image_check) == [{"type": "image_url", "image_url": {"url": PROBE_IMAGE}}]
    assert PROBE_IMAGE.startswith("data:image/png;base64,")
    assert "max_tokens" not in image_check  # refused by newer models: it would read as refused


async def test_a_text_only_endpoint_refusing_an_image_is_no_success(
    fake_model: RunningFakeModel,
) -> None:
    ok, message = await _probe(_faulty(fake_model, "noimages"), check_image=True)
    assert (ok, message) == (
        False,
        f"{ANSWERED} The endpoint refused an image: The model endpoint rejected the request "
        f"(HTTP 400). It said: {NO_IMAGES_ERROR['message']} — leave 'Reads images' off for "
        "this model.",
    )


async def test_without_the_image_check_no_image_is_sent(fake_model: RunningFakeModel) -> None:
    fake_model.reset()
    ok, message = await _probe(_faulty(fake_model, "noimages"))
    assert (ok, message) == (True, ANSWERED)
    assert [_image_parts(body) for body in fake_model.requests()] == [[]]


SECRET = "internal-secret-7f3a91"
OPENAI_MESSAGE = "You exceeded your current quota, please check your plan and billing details."
HTML_PAGE = f"<html><body><h1>Admin console</h1><p>token={SECRET}</p></body></html>"
MODELS = {"object": "list", "data": [{"id": "m", "object": "model"}]}
# path prefix -> (status, content type, body) for GET /models; "chat-…" prefixes list the
# model and answer the chat request that way instead.
ANSWERS: dict[str, tuple[int, str, str]] = {
    "html500": (500, "text/html", HTML_PAGE),
    "html401": (401, "text/html", HTML_PAGE),
    "html200": (200, "text/html", HTML_PAGE),
    "text400": (400, "text/plain", f"bad request: {SECRET}"),
    "json400": (400, "application/json", json.dumps({"message": SECRET, "detail": SECRET})),
    "jsonstring": (500, "application/json", json.dumps({"error": SECRET})),
    "jsonlist": (200, "application/json", json.dumps({"data": SECRET})),
    "openai": (500, "application/json", json.dumps({"error": {"message": OPENAI_MESSAGE}})),
    "openailong": (
        400,
        "application/json",
        json.dumps({"error": {"message": "x" * 1000 + SECRET, "type": "invalid_request"}}),
    ),
    "chat-html502": (502, "text/html", HTML_PAGE),
    "chat-openai": (400, "application/json", json.dumps({"error": {"message": OPENAI_MESSAGE}})),
    # A refusal inside a 200 stream (some proxies do so, an image part among the reasons).
    "chat-streamerror": (
        200,
        "text/event-stream",
        f"data: {json.dumps({'error': {'message': OPENAI_MESSAGE}})}\n\n",
    ),
    "chat-streamsecret": (200, "text/event-stream", f"data: {json.dumps({'error': SECRET})}\n\n"),
}


class _Handler(StubHandler):
    seen: list[str]  # every path asked for, set per server

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.seen.append(self.path)
        prefix = self.path.split("/")[1]
        if prefix == "redirect":
            port = self.server.server_address[1]
            self.answer(302, "text/html", HTML_PAGE, Location=f"http://127.0.0.1:{port}/{SECRET}")
        elif prefix.startswith("chat-"):
            self.answer(200, "application/json", json.dumps(MODELS))
        elif prefix in ANSWERS:
            self.answer(*ANSWERS[prefix])
        else:
            self.answer(404, "text/html", HTML_PAGE)

    def do_POST(self) -> None:  # noqa: N802
        self.seen.append(self.path)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.answer(*ANSWERS.get(self.path.split("/")[1], (404, "text/html", HTML_PAGE)))


@pytest.fixture(scope="module")
def internal() -> Iterator[tuple[str, list[str]]]:
    """(http://127.0.0.1:port, the paths it was asked for): a service that is no model."""
    seen: list[str] = []
    with serving(type("Handler", (_Handler,), {"seen": seen})) as url:
        yield url, seen


async def _probe_internal(internal: tuple[str, list[str]], prefix: str) -> tuple[bool, str]:
    ok, message = await probe_model(
        base_url=f"{internal[0]}/{prefix}/v1", model_name="m", api_key="sk-test", timeout=5
    )
    assert not ok
    assert SECRET not in message
    return ok, message


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("html500", "The model endpoint failed with a server error (HTTP 500)."),
        ("html401", "The model endpoint refused the API key (HTTP 401)."),
        ("html200", "The endpoint answered, but not with an OpenAI-style models list."),
        ("text400", "The model endpoint rejected the request (HTTP 400)."),
        ("json400", "The model endpoint rejected the request (HTTP 400)."),
        ("jsonstring", "The model endpoint failed with a server error (HTTP 500)."),
        ("jsonlist", "The endpoint answered, but not with an OpenAI-style models list."),
        ("chat-html502", "The model endpoint failed with a server error (HTTP 502)."),
    ],
)
async def test_a_body_that_is_not_an_openai_error_is_never_shown(
    internal: tuple[str, list[str]], prefix: str, expected: str
) -> None:
    assert (await _probe_internal(internal, prefix))[1] == expected


async def test_an_openai_shaped_error_shows_the_providers_message(
    internal: tuple[str, list[str]],
) -> None:
    _, message = await _probe_internal(internal, "openai")
    assert message == (
        f"The model endpoint failed with a server error (HTTP 500). It said: {OPENAI_MESSAGE}"
    )
    _, message = await _probe_internal(internal, "chat-openai")
    assert (
        message == f"The model endpoint rejected the request (HTTP 400). It said: {OPENAI_MESSAGE}"
    )


async def test_an_error_inside_a_stream_is_no_answer(internal: tuple[str, list[str]]) -> None:
    _, message = await _probe_internal(internal, "chat-streamerror")
    said = f"The model endpoint sent an error instead of an answer. It said: {OPENAI_MESSAGE}"
    assert message == said
    _, message = await _probe_internal(internal, "chat-streamsecret")
    assert message == "The model endpoint sent an error instead of an answer."


async def test_a_long_provider_message_is_trimmed(internal: tuple[str, list[str]]) -> None:
    _, message = await _probe_internal(internal, "openailong")
    assert "It said: xxx" in message and message.endswith("…")
    assert len(message) < PROVIDER_MESSAGE_CHARS + 100


async def test_a_redirect_is_not_followed(internal: tuple[str, list[str]]) -> None:
    _, message = await _probe_internal(internal, "redirect")
    assert message.startswith("The endpoint answered with a redirect (HTTP 302)")
    assert not [path for path in internal[1] if SECRET in path]  # the key stayed here


async def test_an_unknown_host_says_its_name_was_not_found() -> None:
    ok, message = await _probe("http://no-such-host.invalid/v1", timeout=5)
    assert not ok and message.startswith(
        "The host name no-such-host.invalid could not be found (DNS)"
    )


async def test_https_to_a_plain_http_server_names_the_tls_failure(
    internal: tuple[str, list[str]],
) -> None:
    ok, message = await _probe(internal[0].replace("http://", "https://") + "/v1", timeout=5)
    assert not ok and message.startswith("The secure (TLS) connection to 127.0.0.1 failed")


async def test_a_server_that_never_answers_is_a_timeout() -> None:
    with socket.socket() as silent:  # listens, never accepts: the request waits for nothing
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        base_url = f"http://127.0.0.1:{silent.getsockname()[1]}/v1"
        ok, message = await _probe(base_url, timeout=1)
    assert (ok, message) == (False, failures.timeout_sentence(base_url, 1))
    assert message == f"The model endpoint at {base_url} did not answer within 1 s."
