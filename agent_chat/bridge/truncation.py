"""Cutting large tool args/results, with a visible marker saying how much was cut."""

from __future__ import annotations

import json
from typing import Any

LIMIT_CHARS = 20 * 1024


def marker(cut: int) -> str:
    return f"… [truncated {cut} chars]"


def cut_text(text: str, limit: int = LIMIT_CHARS) -> str:
    """``text`` if it fits, else its head and a marker."""
    if len(text) <= limit:
        return text
    return text[:limit] + marker(len(text) - limit)


def _json_len(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, default=str))


def cut_args(args: Any, limit: int = LIMIT_CHARS) -> Any:
    """Tool args that stay an object: long string values are cut until the JSON fits."""
    if not isinstance(args, dict):
        return cut_text(json.dumps(args, ensure_ascii=False, default=str), limit)
    if _json_len(args) <= limit:
        return args
    result: dict[str, Any] = {}
    # Share the budget among the values in order; a value over its share is cut.
    budget = limit
    for key, value in args.items():
        if isinstance(value, str):
            allowed = max(budget - len(key) - 8, 200)
            value = cut_text(value, allowed)
        elif _json_len(value) > max(budget, 200):
            value = cut_text(json.dumps(value, ensure_ascii=False, default=str), max(budget, 200))
        result[key] = value
        budget -= _json_len(value) + len(key) + 4
    return result
