"""The checkpoint store on its own (common/checkpoints.py, checkpoint_store.py,
checkpoint_restore.py): a folder recorded and put back exactly (text and binary files,
folders, modes, links), unchanged files stored and read once, links never followed by a
record or a restore, nothing half written when a write fails, the size limit, the paths a
restore keeps, and a store deleted with its conversation."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from agent_chat.common import checkpoint_store
from agent_chat.common.checkpoint_files import open_dir, open_folder
from agent_chat.common.checkpoint_restore import CheckpointMissing, restore
from agent_chat.common.checkpoint_store import MAX_DEPTH, BadCheckpoint, remove_store, store_of
from agent_chat.common.checkpoints import load, record

BINARY = bytes(range(256)) * 64 + b"\x00\xff"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "workspaces"


@pytest.fixture
def chat(root: Path) -> str:
    session_uuid = str(uuid.uuid4())
    (root / session_uuid).mkdir(parents=True)
    return session_uuid


def state(folder: Path) -> dict[str, tuple]:
    """What the folder holds: path -> ("file", mode, bytes) | ("dir", mode) | ("link", target),
    read without following any link."""
    found: dict[str, tuple] = {}
    for top, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(top) / name
            relative = path.relative_to(folder).as_posix()
            info = path.lstat()
            if path.is_symlink():
                found[relative] = ("link", os.readlink(path))
            elif path.is_dir():
                found[relative] = ("dir", info.st_mode & 0o777)
            else:
                found[relative] = ("file", info.st_mode & 0o777, path.read_bytes())
    return found


def settle() -> None:
    """Let the files just written age past the stat cache's racy window (100 ms)."""
    time.sleep(0.15)


def objects(root: Path, chat: str) -> int:
    return sum(len(files) for _, _, files in os.walk(store_of(root, chat).objects))


