"""Agent output is untrusted: no script runs, no dialog opens, no image loads by itself, and
API keys never reach the browser or the logs, nor an address they were not
given for."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agent_chat.state.models import KEY_NOT_SENT
from tests.support.browser import new_chat, send
from tests.support.http_stub import StubHandler, serving
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e

HOSTILE = (
    "<script>window.__pwned = 1</script> "
    '<img src=x onerror="window.__pwned = 2"> '
    "[click me](javascript:window.__pwned=3) "
    "![tracker](http://127.0.0.1:9/pixel.png) "
    "<a href=\"javascript:alert('x')\">raw link</a>"
)


def test_hostile_agent_output_is_shown_as_text_and_runs_nothing(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    remote: list[str] = []
    page.on("request", lambda r: remote.append(r.url) if "127.0.0.1:9/" in r.url else None)
    new_chat(page, stack)
    send(page, HOSTILE)  # the fake model echoes it back as its answer
    assistant = page.get_by_test_id("message-assistant")
    expect(assistant).to_have_attribute("data-status", "SUCCESS")
    content = assistant.get_by_test_id("message-content")
    expect(content).to_contain_text("click me")
    page.reload()  # the stored answer, rendered by the other markdown path
    expect(
        page.get_by_test_id("message-assistant").get_by_test_id("message-content")
    ).to_contain_text("click me")
    for _ in range(2):
        assert page.evaluate("window.__pwned") is None
        assert dialogs == []
        message = page.get_by_test_id("message-assistant")
        # Raw HTML is shown as text: no element was made from it.
        assert message.locator("script").count() == 0
        assert message.locator("[onerror]").count() == 0
        assert message.locator('[href^="javascript:" i]').count() == 0
        expect(message.get_by_test_id("message-content")).to_contain_text("<script>")
        # The image is a link to click, not an <img> that loads by itself.
        assert message.locator("img").count() == 0
        expect(message.locator("a.md-image-link")).to_have_count(1)
        page.get_by_role("link", name="click me").click()
        page.wait_for_timeout(300)
    assert remote == []
    # The user's own message is plain text too.
    expect(page.get_by_test_id("message-user")).to_contain_text("<script>")


def test_api_keys_never_reach_the_browser_or_the_logs(page: Page, stack: Stack) -> None:
    secret = "sk-e2e-secret-never-shown-0123456789"
    frames: list[str] = []
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))),
    )
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-name").fill("Keyed model")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-api-key").fill(secret)
    page.get_by_test_id("model-save").click()
    card = page.get_by_test_id("model-card").filter(has_text="Keyed model")
    expect(card).to_have_count(1)
    card.get_by_role("button", name="Edit").click()
    page.get_by_test_id("model-test").click()
    expect(page.get_by_test_id("model-test-result")).to_be_visible()
    new_chat(page, stack)
    page.get_by_test_id("model-select").click()
    page.get_by_role("option", name="Keyed model").click()
    send(page, "Is my key safe?")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")
    with page.expect_download() as info:
        page.get_by_test_id("export-json").click()
    exported = Path(info.value.path()).read_text(encoding="utf-8")
    page.reload()
    expect(page.get_by_test_id("message-assistant")).to_be_visible()

    assert frames, "no websocket traffic was captured"
    assert not [f for f in frames if secret in f]
    assert secret not in page.content()
    assert secret not in exported
    for log in ("app.log", "bridge.log"):
        assert secret not in (stack.tmp / log).read_text(errors="replace")


@pytest.fixture
def elsewhere() -> Iterator[tuple[str, list[str]]]:
    """(a base URL, the Authorization headers it received): another address an administrator
    might point a model at. It refuses every request as an OpenAI endpoint without a key would."""
    received: list[str] = []

    class Handler(StubHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            received.append(self.headers.get("Authorization") or "")
            body = '{"error": {"message": "Missing or wrong API key."}}'
            self.answer(401, "application/json", body)

    with serving(Handler) as url:
        yield f"{url}/v1", received


def _stored_key(stack: Stack, name: str) -> str | None:
    from agent_chat.db import model_configs
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            models = model_configs.list_models(session=session)
            return next(m.api_key for m in models if m.name == name)
    finally:
        engine.dispose()


def test_a_stored_key_never_goes_to_a_changed_base_url(
    page: Page, stack: Stack, elsewhere: tuple[str, list[str]]
) -> None:
    other_url, received = elsewhere
    secret = "sk-e2e-key-for-the-first-address-42"
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-name").fill("Moving model")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-api-key").fill(secret)
    page.get_by_test_id("model-save").click()
    card = page.get_by_test_id("model-card").filter(has_text="Moving model")
    expect(card).to_have_count(1)
    card.get_by_role("button", name="Edit").click()
    notice = page.get_by_test_id("model-api-key-notice")
    expect(notice).to_have_count(0)

    base_url = page.get_by_test_id("model-base-url")
    # The server fills the form for the edit: typing before it lands mixes the two values.
    expect(base_url).to_have_value(stack.fake.base_url)
    base_url.fill(other_url)
    expect(notice).to_have_text(KEY_NOT_SENT)
    page.get_by_test_id("model-test").click()
    result = page.get_by_test_id("model-test-result")
    expect(result).to_contain_text("refused the API key (HTTP 401)")
    expect(result).to_contain_text("Tested without the stored API key")
    assert received == [""]  # asked, without any key

    # A key typed in the form is the one tested against the new address.
    page.get_by_test_id("model-api-key").fill("sk-typed-for-the-new-address")
    page.get_by_test_id("model-test").click()
    expect(result).to_have_text("The model endpoint refused the API key (HTTP 401).")
    assert received[-1] == "Bearer sk-typed-for-the-new-address"

    # Only a trailing slash away from the stored URL is the same address.
    base_url.fill(stack.fake.base_url + "/")
    expect(notice).to_have_count(0)

    # Saved with a new URL and no key: the stored key is gone.
    base_url.fill(other_url)
    page.get_by_test_id("model-api-key").fill("")
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-form-message")).to_contain_text(
        "the stored API key was removed"
    )
    expect(notice).to_have_count(0)
    assert _stored_key(stack, "Moving model") is None
    assert not [header for header in received if secret in header]
