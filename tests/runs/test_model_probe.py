"""The model settings' test button (probe_model) against the fake model: a good endpoint, and
each fault reported with the sentence a failed run shows."""

from __future__ import annotations

import time

from agent_chat.bridge import failures
from agent_chat.runs.model_probe import PROBE_PROMPT, probe_model
from tests.fakes.model_server import RunningFakeModel, free_port


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


async def test_an_unreachable_endpoint_is_reported_like_a_failed_run() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    assert await _probe(base_url) == (False, failures.unreachable_sentence(base_url))


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
