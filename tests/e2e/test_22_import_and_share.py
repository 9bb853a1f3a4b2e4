"""Import and share, as a person does it: a JSON export chosen with
the sidebar's import button opens as a new conversation with its versions; a link made from
the header opens in an anonymous browser (no cookie) on the conversation and nothing else,
and its traffic holds no key and no other conversation; revoked, it answers 404.

The bad files, the round trip and the gate's rule are tested without a browser
(tests/export/test_import.py, tests/share/).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from agent_chat.db import model_configs
from agent_chat.db.engine import make_engine, migrate, open_session
from agent_chat.export import to_json
from tests.support.browser import CHAT_URL
from tests.support.exports import API_KEY, EXPORTED_AT, build_conversation, read_export
from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

OTHER_TITLE = "Other secret conversation"


def _export_file(folder: Path) -> Path:
    """The JSON export (every version) of the tests' rich conversation, made by the app's
    own code in a scratch database."""
    url = f"sqlite:///{folder / 'source.db'}"
    migrate(url)
    engine = make_engine(url)
    try:
        conv = build_conversation(engine)
        doc = to_json(read_export(engine, conv, "all"), exported_at=EXPORTED_AT)
    finally:
        engine.dispose()
    path = folder / "trip-to-rome.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _add_keyed_model(stack: Stack) -> None:
    """The file's model, here with an API key that no shared page may ever carry."""
    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            model_configs.create_model(
                session=session,
                name="Test model",
                base_url=stack.fake.base_url,
                model_name="fake-model",
                api_key=API_KEY,
                is_default=True,
            )
    finally:
        engine.dispose()


def test_import_a_file_then_share_it_with_an_anonymous_reader(
    page: Page, stack: Stack, browser: Browser, tmp_path: Path
) -> None:
    source = _export_file(tmp_path)
    _add_keyed_model(stack)
    other = httpx.post(
        f"{stack.url}/api/chat/sessions", json={"title": OTHER_TITLE}, headers=stack.auth_headers
    )
    assert other.status_code == 201

    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    # Another app's file first: a clear refusal in the banner, the page stays where it was.
    chatgpt = tmp_path / "conversations.json"
    chatgpt.write_text(json.dumps([{"title": "x", "create_time": 1.0, "mapping": {}}]))
    with page.expect_file_chooser() as chooser:
        page.get_by_test_id("import-button").click()
    chooser.value.set_files(str(chatgpt))
    expect(page.get_by_test_id("error-banner")).to_contain_text("looks like a ChatGPT export")
    expect(page).to_have_url(re.compile(r"/settings/models/?$"))
    with page.expect_file_chooser() as chooser:
        page.get_by_test_id("import-button").click()
    chooser.value.set_files(str(source))
    expect(page).to_have_url(CHAT_URL)
    expect(page.get_by_test_id("message-user").last).to_contain_text("A fresh question")
    # The versions came along: the edited first message (1 of 2), the third answer (3 of 3).
    labels = page.get_by_test_id("version-label")
    expect(labels.first).to_have_text("1/2")
    expect(labels.nth(1)).to_have_text("3/3")
    expect(page.get_by_test_id("message-summary")).to_have_count(1)

    page.get_by_test_id("share-button").click()
    expect(page.get_by_test_id("share-dialog")).to_be_visible()
    page.get_by_test_id("share-create").click()
    link = page.get_by_test_id("share-url")
    expect(link).to_have_text(re.compile(r"^http://.+/s/[A-Za-z0-9_-]{32}$"))
    url = link.inner_text()
    expect(page.get_by_test_id("share-link")).to_have_count(1)

    reader = browser.new_context(viewport={"width": 390, "height": 844})  # no cookie
    try:
        anonymous = reader.new_page()
        requests: list[str] = []
        responses: list = []
        anonymous.on("request", lambda request: requests.append(request.url))
        anonymous.on("response", lambda response: responses.append(response))
        first = anonymous.goto(url)
        assert first is not None and first.status == 200
        expect(anonymous.get_by_role("heading", name="Trip to Rome")).to_be_visible()
        expect(anonymous.get_by_text("Go in June and visit the Colosseum.")).to_be_visible()
        # Thinking is folded: there, but not shown until opened.
        expect(anonymous.get_by_text("Let me think about Rome.")).to_be_hidden()
        expect(anonymous.locator("textarea, input, form, script")).to_have_count(0)
        assert requests == [url], requests  # one document: no script, socket or API call
        traffic = "\n".join(r.text() for r in responses)
        for secret in (API_KEY, OTHER_TITLE, "Paris", "fake-model", "Test model"):
            assert secret not in traffic, secret
        assert first.headers["x-robots-tag"].startswith("noindex")
        assert first.headers["referrer-policy"] == "no-referrer"

        # Every link is listed in the settings too; revoked there, it stops answering.
        page.goto(f"{stack.url}/settings/models")
        listed = page.get_by_test_id("shared-links")
        expect(listed.get_by_test_id("share-link")).to_have_count(1)
        expect(listed).to_contain_text("Trip to Rome")
        listed.get_by_test_id("share-revoke").click()
        expect(listed.get_by_test_id("no-shared-links")).to_be_visible()
        gone = anonymous.goto(url)
        assert gone is not None and gone.status == 404
        expect(anonymous.get_by_role("heading", name="This link does not work")).to_be_visible()
    finally:
        reader.close()
