"""The workspace drawer's rows (plain Python): a conversation's files and the preview of
one, as the page receives them (components/workspace.py renders them as text)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import TypedDict

from agent_chat.common.tool_profiles import WORKSPACE, enabled_profiles
from agent_chat.common.workspaces import FileEntry, Listing, Preview, workspace_dir, workspaces_root
from agent_chat.display.highlight import Token, language_for, tokens
from agent_chat.routes import file_url

_ICONS = (
    ({".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg"}, "file-image"),
    ({".md", ".markdown", ".txt", ".rst", ".log"}, "file-text"),
    ({".json", ".yaml", ".yml", ".toml", ".csv", ".tsv", ".xml"}, "file-json"),
    ({".zip", ".gz", ".tar", ".tgz", ".bz2", ".xz", ".7z"}, "file-archive"),
)
# Every icon a row can name besides "file": the drawer draws each one statically (a lucide
# icon named at run time would bundle the whole icon set into the chat page).
FILE_ICONS = (*(icon for _, icon in _ICONS), "file-code")


class FileRow(TypedDict):
    path: str  # relative, "/"-separated
    name: str
    folder: str  # "" at the top
    size: str  # "1.2 KB"
    modified: str  # "just now", "5 min ago", "2026-11-30"
    modified_utc: str  # the full time, for a tooltip
    icon: str  # a lucide icon name
    stamp: str  # changes whenever the file does


class PreviewRow(TypedDict):
    path: str
    kind: str  # text | code | markdown | image | binary | empty | large | missing
    text: str
    tokens: list[Token]  # code, highlighted ([]: plain)
    language: str
    note: str  # "Showing the first 100 KB of 1.4 MB" …
    size: str
    modified: str
    download_url: str
    image_url: str


def workspace_available(session_uuid: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether the conversation has a workspace to show: the Workspace profile is enabled
    (its runs make the folder), or the folder exists (made while it was enabled)."""
    if not session_uuid:
        return False
    try:
        if WORKSPACE in enabled_profiles(env):
            return True
    except ValueError:
        pass  # a bad setting: the bridge refuses to start and says why; here, the folder decides
    try:
        return workspace_dir(workspaces_root(env), session_uuid).is_dir()
    except ValueError:
        return False


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} B"  # not reached


def ago(mtime: float, now: float | None = None) -> str:
    seconds = (time.time() if now is None else now) - mtime
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%d")


def _utc(mtime: float) -> str:
    return datetime.fromtimestamp(mtime, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _icon(path: str) -> str:
    suffix = PurePosixPath(path).suffix.lower()
    for suffixes, icon in _ICONS:
        if suffix in suffixes:
            return icon
    return "file-code" if language_for(path) else "file"


def stamp(entry: FileEntry | Preview) -> str:
    return f"{entry.size}-{entry.modified:.6f}"


def file_rows(listing: Listing, now: float | None = None) -> list[FileRow]:
    rows = []
    for entry in listing.files:
        path = PurePosixPath(entry.path)
        rows.append(
            FileRow(
                path=entry.path,
                name=path.name,
                folder="" if str(path.parent) == "." else f"{path.parent}/",
                size=human_size(entry.size),
                modified=ago(entry.modified, now),
                modified_utc=_utc(entry.modified),
                icon=_icon(entry.path),
                stamp=stamp(entry),
            )
        )
    return rows


def missing_preview(session_uuid: str, path: str) -> PreviewRow:
    return PreviewRow(
        path=path, kind="missing", text="", tokens=[], language="",
        note="This file is no longer in the workspace.", size="", modified="",
        download_url="", image_url="",
    )  # fmt: skip


def preview_row(session_uuid: str, preview: Preview, now: float | None = None) -> PreviewRow:
    """The preview of one file: text as it is, code highlighted, markdown rendered by the
    page's one renderer, images through the download route (inline), the rest a note."""
    version = stamp(preview)
    kind, language, toks, note = preview.kind, "", [], ""
    if kind == "text":
        language = language_for(preview.path)
        if language:
            kind = "code"
            toks = tokens(preview.text, filename=preview.path)
    if preview.truncated:
        shown = human_size(len(preview.text.encode("utf-8")))
        note = f"Showing the first {shown} of {human_size(preview.size)}: download it for all."
    elif kind == "binary":
        note = "No preview for this kind of file: download it to open it."
    elif kind == "large":
        note = "This image is too large to preview: download it to open it."
    elif kind == "empty":
        note = "This file is empty."
    return PreviewRow(
        path=preview.path,
        kind=kind,
        text=preview.text,
        tokens=toks,
        language=language,
        note=note,
        size=human_size(preview.size),
        modified=ago(preview.modified, now),
        download_url=file_url(session_uuid, preview.path),
        image_url=file_url(session_uuid, preview.path, inline=True, version=version)
        if kind == "image"
        else "",
    )