def fill(folder: Path) -> None:
    (folder / "src" / "deep").mkdir(parents=True)
    (folder / "empty").mkdir()
    (folder / "notes.md").write_text("# Notes\n")
    (folder / "src" / "main.py").write_text("print('hi')\n")
    (folder / "src" / "deep" / "data.bin").write_bytes(BINARY)
    (folder / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (folder / "run.sh").chmod(0o755)
    (folder / "src" / "link-to-notes").symlink_to("../notes.md")


def test_a_folder_is_recorded_and_put_back_exactly(root: Path, chat: str) -> None:
    folder = root / chat
    fill(folder)
    recorded = record(root, chat, "1")
    assert (recorded.files, recorded.folders, recorded.links) == (4, 3, 1)
    before = state(folder)

    # The next run changes everything it can.
    (folder / "notes.md").write_text("rewritten")
    (folder / "run.sh").chmod(0o644)
    (folder / "src" / "deep" / "data.bin").unlink()
    (folder / "src" / "main.py").unlink()
    (folder / "src" / "main.py").mkdir()  # a folder where a file was
    (folder / "src" / "main.py" / "inner.txt").write_text("x")
    (folder / "empty").rmdir()
    (folder / "empty").write_text("a file where a folder was")
    (folder / "new" / "deeper").mkdir(parents=True)
    (folder / "new" / "deeper" / "file.txt").write_text("new")
    (folder / "src" / "link-to-notes").unlink()
    (folder / "src" / "link-to-notes").symlink_to("main.py")
    os.mkfifo(folder / "pipe")

    done = restore(root, chat, "1")
    assert state(folder) == before
    assert done.not_restorable == ()
    # Put back again: nothing to do.
    again = restore(root, chat, "1")
    assert (again.written, again.removed) == (0, 0)
    # The empty folder (no checkpoint before the first turn).
    restore(root, chat, None)
    assert state(folder) == {}


def test_an_unchanged_file_is_stored_once_and_not_read_again(root: Path, chat: str) -> None:
    folder = root / chat
    for n in range(50):
        (folder / f"f{n:02}.txt").write_text(f"file {n}\n" * 100)
    (folder / "copy.txt").write_text("file 0\n" * 100)  # the same bytes as f00.txt
    settle()
    first = record(root, chat, "1")
    assert first.objects_added == 50 == objects(root, chat)
    assert first.bytes_read == sum(p.stat().st_size for p in folder.iterdir())

    (folder / "f07.txt").write_text("changed\n")
    second = record(root, chat, "2")
    assert second.objects_added == 1 and objects(root, chat) == 51
    assert second.bytes_read == len("changed\n")  # the others: the stat cache vouched
    # The new bytes and a manifest of the change only (a delta on checkpoint 1).
    assert second.bytes_added < len("changed\n") + 600, second
    assert first.bytes_added > 50 * 700
    assert load(root, chat, "1")["f07.txt"] != load(root, chat, "2")["f07.txt"]
    assert load(root, chat, "2")["f08.txt"] == load(root, chat, "1")["f08.txt"]

    # Recording again with nothing changed adds only a manifest. f07.txt was hashed just
    # after its write (racily clean), so it is read once more; after that, nothing is.
    settle()
    third = record(root, chat, "3")
    assert (third.bytes_read, third.objects_added) == (len("changed\n"), 0)
    fourth = record(root, chat, "4")
    assert (fourth.bytes_read, fourth.objects_added) == (0, 0)


def test_a_file_changed_within_the_same_timestamp_is_read_again(root: Path, chat: str) -> None:
    """A file written just before it was hashed may change again without its times moving
    (a coarse clock): the cache does not vouch for it ("racily clean")."""
    folder = root / chat
    (folder / "a.txt").write_text("1")
    record(root, chat, "1")  # at once: within the racy window
    info = (folder / "a.txt").stat()
    (folder / "a.txt").write_text("2")
    os.utime(folder / "a.txt", ns=(info.st_atime_ns, info.st_mtime_ns))
    record(root, chat, "2")
    restore(root, chat, "1")
    assert (folder / "a.txt").read_text() == "1"
    restore(root, chat, "2")
    assert (folder / "a.txt").read_text() == "2"


def test_links_are_recorded_as_links_and_never_followed(
    root: Path, chat: str, tmp_path: Path
) -> None:
    folder = root / chat
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("not the workspace's")
    (folder / "sub").mkdir()
    (folder / "sub" / "x.txt").write_text("inside")
    (folder / "a.txt").write_text("a")
    (folder / "out").symlink_to(outside, target_is_directory=True)
    recorded = record(root, chat, "1")
    manifest = load(root, chat, "1")
    assert manifest["out"].kind == "link" and manifest["out"].target == str(outside)
    assert not any(p.startswith("out/") for p in manifest)  # never walked into
    assert recorded.bytes_read == len("inside") + len("a")

    # The agent swaps the folder and a file for links that lead out.
    (folder / "sub" / "x.txt").unlink()
    (folder / "sub").rmdir()
    (folder / "sub").symlink_to(outside, target_is_directory=True)
    (folder / "a.txt").unlink()
    (folder / "a.txt").symlink_to(outside / "secret.txt")
    restore(root, chat, "1")
    assert not (folder / "sub").is_symlink() and (folder / "sub" / "x.txt").read_text() == "inside"
    assert not (folder / "a.txt").is_symlink() and (folder / "a.txt").read_text() == "a"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "not the workspace's"

    # Back to the empty folder: the link is removed, what it leads to is not touched.
    restore(root, chat, None)
    assert list(folder.iterdir()) == []
    assert (outside / "secret.txt").read_text() == "not the workspace's"


def test_a_link_swapped_in_for_a_folder_is_refused_not_followed(
    root: Path, chat: str, tmp_path: Path
) -> None:
    folder = root / chat
    (folder / "sub").symlink_to(tmp_path, target_is_directory=True)
    fd = open_folder(folder)
    try:
        with pytest.raises(OSError):
            open_dir(fd, "sub")
    finally:
        os.close(fd)
    # The conversation's folder itself a link: neither recorded nor restored.
    other = str(uuid.uuid4())
    (root / other).symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OSError):
        record(root, other, "1")
    with pytest.raises(OSError):
        restore(root, other, None)
    assert (tmp_path / "workspaces").is_dir()


