"""Checks an OpenAI-compatible endpoint before a run uses it (the settings' test button).

Two steps and a third on request, with the sentences a failed run shows
(``agent_chat.bridge.failures``):

1. ``GET /models``: reachable, key accepted, the model listed.
2. A tiny streaming chat completion, read to its end within ``chat_timeout``: many endpoints
   list models fine and still cannot answer (a key without chat rights, a model that is not
   loaded, a proxy that cuts streams or mangles chunks). Streaming, like hermes does, so the
   same faults show here. No ``max_tokens`` is sent (newer OpenAI models refuse it); the prompt
   asks for one word. A model that started answering but was still writing when the time ran
   out counts as working.
3. Only when the form says the model reads images (``check_image``): the same request with a
   tiny PNG as an ``image_url`` data-URL part, the shape attached images go to such a model
   in (``services/attachment_parts.py``). An endpoint that answers text may still refuse
   image parts (HTTP 400 "does not support image input"), and a run would then fail on the
   first attached image; anything but a complete answer counts as refused. No ``max_tokens``
   here either, for the same reason: a refusal of that parameter would read as a refused
   image.

The base URL is whatever an administrator typed, so it may point at any service the app can
reach. The probe therefore never shows what such a service answered: an HTTP error shows its
status and, only from an OpenAI-shaped error body (``{"error": {"message": ...}}``), the
provider's message, trimmed; a failed connection is a fixed sentence (refused, unknown host,
TLS, timeout); redirects are not followed (the key would go with them).
"""

from __future__ import annotations

import functools
import json
import socket
import ssl
import time
from urllib.parse import urlparse

import httpx

from agent_chat.bridge import failures

