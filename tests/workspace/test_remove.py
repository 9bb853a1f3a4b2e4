"""A deleted conversation's folder goes with it (never following a symlink out)."""

from __future__ import annotations

import uuid
from pathlib import Path

from agent_chat.common.workspaces import ensure_workspace, remove_workspace


def test_the_folder_and_its_files_are_removed(tmp_path: Path) -> None:
    session = str(uuid.uuid4())
    folder = ensure_workspace(tmp_path, session)
    (folder / "sub").mkdir()
    (folder / "sub" / "file.txt").write_text("x")
    assert remove_workspace(tmp_path, session) and not folder.exists()
    assert not remove_workspace(tmp_path, session)  # nothing left to remove
    assert not remove_workspace(tmp_path, "../etc")  # not a conversation id


def test_a_symlinked_folder_is_unlinked_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    session = str(uuid.uuid4())
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / session).symlink_to(elsewhere)
    assert remove_workspace(tmp_path / "root", session)
    assert (elsewhere / "keep.txt").exists()


def test_the_sandbox_home_goes_with_the_folder(tmp_path: Path) -> None:
    from agent_chat.common.workspaces import SANDBOX_DIR

    session = str(uuid.uuid4())
    ensure_workspace(tmp_path, session)
    home = tmp_path / SANDBOX_DIR / session / "home"
    home.mkdir(parents=True)
    (home / ".bash_history").write_text("ls\n", encoding="utf-8")
    other = tmp_path / SANDBOX_DIR / str(uuid.uuid4())
    other.mkdir()
    assert remove_workspace(tmp_path, session)
    assert not (tmp_path / SANDBOX_DIR / session).exists() and other.is_dir()


def test_the_tools_pictures_go_with_the_conversation(tmp_path: Path) -> None:
    from agent_chat.common.tool_images import image_path

    session, other = str(uuid.uuid4()), str(uuid.uuid4())
    for chat in (session, other):
        picture = image_path(tmp_path, chat, "img_0123456789ab.png")
        picture.parent.mkdir(parents=True)
        picture.write_bytes(b"\x89PNG")
    remove_workspace(tmp_path, session)  # a Chat conversation: no folder, its pictures go
    assert not image_path(tmp_path, session, "img_0123456789ab.png").parent.exists()
    assert image_path(tmp_path, other, "img_0123456789ab.png").is_file()
