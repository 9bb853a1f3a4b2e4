"""Usage in the page: each answer's tokens (and cost, with prices set in settings) equal what
the scripted model reported, and the conversation's context meter fills against the model's
window."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from agent_chat.db.models import ModelConfig
from agent_chat.display.usage import cost, money, tokens
from tests.fakes.model_server import _words
from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def test_answers_show_the_models_usage_and_cost_and_the_meter_fills(
    page: Page, stack: Stack
) -> None:
    ensure_fake_model(page, stack)
    page.goto(f"{stack.url}/settings/models")
    card = page.get_by_test_id("model-card").filter(has_text="Fake model")
    card.get_by_role("button", name="Edit").click()
    page.get_by_test_id("model-context-length").fill("100000")
    page.get_by_test_id("model-price-input").fill("1.5")
    page.get_by_test_id("model-price-output").fill("6")
    page.get_by_test_id("model-save").click()
    expect(card).to_contain_text("$1.5 in / $6 out per 1M tokens")

    new_chat(page, stack)
    stack.fake.reset()
    text = "how many tokens is this"
    send(page, text)
    answer = page.get_by_test_id("message-assistant")
    expect(answer).to_have_attribute("data-status", "SUCCESS")
    request = stack.fake.requests()[-1]
    # What the scripted model reported (tests/fakes/model_server.py:_usage).
    used_in = max(1, len(json.dumps(request["messages"])) // 4)
    used_out = max(1, len("".join(_words(f"Echo: {text}"))) // 4)
    priced = ModelConfig(
        name="p", base_url="http://p", model_name="p", price_input=1.5, price_output=6
    )
    expected = f"{tokens(used_in)} in · {tokens(used_out)} out tokens · " + money(
        cost(used_in, used_out, priced)
    )
    expect(answer.get_by_test_id("message-usage")).to_have_text(expected)
    percent = min(100, round(100 * used_in / 100_000))
    expect(page.get_by_test_id("context-meter")).to_contain_text(
        f"Context {tokens(used_in)} of 100.0K ({percent}%)"
    )
