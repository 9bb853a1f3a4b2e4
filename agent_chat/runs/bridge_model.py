"""The model settings a run sends to the bridge (the key never goes anywhere else)."""

from __future__ import annotations

from typing import Any

from agent_chat.db.models import ModelConfig


def bridge_model(model: ModelConfig) -> dict[str, Any]:
    """The model settings sent to the bridge (the key never goes anywhere else)."""
    body: dict[str, Any] = {
        "base_url": model.base_url,
        "api_key": model.api_key or "",
        "model": model.model_name,
    }
    if model.context_length:
        body["context_length"] = model.context_length
        # hermes' "custom" provider asks for 65,536 output tokens unless told otherwise, more
        # than a small window holds; an eighth of the window leaves room for the context.
        body["max_tokens"] = max(1024, model.context_length // 8)
    if model.supports_images:
        body["supports_images"] = True  # image parts go to it as they are (bridge/execute.py)
    return body
