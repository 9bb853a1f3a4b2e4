"""hermes' caches are pruned in every home (bridge/cache_pruner.py): in each cache folder of
the shared home and of a person's, files older than the folder's age go and fresh ones stay;
hermes' own writers write into the folders pruned; a symlink is never followed (its target
outside stays); a home without a folder is not given one; a file gone meanwhile is no
trouble; a running bridge prunes by itself."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agent_chat.bridge import cache_pruner, homes
from agent_chat.bridge.cache_pruner import FOLDERS, LIVE_TRANSCRIPTS
from tests.support.bridge import bridge_process

HOUR = 3600
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 32


@pytest.fixture(autouse=True)
def _hermes_imported(hermes_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # hermes is imported in the session's home; the homes pruned here are the test's own.
    monkeypatch.setenv("HERMES_HOME", str(hermes_home))


def _age(path: Path, hours: float) -> None:
    then = time.time() - hours * HOUR
    os.utime(path, (then, then), follow_symlinks=False)


def _file(path: Path, hours: float, data: bytes = b"cached") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    _age(path, hours)
    return path


def _live_folder(home: Path, name: str, hours: float) -> Path:
    folder = home / LIVE_TRANSCRIPTS / name
    _file(folder / "task-0.log", hours)
    _age(folder, hours)
    return folder


def _everything(root: Path) -> set[Path]:
    return set(root.rglob("*"))


def test_every_cache_folder_is_pruned_in_the_shared_home_and_a_persons(tmp_path: Path) -> None:
    root = tmp_path / "home"
    person = homes.user_home(root, 7)
    old: list[Path] = []
    fresh: list[Path] = []
    for home in (root, person):
        for folder in FOLDERS:
            old.append(_file(home / folder.new / "old.bin", folder.max_age_hours + 1))
            fresh.append(_file(home / folder.new / "fresh.bin", folder.max_age_hours - 1))
        old.append(_live_folder(home, "deleg_old", 7 * 24 + 1))
        fresh.append(_live_folder(home, "deleg_fresh", 7 * 24 - 1))
    # Beside the caches, old too: must stay.
    kept = [_file(person / "memories" / "MEMORY.md", 1000), _file(root / "notes.txt", 1000)]
    kept.append(_file(root / "cache" / "piper-voices" / "voice.onnx", 1000))
    before = _everything(root)

    removed = cache_pruner.prune(root)

    assert [path for path in old if path.exists()] == []
    assert [path for path in fresh if not path.exists()] == []
    assert all(path.read_bytes() == b"cached" for path in kept)
    gone = {path for path in before if not os.path.lexists(path)}
    assert gone == set(old) | {path for path in before if path.parent.name == "deleg_old"}
    assert removed == {folder.new: 2 for folder in FOLDERS} | {LIVE_TRANSCRIPTS: 2}


def test_a_cache_in_its_legacy_folder_is_pruned_there(tmp_path: Path) -> None:
    root = tmp_path / "home"
    person = homes.user_home(root, 7)
    old = [_file(person / folder.old / "old.bin", folder.max_age_hours + 1) for folder in FOLDERS]
    fresh = [_file(person / folder.old / "new.bin", 1) for folder in FOLDERS]
    cache_pruner.prune(root)
    assert [path for path in old if path.exists()] == []
    assert all(path.exists() for path in fresh)
    assert not (person / "cache").exists()  # hermes keeps using the legacy folders


def test_hermes_writers_write_into_the_folders_pruned(tmp_path: Path) -> None:
    from gateway.platforms import base
    from tools import browser_tool, delegate_tool, delegation_live_log, web_tools

    root = tmp_path / "home"
    with homes.entered(root, 7):
        written = [
            base.cache_image_from_bytes(PNG, ".png"),
            base.cache_document_from_bytes(b"%PDF-1.4", "report.pdf"),
            base.cache_audio_from_bytes(b"OggS", ".ogg"),
            base.cache_video_from_bytes(b"\0\0\0\x18ftypmp42", ".mp4"),
            web_tools._store_full_text("https://example.com/a", "page " * 100),
            browser_tool._store_full_snapshot("snapshot " * 100),
            delegate_tool._spill_summary_to_file(0, "summary " * 100),
        ]
        live = delegation_live_log.live_transcript_root()
    home = homes.home_path(root, 7)
    pruned = {home / folder.new for folder in FOLDERS}
    assert [path for path in written if Path(str(path)).parent not in pruned] == []
    assert live == home / LIVE_TRANSCRIPTS


def test_a_symlink_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "home"
    person = homes.user_home(root, 7)
    outside = _file(tmp_path / "outside" / "precious.txt", 1000, b"precious")
    outside_dir = tmp_path / "outside" / "folder"
    _file(outside_dir / "inside.txt", 1000, b"precious")
    _age(outside_dir, 1000)
    links = []
    for folder in [*(f.new for f in FOLDERS), LIVE_TRANSCRIPTS]:
        (person / folder).mkdir(parents=True, exist_ok=True)
        (person / folder / "link.txt").symlink_to(outside)
        (person / folder / "link_dir").symlink_to(outside_dir, target_is_directory=True)
        links.append(person / folder / "link_dir")
        if not any(f.new == folder and f.hermes for f in FOLDERS):
            links.append(person / folder / "link.txt")
        for link in (person / folder / "link.txt", person / folder / "link_dir"):
            _age(link, 1000)

    cache_pruner.prune(root)

    assert outside.read_bytes() == b"precious"
    assert (outside_dir / "inside.txt").read_bytes() == b"precious"
    assert [link for link in links if not link.is_symlink()] == []


def test_a_home_without_the_folders_is_not_given_them(tmp_path: Path) -> None:
    root = tmp_path / "home"
    person = homes.user_home(root, 7)
    _file(homes.user_home(root, 8) / "cache" / "web" / "old.md", 1000)
    before = _everything(root)
    cache_pruner.prune(root)
    assert _everything(root) == before - {root / "users" / "8" / "cache" / "web" / "old.md"}
    assert not (person / "cache").exists() and not (root / "cache").exists()


def test_a_file_gone_meanwhile_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "cache"
    first, second = _file(folder / "a", 100), _file(folder / "b", 100)
    listed = os.scandir

    def list_then_lose_first(path: Path) -> list[os.DirEntry[str]]:
        entries = sorted(listed(path), key=lambda entry: entry.name)
        first.unlink()  # a run's own clean-up, between the listing and the removal
        return entries

    monkeypatch.setattr(cache_pruner.os, "scandir", list_then_lose_first)
    assert cache_pruner.remove_old_files(folder, 24) == 1
    assert not second.exists() and folder.is_dir()


def test_a_bridge_process_prunes_by_itself(tmp_path: Path) -> None:
    """`python -m agent_chat.bridge` prunes at start, once hermes is warm (no run needed)."""
    person = tmp_path / "home" / homes.USERS_DIR / "7"
    old_picture = _file(person / "cache" / "images" / "img_old.png", 25, PNG)
    old_page = _file(person / "cache" / "web" / "old.md", 7 * 24 + 1)
    new_page = _file(person / "cache" / "web" / "new.md", 25)
    other = _file(person / "cache" / "x", 25)
    with bridge_process(tmp_path):
        deadline = time.monotonic() + 60
        while (old_picture.exists() or old_page.exists()) and time.monotonic() < deadline:
            time.sleep(0.2)
        log = (tmp_path / "bridge.log").read_text(errors="replace")
        assert not old_picture.exists() and not old_page.exists(), log[-2000:]
        assert new_page.exists() and other.exists()
