"""The sidebar's "Import conversation": a JSON export becomes a new conversation, which
opens. The same use case as `POST /api/chat/sessions/import` (`services/imports.py`)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from agent_chat import routes
from agent_chat.export.importing import MAX_IMPORT_BYTES, MAX_IMPORT_MB, ImportRefused
from agent_chat.services.imports import import_export
from agent_chat.state.base import AppState

UPLOAD_ID = "import-conversation"


class ImportState(AppState):
    importing: bool = False

    @rx.event
    async def import_files(self, files: list[rx.UploadFile]):
        if len(files) != 1:
            self.show_error("Choose one JSON export file to import.")
            return
        self.importing = True
        yield
        try:
            raw = await files[0].read(MAX_IMPORT_BYTES + 1)
            done = await import_export(self.svc(), user_id=await self.user_id(), raw=raw)
        except ImportRefused as exc:
            self.show_error(f"Could not import {files[0].filename or 'the file'}: {exc.message}")
            return
        finally:
            self.importing = False
        self.banner = ""
        notes = " ".join(done.notes)
        yield rx.toast(f"Imported {done.messages} messages. {notes}".strip(), duration=4000)
        yield rx.redirect(routes.chat_url(done.chat.session_uuid))

    @rx.event
    def refused(self, rejected: list[dict[str, Any]]) -> None:
        """The file picker refused the file before it was sent (size or type)."""
        codes = {e.get("code") for r in rejected for e in (r.get("errors") or [])}
        if "file-too-large" in codes:
            self.show_error(f"Could not import: the file is over the {MAX_IMPORT_MB} MB limit.")
        elif "too-many-files" in codes:
            self.show_error("Choose one JSON export file to import.")
        else:
            self.show_error("Could not import: choose a JSON export of Agent Chat (.json).")
