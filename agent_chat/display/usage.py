"""Token use and cost, as the page shows them: per answer, and per conversation with how
full the model's context window is. Plain Python (rows.py and the chat state use it)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_chat.db.models import ChatMessage, ModelConfig


def tokens(n: int) -> str:
    """1234 -> "1.2K", 1234567 -> "1.2M", small numbers as they are."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}K"
    return str(n)


def money(usd: float) -> str:
    return f"${usd:.4f}" if usd < 1 else f"${usd:.2f}"


def cost(input_tokens: int, output_tokens: int, model: ModelConfig | None) -> float | None:
    """USD for these tokens at the model's prices, or None when it has no price."""
    if model is None or (model.price_input is None and model.price_output is None):
        return None
    return (
        input_tokens * (model.price_input or 0.0) + output_tokens * (model.price_output or 0.0)
    ) / 1_000_000


def answer_usage(message: ChatMessage, model: ModelConfig | None) -> str:
    """ "1.2K in · 85 out tokens · $0.0031" for an answer with usage, else ""."""
    if message.role != "ASSISTANT" or not (message.input_tokens or message.output_tokens):
        return ""
    used_in, used_out = message.input_tokens or 0, message.output_tokens or 0
    line = f"{tokens(used_in)} in · {tokens(used_out)} out tokens"
    price = cost(used_in, used_out, model)
    return line if price is None else f"{line} · {money(price)}"


@dataclass(frozen=True)
class Meter:
    text: str  # "Context 12.3K of 128.0K (10%) · 3.4K tokens · $0.01 so far"
    percent: int  # 0-100, or -1 when the window size is unknown


def conversation_meter(
    branch: Iterable[ChatMessage], models: dict[int, ModelConfig], current: ModelConfig | None
) -> Meter:
    """The conversation's total use, and how full the window was at its latest answer (its
    last model call's prompt, history included; for an answer stored without it, its input
    tokens, which add up all its calls)."""
    answers = [m for m in branch if m.role == "ASSISTANT" and (m.input_tokens or m.output_tokens)]
    if not answers:
        return Meter("", -1)
    total = sum((m.input_tokens or 0) + (m.output_tokens or 0) for m in answers)
    prices = [
        cost(m.input_tokens or 0, m.output_tokens or 0, models.get(m.model_id or 0))
        for m in answers
    ]
    spent = sum(p for p in prices if p is not None)
    used = answers[-1].context_tokens or answers[-1].input_tokens or 0
    window = current.context_length if current is not None else None
    parts = []
    if window:
        percent = min(100, round(100 * used / window))
        parts.append(f"Context {tokens(used)} of {tokens(window)} ({percent}%)")
    else:
        percent = -1
        parts.append(f"Context {tokens(used)}")
    parts.append(f"{tokens(total)} tokens")
    if any(p is not None for p in prices):
        parts.append(f"{money(spent)} so far")
    return Meter(" · ".join(parts), percent)
