"""The settings page's "Agent services" section: each bridge's health as the app's watch
last polled it (runs/bridges.py, runs/bridge_watch.py). Administrators only: a member's
page gets no row and the section is not drawn."""

from __future__ import annotations

import time

import reflex as rx

from agent_chat.runs.bridges import BridgeHealth
from agent_chat.state.account import signed_in_admin
from agent_chat.state.base import AppState


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s ago"
    if seconds < 3600:
        return f"{seconds // 60} min ago"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min ago"


def health_row(health: BridgeHealth, now: float) -> dict[str, str]:
    """One bridge as the page shows it (all text)."""
    when = time.strftime("%H:%M:%S UTC", time.gmtime(health.since))
    if not health.checked:
        state, since = "not checked yet", ""
    elif health.reachable:
        state, since = "healthy", f"since {when} ({_ago(now - health.since)})"
    else:
        state, since = "unreachable", f"since {when} ({_ago(now - health.since)})"
    return {
        "url": health.url,
        "state": state,
        "since": since,
        "error": health.last_error,
        "active": str(health.active_runs),
        "waiting": str(health.waiting_runs),
        "sandbox": health.sandbox,
        # Said plainly when Workspace commands are not isolated (sandbox off or missing).
        "sandbox_ok": "yes" if health.sandbox.startswith("bubblewrap") else "",
    }


class BridgesState(AppState):
    is_admin: bool = False
    bridges: list[dict[str, str]] = []

    @rx.event
    async def load(self) -> None:
        self.is_admin = await signed_in_admin(self) is not None
        if not self.is_admin:
            self.bridges = []
            return
        watch = self.svc().bridge_watch
        now = time.time()
        self.bridges = [
            health_row(watch.bridges.health[url], now) for url in watch.bridges.configured
        ]

    @rx.event
    async def refresh(self) -> None:
        """Poll every bridge now, then show what they said."""
        if await signed_in_admin(self) is None:
            self.is_admin, self.bridges = False, []
            return
        await self.svc().bridge_watch.check()
        await self.load()
