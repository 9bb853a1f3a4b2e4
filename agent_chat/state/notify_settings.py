"""Settings: browser notifications on or off in this browser (assets/notify.js keeps it)."""

from __future__ import annotations

import reflex as rx

from agent_chat.state.base import AppState

READ = "window.agentChatNotify && window.agentChatNotify.enabled() ? 'on' : 'off'"


class NotifySettingsState(AppState):
    notify: str = ""  # "on", "off", or why they could not be turned on

    @rx.event
    def load(self):
        return rx.call_script(READ, callback=NotifySettingsState.show)

    @rx.event
    def show(self, result: str) -> None:
        self.notify = str(result)

    @rx.event
    def turn_on(self):
        return rx.call_script("window.agentChatNotify.enable()", callback=NotifySettingsState.show)

    @rx.event
    def turn_off(self):
        return rx.call_script("window.agentChatNotify.disable()", callback=NotifySettingsState.show)
