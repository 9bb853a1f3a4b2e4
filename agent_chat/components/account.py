"""Who is signed in, at the foot of the sidebar: their display name opens a menu with the
account page, "Log out" and "Log out everywhere" (both post to the gate's logout API, then
go to the login page)."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import tid
from agent_chat.state.account import AccountState


def _post_then_login(path: str) -> str:
    # The tab's Reflex token goes too: whoever signs in next in this tab gets new states.
    return (
        f"fetch('{path}', {{method: 'POST', credentials: 'same-origin'}})"
        ".finally(() => { window.sessionStorage.removeItem('token');"
        " window.location.assign('/login'); })"
    )


LOGOUT_SCRIPT = _post_then_login("/api/logout")
LOGOUT_ALL_SCRIPT = _post_then_login("/api/logout-all")


def account_menu() -> rx.Component:
    return rx.dropdown_menu.root(
        rx.dropdown_menu.trigger(
            rx.button(
                rx.icon("circle-user-round", size=16),
                rx.text(
                    AccountState.display_name,
                    size="2",
                    truncate=True,
                    custom_attrs=tid("signed-in-as"),
                ),
                rx.spacer(),
                rx.icon("chevron-up", size=14),
                variant="ghost",
                color_scheme="gray",
                size="2",
                width="100%",
                justify="start",
                aria_label="Account",
                class_name="account-button",
                custom_attrs=tid("account-menu"),
            ),
        ),
        rx.dropdown_menu.content(
            rx.text(
                "Signed in as ",
                rx.text.strong(AccountState.username),
                size="1",
                color_scheme="gray",
                padding="4px 12px",
            ),
            rx.dropdown_menu.item(
                rx.icon("user-cog", size=14),
                "Account",
                on_click=rx.redirect(routes.SETTINGS_ACCOUNT),
                custom_attrs=tid("account-link"),
            ),
            rx.dropdown_menu.separator(),
            rx.dropdown_menu.item(
                rx.icon("log-out", size=14),
                "Log out",
                on_click=rx.call_script(LOGOUT_SCRIPT),
                custom_attrs=tid("logout"),
            ),
            rx.dropdown_menu.item(
                rx.icon("log-out", size=14),
                "Log out everywhere",
                color="red",
                on_click=rx.call_script(LOGOUT_ALL_SCRIPT),
                custom_attrs=tid("logout-all"),
            ),
            side="top",
            align="start",
        ),
    )


def account_footer() -> rx.Component:
    """The sidebar's last row; asks who is signed in when it mounts (on every page)."""
    return rx.box(account_menu(), width="100%", on_mount=AccountState.load)
