"""Listing and previewing a conversation's workspace (agent_chat/common/workspaces.py): only the
regular files inside its own folder, whatever links or names say."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_chat.common.workspaces import (
    IMAGE_PREVIEW_BYTES,
    list_files,
    open_inside,
    read_preview,
    resolve_inside,
)
from tests.support.workspaces import Workspaces

PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\0" * 20


def paths(workspaces: Workspaces) -> list[str]:
    return [f.path for f in list_files(workspaces.root, workspaces.mine).files]


def test_lists_regular_files_recursively_sorted_with_size_and_time(workspaces: Workspaces) -> None:
    listing = list_files(workspaces.root, workspaces.mine)
    assert listing.exists
    assert [(f.path, f.size) for f in listing.files] == [("hello.py", 12), ("src/notes.md", 8)]
    assert all(f.modified > 0 for f in listing.files)


def test_hermes_temporary_files_are_not_listed(workspaces: Workspaces) -> None:
    # What hermes' write_file leaves for a moment while it writes (then renames it over).
    (workspaces.folder / ".hermes-tmp.YlUANu").write_text("half written")
    (workspaces.folder / "src" / ".hermes-tmp.123.AbCdEf").write_text("")
    (workspaces.folder / ".hidden-but-mine").write_text("x")
    assert paths(workspaces) == [".hidden-but-mine", "hello.py", "src/notes.md"]


def test_a_missing_or_malformed_workspace_lists_nothing(workspaces: Workspaces) -> None:
    import uuid

    assert not list_files(workspaces.root, str(uuid.uuid4())).exists
    assert list_files(workspaces.root, "../" + workspaces.mine).files == ()
    assert list_files(workspaces.root, "").files == ()


def test_links_out_are_not_listed_and_linked_folders_not_walked(workspaces: Workspaces) -> None:
    folder = workspaces.folder
    (folder / "to-outside").symlink_to(workspaces.outside)
    (folder / "to-other").symlink_to(workspaces.root / workspaces.other / "secret.txt")
    (folder / "dir-out").symlink_to(workspaces.outside.parent, target_is_directory=True)
    (folder / "inner-link").symlink_to(folder / "hello.py")
    (folder / "broken").symlink_to(folder / "nowhere")
    os.mkfifo(folder / "pipe")
    assert paths(workspaces) == ["hello.py", "inner-link", "src/notes.md"]


def test_cache_folders_are_named_not_walked_and_the_list_is_capped(workspaces: Workspaces) -> None:
    (workspaces.folder / ".git" / "objects").mkdir(parents=True)
    (workspaces.folder / ".git" / "objects" / "x").write_text("x")
    for n in range(12):
        (workspaces.folder / f"f{n:02}.txt").write_text("x")
    listing = list_files(workspaces.root, workspaces.mine, limit=5)
    assert len(listing.files) == 5 and listing.more == 9
    assert listing.skipped == (".git",)


@pytest.mark.parametrize(
    "relative",
    [
        "../outside.txt",
        "src/../../outside.txt",
        "/etc/passwd",
        "",
        "a\x00b",
        "to-outside",
        "to-other",
        "dir-out/outside.txt",
    ],
)
def test_resolution_refuses_everything_outside(workspaces: Workspaces, relative: str) -> None:
    folder = workspaces.folder
    (folder / "to-outside").symlink_to(workspaces.outside)
    (folder / "to-other").symlink_to(workspaces.root / workspaces.other / "secret.txt")
    (folder / "dir-out").symlink_to(workspaces.outside.parent, target_is_directory=True)
    assert resolve_inside(workspaces.root, workspaces.mine, relative) is None
    with pytest.raises(FileNotFoundError):
        open_inside(workspaces.root, workspaces.mine, relative)
    assert read_preview(workspaces.root, workspaces.mine, relative) is None


def test_other_conversations_files_are_out_of_reach(workspaces: Workspaces) -> None:
    relative = f"../{workspaces.other}/secret.txt"
    assert resolve_inside(workspaces.root, workspaces.mine, relative) is None
    assert read_preview(workspaces.root, workspaces.mine, relative) is None


def test_folders_and_pipes_do_not_open(workspaces: Workspaces) -> None:
    os.mkfifo(workspaces.folder / "pipe")
    for relative in ("src", "pipe", "missing.txt"):
        with pytest.raises(FileNotFoundError):
            open_inside(workspaces.root, workspaces.mine, relative)


def test_open_inside_gives_the_file(workspaces: Workspaces) -> None:
    fd, info = open_inside(workspaces.root, workspaces.mine, "src/notes.md")
    with os.fdopen(fd, "rb") as handle:
        assert handle.read() == b"# Notes\n"
    assert info.st_size == 8


def test_previews_text_markdown_images_and_says_what_it_cannot_show(workspaces: Workspaces) -> None:
    folder = workspaces.folder
    (folder / "pic.png").write_bytes(PNG)
    (folder / "data.bin").write_bytes(bytes(range(256)) * 4)
    (folder / "empty.txt").write_bytes(b"")
    (folder / "latin1.txt").write_bytes("café olé".encode("latin-1"))
    with open(folder / "huge.png", "wb") as handle:
        handle.truncate(IMAGE_PREVIEW_BYTES + 1)

    def kind(relative: str) -> str:
        preview = read_preview(workspaces.root, workspaces.mine, relative)
        assert preview is not None
        return preview.kind

    assert kind("hello.py") == "text"
    assert kind("src/notes.md") == "markdown"
    assert kind("pic.png") == "image"
    assert kind("huge.png") == "large"
    assert kind("data.bin") == "binary"
    assert kind("empty.txt") == "empty"
    assert kind("latin1.txt") == "text"
    text = read_preview(workspaces.root, workspaces.mine, "src/notes.md")
    assert text is not None and text.text == "# Notes\n" and not text.truncated


def test_a_long_text_preview_is_capped_without_a_broken_character(workspaces: Workspaces) -> None:
    (workspaces.folder / "long.txt").write_text("é" * 1000, encoding="utf-8")  # 2000 bytes
    preview = read_preview(workspaces.root, workspaces.mine, "long.txt", cap=101)
    assert preview is not None and preview.truncated
    assert preview.text == "é" * 50 and preview.size == 2000


def test_the_root_may_be_a_symlink_itself(tmp_path: Path, workspaces: Workspaces) -> None:
    link = tmp_path / "root-link"
    link.symlink_to(workspaces.root, target_is_directory=True)
    assert [f.path for f in list_files(link, workspaces.mine).files] == ["hello.py", "src/notes.md"]
    assert read_preview(link, workspaces.mine, "hello.py") is not None


def test_a_huge_tree_is_walked_shallow_first_and_only_so_far(workspaces: Workspaces) -> None:
    deep = workspaces.folder / "a" / "b"
    deep.mkdir(parents=True)
    for n in range(30):
        (deep / f"{n:02}.txt").write_text("x")
    listing = list_files(workspaces.root, workspaces.mine, limit=3, max_visited=20)
    assert not listing.complete
    assert [f.path for f in listing.files] == ["a/b/00.txt", "hello.py", "src/notes.md"]
    whole = list_files(workspaces.root, workspaces.mine, limit=3)
    assert whole.complete and whole.more == 29
