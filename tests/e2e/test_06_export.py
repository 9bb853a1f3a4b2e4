"""The export buttons download the conversation as Markdown and JSON."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import new_chat, send
from tests.support.stack import Stack, ensure_fake_model

pytestmark = pytest.mark.e2e


def test_export_buttons_download_markdown_and_json(page: Page, stack: Stack) -> None:
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    send(page, "Export me please")
    expect(page.get_by_test_id("message-assistant")).to_have_attribute("data-status", "SUCCESS")

    with page.expect_download() as info:
        page.get_by_test_id("export-md").click()
    markdown = Path(info.value.path()).read_text(encoding="utf-8")
    assert info.value.suggested_filename.endswith(".md")
    assert markdown.startswith("# Export me please")
    assert "Echo: Export me please" in markdown

    with page.expect_download() as info:
        page.get_by_test_id("export-json").click()
    data = json.loads(Path(info.value.path()).read_text(encoding="utf-8"))
    assert data["session"]["title"] == "Export me please"
    assert [m["role"] for m in data["messages"]] == ["USER", "ASSISTANT"]


def test_export_of_an_unknown_session_is_a_clear_404(stack: Stack) -> None:
    import httpx

    headers = stack.auth_headers
    response = httpx.get(f"{stack.url}/api/chat/sessions/nope/export?format=md", headers=headers)
    assert response.status_code == 404
    assert "does not exist" in response.json()["detail"]
    response = httpx.get(f"{stack.url}/api/chat/sessions/nope/export?format=pdf", headers=headers)
    assert response.status_code == 422
