"""The base State: what every page shares (the error banner)."""

from __future__ import annotations

import reflex as rx

from agent_chat.services import Services, services


def client_sid(token: str) -> str | None:
    """The websocket id of the tab with this client token; None while it is disconnected.

    A new id means the tab reconnected (events sent in between were dropped)."""
    from agent_chat.agent_chat import app  # the app module imports the states

    namespace = app.event_namespace
    return namespace.token_to_sid.get(token) if namespace is not None else None


def client_connected(token: str) -> bool:
    return client_sid(token) is not None


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
