"""An MCP tool's pictures, kept where the app can serve them (common/tool_images.py).

hermes writes each image block of a result to the person's image cache
(`tools.mcp_tool._cache_mcp_image_block`) and names it `MEDIA:<path>` in the result's text,
which goes to the model and, in `tool_end`, to the page. After a call, the pictures its
result names are copied to the conversation's `.tool-images/` folder; the result is left as
it is (the event's reference is that name). Only a file hermes' own cache function wrote is
copied: a server's text naming any other path (another person's cached picture) copies
nothing. Before that, the result's binary data (a structured copy's image, audio and blob
base64, long base64 strings) is replaced by placeholders (bridge/mcp_blobs.py; an image's
names the kept picture). A run registers its conversation under hermes' task id
(`for_run`), which hermes hands every tool handler; a child agent (delegate_task) works
under a task id of its own, registered to its parent's conversation while it works
(`adopt`, bridge/subagents.py).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from agent_chat.bridge import mcp_blobs
from agent_chat.common.tool_images import image_path, names_in

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_cached: dict[str, str] = {}  # name -> the path hermes wrote, until a result names it
_runs: dict[str, tuple[Path, str]] = {}  # hermes task id -> (workspaces root, conversation)
_parents: dict[str, str] = {}  # an adopted child's task id -> its parent's
_installed = False
KEEP_CACHED = 500  # pictures cached but never named by a result are forgotten past this


def install() -> None:
    """Wrap hermes' MCP image cache and handler factory once per process."""
    global _installed
    import tools.mcp_tool as mcp

    with _lock:
        if _installed:
            return
        cache, make = mcp._cache_mcp_image_block, mcp._make_tool_handler

        def recorded(block: Any) -> str:
            tag = cache(block)
            if isinstance(tag, str) and tag.startswith("MEDIA:"):
                _remember(tag.removeprefix("MEDIA:"))
            return tag

        def keeping_factory(server: str, tool: str, timeout: float) -> Callable[..., str]:
            return keeping(make(server, tool, timeout))

        mcp._cache_mcp_image_block = recorded
        mcp._make_tool_handler = keeping_factory
        _installed = True


def _remember(path: str) -> None:
    with _lock:
        _cached[Path(path).name] = path
        while len(_cached) > KEEP_CACHED:
            _cached.pop(next(iter(_cached)))


def keeping(handler: Callable[..., str]) -> Callable[..., str]:
    def call(args: dict, **kwargs: Any) -> str:
        result = handler(args, **kwargs)
        if isinstance(result, str):
            result = mcp_blobs.without_binary_data(result)
            keep(result, str(kwargs.get("task_id") or ""))
        return result

    return call


@contextlib.contextmanager
def for_run(task_id: str, root: Path | None, conversation: str | None) -> Iterator[None]:
    """While a run goes on, its pictures are kept for `conversation` under `root`."""
    if root is None or not conversation:
        yield
        return
    with _lock:
        _runs[task_id] = (root, conversation)
    try:
        yield
    finally:
        with _lock:
            if _runs.get(task_id) == (root, conversation):
                _forget(task_id)


def adopt(parent_task_id: str, child_task_id: str) -> None:
    """A child agent's pictures are kept for its parent's conversation (none if it has none)."""
    with _lock:
        target = _runs.get(parent_task_id)
        if target is not None and child_task_id not in _runs:
            _runs[child_task_id] = target
            _parents[child_task_id] = parent_task_id


def release(child_task_id: str) -> None:
    """The child has ended: its grandchildren too (a run's end forgets any left)."""
    with _lock:
        if child_task_id in _parents:
            _forget(child_task_id)


def _forget(task_id: str) -> None:
    # Under _lock: the task id and every child adopted under it.
    _runs.pop(task_id, None)
    _parents.pop(task_id, None)
    for child in [c for c, parent in _parents.items() if parent == task_id]:
        _forget(child)


def keep(result: str, task_id: str) -> list[str]:
    """Copy the pictures `result` names that hermes cached; their names."""
    names = names_in(result)
    if not names:
        return []
    with _lock:
        target = _runs.get(task_id)
        sources = [(name, _cached.pop(name)) for name in names if name in _cached]
    if target is None:
        return []
    root, conversation = target
    kept = []
    for name, source in sources:
        try:
            dest = image_path(root, conversation, name)
            dest.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            shutil.copyfile(source, dest)
            kept.append(name)
        except (OSError, ValueError):
            logger.warning("an MCP tool's picture %s could not be kept", name, exc_info=True)
    return kept
