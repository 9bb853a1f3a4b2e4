"""A model's "Reads images" box in Settings → Models: saved on create and edit, shown as a
badge in the list, and checked by Test connection (the fake model answers an image part, or,
through its ``noimages`` URL, refuses it with HTTP 400)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.support.stack import Stack

pytestmark = pytest.mark.e2e

REFUSED_TAIL = "— leave 'Reads images' off for this model."


def _fill(page: Page, stack: Stack, name: str, base_url: str) -> None:
    page.goto(f"{stack.url}/settings/models")
    page.get_by_test_id("model-name").fill(name)
    page.get_by_test_id("model-base-url").fill(base_url)
    page.get_by_test_id("model-id").fill("fake-model")


def test_reads_images_is_tested_saved_shown_and_kept(page: Page, stack: Stack) -> None:
    _fill(page, stack, "Seeing model", stack.fake.base_url)
    box = page.get_by_test_id("model-supports-images")
    expect(box).not_to_be_checked()
    box.click()
    expect(box).to_be_checked()
    page.get_by_test_id("model-test").click()
    result = page.get_by_test_id("model-test-result")
    expect(result).to_contain_text("fake-model answered. The endpoint accepted an image.")
    page.get_by_test_id("model-save").click()
    card = page.get_by_test_id("model-card").filter(has_text="Seeing model")
    expect(card.get_by_test_id("model-images-badge")).to_have_text("images")
    expect(page.get_by_test_id("model-supports-images")).not_to_be_checked()  # a new form

    page.reload()
    card = page.get_by_test_id("model-card").filter(has_text="Seeing model")
    expect(card.get_by_test_id("model-images-badge")).to_have_count(1)
    card.get_by_role("button", name="Edit").click()
    expect(page.get_by_test_id("model-name")).to_have_value("Seeing model")
    expect(page.get_by_test_id("model-supports-images")).to_be_checked()

    # Unticked on edit: the badge goes.
    page.get_by_test_id("model-supports-images").click()
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-form-message")).to_contain_text("Saved Seeing model.")
    expect(card.get_by_test_id("model-images-badge")).to_have_count(0)


def test_an_endpoint_refusing_images_is_reported_not_passed(page: Page, stack: Stack) -> None:
    text_only = stack.fake.base_url.replace("/v1", "/fault/noimages/v1")
    _fill(page, stack, "Text only", text_only)
    page.get_by_test_id("model-supports-images").click()
    page.get_by_test_id("model-test").click()
    result = page.get_by_test_id("model-test-result")
    expect(result).to_contain_text(
        "The endpoint refused an image: The model endpoint rejected the request (HTTP 400). "
        "It said: This model does not support image input"
    )
    expect(result).to_contain_text(REFUSED_TAIL)
    expect(result).not_to_contain_text("accepted an image")
    expect(result).to_have_attribute("data-accent-color", "red")

    # Without the box the image is not tried, and the text check passes.
    page.get_by_test_id("model-supports-images").click()
    page.get_by_test_id("model-test").click()
    expect(result).to_have_text("Connected: the endpoint lists 1 model and fake-model answered.")
