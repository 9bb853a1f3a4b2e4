"""hermes' picture cache, pruned in every person's home (docs/architecture.md §4c).

hermes writes pictures (an MCP result's image blocks, generated images) to the home's
``cache/images/`` (``image_cache/`` in an old home that already holds files there:
``hermes_constants.get_hermes_dir``) and never deletes them; only its gateway prunes them,
hourly, with ``gateway.platforms.base.cleanup_image_cache(max_age_hours=24)``, and the
bridge runs no gateway. A picture a conversation keeps is copied out right after the tool
call that made it (bridge/mcp_images.py), so a cached copy is dead weight once its run ended.

The same function prunes here, in each home in turn (it resolves the folder through the
context-local home override, as hermes' writers do), at the bridge's start and then hourly.
By age rather than when a run ends: a person's runs share one cache folder, so deleting at
one run's end could take a picture another of their runs cached a moment ago and has not
copied yet; no run lives for `MAX_AGE_HOURS` (runs end after `run_idle_timeout_s` of quiet).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

from agent_chat.bridge import homes

logger = logging.getLogger(__name__)

MAX_AGE_HOURS = 24  # the gateway's
EVERY_S = 3600.0  # the gateway's: once an hour
# hermes' folders (new layout, legacy name); a home with neither has nothing to prune, and
# hermes' function would make the folder.
FOLDERS = ("cache/images", "image_cache")


def homes_with_a_cache(root: Path) -> Iterator[Path]:
    """The shared home and each person's (``users/<id>/``) that has a picture cache folder."""
    users = root / homes.USERS_DIR
    people = sorted(users.iterdir()) if users.is_dir() else []
    for home in [root, *people]:
        if home != root and (not home.name.isdigit() or home.is_symlink()):
            continue  # only the homes the bridge makes (homes.home_path)
        if any((home / folder).is_dir() for folder in FOLDERS):
            yield home


def prune(root: Path, max_age_hours: int = MAX_AGE_HOURS) -> int:
    """Delete cached pictures older than `max_age_hours` in every home below `root` (hermes'
    own clean-up, per home); how many files went."""
    homes.import_hermes_in_the_shared_home()
    from gateway.platforms.base import cleanup_image_cache
    from hermes_constants import reset_hermes_home_override, set_hermes_home_override

    removed = 0
    for home in homes_with_a_cache(root):
        token = set_hermes_home_override(str(home))
        try:
            removed += cleanup_image_cache(max_age_hours=max_age_hours)
        except OSError:  # a folder gone or unreadable: the next round tries again
            logger.warning("pruning the picture cache of %s failed", home, exc_info=True)
        finally:
            reset_hermes_home_override(token)
    if removed:
        logger.info("picture cache: removed %d file(s) older than %d h", removed, max_age_hours)
    return removed


class Pruner:
    """A daemon thread: `prune` once `ready` is set (after hermes' warm-up: not to slow it),
    then every `every_s`, until `stop()`."""

    def __init__(self, root: Path, ready: threading.Event, every_s: float = EVERY_S) -> None:
        self.root, self.ready, self.every_s = root, ready, every_s
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="picture-cache", daemon=True)

    def start(self) -> Pruner:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _loop(self) -> None:
        while not self.ready.wait(0.5):
            if self._stop.is_set():
                return  # stopped before the warm-up ended
        while not self._stop.is_set():
            try:
                prune(self.root)
            except Exception:  # never take the bridge down for a cache
                logger.warning("pruning hermes' picture cache failed", exc_info=True)
            self.rounds += 1
            self._stop.wait(self.every_s)
