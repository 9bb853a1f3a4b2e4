"""What a share link shows: the active branch as it is when the link is made.

Only what a reader of the conversation sees is kept: who said what, when, the answer, and,
folded, the thinking, tool calls, tasks and questions. Never a model, key or setting.
A user message's files are named (name and size, version 2): never their bytes, id or a
download URL, as the page is public and the files stay their owner's. A picture also keeps
its thumbnail (version 3: a small WebP made when the link is, base64 in `picture`), which the
page shows from `/s/<token>/pictures/<n>`: what the reader sees is frozen with the rest, and
a file deleted later does not break the page.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from agent_chat.db.models import MessageRole, MessageStatus
from agent_chat.export.reading import SessionExport

SNAPSHOT_VERSION = 3  # 2: user messages name their files; 3: pictures keep a thumbnail
# A tool's arguments and result are cut here in the snapshot (the page folds them anyway).
TOOL_TEXT_CHARS = 4000


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.replace(tzinfo=UTC).isoformat()


def _cut(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    return text if len(text) <= TOOL_TEXT_CHARS else text[:TOOL_TEXT_CHARS] + "\n… (cut)"


def _file(name: str, size: int, thumbnail: bytes | None) -> dict[str, Any]:
    named: dict[str, Any] = {"name": name, "size": size}
    if thumbnail:
        named["picture"] = base64.b64encode(thumbnail).decode("ascii")
    return named


def pictures(snapshot: dict[str, Any]) -> list[dict[str, Any]]:
    """The snapshot's files that keep a picture, in page order: the page's `n` is an index
    into this list (its `<img>` and the route that serves it count the same way)."""
    found: list[dict[str, Any]] = []
    for message in snapshot.get("messages") or []:
        if isinstance(message, dict) and message.get("kind") == "user":
            for f in message.get("files") or []:
                if isinstance(f, dict) and isinstance(f.get("picture"), str):
                    found.append(f)
    return found


def picture_bytes(snapshot_json: str, index: int) -> bytes | None:
    """The `index`-th picture's thumbnail (WebP), or None when there is none."""
    found = pictures(json.loads(snapshot_json))
    if not 0 <= index < len(found):
        return None
    try:
        return base64.b64decode(found[index]["picture"], validate=True)
    except (binascii.Error, ValueError):
        return None


def message_kind(role: str, status: str) -> str:
    """How a page shows a message: "user", "assistant", or a "reset" or "summary" marker."""
    if status == MessageStatus.RESET.value:
        return "reset"
    if status == MessageStatus.SUMMARY.value:
        return "summary"
    return "user" if role == MessageRole.USER.value else "assistant"


def take_snapshot(
    data: SessionExport, *, taken_at: datetime, thumbnails: Mapping[int, bytes] | None = None
) -> dict[str, Any]:
    """The snapshot document of `data` (an export of the active branch); `thumbnails`: the
    pictures' thumbnails by attachment id (one without keeps its name only)."""
    thumbnails = thumbnails or {}
    by_id = {m.id: m for m in data.messages}
    messages: list[dict[str, Any]] = []
    for mid in data.active_ids:
        message = by_id[mid]
        kind = message_kind(message.role, message.status)
        item: dict[str, Any] = {
            "kind": kind,
            "status": message.status,
            "content": message.content,
            "created_at": _iso(message.created_at),
        }
        if kind == "user" and (files := data.attachments.get(mid)):
            item["files"] = [_file(f.name, f.size, thumbnails.get(f.id or 0)) for f in files]
        if kind == "assistant":
            view = data.view(mid)
            item["content"] = message.content or view.answer
            item["error"] = message.error or view.error or ""
            item["thinking"] = view.thinking
            item["tools"] = [
                {"tool": t.tool, "args": _cut(t.args), "result": _cut(t.result),
                 "is_error": t.is_error}
                for t in view.tools
            ]  # fmt: skip
            item["todos"] = [
                {"content": str(t.get("content") or ""), "status": str(t.get("status") or "")}
                for t in view.todos
            ]
            item["questions"] = [[q, a] for q, a in view.answers]
        messages.append(item)
    return {
        "version": SNAPSHOT_VERSION,
        "title": data.chat.title or "Conversation",
        "taken_at": _iso(taken_at),
        "messages": messages,
    }
