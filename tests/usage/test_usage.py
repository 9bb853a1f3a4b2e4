"""Token use and cost as the page shows them (agent_chat/display/usage.py)."""

from __future__ import annotations

from agent_chat.db.models import ChatMessage, ModelConfig
from agent_chat.display.usage import answer_usage, conversation_meter, cost, tokens


def answer(
    input_tokens: int, output_tokens: int, model_id: int = 1, context: int | None = None
) -> ChatMessage:
    return ChatMessage(
        context_tokens=context,
        session_id=1,
        role="ASSISTANT",
        status="SUCCESS",
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        model_id=model_id,
    )


PRICED = ModelConfig(
    id=1,
    name="m",
    base_url="http://m/v1",
    model_name="m",
    context_length=10_000,
    price_input=1.0,
    price_output=4.0,
)
FREE = ModelConfig(id=2, name="f", base_url="http://f/v1", model_name="f")


def test_token_counts_read_short() -> None:
    assert [tokens(n) for n in (0, 999, 1_234, 1_234_567)] == ["0", "999", "1.2K", "1.2M"]


def test_an_answer_shows_its_tokens_and_its_cost_when_the_model_has_prices() -> None:
    assert answer_usage(answer(1_500, 200), PRICED) == "1.5K in · 200 out tokens · $0.0023"
    assert answer_usage(answer(1_500, 200), FREE) == "1.5K in · 200 out tokens"
    assert answer_usage(answer(0, 0), PRICED) == ""
    assert cost(1_000_000, 0, PRICED) == 1.0 and cost(10, 10, FREE) is None


def test_the_meter_shows_the_latest_context_fill_and_the_conversations_totals() -> None:
    branch = [answer(1_000, 100), answer(5_000, 300)]
    meter = conversation_meter(branch, {1: PRICED}, PRICED)
    assert meter.percent == 50
    assert meter.text == "Context 5.0K of 10.0K (50%) · 6.4K tokens · $0.0076 so far"
    unknown = conversation_meter(branch, {}, FREE)
    assert unknown.percent == -1 and unknown.text == "Context 5.0K · 6.4K tokens"
    assert conversation_meter([], {}, None).text == ""


def test_the_meter_reads_the_last_model_calls_prompt_not_the_runs_sum() -> None:
    """A run that called tools asked the model several times: its input tokens add up every
    call's prompt, its context tokens are the last prompt (the window's fill)."""
    branch = [answer(1_000, 100), answer(9_000, 300, context=3_500)]
    meter = conversation_meter(branch, {1: PRICED}, PRICED)
    assert meter.percent == 35
    assert meter.text.startswith("Context 3.5K of 10.0K (35%) · 10.4K tokens")
