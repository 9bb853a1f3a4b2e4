"""hermes' picture cache is pruned in every home (bridge/image_cache.py): pictures hermes'
own cache function wrote in a person's home, made older than a day, go; fresh ones stay;
nothing outside the cache folder is touched (other caches, memory, the shared config), and a
running bridge prunes by itself."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import pytest

from agent_chat.bridge import homes, image_cache
from tests.support.bridge import bridge_process

PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32
DAY_AND_AN_HOUR = 25 * 3600


def _ids() -> tuple[int, int]:
    # Fresh people per test: the session's HERMES_HOME is shared by every test.
    base = uuid.uuid4().int % 10**8 + 1000
    return base, base + 1


def _cached_picture(root: Path, user: int) -> Path:
    """A picture written by hermes' own cache function (where an MCP result's image goes)."""
    from gateway.platforms.base import cache_image_from_bytes

    with homes.entered(root, user):
        return Path(cache_image_from_bytes(PNG, ".png"))


def _age(path: Path, seconds: float) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def _everything(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_old_pictures_go_new_ones_stay_and_nothing_else_is_touched(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    a, b = _ids()
    old_a, new_a = _cached_picture(hermes_home, a), _cached_picture(hermes_home, a)
    old_b = _cached_picture(hermes_home, b)
    home_a, home_b = homes.home_path(hermes_home, a), homes.home_path(hermes_home, b)
    assert old_a.parent == home_a / "cache" / "images", old_a  # hermes' layout, per person
    assert old_b.parent == home_b / "cache" / "images", old_b

    # Old files beside the cache, which must stay: another cache, memory, a workspace-like file.
    elsewhere = [
        home_a / "cache" / "audio" / "voice.ogg",
        home_a / "memories" / "MEMORY.md",
        home_b / "notes.txt",
    ]
    for path in elsewhere:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"keep")
    for path in [old_a, old_b, *elsewhere]:
        _age(path, DAY_AND_AN_HOUR)
    _age(new_a, 23 * 3600)  # younger than the bound: a run may still need it
    before = _everything(hermes_home)

    removed = image_cache.prune(hermes_home)

    assert removed >= 2  # other tests' homes share the root; theirs are fresh
    assert not old_a.exists() and not old_b.exists()
    assert new_a.read_bytes() == PNG
    for path in elsewhere:
        assert path.read_bytes() == b"keep", path
    assert (home_a / "config.yaml").is_symlink() and (home_a / "config.yaml").exists()
    assert _everything(hermes_home) == before - {old_a, old_b}
    assert home_a in set(image_cache.homes_with_a_cache(hermes_home))


def test_a_home_without_a_cache_gets_no_cache_folder(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))
    a, _ = _ids()
    home = homes.user_home(hermes_home, a)
    image_cache.prune(hermes_home)
    assert not (home / "cache").exists()  # hermes' function would have made it


def test_a_bridge_process_prunes_by_itself(tmp_path: Path) -> None:
    """`python -m agent_chat.bridge` prunes at start, once hermes is warm (no run needed)."""
    pictures = tmp_path / "home" / homes.USERS_DIR / "7" / "cache" / "images"
    pictures.mkdir(parents=True)
    old, new, other = pictures / "img_old.png", pictures / "img_new.png", pictures.parent / "x"
    for path in (old, new, other):
        path.write_bytes(PNG)
    _age(old, DAY_AND_AN_HOUR)
    _age(other, DAY_AND_AN_HOUR)
    with bridge_process(tmp_path):
        deadline = time.monotonic() + 60
        while old.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not old.exists(), (tmp_path / "bridge.log").read_text(errors="replace")[-2000:]
        assert new.exists() and other.exists()
