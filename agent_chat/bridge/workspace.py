"""A Workspace run's folder: hermes' tools work there, and its file tools write nowhere else.

hermes 0.19 anchors a session's working directory per `task_id`
(`register_task_env_overrides(task_id, {"cwd": ...})`, the way its ACP adapter gives each
editor its own project): relative paths of the file tools and the terminal's working
directory resolve against it, per session, in one process. The run passes the session id
as `task_id`, so two conversations never share a folder.

Writes by `write_file` and `patch` outside the folder (`../`, absolute paths, symlinks that
lead out) are refused with a tool error the agent reads. The terminal cannot be fenced
this way: a command can still write elsewhere as the bridge's user; hermes' dangerous-command
guard asks for approval of the destructive ones (README "Tool profiles").
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_chat.common.workspaces import ensure_workspace, inside

_lock = threading.Lock()
_folders: dict[str, Path] = {}  # task id -> folder, while a Workspace run of it works
_guarded = False
GUARDED_TOOLS = ("write_file", "patch")
# The file names inside a V4A multi-file patch (hermes' `patch` tool, mode "patch").
_PATCH_PATHS = re.compile(
    r"^\*\*\*\s+(?:(?:Add|Update|Delete)\s+File|Move\s+to):\s*(.+?)\s*$", re.MULTILINE
)


def open_workspace(root: Path, session_id: str, workspace: str) -> Path:
    """Create the conversation's folder and anchor the session's tools there for this run."""
    from tools.terminal_tool import register_task_env_overrides

    folder = ensure_workspace(root, workspace)
    register_task_env_overrides(session_id, {"cwd": str(folder)})
    with _lock:
        _folders[session_id] = folder
    return folder


def open_child_workspace(parent_task: str, child_task: str) -> bool:
    """A child agent (delegate_task) works under a task id of its own: anchor it in its
    parent's folder and fence its writes alike. False when the parent has no folder."""
    folder = folder_of(parent_task)
    if folder is None:
        return False
    from tools.terminal_tool import register_task_env_overrides

    register_task_env_overrides(child_task, {"cwd": str(folder)})
    with _lock:
        _folders[child_task] = folder
    return True


def close_workspace(session_id: str) -> None:
    from tools.terminal_tool import clear_task_env_overrides

    with _lock:
        _folders.pop(session_id, None)
    clear_task_env_overrides(session_id)


def folder_of(task_id: str) -> Path | None:
    with _lock:
        return _folders.get(task_id)


def write_targets(args: dict[str, Any]) -> list[str]:
    """Every path a write_file / patch call would write."""
    paths = [args["path"]] if isinstance(args.get("path"), str) and args["path"] else []
    if isinstance(args.get("patch"), str):
        paths += _PATCH_PATHS.findall(args["patch"])
    return paths


def outside_target(folder: Path, raw: str, task_id: str) -> bool:
    """Whether hermes would write `raw` outside `folder`, judged by hermes' own resolution
    (relative paths follow the session's cwd, which a terminal `cd` moves)."""
    try:
        from tools.file_tools import _resolve_path_for_task

        target = Path(str(_resolve_path_for_task(raw, task_id)))
    except Exception:  # a private helper: if it moves, judge against the folder
        target = Path(raw).expanduser()
        target = target if target.is_absolute() else folder / target
    return not inside(folder, target)


def _refusal(raw: str) -> str:
    return json.dumps(
        {
            "error": (
                f"Refused: {raw!r} is outside this conversation's workspace. Write inside "
                "the workspace (relative paths start there)."
            )
        }
    )


def _guard(handler: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(args: dict[str, Any], **kw: Any) -> Any:
        task_id = kw.get("task_id") or "default"
        folder = folder_of(task_id)
        if folder is not None:
            for raw in write_targets(args or {}):
                if outside_target(folder, raw, task_id):
                    return _refusal(raw)
        return handler(args, **kw)

    guarded.__wrapped__ = handler  # type: ignore[attr-defined]
    return guarded


def guard_file_writes() -> None:
    """Wrap hermes' write tools once per process (idempotent)."""
    global _guarded
    with _lock:
        if _guarded:
            return
        from tools.registry import registry

        for name in GUARDED_TOOLS:
            entry = registry.get_entry(name)
            if entry is not None:
                entry.handler = _guard(entry.handler)
        _guarded = True
