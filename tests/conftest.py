"""Fixtures every folder may use: the fake model, bridges, and a fresh database per test
(the builders behind them are in tests/support)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from agent_chat.db.engine import make_engine, open_session
from agent_chat.runs.storage import Storage
from tests.fakes.model_server import RunningFakeModel, running_fake_model
from tests.support.bridge import RunningBridge, StartBridge, bridges_in_threads
from tests.support.bridge import hermes_home as make_hermes_home
from tests.support.databases import MigratedDatabases, fresh_database
from tests.support.selection import BROWSER_ON_FIRST
from tests.support.users import default_owner, user_on

# Fixtures of the support modules, registered once for every folder: the stack is one per
# test process (a second definition in another conftest would start a second one).
pytest_plugins = ["tests.support.hang_report", "tests.support.stack", "tests.support.api"]

# --- fake model server and bridge ---------------------------------------------------------


@pytest.fixture(scope="session")
def fake_model() -> Iterator[RunningFakeModel]:
    """The scripted OpenAI-compatible server, one per test session (see its module doc)."""
    with running_fake_model(token_delay=0.0) as server:
        yield server


@pytest.fixture(scope="session")
def hermes_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One HERMES_HOME for the whole session: hermes fixes its paths when first imported."""
    return make_hermes_home(tmp_path_factory.mktemp("hermes-home"))


@pytest.fixture
def start_bridge(hermes_home: Path) -> Iterator[StartBridge]:
    """Start a bridge with settings overrides: ``start_bridge(max_active_runs=1)``."""
    with bridges_in_threads(hermes_home) as start:
        yield start


@pytest.fixture
def bridge(start_bridge: StartBridge) -> RunningBridge:
    """A bridge with default settings except a short keep-alive interval."""
    return start_bridge(keepalive_interval_s=0.5)


# --- a fresh database per test (SQLite, or PostgreSQL with AGENT_CHAT_TEST_DB_URL) ----------


@pytest.fixture(scope="session")
def migrated_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MigratedDatabases]:
    """Where `db_url` comes from: the session's `migrate()` built the schema once."""
    databases = MigratedDatabases(tmp_path_factory.mktemp("db-template"))
    yield databases
    databases.close()


@pytest.fixture
def empty_db_url(tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database (not migrated): for tests of the migration itself."""
    with fresh_database(tmp_path / "db" / "empty.db") as url:
        yield url


@pytest.fixture
def db_url(tmp_path: Path, migrated_databases: MigratedDatabases) -> Iterator[str]:
    """The URL of the test's own database, with the schema and nothing in it."""
    with migrated_databases.database(tmp_path / "db" / "agent_chat.db") as url:
        yield url


@pytest.fixture
def engine(db_url: str) -> Iterator[Engine]:
    engine = make_engine(db_url)
    yield engine
    engine.dispose()


@pytest.fixture
def storage(engine: Engine) -> Storage:
    return Storage(engine)


@pytest.fixture
def user(engine: Engine) -> int:
    """The id of the person who owns the test's conversations (tests/support/users.py)."""
    with open_session(engine) as session:
        return default_owner(session=session)


@pytest.fixture
def other_user(engine: Engine) -> int:
    """Another person, who must see none of `user`'s rows."""
    return user_on(engine, "bob")


# --- which tests use a database, and the order ----------------------------------------------

# A test that takes one of these fixtures (or drives the app: e2e) uses a database: test.sh
# runs those on every database and the others once.
DATABASE_FIXTURES = {"db_url", "empty_db_url", "engine"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("e2e") or DATABASE_FIXTURES & set(item.fixturenames):
            item.add_marker(pytest.mark.db)
        if item.get_closest_marker("e2e") and item.path.name in BROWSER_ON_FIRST:
            item.add_marker(pytest.mark.browser_first)
    # Browser tests run last: sync Playwright keeps an event loop running in the main thread
    # for the rest of the session, which breaks later asyncio tests. Before them, the tests
    # on the shared stack (tests/api, tests/cli): its app waits for the frontend build, which
    # test.sh makes while the tests that need no stack run.
    items.sort(
        key=lambda item: (
            item.get_closest_marker("e2e") is not None,
            "shared_stack" in item.fixturenames,
        )
    )
