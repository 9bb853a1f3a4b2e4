"""The base State: what every page shares (the error banner)."""

from __future__ import annotations

import reflex as rx

from agent_chat.services import Services, services


def client_connected(token: str) -> bool:
    """Whether a browser tab with this client token has a live websocket."""
    from agent_chat.agent_chat import app  # the app module imports the states

    namespace = app.event_namespace
    return namespace is not None and token in namespace.token_to_sid


class AppState(rx.State):
    """Root of the app's states. Feature states derive from it."""

    banner: str = ""

    @rx.event
    def dismiss_banner(self) -> None:
        self.banner = ""

    def show_error(self, message: str) -> None:
        self.banner = message

    @staticmethod
    def svc() -> Services:
        return services()
