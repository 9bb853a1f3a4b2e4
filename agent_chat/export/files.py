"""How a download is named and typed: `<slug of the title>-<date>.<md|json>`."""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime

from agent_chat.db.models import ChatSession

FORMATS = ("md", "json")
MEDIA_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


def slug(text: str, *, ascii_only: bool = False, max_chars: int = 60) -> str:
    """`text` as a file-name part: lower case, words joined by '-' ('' if nothing is left)."""
    text = unicodedata.normalize("NFKC", text or "")
    if ascii_only:
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = re.sub(r"[\W_]+", "-", text.lower()).strip("-")
    return words[:max_chars].rstrip("-")


def export_filename(
    chat: ChatSession, fmt: str, exported_at: datetime, *, ascii_only: bool = False
) -> str:
    """`<slug of the title>-<export date>.<fmt>`, e.g. `trip-to-rome-2025-01-31.md`."""
    name = slug(chat.title, ascii_only=ascii_only) or "conversation"
    return f"{name}-{exported_at:%Y-%m-%d}.{fmt}"