PROBE_PROMPT = "Reply with the single word OK."
PROVIDER_MESSAGE_CHARS = 300
SHOWN_MODEL_IDS = 5
MODEL_ID_CHARS = 80
# An 8x8 red PNG: small enough for any limit, large enough for providers that refuse 1x1.
PROBE_IMAGE = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR42mP4z8CAFTEMLQkA"
    "KP8/wc53yE8AAAAASUVORK5CYII="
)
IMAGE_ACCEPTED = "The endpoint accepted an image."
IMAGE_REFUSED = (
    "The endpoint refused an image: {problem} — leave 'Reads images' off for this model."
)


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every probe: a new client would load the CA bundle again (most of
    a probe's time against a local server). Read once per process, from the environment's
    CA settings as httpx reads them."""
    return httpx.create_ssl_context()


def _bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _trim(text: str, limit: int) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _provider_message(response: httpx.Response) -> str:
    """The provider's own error message, only from an OpenAI-shaped error body: any other body
    (an HTML error page, an internal service's text or JSON) is not shown, or the test button
    would read out whatever the base URL points at."""
    try:
        body = response.json()
    except ValueError:
        return ""
    return _error_message(body)


def _error_message(body: object) -> str:
    """The trimmed ``error.message`` of an OpenAI-shaped error, "" for anything else."""
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else None
    return _trim(message, PROVIDER_MESSAGE_CHARS) if isinstance(message, str) else ""


def _status_sentence(response: httpx.Response) -> str | None:
    """The sentence for a redirect or an HTTP error, None for a success."""
    status = response.status_code
    if 300 <= status < 400:
        return (
            f"The endpoint answered with a redirect (HTTP {status}), which the test does not "
            "follow (the API key would go with it): enter the address it redirects to."
        )
    if status >= 400:
        return failures.http_status_sentence(status, detail=_provider_message(response))
    return None


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from (httpx wraps the socket's own error)."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _url_problem(base_url: str) -> str | None:
    """What is wrong with the typed URL before anything is sent, None when it can be tried."""
    if not base_url.startswith(("http://", "https://")):
        return "The base URL must start with http:// or https://."
    try:
        parsed = urlparse(base_url)
        port = parsed.port
    except ValueError:  # a bad port or a broken [IPv6] address
        return "The base URL is not a valid URL: check its host and port."
    if not parsed.hostname:
        return "The base URL has no host name."
    if port == 0:
        return "The base URL's port must be a number from 1 to 65535."
    return None


def _connect_sentence(exc: httpx.HTTPError, base_url: str) -> str:
    """Why no connection came about, as a fixed sentence (never the error's own text)."""
    causes = _causes(exc)
    parsed = urlparse(base_url)  # checked by _url_problem
    host = parsed.hostname or base_url
    address = f"{host}:{parsed.port}" if parsed.port else host
    if any(isinstance(c, socket.gaierror) for c in causes):
        return (
            f"The host name {host} could not be found (DNS): check the base URL's spelling, "
            "and that the app's server can resolve that name."
        )
    if any(isinstance(c, ssl.SSLCertVerificationError) for c in causes):
        return (
            f"The TLS certificate of {host} was not accepted (expired, self-signed or for "
            "another name)."
        )
    if any(isinstance(c, ssl.SSLError) for c in causes):
        return (
            f"The secure (TLS) connection to {host} failed: is it a plain http:// server "
            "behind an https:// URL?"
        )
    if any(isinstance(c, ConnectionRefusedError) for c in causes):
        return (
            f"The connection to {address} was refused: nothing listens there "
            "(is the server running, and the host and port right?)."
        )
    return failures.unreachable_sentence(base_url)


def _model_ids(response: httpx.Response) -> list[str] | None:
    """The ids of an OpenAI-style models list, None when the body is not one."""
    try:
        data = response.json().get("data", [])
    except (ValueError, AttributeError):
        return None
    return (
        [str(m.get("id")) for m in data if isinstance(m, dict)] if isinstance(data, list) else None
    )


async def probe_model(
    *,
    base_url: str,
    model_name: str,
    api_key: str,
    timeout: float = 10.0,
    chat_timeout: float = 20.0,
    check_image: bool = False,
) -> tuple[bool, str]:
    """(ok, a sentence for the person) after asking for the models, then for a tiny answer,
    then (`check_image`) for a tiny answer to a message holding an image."""
    if problem := _url_problem(base_url):
        return False, problem
    base = base_url.rstrip("/")
    url = base + "/models"
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=_tls()) as client:
            response = await client.get(url, headers=_bearer(api_key))
    except httpx.TimeoutException:
        return False, failures.timeout_sentence(base_url, timeout)
    except httpx.HTTPError as exc:
        return False, _connect_sentence(exc, base_url)
    except httpx.InvalidURL:  # what urlparse lets through and httpx does not (spaces in a host)
        return False, "The base URL is not a valid URL: check its host and port."
    if response.status_code == 404:
        return (
            False,
            f"No models list at {url} (HTTP 404): check the base URL, it usually ends in /v1.",
        )
    if problem := _status_sentence(response):
        return False, problem
    ids = _model_ids(response)
    if ids is None:
        return False, "The endpoint answered, but not with an OpenAI-style models list."
    if model_name and ids and model_name not in ids:
        shown = ", ".join(_trim(i, MODEL_ID_CHARS) for i in ids[:SHOWN_MODEL_IDS])
        shown += "…" if len(ids) > SHOWN_MODEL_IDS else ""
        return (
            False,
            f"The endpoint works, but has no model named {model_name!r} (it has: {shown}).",
        )
    listed = f"the endpoint lists {len(ids)} model{'s' if len(ids) != 1 else ''}"
    if not model_name:
        return True, f"Connected: {listed}."
    problem = await _chat_problem(base, model_name, api_key, timeout, chat_timeout)
    if problem:
        return False, problem
    answered = f"Connected: {listed} and {model_name} answered."
    if not check_image:
        return True, answered
    problem = await _chat_problem(
        base, model_name, api_key, timeout, chat_timeout, content=_image_content()
    )
    if problem:
        return False, f"{answered} {IMAGE_REFUSED.format(problem=problem)}"
    return True, f"{answered} {IMAGE_ACCEPTED}"


def _image_content() -> list[dict]:
    return [
        {"type": "text", "text": PROBE_PROMPT},
        {"type": "image_url", "image_url": {"url": PROBE_IMAGE}},
    ]


async def _chat_problem(
    base: str,
    model_name: str,
    api_key: str,
    timeout: float,
    chat_timeout: float,
    content: str | list[dict] = PROBE_PROMPT,
) -> str | None:
    """Why a tiny streamed answer failed, or None when it worked."""
    body = {
        "model": model_name,
        "messages": [{"role": "user", "content": content}],
        "stream": True,
    }
    deadline = time.monotonic() + chat_timeout
    started = False  # a valid chunk arrived
    limits = httpx.Timeout(timeout, read=chat_timeout)
    try:
        async with (
            httpx.AsyncClient(timeout=limits, verify=_tls()) as client,
            client.stream(
                "POST", base + "/chat/completions", json=body, headers=_bearer(api_key)
            ) as response,
        ):
            if response.status_code >= 300:
                await response.aread()
                return _status_sentence(response)
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return None
                    try:
                        chunk = json.loads(data)
                    except ValueError:
                        return failures.malformed_sentence()
                    if isinstance(chunk, dict) and chunk.get("error"):
                        # Some proxies refuse after a 200, inside the stream (an image
                        # part among them): not an answer.
                        return _stream_error_sentence(chunk)
                    started = True
                if time.monotonic() > deadline:
                    # Still writing: it answers, just at length. Nothing valid yet: too slow.
                    return None if started else failures.slow_first_token_sentence(chat_timeout)
    except httpx.TimeoutException:
        if started:
            return None
        return failures.slow_first_token_sentence(chat_timeout)
    except (httpx.RemoteProtocolError, httpx.ReadError):
        return failures.stream_cut_sentence()
    except httpx.HTTPError as exc:
        return _connect_sentence(exc, base)
    return None if started else failures.stream_cut_sentence()


def _stream_error_sentence(chunk: dict) -> str:
    """An error sent inside a 200 stream; its message only when OpenAI-shaped."""
    message = _error_message(chunk)
    said = f" It said: {message}" if message else ""
    return f"The model endpoint sent an error instead of an answer.{said}"
