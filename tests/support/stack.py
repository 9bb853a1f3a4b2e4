"""The real stack for browser tests: the fake model in this process, the bridge and the app
(served as `reflex run --env prod --single-port` serves it) as processes, on free ports, with
a database of their own (tests/support/databases.py) and a copy of the suite's one frontend
build (tests/support/builds.py).

`Stack.reset()` empties the app between test files (no conversation, no model, empty
long-term memory), so every file starts from the same place whatever ran before it.

`running_stack(..., embedded=True)` starts the app with `AGENT_CHAT_BRIDGE=embedded` and no
bridge process (the bridge runs inside the app, agent_chat/runs/embedded.py);
`running_stack(..., bridge_of=other)` starts only an app (and a fake model), on `other`'s
bridge: a file that needs the app with settings of its own, not a bridge of its own.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_chat.auth import COOKIE_NAME
from tests.fakes.model_server import RunningFakeModel, free_port, running_fake_model
from tests.support.accounts import ADMIN_ENV, session_cookie
from tests.support.bridge import hermes_home
from tests.support.builds import install_frontend, shareable
from tests.support.databases import fresh_database
from tests.support.processes import ROOT, start_process, stop_process, wait_http

ARTIFACTS = ROOT / "test-artifacts"  # screenshots (gitignored)
SKILL_MD = """---
name: Haiku writer
description: Answers in haiku
---
Answer every question as a haiku.
"""
# Accounts survive `Stack.reset()`: the administrator and its session are the stack's.
KEPT_BY_RESET = frozenset({"app_user", "auth_session", "oidc_identity"})
# Settings the stack decides itself, whatever the caller's environment says.
_UNSET = (
    "AGENT_CHAT_MODEL_BASE_URL",
    "AGENT_CHAT_MODEL",
    "AGENT_CHAT_MODEL_API_KEY",
    "AGENT_CHAT_PASSWORD",  # an old install's shared password: only when a test gives one
    "AGENT_CHAT_ADMIN_USER",  # the stack's administrator is tests/support/accounts.py's
    "AGENT_CHAT_ADMIN_PASSWORD",
    "AGENT_CHAT_SESSION_HOURS",
    "AGENT_CHAT_BRIDGE_TOKEN",
    "AGENT_CHAT_BRIDGE",  # external unless the stack is asked for `embedded`
    "AGENT_CHAT_BRIDGE_URLS",  # the stack's own bridge unless given `bridges_also`
)


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
    built: bool = False  # the frontend for app_port is built (a restart skips the build)
    embedded: bool = False  # AGENT_CHAT_BRIDGE=embedded: no bridge process, none to start
    borrowed: bool = False  # the bridge is another stack's (`bridge_of`): not ours to start
    # Backend worker processes on the app's port, as `reflex run --env prod` starts them
    # (granian, GRANIAN_WORKERS; several need REFLEX_REDIS_URL): tests/support/reflex_workers.py.
    workers: int = 1
    _cookie: str | None = None  # the administrator's session (one sign-in per stack)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.app_port}"

    @property
    def bridge_url(self) -> str:
        return f"http://127.0.0.1:{self.bridge_port}"

    @property
    def db_url(self) -> str:
        return self.env["AGENT_CHAT_DB_URL"]

    @property
    def session_cookie(self) -> str:
        """A signed-in session of the stack's administrator (AGENT_CHAT_ADMIN_USER): signed
        in once over the login API, kept by `reset()` and app restarts (it is stored)."""
        if self._cookie is None:
            self._cookie = session_cookie(self.url)
        return self._cookie

    @property
    def auth_headers(self) -> dict[str, str]:
        """Headers that make an HTTP client (httpx) the signed-in administrator."""
        return {"Cookie": f"{COOKIE_NAME}={self.session_cookie}"}

    def sign_in(self, context: Any, url: str | None = None) -> None:
        """Give a Playwright browser context the administrator's session cookie (for the
        stack's URL, or `url`: another name of it such as localhost)."""
        context.add_cookies(
            [
                {
                    "name": COOKIE_NAME,
                    "value": self.session_cookie,
                    "url": url or self.url,
                    "httpOnly": True,
                    "sameSite": "Lax",
                }
            ]
        )

    def start_bridge(self) -> None:
        if self.embedded:
            raise RuntimeError("this stack's bridge runs inside the app: restart the app")
        if self.borrowed:
            raise RuntimeError("this stack's bridge is another stack's: start it there")
        self.bridge = start_process(
            [sys.executable, "-m", "agent_chat.bridge", "--port", str(self.bridge_port)],
            env=self.env,
            log=self.tmp / "bridge.log",
            health=f"{self.bridge_url}/health",
            timeout=90,
        )

    def stop_bridge(self) -> None:
        stop_process(self.bridge)
        self.bridge = None

    def start_app(self) -> None:
        port = str(self.app_port)
        log = self.tmp / "app.log"
        if not self.built and shareable(self.env):
            # The suite's one bundle for these compile-time settings, with this port.
            install_frontend(Path(self.env["REFLEX_WEB_WORKDIR"]), self.app_port, self.env)
            self.built = True
        if self.built:
            # The frontend this port was built for is there; `reflex run` would compile and
            # build it again (half a minute or more). Start the backend the way `reflex run
            # --env prod --single-port` does after its build (reflex/utils/exec.py:
            # run_backend_prod): the compiled app mounted, compilation skipped.
            command = [sys.executable, "-m", "uvicorn", "--factory", "agent_chat.agent_chat:app"]
            command += ["--host", "127.0.0.1", "--port", port, "--log-level", "warning"]
            env = {
                **self.env,
                "REFLEX_ENV_MODE": "prod",
                # Reflex's internal variables carry two underscores (reflex_base/environment.py).
                "__REFLEX_SKIP_COMPILE": "true",
                "__REFLEX_MOUNT_FRONTEND_COMPILED_APP": "true",
                "REFLEX_FRONTEND_PORT": port,
                "REFLEX_BACKEND_PORT": port,
            }
            if self.workers > 1:  # Reflex's own several workers, started as Reflex starts them
                command = [sys.executable, "-m", "tests.support.reflex_workers", "127.0.0.1", port]
                env["GRANIAN_WORKERS"] = str(self.workers)
        else:
            # A page that connects to an https URL (REFLEX_API_URL): a build of its own.
            command = [sys.executable, "-m", "reflex", "run", "--env", "prod", "--single-port"]
            command += ["--frontend-port", port, "--backend-port", port]
            command += ["--backend-host", "127.0.0.1"]
            env = self.env
        self.app = start_process(command, env=env, log=log, health=f"{self.url}/ping", timeout=300)
        wait_http(f"{self.url}/", 60, self.app, log)
        self.built = True

    def stop_app(self) -> None:
        stop_process(self.app)
        self.app = None

    def ensure_running(self) -> None:
        """Start what a test stopped and could not start again."""
        own = not self.embedded and not self.borrowed
        if own and (self.bridge is None or self.bridge.poll() is not None):
            self.start_bridge()
        if self.app is None or self.app.poll() is not None:
            self.start_app()

    def reset(self, timeout: float = 30) -> None:
        """Back to an empty app: runs still going stopped and finished, every conversation and
        model deleted, every person's long-term memory emptied, the fake model's request log
        cleared. The accounts and their sessions stay (the signed-in administrator with
        them)."""
        from sqlmodel import SQLModel, col, select

        import agent_chat.db.models  # noqa: F401  (registers the tables)
        from agent_chat.db.engine import make_engine
        from agent_chat.db.models import AppUser, ChatMessage

        self.ensure_running()
        engine = make_engine(self.db_url)
        try:

            def running() -> list[str]:
                query = select(ChatMessage.run_id).where(col(ChatMessage.status) == "RUNNING")
                with engine.connect() as connection:
                    return [run_id for run_id in connection.execute(query).scalars() if run_id]

            for run_id in running():
                self._stop_run(run_id)
            deadline = time.monotonic() + timeout
            while left := running():
                if time.monotonic() > deadline:
                    raise RuntimeError(f"runs {left} did not end within {timeout:.0f} s")
                time.sleep(0.1)
            with engine.begin() as connection:
                for table in reversed(SQLModel.metadata.sorted_tables):
                    if table.name not in KEPT_BY_RESET:
                        connection.execute(table.delete())
            with engine.connect() as connection:
                people = list(connection.execute(select(AppUser.id)).scalars())
        finally:
            engine.dispose()
        self._empty_memory(people)
        self.fake.reset()

    def _stop_run(self, run_id: str) -> None:
        if not self.embedded:
            httpx.post(f"{self.bridge_url}/runs/{run_id}/stop", timeout=10)
            return
        # The bridge is the app's: stop through the app's API (409: it ended meanwhile).
        url = f"{self.url}/api/chat/runs/{run_id}/stop"
        httpx.post(url, headers=self.auth_headers, timeout=10)

    def _empty_memory(self, people: list[int]) -> None:
        """Every person's hermes memory emptied (a memory per person: bridge/homes.py)."""
        if not self.embedded:
            with httpx.Client(timeout=10) as client:  # one: each new client loads the CA bundle
                for user_id in people:
                    reply = client.put(
                        f"{self.bridge_url}/memory",
                        params={"user": user_id},
                        json={"memory": "", "user": ""},
                    )
                    reply.raise_for_status()
            return
        # No way in from outside the app: empty hermes' files (agents built later read them).
        home = Path(self.env["HERMES_HOME"])
        homes = [home] + [home / "users" / str(user_id) for user_id in people]
        for memories in (h / "memories" for h in homes):
            for name in ("MEMORY.md", "USER.md"):
                if (memories / name).exists():
                    (memories / name).write_text("", encoding="utf-8")


