"""Editing a sent user message: its new version, with the files the edit form keeps and
those added in it, answered afresh (`services/versions.py:edit_and_resend`)."""

from __future__ import annotations

import reflex as rx

from agent_chat.db.errors import ValidationFailed
from agent_chat.services import versions
from agent_chat.services.runs import REFUSALS
from agent_chat.state.live import LiveState
from agent_chat.state.page_scripts import BAD_ATTACHMENTS, attached_ids, edited_ids


class EditState(LiveState):
    @rx.event
    async def submit_edit(self, form: dict):
        """Send the edited text as a new version of the user message, answered afresh. A
        refusal says why in the form, which keeps its text and files."""
        message_id, text = self.editing_id, str(form.get("text") or "")
        self.edit_error = ""
        added = attached_ids(form)
        if added is None:
            self.edit_error = BAD_ATTACHMENTS
            return None
        try:
            started = await versions.edit_and_resend(
                self.svc(),
                user_id=await self.user_id(),
                message_id=message_id,
                text=text,
                attachment_ids=edited_ids(form, added),
            )
        except REFUSALS as exc:
            # The field's own words ("At most 10 attachments per message."), not the API's.
            fields = exc.field_errors if isinstance(exc, ValidationFailed) else {}
            self.edit_error = " ".join(fields.values()) or str(exc)
            return None
        self.editing_id = 0
        return await self._after_new_run(started)
