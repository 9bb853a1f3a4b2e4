"""The base State: what every page shares (the error banner, the services)."""

from __future__ import annotations

import reflex as rx

from agent_chat.services import Services, services


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