def ensure_fake_model(page: Any, stack: Stack) -> None:
    """The fake model as the default model, unless a model exists already. It is stored
    straight in the app's database (`page` is not used: adding a model through the settings
    page is a test of its own, and waiting for that page's list made this step race)."""
    from agent_chat.db import model_configs
    from agent_chat.db.engine import make_engine, open_session

    engine = make_engine(stack.db_url)
    try:
        with open_session(engine) as session:
            if not model_configs.list_models(session=session):
                model_configs.create_model(
                    session=session,
                    name="Fake model",
                    base_url=stack.fake.base_url,
                    model_name="fake-model",
                    is_default=True,
                )
        with open_session(engine) as session:
            assert model_configs.list_models(session=session), "no model after adding one"
    finally:
        engine.dispose()


def _write_skills(skills: Path) -> None:
    (skills / "haiku").mkdir(parents=True)
    (skills / "haiku" / "SKILL.md").write_text(SKILL_MD, encoding="utf-8")
    # Broken skill folders: listed as invalid, never crashing the list.
    (skills / "broken").mkdir()
    (skills / "broken" / "SKILL.md").write_text("no front matter here", encoding="utf-8")
    (skills / "empty").mkdir()


@contextlib.contextmanager
def running_stack(
    tmp: Path,
    *,
    token_delay: float,
    env: dict[str, str] | None = None,
    embedded: bool = False,
    bridge_of: Stack | None = None,
    bridges_also: list[str] | None = None,
    workers: int = 1,
) -> Iterator[Stack]:
    """Fake model, bridge and app, in `tmp` (logs, HERMES_HOME, skills, build folder, SQLite
    file); `env` adds settings (e.g. AGENT_CHAT_PASSWORD). The app makes the administrator
    of tests/support/accounts.py at start (unless `env` says otherwise: an empty
    AGENT_CHAT_ADMIN_USER leaves the first visit's setup form). `embedded`: the bridge runs
    inside the app (AGENT_CHAT_BRIDGE=embedded), no bridge process is started. `bridge_of`:
    the app uses that running stack's bridge (a bridge start is ~6 CPU-s) and its hermes home,
    skills and workspaces (the bridge reads those); the person ids of the two apps' databases
    meet in that bridge's per-person memory, which `Stack.reset()` empties.
    `bridges_also`: bridges (URLs, started by the caller) the app uses besides the stack's
    own (AGENT_CHAT_BRIDGE_URLS, the stack's first). `workers`: backend worker processes on the
    app's port (Reflex's GRANIAN_WORKERS; give REFLEX_REDIS_URL in `env`). Everything stops with
    the block."""
    _write_skills(tmp / "skills")
    bridge_port, app_port = free_port(), free_port()
    full_env = {name: value for name, value in os.environ.items() if name not in _UNSET}
    full_env.update(
        {
            "HERMES_HOME": str(hermes_home(tmp / "hermes")),
            "AGENT_CHAT_BRIDGE_URL": f"http://127.0.0.1:{bridge_port}",
            "AGENT_CHAT_SKILLS_DIR": str(tmp / "skills"),
            "PATH": f"{ROOT / '.tools/node_modules/.bin'}:{ROOT / '.venv/bin'}:{os.environ['PATH']}",
            "REFLEX_TELEMETRY_ENABLED": "false",
            "REFLEX_CHECK_LATEST_VERSION": "false",
            # A build folder and state folder of its own: runs in parallel (benchmarks, other
            # test sessions, `reflex export`) must not rebuild the bundle this app serves.
            "REFLEX_WEB_WORKDIR": str(tmp / "web"),
            "REFLEX_STATES_WORKDIR": str(tmp / "states"),
            # Both profiles, so the browser tests see the selector and can run commands;
            # each conversation's folder is below this stack's own folder.
            "AGENT_CHAT_TOOL_PROFILES": "chat,workspace",
            "AGENT_CHAT_WORKSPACES_DIR": str(tmp / "workspaces"),
            **ADMIN_ENV,
            **({"AGENT_CHAT_BRIDGE": "embedded"} if embedded else {}),
            **(env or {}),
        }
    )
    if bridge_of is not None:
        bridge_port = bridge_of.bridge_port
        full_env["AGENT_CHAT_BRIDGE_URL"] = bridge_of.bridge_url
        for name in ("HERMES_HOME", "AGENT_CHAT_SKILLS_DIR", "AGENT_CHAT_WORKSPACES_DIR"):
            full_env[name] = bridge_of.env[name]
    if bridges_also:
        own = full_env.pop("AGENT_CHAT_BRIDGE_URL")
        full_env["AGENT_CHAT_BRIDGE_URLS"] = ",".join([own, *bridges_also])
    with fresh_database(tmp / "app.db") as db_url, running_fake_model(token_delay) as fake:
        full_env["AGENT_CHAT_DB_URL"] = db_url  # SQLite, or PostgreSQL (databases.py)
        stack = Stack(
            tmp=tmp,
            fake=fake,
            env=full_env,
            bridge_port=bridge_port,
            app_port=app_port,
            embedded=embedded,
            borrowed=bridge_of is not None,
            workers=workers,
        )
        try:
            if not embedded and bridge_of is None:
                stack.start_bridge()
            stack.start_app()
            yield stack
        finally:
            stack.stop_app()
            stack.stop_bridge()


@pytest.fixture(scope="session")
def shared_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Fake model, bridge and app, started once per test process (an app start costs ~6
    CPU-s, a bridge's ~6 more): for tests/api and tests/cli as they find it, and for the
    browser tests, which empty it before each file (`Stack.reset()`, tests/e2e/conftest.py).
    Those run last (tests/conftest.py), so an emptying never takes the API tests' token or
    model away. Registered once for the whole suite by tests/conftest.py."""
    with running_stack(tmp_path_factory.mktemp("stack"), token_delay=0.02) as stack:
        yield stack
