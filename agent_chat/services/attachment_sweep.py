"""The hourly sweep of unused attachments (`attachments.delete_unused`): an attachment goes
with the last message that used it (or, never linked, after the grace period), its bytes with
it. Each web worker runs one; two sweeping at once delete each row once (the delete is
conditional) and a store's delete of what is gone is harmless."""

from __future__ import annotations

import logging

from agent_chat.runs.periodic import Periodic
from agent_chat.services import attachments
from agent_chat.services.backend import Backend

log = logging.getLogger(__name__)
SWEEP_INTERVAL_S = 3600.0


class AttachmentSweep(Periodic):
    task_name = "attachment-sweep"
    sleep_first = True  # not in every start's path

    def __init__(self, svc: Backend, interval_s: float = SWEEP_INTERVAL_S) -> None:
        super().__init__(interval_s)
        self.svc = svc

    async def check(self) -> int:
        deleted = await attachments.delete_unused(self.svc)
        if deleted:
            log.info("Deleted %d unused attachment(s)", deleted)
        return deleted
