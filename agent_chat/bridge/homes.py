"""One hermes home per person: ``$HERMES_HOME/users/<user id>/`` (docs/architecture.md §4b).

hermes resolves its home per call through ``hermes_constants.get_hermes_home()``, which
follows a context-local override (``set_hermes_home_override``, a ContextVar) before the
``HERMES_HOME`` of the process. The bridge enters the person's home in the run's own thread,
around building the agent and running the turn (`entered`); hermes hands the context on to
its tool worker threads and its background memory review. So the memory files (read into the
system prompt when an agent is built, written by the memory tool), the skills the agent writes
and hermes' session dumps are the person's.

Shared by everyone: ``config.yaml`` and ``SOUL.md`` (each home links to the shared ones, and
hermes writes through links: the "Always allow" rules, the memory limits, the app's skills
folder, the persona stay one), and what hermes fixed when it was imported (its log, state.db,
auth.json: see docs/architecture.md).

A user id is a positive int, checked here too: a path never comes from a client.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from agent_chat.bridge.memory import ENTRY_DELIMITER, memory_files

logger = logging.getLogger(__name__)

USERS_DIR = "users"
SHARED_LINKS = ("config.yaml", "SOUL.md")
MEMORY_FILES = ("MEMORY.md", "USER.md")
# Written once the shared, pre-accounts memory was handed to a person (`claim_shared`).
CLAIMED_MARKER = ".claimed"

# hermes modules that fix a path below the home when they are first imported (module
# constants: run_agent's log setup and `.env`, state.db, auth.json, skills, checkpoints,
# background processes). Imported in the shared home before any person's home is entered:
# imported first inside one, they would send everyone to that person's files for good.
IMPORT_TIME_HOME_MODULES = (
    "run_agent",
    "hermes_state",
    "agent.auxiliary_client",
    "tools.skills_tool",
    "tools.skill_manager_tool",
    "tools.skills_sync",
    "tools.checkpoint_manager",
    "tools.process_registry",
)
OPTIONAL_IMPORT_TIME_HOME_MODULES = ("tools.environments.singularity", "tools.environments.modal")

_lock = threading.Lock()
_claim_lock = threading.Lock()
_import_lock = threading.Lock()
_made: set[Path] = set()
_imported = False


class BadUser(ValueError):
    """Not a user id (a positive int)."""


def check_user(user_id: object) -> int:
    """``user_id`` as a positive int, or BadUser (bool and strings are no user ids)."""
    if isinstance(user_id, bool) or not isinstance(user_id, int) or not 0 < user_id < 2**63:
        raise BadUser(f"user must be a positive integer, got {user_id!r}")
    return user_id


def home_path(root: Path, user_id: int) -> Path:
    return root / USERS_DIR / str(check_user(user_id))


def user_home(root: Path, user_id: int) -> Path:
    """The person's hermes home below the shared ``root``, made on first use: its own
    ``memories/``, and links to the shared ``config.yaml`` and ``SOUL.md``."""
    home = home_path(root, user_id)
    if home in _made and home.is_dir():
        return home
    with _lock:
        (home / "memories").mkdir(parents=True, exist_ok=True)
        os.chmod(home, 0o700)
        for name in SHARED_LINKS:
            link = home / name
            # Relative (users/<id>/ -> ../../), so the data folder can move as a whole.
            target = Path("..", "..", name)
            if link.is_symlink() and os.readlink(link) == str(target):
                continue
            if link.exists() or link.is_symlink():
                # hermes seeded its own file before the link was made: the shared one wins.
                link.unlink()
            link.symlink_to(target)
        _made.add(home)
    return home


@contextlib.contextmanager
def entered(root: Path, user_id: int) -> Iterator[Path]:
    """Within the block, hermes works in the person's home (this thread's context only)."""
    from hermes_constants import reset_hermes_home_override, set_hermes_home_override

    home = user_home(root, user_id)
    import_hermes_in_the_shared_home()
    token = set_hermes_home_override(str(home))
    try:
        yield home
    finally:
        reset_hermes_home_override(token)


def import_hermes_in_the_shared_home() -> None:
    """Import the IMPORT_TIME_HOME_MODULES with no person's home entered (once)."""
    global _imported
    if _imported:
        return
    import importlib

    from hermes_constants import reset_hermes_home_override, set_hermes_home_override

    with _import_lock:
        if _imported:
            return
        token = set_hermes_home_override(None)  # the process's HERMES_HOME, whatever is set
        try:
            for name in IMPORT_TIME_HOME_MODULES:
                importlib.import_module(name)
            for name in OPTIONAL_IMPORT_TIME_HOME_MODULES:
                try:
                    importlib.import_module(name)
                except Exception:  # an optional backend hermes cannot load here
                    logger.debug("hermes module %s not importable", name)
        finally:
            reset_hermes_home_override(token)
        _imported = True


def claim_shared(root: Path, user_id: int) -> dict[str, object]:
    """Hand the shared memory of an install from before accounts (``root/memories/``) to
    this person, once: each file moves into their home where theirs is empty; where theirs
    holds something, the shared entries it lacks are added after it. Later calls, for anyone,
    change nothing and say who had it."""
    with _claim_lock:
        return _claim(root, user_id)


def _claim(root: Path, user_id: int) -> dict[str, object]:
    shared = root / "memories"
    marker = shared / CLAIMED_MARKER
    if marker.exists():
        try:
            by = json.loads(marker.read_text(encoding="utf-8")).get("user")
        except (OSError, ValueError):
            by = None
        return {"claimed": False, "by": by, "moved": []}
    legacy = {
        name: (shared / name).read_text(encoding="utf-8")
        for name in MEMORY_FILES
        if (shared / name).is_file()
    }
    shared.mkdir(parents=True, exist_ok=True)
    if not any(text.strip() for text in legacy.values()):  # a new install: nothing to give
        marker.write_text(json.dumps({"user": None}), encoding="utf-8")
        return {"claimed": False, "by": None, "moved": []}
    files = memory_files(user_home(root, user_id))
    mine = files.read()
    updates: dict[str, str | None] = {}
    for target, name in (("memory", "MEMORY.md"), ("user", "USER.md")):
        old = legacy.get(name, "")
        if not old.strip():
            continue
        entries = [e for e in str(mine[target]).split(ENTRY_DELIMITER) if e.strip()]
        entries += [e for e in old.split(ENTRY_DELIMITER) if e.strip() and e not in entries]
        updates[target] = ENTRY_DELIMITER.join(entries)
    files.write(updates)  # MemoryLimitError (too much for one file): nothing moves
    for name in MEMORY_FILES:  # kept beside, renamed: hermes reads them no more
        path = shared / name
        if path.is_file():
            path.replace(shared / f"{name}.claimed-by-{user_id}")
    marker.write_text(json.dumps({"user": user_id}), encoding="utf-8")
    logger.info("the shared memory from before accounts now belongs to user %s", user_id)
    return {"claimed": True, "by": user_id, "moved": sorted(legacy)}
