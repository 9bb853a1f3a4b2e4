"""Checks an OpenAI-compatible endpoint before a run uses it (the settings' test button).

Two steps, with the sentences a failed run shows (``agent_chat.bridge.failures``):

1. ``GET /models``: reachable, key accepted, the model listed.
2. A tiny streaming chat completion, read to its end within ``chat_timeout``: many endpoints
   list models fine and still cannot answer (a key without chat rights, a model that is not
   loaded, a proxy that cuts streams or mangles chunks). Streaming, like hermes does, so the
   same faults show here. No ``max_tokens`` is sent (newer OpenAI models refuse it); the prompt
   asks for one word. A model that started answering but was still writing when the time ran
   out counts as working.
"""

from __future__ import annotations

import functools
import json
import ssl
import time

import httpx

from agent_chat.bridge import failures

PROBE_PROMPT = "Reply with the single word OK."


@functools.cache
def _tls() -> ssl.SSLContext:
    """One TLS context for every probe: a new client would load the CA bundle again (most of
    a probe's time against a local server). Read once per process, from the environment's
    CA settings as httpx reads them."""
    return httpx.create_ssl_context()


def _bearer(api_key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def _provider_message(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return ""
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or "")
    return str(error or (body.get("message") if isinstance(body, dict) else "") or "")


async def probe_model(
    *,
    base_url: str,
    model_name: str,
    api_key: str,
    timeout: float = 10.0,
    chat_timeout: float = 20.0,
) -> tuple[bool, str]:
    """(ok, a sentence for the person) after asking for the models, then for a tiny answer."""
    if not base_url.startswith(("http://", "https://")):
        return False, "The base URL must start with http:// or https://."
    base = base_url.rstrip("/")
    url = base + "/models"
    try:
        async with httpx.AsyncClient(timeout=timeout, verify=_tls()) as client:
            response = await client.get(url, headers=_bearer(api_key))
    except httpx.TimeoutException:
        return False, failures.timeout_sentence(base_url, timeout)
    except httpx.HTTPError:
        return False, failures.unreachable_sentence(base_url)
    if response.status_code == 404:
        return (
            False,
            f"No models list at {url} (HTTP 404): check the base URL, it usually ends in /v1.",
        )
    if response.status_code >= 400:
        return False, failures.http_status_sentence(
            response.status_code, detail=_provider_message(response)
        )
    try:
        ids = [str(m.get("id")) for m in response.json().get("data", []) if isinstance(m, dict)]
    except (ValueError, AttributeError):
        return False, "The endpoint answered, but not with an OpenAI-style models list."
    if model_name and ids and model_name not in ids:
        shown = ", ".join(ids[:5]) + ("…" if len(ids) > 5 else "")
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
    return True, f"Connected: {listed} and {model_name} answered."


async def _chat_problem(
    base: str, model_name: str, api_key: str, timeout: float, chat_timeout: float
) -> str | None:
    """Why a tiny streamed answer failed, or None when it worked."""
    body = {
        "model": model_name,
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
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
            if response.status_code >= 400:
                await response.aread()
                return failures.http_status_sentence(
                    response.status_code, detail=_provider_message(response)
                )
            async for line in response.aiter_lines():
                if line.startswith("data:"):
                    data = line[5:].strip()
                    if data == "[DONE]":
                        return None
                    try:
                        json.loads(data)
                    except ValueError:
                        return failures.malformed_sentence()
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
    except httpx.HTTPError:
        return failures.unreachable_sentence(base)
    return None if started else failures.stream_cut_sentence()
