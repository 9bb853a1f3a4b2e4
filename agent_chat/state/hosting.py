"""How this app is hosted, for the settings page's note (agent_chat/runs/embedded.py)."""

from __future__ import annotations

import reflex as rx

from agent_chat.state.base import AppState


class HostingState(AppState):
    # AGENT_CHAT_BRIDGE=embedded: the agents run inside this web process, so a restart of the
    # app stops the answers being written (the page says so on the settings page).
    embedded_bridge: bool = False

    @rx.event
    def load(self) -> None:
        self.embedded_bridge = self.svc().settings.embedded_bridge
