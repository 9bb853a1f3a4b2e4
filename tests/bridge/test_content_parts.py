"""A run's message as content parts (bridge/schemas.py): plain text as before;
with attachments a list, text part first, images only as base64 data: URLs of the four image
types, at most MAX_PARTS; hermes is given plain dicts."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from agent_chat.bridge.schemas import MAX_PARTS, StartRunRequest

MODEL = {"base_url": "http://127.0.0.1:1/v1", "model": "m"}
TEXT = {"type": "text", "text": "Look"}


def _image(url: str) -> dict:
    return {"type": "image_url", "image_url": {"url": url}}


def _request(message: object) -> StartRunRequest:
    return StartRunRequest(user=1, session_id="s", message=message, model=MODEL)


def test_text_and_parts_reach_hermes_as_they_were_sent() -> None:
    assert _request("hi").agent_message() == "hi"
    parts = [TEXT, _image("data:image/webp;base64,AAAA")]
    assert _request(parts).agent_message() == parts
    long = "x" * 500_000  # a long text is not cut by the parts' bound
    assert _request(long).agent_message() == long


@pytest.mark.parametrize(
    "message",
    [
        "",
        [],
        [_image("data:image/png;base64,AAAA")],  # no text part first
        [TEXT, _image("https://example.com/a.png")],  # the bridge fetches nothing
        [TEXT, _image("data:image/svg+xml;base64,AAAA")],
        [TEXT, {"type": "file", "file": {"file_data": "AAAA"}}],
        [TEXT, {**_image("data:image/png;base64,AAAA"), "detail": "x"}],
        [TEXT] * (MAX_PARTS + 1),
    ],
)
def test_anything_else_is_refused(message: object) -> None:
    with pytest.raises(ValidationError):
        _request(message)


def test_the_model_says_whether_it_reads_images() -> None:
    plain = StartRunRequest(user=1, session_id="s", message="hi", model=MODEL)
    marked = StartRunRequest(
        user=1, session_id="s", message="hi", model={**MODEL, "supports_images": True}
    )
    assert (plain.model.supports_images, marked.model.supports_images) == (False, True)
