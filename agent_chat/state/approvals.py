"""The "Always allow" rules of dangerous commands, listed in settings and revocable.

The rules are the bridge's, one list for everyone: everyone sees them, only administrators
may revoke one (checked on the server per event, `signed_in_admin`)."""

from __future__ import annotations

import reflex as rx

from agent_chat.common import tool_profiles
from agent_chat.runs.client import BridgeError
from agent_chat.state.account import signed_in_admin
from agent_chat.state.base import AppState


class AlwaysAllowedState(AppState):
    patterns: list[str] = []
    error: str = ""
    shown: bool = False  # only where the Workspace profile (commands) is enabled
    can_revoke: bool = False  # what the page shows; `revoke` checks on the server

    @rx.event
    async def load(self) -> None:
        svc = self.svc()
        self.can_revoke = await signed_in_admin(self) is not None
        self.shown = tool_profiles.WORKSPACE in svc.settings.tool_profiles
        if not self.shown:
            return
        try:
            self.patterns, self.error = await svc.bridge.always_allowed(), ""
        except BridgeError as exc:
            self.error = f"Could not read the rules from the agent service: {exc.message}"

    @rx.event
    async def revoke(self, pattern: str) -> None:
        self.can_revoke = await signed_in_admin(self) is not None
        if not self.can_revoke:
            self.error = "Only an administrator can revoke a rule."
            return
        try:
            self.patterns = await self.svc().bridge.revoke_always(pattern)
            self.error = ""
        except BridgeError as exc:
            # 404: revoked meanwhile (another tab); the list is read again either way.
            self.error = "" if exc.status_code == 404 else f"Could not revoke: {exc.message}"
            await self.load()
