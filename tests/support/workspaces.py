"""A workspaces root with two conversations' folders, and a file outside both."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Workspaces:
    root: Path
    mine: str  # a conversation's uuid
    other: str  # another conversation's uuid
    outside: Path  # a secret file outside every workspace

    @property
    def folder(self) -> Path:
        return self.root / self.mine


def two_workspaces(tmp_path: Path) -> Workspaces:
    """Under `tmp_path`: `workspaces/<mine>` (hello.py, src/notes.md), `workspaces/<other>`
    (secret.txt), and `outside.txt` next to the root."""
    root = tmp_path / "workspaces"
    mine, other = str(uuid.uuid4()), str(uuid.uuid4())
    (root / mine / "src").mkdir(parents=True)
    (root / other).mkdir(parents=True)
    (root / mine / "hello.py").write_text("print('hi')\n", encoding="utf-8")
    (root / mine / "src" / "notes.md").write_text("# Notes\n", encoding="utf-8")
    (root / other / "secret.txt").write_text("the other conversation's", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    outside.write_text("not in any workspace", encoding="utf-8")
    return Workspaces(root, mine, other, outside)
