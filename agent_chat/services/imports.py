"""Importing a conversation from an export file: what the page (state/importer.py) and
`POST /api/chat/sessions/import` both call. The file is read and checked in `export/`
(`ImportRefused`, nothing written), then written in one transaction (`db/imports.py`)."""

from __future__ import annotations

import asyncio

from agent_chat.db.imports import Imported, import_conversation
from agent_chat.export.importing import read_export
from agent_chat.services.backend import Backend


async def import_export(svc: Backend, *, user_id: int, raw: bytes | str) -> Imported:
    """The file as a new conversation of `user_id`'s (`branch=all` keeps every version)."""
    plan = await asyncio.to_thread(read_export, raw)  # up to MAX_IMPORT_BYTES: off the loop
    return await svc.storage.call(import_conversation, plan=plan, user_id=user_id)
