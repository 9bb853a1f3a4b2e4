"""What a person sees before any model exists (every e2e file starts with an empty app)."""

from __future__ import annotations

import re
import time

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


def test_a_form_filled_before_the_page_is_live_is_saved(page: Page, stack: Stack) -> None:
    # Under load the prerendered form shows well before its scripts run; what was typed
    # then used to be ignored ("A name is required." under a filled name field).
    page.route("**/*.js", lambda route: (time.sleep(0.3), route.continue_()))
    page.goto(f"{stack.url}/settings/models", wait_until="commit")
    page.get_by_test_id("model-name").fill("Typed early")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-card").filter(has_text="Typed early")).to_have_count(1)
    expect(page.get_by_test_id("model-name-error")).to_have_count(0)
