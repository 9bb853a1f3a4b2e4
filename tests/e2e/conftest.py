"""Browser tests: the test process's one real stack (tests/support/stack.py `shared_stack`,
which tests/api used before them), emptied before each test file so that every file runs
alone and in any order, and Debian's chromium driven by Playwright (never `playwright
install`)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS, TEST_CHROMIUM, KeptPage, new_chat
from tests.support.stack import Stack, ensure_fake_model


@pytest.fixture(scope="module")
def stack(shared_stack: Stack) -> Stack:
    """The shared stack, empty when the test file starts: no conversation, no model (tests
    that need one call `ensure_fake_model`), no long-term memory."""
    shared_stack.reset()
    return shared_stack


@pytest.fixture(scope="session")
def playwright() -> Iterator[Any]:
    """Playwright, once per session (sync Playwright cannot be started twice at once)."""
    from playwright.sync_api import expect, sync_playwright

    # CI machines have 2 cores shared with the app, the bridge and the fake model.
    expect.set_options(timeout=15_000)
    with sync_playwright() as playwright:
        yield playwright


def launch(playwright: Any, executable: str) -> Any:
    if not Path(executable).exists():
        pytest.fail(f"{executable} is missing: install it from Debian (./test.sh does)")
    return playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)


@pytest.fixture(scope="session")
def browser(playwright: Any) -> Iterator[Any]:
    """Debian's chromium-headless-shell (tests/support/browser.py says why)."""
    browser = launch(playwright, TEST_CHROMIUM)
    yield browser
    browser.close()


@pytest.fixture(scope="module")
def full_browser(playwright: Any) -> Iterator[Any]:
    """Debian's full chromium, for a file that needs what only it has: the headless shell
    says `Notification.permission` is "denied" even once the permission is granted."""
    browser = launch(playwright, CHROMIUM)
    yield browser
    browser.close()


@pytest.fixture(scope="session")
def kept_page(browser: Any) -> Iterator[KeptPage]:
    """The page the tests of this process share (tests/support/browser.py says why)."""
    kept = KeptPage(browser)
    yield kept
    kept.close()


@pytest.fixture
def page(kept_page: KeptPage, stack: Stack, request: pytest.FixtureRequest):
    """A page on about:blank with no state, signed in as the stack's administrator (the
    process's kept page, put back after each test: `KeptPage`)."""
    with kept_page.page(request, stack) as page:
        yield page


@pytest.fixture
def chat(page, stack: Stack):
    """The page, on a new conversation, with the fake model as the default model."""
    ensure_fake_model(page, stack)
    new_chat(page, stack)
    return page


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, f"rep_{report.when}", report)  # for the page fixtures (`failed_so_far`)
