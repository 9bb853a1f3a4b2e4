"""hermes' caches, pruned by age in every person's home (docs/architecture.md §4c).

hermes' tools write files below the home (``cache/<kind>/``, or the old name in a home that
already holds files there: ``hermes_constants.get_hermes_dir``) and almost never delete them:
only its gateway, which the bridge does not run, prunes pictures and documents (hourly, 24 h,
``gateway.platforms.base.cleanup_image_cache`` / ``cleanup_document_cache``); the browser
tool prunes its screenshots (24 h) and recordings (72 h) only when it takes a new one, and
the delegation tool its live transcripts (7 days) only when it starts children. A console
that runs for months would fill its disk. Every folder of `FOLDERS` is pruned here, in the
shared home and each ``users/<id>/`` in turn, at the bridge's start and then hourly: with
hermes' own function where it has a public one (called with that home's override, as
hermes' writers resolve their folder), else `remove_old_files` (regular files directly in
the folder: hermes writes them flat; a symlink is never followed nor removed; a file gone
meanwhile is skipped; the folder itself stays).

By age, not when a run ends: a person's runs share one folder, so one run's end could take a
file another of their runs wrote a moment ago. A file a live run still uses is safe: runs end
after `run_idle_timeout_s` (10 min) of quiet, far below every age here, and the pictures a
conversation keeps are copied out right after their call (bridge/mcp_images.py).

Ages, by how long a file is used:

- 24 h (the gateway's) for files used within the call or the turn that made them: pictures,
  documents, audio (spoken replies, voice notes), videos, screenshots, and the vision tools'
  temporary copies (deleted by the tool itself unless it crashed).
- 7 days (hermes' delegation retention) for ``cache/web`` and ``cache/delegation``: a page's
  full text (web_extract, a long browser snapshot) and a child agent's full summary stay
  named by path in the tool result the conversation keeps, so a later turn, maybe days
  later, may `read_file` them again. Past a week the read fails and the model still has the
  truncated text (the web footer itself says to extract the page again).
- 72 h (the browser tool's) for ``browser_recordings``.

Not pruned: ``cache/piper-voices`` (downloaded voice models, not per-run output: fetched
again if removed) and ``platforms/`` (the gateway's state).
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from agent_chat.bridge import homes

logger = logging.getLogger(__name__)

DAY = 24
WEEK = 7 * DAY
EVERY_S = 3600.0  # the gateway's: once an hour


@dataclass(frozen=True)
class Folder:
    new: str  # hermes' layout, below a home
    old: str  # the legacy name hermes keeps using when it holds files
    max_age_hours: int
    # "module:function(max_age_hours) -> removed", hermes' own clean-up of this folder
    hermes: str | None = None


FOLDERS = (
    Folder("cache/images", "image_cache", DAY, "gateway.platforms.base:cleanup_image_cache"),
    Folder(
        "cache/documents", "document_cache", DAY, "gateway.platforms.base:cleanup_document_cache"
    ),
    Folder("cache/audio", "audio_cache", DAY),
    Folder("cache/videos", "video_cache", DAY),
    Folder("cache/screenshots", "browser_screenshots", DAY),
    Folder("cache/vision", "temp_vision_images", DAY),
    Folder("cache/video", "temp_video_files", DAY),
    Folder("cache/web", "web_cache", WEEK),
    Folder("cache/delegation", "delegation_cache", WEEK),
    Folder("browser_recordings", "browser_recordings", 72),
)
# The child agents' live transcripts: one folder per delegation below cache/delegation/live,
# removed whole by hermes' own function once older than its retention (7 days).
LIVE_TRANSCRIPTS = "cache/delegation/live"


def all_homes(root: Path) -> Iterator[Path]:
    """The shared home and each person's (``users/<id>/``)."""
    users = root / homes.USERS_DIR
    people = sorted(users.iterdir()) if users.is_dir() else []
    for home in [root, *people]:
        if home != root and (not home.name.isdigit() or home.is_symlink()):
            continue  # only the homes the bridge makes (homes.home_path)
        yield home


def remove_old_files(folder: Path, max_age_hours: float) -> int:
    """Delete the regular files directly in `folder` last changed more than `max_age_hours`
    ago; how many went. Symlinks and subfolders are left alone."""
    cutoff = time.time() - max_age_hours * 3600
    removed = 0
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return 0  # gone or unreadable: the next round tries again
    for entry in entries:
        try:
            old = entry.stat(follow_symlinks=False).st_mtime < cutoff
            if old and entry.is_file(follow_symlinks=False):
                os.unlink(entry.path)
                removed += 1
        except FileNotFoundError:
            continue  # removed meanwhile (a tool's own clean-up)
        except OSError:
            logger.debug("could not prune %s", entry.path, exc_info=True)
    return removed


def _hermes_function(spec: str) -> Callable[..., int]:
    module, name = spec.split(":")
    return getattr(importlib.import_module(module), name)


def _prune_folder(folder: Folder) -> int:
    """Prune one folder of the home entered (hermes' override set); never makes it."""
    from hermes_constants import get_hermes_dir

    path = get_hermes_dir(folder.new, folder.old)
    if not path.is_dir():
        return 0  # hermes' functions would make it
    if folder.hermes:
        try:
            return int(_hermes_function(folder.hermes)(max_age_hours=folder.max_age_hours))
        except OSError:
            # hermes' loop stops at a file that went meanwhile: the same rule, tolerant
            logger.debug("hermes' clean-up of %s failed", path, exc_info=True)
    return remove_old_files(path, folder.max_age_hours)


def _prune_live_transcripts() -> int:
    # resolves its folder like its writer; one that is not there stays so
    from tools.delegation_live_log import prune_stale_live_dirs

    return prune_stale_live_dirs(max_age_days=WEEK // DAY)


def prune(root: Path) -> dict[str, int]:
    """Prune every hermes cache folder of every home below `root`; how many files (live
    transcripts: folders) went, per folder (its new name), counting only folders with any."""
    homes.import_hermes_in_the_shared_home()
    from hermes_constants import reset_hermes_home_override, set_hermes_home_override

    removed: dict[str, int] = {}
    steps = [(f.new, lambda f=f: _prune_folder(f)) for f in FOLDERS]
    steps.append((LIVE_TRANSCRIPTS, _prune_live_transcripts))
    for home in all_homes(root):
        token = set_hermes_home_override(str(home))
        try:
            for name, step in steps:
                try:
                    if gone := step():
                        removed[name] = removed.get(name, 0) + gone
                except Exception:  # one folder's trouble never stops the others
                    logger.warning("pruning %s of %s failed", name, home, exc_info=True)
        finally:
            reset_hermes_home_override(token)
    if removed:
        said = ", ".join(f"{name} {count}" for name, count in removed.items())
        logger.info("hermes caches: removed old files: %s", said)
    return removed


class Pruner:
    """A daemon thread: `prune` once `ready` is set (after hermes' warm-up: not to slow it),
    then every `every_s`, until `stop()`."""

    def __init__(self, root: Path, ready: threading.Event, every_s: float = EVERY_S) -> None:
        self.root, self.ready, self.every_s = root, ready, every_s
        self.rounds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="cache-pruner", daemon=True)

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
                logger.warning("pruning hermes' caches failed", exc_info=True)
            self.rounds += 1
            self._stop.wait(self.every_s)
