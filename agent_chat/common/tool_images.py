"""The pictures an MCP tool returned, kept for the page (docs/architecture.md §4c).

hermes' MCP client writes each image block of a tool's result to the person's hermes image
cache (`img_<12 hex>.<ext>`) and puts `MEDIA:<path>` in the result's text. The bridge copies
that file to `<workspaces root>/.tool-images/<conversation uuid>/<name>` (bridge/mcp_images.py),
beside the conversations' folders, never in them (not a workspace file, not in checkpoints);
the app serves it to the conversation's owner (services/mcp_servers.py:tool_image) and the
thinking panel loads it only when asked. Both processes see the same root (as workspaces).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from agent_chat.common.workspaces import TOOL_IMAGES_DIR, workspace_dir

DIR = TOOL_IMAGES_DIR  # removed with its conversation (workspaces.remove_workspace)
# hermes' own cache names (gateway/platforms/base.py:cache_image_from_bytes), raster only.
NAME = re.compile(r"^img_[0-9a-f]{12}\.(png|jpg|gif|webp)$")
# Up to a space, a quote or a backslash: the text may be a JSON string (`"…\n…"`).
_MEDIA = re.compile(r"MEDIA:([^\s\"'\\]+)")


def names_in(result: str | None) -> list[str]:
    """The cached pictures a tool's result text names (in order, once each)."""
    found: list[str] = []
    for path in _MEDIA.findall(result or ""):
        name = PurePosixPath(path).name
        if NAME.match(name) and name not in found:
            found.append(name)
    return found


def image_path(root: Path, session_uuid: str, name: str) -> Path:
    """Where the conversation's picture `name` is kept; ValueError for a malformed id or name."""
    if not NAME.match(name or ""):
        raise ValueError(f"not a tool picture's name: {name!r}")
    return root / DIR / workspace_dir(root, session_uuid).name / name
