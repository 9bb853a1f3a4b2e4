"""Where a conversation's workspace lives, shared by the bridge (the agent's tools work
there) and the app (the workspace panel and downloads read it).

One folder per conversation, named by the session's UUID, under one root
(`AGENT_CHAT_WORKSPACES_DIR`, default `data/workspaces`). Both processes must see the same
root: today that means one machine (or one shared volume).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = PROJECT_ROOT / "data" / "workspaces"
# A session UUID as the app makes them; anything else never names a folder.
_SESSION_ID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def workspaces_root(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    raw = env.get("AGENT_CHAT_WORKSPACES_DIR", "").strip()
    return (Path(raw).expanduser() if raw else DEFAULT_ROOT).resolve()


def workspace_dir(root: Path, session_uuid: str) -> Path:
    """The conversation's folder (not created here); ValueError for a malformed id."""
    if not _SESSION_ID.match(session_uuid or ""):
        raise ValueError(f"not a conversation id: {session_uuid!r}")
    return root / session_uuid


def ensure_workspace(root: Path, session_uuid: str) -> Path:
    folder = workspace_dir(root, session_uuid)
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder.resolve()


def inside(folder: Path, candidate: Path) -> bool:
    """True when `candidate`, with every symlink followed, is `folder` or below it."""
    try:
        candidate.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def resolve_inside(root: Path, session_uuid: str, relative: str) -> Path | None:
    """The file `relative` names in the conversation's workspace, or None when it is
    malformed, absolute, or leads outside (`..`, a symlink out)."""
    try:
        folder = workspace_dir(root, session_uuid)
    except ValueError:
        return None
    if not relative or "\x00" in relative or Path(relative).is_absolute():
        return None
    target = folder / relative
    return target if inside(folder, target) else None
