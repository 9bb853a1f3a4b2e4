"""The real stack for browser tests: fake model, bridge and app as real processes, and
Debian's chromium driven by Playwright (never `playwright install`)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from tests.browser import CHROMIUM, CHROMIUM_ARGS
from tests.fakes.model_server import RunningFakeModel, free_port, running_fake_model
from tests.support.databases import fresh_database

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SKILL_MD = """---
name: Haiku writer
description: Answers in haiku
---
Answer every question as a haiku.
"""


def _wait_http(url: str, timeout: float, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"{url} process exited {process.returncode}:\n{log.read_text()[-3000:]}"
            )
        try:
            if httpx.get(url, timeout=2).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout:.0f} s:\n{log.read_text()[-3000:]}")


def _stop(process: subprocess.Popen | None) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


@dataclass
class Stack:
    """The running processes; `url` is the web app."""

    tmp: Path
    fake: RunningFakeModel
    env: dict[str, str]
    bridge_port: int
    app_port: int
    bridge: subprocess.Popen | None = None
    app: subprocess.Popen | None = None
    logs: list = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.app_port}"

    def start_bridge(self) -> None:
        log = self.tmp / "bridge.log"
        self.bridge = subprocess.Popen(
            [sys.executable, "-m", "agent_chat.bridge", "--port", str(self.bridge_port)],
            cwd=ROOT,
            env=self.env,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        _wait_http(f"http://127.0.0.1:{self.bridge_port}/health", 90, self.bridge, log)

    def stop_bridge(self) -> None:
        _stop(self.bridge)
        self.bridge = None

    def start_app(self) -> None:
        log = self.tmp / "app.log"
        port = str(self.app_port)
        self.app = subprocess.Popen(
            [sys.executable, "-m", "reflex", "run", "--env", "prod", "--single-port"]
            + ["--frontend-port", port, "--backend-port", port, "--backend-host", "127.0.0.1"],
            cwd=ROOT,
            env=self.env,
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        _wait_http(f"{self.url}/ping", 300, self.app, log)
        _wait_http(f"{self.url}/", 60, self.app, log)

    def stop_app(self) -> None:
        _stop(self.app)
        self.app = None


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    tmp = tmp_path_factory.mktemp("e2e")
    hermes_home = tmp / "hermes"
    hermes_home.mkdir()
    (hermes_home / "config.yaml").write_text("agent:\n  api_max_retries: 1\n", encoding="utf-8")
    skills = tmp / "skills"
    (skills / "haiku").mkdir(parents=True)
    (skills / "haiku" / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    # Broken skill folders: listed as invalid, never crashing the list.
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no front matter here", encoding="utf-8")
    (skills / "empty").mkdir()
    bridge_port, app_port = free_port(), free_port()
    env = {
        **os.environ,
        "HERMES_HOME": str(hermes_home),
        "AGENT_CHAT_BRIDGE_URL": f"http://127.0.0.1:{bridge_port}",
        "AGENT_CHAT_SKILLS_DIR": str(skills),
        "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{os.environ['PATH']}",
        "REFLEX_TELEMETRY_ENABLED": "false",
        "REFLEX_CHECK_LATEST_VERSION": "false",
        # A build folder and state folder of its own: runs in parallel (benchmarks, other
        # test sessions, `reflex export`) must not rebuild the bundle this app serves.
        "REFLEX_WEB_WORKDIR": str(tmp / "web"),
        "REFLEX_STATES_WORKDIR": str(tmp / "states"),
    }
    for name in (
        "AGENT_CHAT_MODEL_BASE_URL",
        "AGENT_CHAT_MODEL",
        "AGENT_CHAT_MODEL_API_KEY",
        "AGENT_CHAT_PASSWORD",  # the shared stack runs without a login (test_10 has its own)
        "AGENT_CHAT_SESSION_HOURS",
        "AGENT_CHAT_SECRET",
        "AGENT_CHAT_BRIDGE_TOKEN",
    ):
        env.pop(name, None)
    with fresh_database(tmp / "app.db") as db_url, running_fake_model(token_delay=0.02) as fake:
        env["AGENT_CHAT_DB_URL"] = db_url  # SQLite, or PostgreSQL (tests/databases.py)
        stack = Stack(tmp=tmp, fake=fake, env=env, bridge_port=bridge_port, app_port=app_port)
        try:
            stack.start_bridge()
            stack.start_app()
            yield stack
        finally:
            stack.stop_app()
            stack.stop_bridge()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import expect

    # CI machines have 2 cores shared with the app, the bridge and the fake model.
    expect.set_options(timeout=15_000)
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (./test.sh does)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, stack: Stack, request: pytest.FixtureRequest):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(20_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    ARTIFACTS.mkdir(exist_ok=True)
    failed = getattr(request.node, "rep_call", None)
    if failed is not None and failed.failed:
        page.screenshot(path=str(ARTIFACTS / f"{request.node.name}-failure.png"))
    context.close()
    assert not errors, f"uncaught errors in the page: {errors}"


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report


def send(page, text: str) -> None:
    """Type a message in the composer and press Enter."""
    box = page.get_by_test_id("composer-input")
    box.fill(text)
    box.press("Enter")


def ensure_fake_model(page, stack: Stack) -> None:
    """Add the fake model through the settings page unless a test already did."""
    from playwright.sync_api import expect

    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    page.wait_for_timeout(300)  # the list arrives with the page's on_load
    if page.get_by_test_id("model-card").count():
        return
    page.get_by_test_id("model-name").fill("Fake model")
    page.get_by_test_id("model-base-url").fill(stack.fake.base_url)
    page.get_by_test_id("model-id").fill("fake-model")
    page.get_by_test_id("model-save").click()
    expect(page.get_by_test_id("model-card")).to_have_count(1)


def new_chat(page, stack: Stack) -> None:
    """Open a new, empty conversation and wait until its page is ready for typing."""
    import re

    from playwright.sync_api import expect

    # Start from a page that does not redirect ("/" jumps to the latest conversation, and a
    # click racing that redirect would land in the wrong one).
    page.goto(f"{stack.url}/settings/models")
    expect(page.get_by_role("heading", name="Models")).to_be_visible()
    page.get_by_test_id("new-session").click()
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}$"))
    expect(page.get_by_test_id("composer-input")).to_be_editable()
    expect(page.get_by_test_id("message-user")).to_have_count(0)