def test_a_failed_write_leaves_no_half_checkpoint(
    root: Path, chat: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = root / chat
    (folder / "a.txt").write_text("1")
    record(root, chat, "1")
    (folder / "a.txt").write_text("2")
    (folder / "b.txt").write_text("b")
    real_replace = os.replace

    def crash_on_manifest(src: object, dst: object, **kw: object) -> None:
        if str(dst).endswith(".json"):
            raise OSError(28, "No space left on device")
        real_replace(src, dst, **kw)

    monkeypatch.setattr(checkpoint_store.os, "replace", crash_on_manifest)
    with pytest.raises(OSError):
        record(root, chat, "2")
    monkeypatch.undo()
    store = store_of(root, chat)
    assert load(root, chat, "2") is None  # no checkpoint 2, not half of one
    assert list((store.path / "tmp").iterdir()) == []  # its temporary file went too
    assert load(root, chat, "1")["a.txt"].size == 1
    restore(root, chat, "1")
    assert [p.name for p in folder.iterdir()] == ["a.txt"]
    assert (folder / "a.txt").read_text() == "1"


def test_a_failed_restore_never_leaves_half_a_file(
    root: Path, chat: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = root / chat
    (folder / "a.txt").write_text("a1")
    (folder / "b.txt").write_text("b1")
    record(root, chat, "1")
    (folder / "a.txt").write_text("a2")
    (folder / "b.txt").write_text("b2")
    real_replace = os.replace
    calls = []

    def fail_second(src: object, dst: object, **kw: object) -> None:
        calls.append(dst)
        if len(calls) == 2:
            raise OSError(5, "Input/output error")
        real_replace(src, dst, **kw)

    monkeypatch.setattr(os, "replace", fail_second)
    with pytest.raises(OSError):
        restore(root, chat, "1")
    monkeypatch.undo()
    # Each file is whole: the old bytes or the new ones; no temporary file is left.
    assert sorted(p.name for p in folder.iterdir()) == ["a.txt", "b.txt"]
    assert (folder / "a.txt").read_text() == "a1" and (folder / "b.txt").read_text() == "b2"
    restore(root, chat, "1")
    assert (folder / "b.txt").read_text() == "b1"


def test_a_file_over_the_limit_is_recorded_but_not_restorable(root: Path, chat: str) -> None:
    folder = root / chat
    (folder / "big.bin").write_bytes(b"x" * 100)
    (folder / "small.txt").write_text("small")
    recorded = record(root, chat, "1", max_stored=50)
    assert recorded.not_stored == ("big.bin",)
    entry = load(root, chat, "1")["big.bin"]
    assert (entry.size, entry.stored) == (100, False) and len(entry.sha256) == 64
    assert objects(root, chat) == 1  # only small.txt's bytes

    (folder / "big.bin").write_bytes(b"y" * 100)
    (folder / "small.txt").write_text("changed")
    done = restore(root, chat, "1")
    assert done.not_restorable == ("big.bin",)
    assert (folder / "big.bin").read_bytes() == b"y" * 100  # left as it is, said
    assert (folder / "small.txt").read_text() == "small"
    # The same bytes there: nothing to say.
    (folder / "big.bin").write_bytes(b"x" * 100)
    assert restore(root, chat, "1").not_restorable == ()


def test_a_damaged_object_is_not_written(root: Path, chat: str) -> None:
    folder = root / chat
    (folder / "a.txt").write_text("original")
    record(root, chat, "1")
    store = store_of(root, chat)
    store.object_path(load(root, chat, "1")["a.txt"].sha256).write_text("tampered")
    (folder / "a.txt").write_text("newer")
    assert restore(root, chat, "1").not_restorable == ("a.txt",)
    assert (folder / "a.txt").read_text() == "newer"


def test_the_kept_paths_stay_whatever_the_checkpoint_says(root: Path, chat: str) -> None:
    folder = root / chat
    (folder / "attachments").mkdir()
    (folder / "attachments" / "old.csv").write_text("old")
    record(root, chat, "1")
    (folder / "attachments" / "old.csv").write_text("edited by the replaced answer")
    (folder / "attachments" / "new.csv").write_text("the edited message's file")
    (folder / "other.txt").write_text("the replaced answer's")
    restore(root, chat, None, keep=["attachments/new.csv"])
    assert state(folder) == {
        "attachments": ("dir", (folder / "attachments").stat().st_mode & 0o777),
        "attachments/new.csv": ("file", 0o644, b"the edited message's file"),
    }
    restore(root, chat, "1", keep=["attachments/new.csv", "attachments/missing.csv"])
    assert (folder / "attachments" / "old.csv").read_text() == "old"
    assert (folder / "attachments" / "new.csv").exists()


def test_an_unchanged_file_is_not_rewritten_by_a_restore(root: Path, chat: str) -> None:
    folder = root / chat
    (folder / "same.txt").write_text("same")
    (folder / "other.txt").write_text("1")
    record(root, chat, "1")
    inode = (folder / "same.txt").stat().st_ino
    (folder / "other.txt").write_text("2")
    done = restore(root, chat, "1")
    assert (done.written, done.unchanged) == (1, 1)
    assert (folder / "same.txt").stat().st_ino == inode


def test_a_long_chain_of_deltas_reads_back_whole(root: Path, chat: str) -> None:
    folder = root / chat
    for n in range(20):
        (folder / f"keep{n}.txt").write_text(str(n))
    for n in range(MAX_DEPTH * 2 + 3):
        (folder / "counter.txt").write_text(str(n))
        (folder / f"added{n}.txt").write_text(str(n))
        if n:
            (folder / f"added{n - 1}.txt").unlink()
        record(root, chat, f"c{n}")
    for n in (0, 5, MAX_DEPTH, MAX_DEPTH * 2 + 2):
        restore(root, chat, f"c{n}")
        assert (folder / "counter.txt").read_text() == str(n)
        assert sorted(p.name for p in folder.glob("added*")) == [f"added{n}.txt"]
        assert len(list(folder.glob("keep*"))) == 20
    raws = [json.loads(p.read_text()) for p in (store_of(root, chat).path / "manifests").iterdir()]
    assert max(r["depth"] for r in raws) == MAX_DEPTH - 1
    assert sum(r["base"] is None for r in raws) >= 2


def test_a_checkpoint_never_changes_once_recorded(root: Path, chat: str) -> None:
    """A run finished twice (a takeover, a retried final write) records its name again: the
    first stays, so a later checkpoint that is a delta on it keeps its meaning."""
    folder = root / chat
    for n in range(20):
        (folder / f"f{n}.txt").write_text(str(n))
    record(root, chat, "1")
    (folder / "f0.txt").write_text("changed")
    record(root, chat, "2")  # a delta on 1
    assert json.loads(store_of(root, chat).manifest_path("2").read_text())["base"] == "1"
    (folder / "f1.txt").write_text("changed too")
    assert record(root, chat, "1").already
    assert load(root, chat, "1")["f1.txt"].size == len("1")
    assert load(root, chat, "2")["f1.txt"].size == len("1")


def test_a_manifest_naming_a_path_out_is_refused(root: Path, chat: str) -> None:
    (root / chat / "a.txt").write_text("a")
    record(root, chat, "1")
    path = store_of(root, chat).manifest_path("1")
    raw = json.loads(path.read_text())
    raw["entries"]["../escape.txt"] = raw["entries"]["a.txt"]
    path.write_text(json.dumps(raw))
    with pytest.raises(BadCheckpoint):
        restore(root, chat, "1")
    assert not (root / "escape.txt").exists()
    with pytest.raises(CheckpointMissing):
        restore(root, chat, "2")


def test_a_deleted_conversation_loses_its_checkpoints(root: Path, chat: str) -> None:
    (root / chat / "a.txt").write_text("a")
    record(root, chat, "1")
    assert store_of(root, chat).path.is_dir()
    assert remove_store(root, chat)
    assert not store_of(root, chat).path.exists() and (root / chat / "a.txt").exists()
    assert not remove_store(root, chat)
    assert not remove_store(root, "../" + chat)


def test_a_missing_folder_is_an_empty_checkpoint(root: Path) -> None:
    never = str(uuid.uuid4())
    assert record(root, never, "1").files == 0
    assert load(root, never, "1") == {}
    with pytest.raises(ValueError):
        record(root, never, "../1")
