"""Checks an OpenAI-compatible endpoint before a run uses it (the settings' test button)."""

from __future__ import annotations

import httpx


async def probe_model(
    *, base_url: str, model_name: str, api_key: str, timeout: float = 10.0
) -> tuple[bool, str]:
    """(ok, a sentence for the person) after asking the endpoint for its models."""
    if not base_url.startswith(("http://", "https://")):
        return False, "The base URL must start with http:// or https://."
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    url = base_url.rstrip("/") + "/models"
    try:
        async with httpx.AsyncClient(timeout=timeout) as client:
            response = await client.get(url, headers=headers)
    except httpx.TimeoutException:
        return False, f"The endpoint did not answer within {timeout:.0f} s ({url})."
    except httpx.HTTPError as exc:
        return False, f"The endpoint is not reachable: {type(exc).__name__} ({url})."
    if response.status_code in (401, 403):
        return False, f"The endpoint refused the API key (HTTP {response.status_code})."
    if response.status_code == 404:
        return (
            False,
            f"No models list at {url} (HTTP 404): check the base URL, it usually ends in /v1.",
        )
    if response.status_code == 429:
        return False, "The endpoint is rate limiting requests (HTTP 429); try again later."
    if response.status_code >= 400:
        return False, f"The endpoint answered HTTP {response.status_code}."
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
    return True, f"Connected: the endpoint lists {len(ids)} model{'s' if len(ids) != 1 else ''}."
