"""What a person sees before any model exists (every e2e file starts with an empty app)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.support.stack import Stack

pytestmark = pytest.mark.e2e


def test_model_settings_reject_bad_fields_with_field_errors(page: Page, stack: Stack) -> None:
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-base-url").fill("not a url")
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-name-error")).to_be_visible()
    expect(page.get_by_test_id("model-base-url-error")).to_be_visible()
    expect(page.get_by_test_id("model-id-error")).to_be_visible()
    expect(page.get_by_test_id("model-card")).to_have_count(0)


def test_without_a_model_the_page_links_to_settings(page: Page, stack: Stack) -> None:
    page.goto(stack.url)
    notice = page.get_by_test_id("no-model-notice")
    expect(notice).to_be_visible()
    notice.get_by_role("link").click()
    expect(page).to_have_url(re.compile(r"/settings/models$"))
