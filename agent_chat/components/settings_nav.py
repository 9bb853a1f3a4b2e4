"""The links between the settings pages, at the top of each; "Users" only for
administrators (the page itself refuses anyone else, this only hides the link). The role
is the one the sidebar's account footer loads on every page."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import tid
from agent_chat.state.account import AccountState


def _link(label: str, href: str, test_id: str, current: str) -> rx.Component:
    attrs = tid(test_id) | ({"aria-current": "page"} if href == current else {})
    return rx.link(label, href=href, size="2", custom_attrs=attrs)


def settings_nav(current: str) -> rx.Component:
    """`current`: the route of the page showing it."""
    return rx.hstack(
        _link("Models", routes.SETTINGS_MODELS, "settings-nav-models", current),
        _link("Account", routes.SETTINGS_ACCOUNT, "settings-nav-account", current),
        _link("API tokens", routes.SETTINGS_TOKENS, "settings-nav-tokens", current),
        rx.cond(
            AccountState.role == "admin",
            _link("Users", routes.SETTINGS_USERS, "settings-nav-users", current),
        ),
        rx.cond(
            AccountState.role == "admin",
            _link("Tools", routes.SETTINGS_TOOLS, "settings-nav-tools", current),
        ),
        spacing="4",
        wrap="wrap",
        class_name="settings-nav",
        custom_attrs=tid("settings-nav"),
    )
