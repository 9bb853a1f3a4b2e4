"""The scripted model server itself (used by bridge and end-to-end tests)."""

from __future__ import annotations

import json

import httpx

from tests.fakes.model_server import CONTEXT_LENGTH, RunningFakeModel


def _chat(fake: RunningFakeModel, messages: list[dict], **extra: object) -> httpx.Response:
    body = {"model": "fake-model", "messages": messages, **extra}
    return httpx.post(f"{fake.base_url}/chat/completions", json=body, timeout=10)


def test_models_endpoint_reports_a_large_context(fake_model: RunningFakeModel) -> None:
    listed = httpx.get(f"{fake_model.base_url}/models").json()["data"][0]
    detail = httpx.get(f"{fake_model.base_url}/models/fake-model").json()
    assert listed["id"] == "fake-model" and listed["context_length"] == CONTEXT_LENGTH >= 131072
    assert detail["context_length"] == CONTEXT_LENGTH


def test_streaming_echo_ends_with_usage_and_done(fake_model: RunningFakeModel) -> None:
    response = _chat(
        fake_model,
        [{"role": "user", "content": "Hi there"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    lines = [line[6:] for line in response.text.splitlines() if line.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    chunks = [json.loads(line) for line in lines[:-1]]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    assert text == "Echo: Hi there"
    assert chunks[-1]["usage"]["total_tokens"] > 0


def test_non_streaming_recall_and_recorded_requests(fake_model: RunningFakeModel) -> None:
    fake_model.reset()
    messages = [
        {"role": "user", "content": "first words"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "RECALL now"},
    ]
    body = _chat(fake_model, messages).json()
    assert body["choices"][0]["message"]["content"] == "Earlier you said: first words"
    assert fake_model.requests()[-1]["messages"] == messages
    over_http = httpx.get(fake_model.base_url.removesuffix("/v1") + "/_fake/requests").json()
    assert over_http == fake_model.requests()
    httpx.post(fake_model.base_url.removesuffix("/v1") + "/_fake/reset")
    assert fake_model.requests() == []


def test_error500_and_summarize_prompts(fake_model: RunningFakeModel) -> None:
    failed = _chat(fake_model, [{"role": "user", "content": "error500"}])
    assert failed.status_code == 500 and failed.json()["error"]["message"]
    summary = _chat(
        fake_model,
        [
            {
                "role": "user",
                "content": "You are a summarization agent creating a context checkpoint.",
            }
        ],
    ).json()
    assert "## Goal" in summary["choices"][0]["message"]["content"]


def test_clarify_tool_result_is_answered_with_the_choice(fake_model: RunningFakeModel) -> None:
    messages = [
        {"role": "user", "content": "ask"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "clarify", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": json.dumps({"user_response": "red"})},
    ]
    body = _chat(fake_model, messages).json()
    assert body["choices"][0]["message"]["content"] == "You chose red."
