"""`/settings/account`: the signed-in person's display name and password, and "Log out
everywhere"."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.account import LOGOUT_ALL_SCRIPT
from agent_chat.components.common import tid
from agent_chat.components.layout import app_frame
from agent_chat.components.settings_nav import settings_nav
from agent_chat.state.account import AccountState

NOT_LIVE = ~rx.State.is_hydrated  # see pages/settings.py: the form waits for the page


def _field(label: str, control: rx.Component, hint: str = "") -> rx.Component:
    return rx.vstack(
        rx.text(label, as_="label", size="2", weight="medium"),
        control,
        rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        spacing="1",
        width="100%",
    )


def _password_fields() -> rx.Component:
    return rx.fragment(
        rx.heading("Change password", size="3", margin_top="8px"),
        _field(
            "Current password",
            rx.input(
                name="current_password",
                type="password",
                auto_complete="current-password",
                disabled=NOT_LIVE,
                width="100%",
                custom_attrs=tid("account-current-password"),
            ),
        ),
        _field(
            "New password",
            rx.input(
                name="new_password",
                type="password",
                auto_complete="new-password",
                disabled=NOT_LIVE,
                width="100%",
                custom_attrs=tid("account-new-password"),
            ),
            "At least 8 characters. Leave both empty to keep the password. A new "
            "password signs you out everywhere else.",
        ),
    )


def _no_password() -> rx.Component:
    return rx.text(
        "You sign in with single sign-on: this account has no password to change here.",
        size="2",
        color_scheme="gray",
        custom_attrs=tid("account-no-password"),
    )


def _form() -> rx.Component:
    return rx.form(
        rx.vstack(
            _field(
                "Display name",
                rx.input(
                    name="display_name",
                    default_value=AccountState.display_name,
                    key=AccountState.display_name,  # refilled once the name is loaded
                    max_length=100,
                    disabled=NOT_LIVE,
                    width="100%",
                    custom_attrs=tid("account-display-name"),
                ),
            ),
            rx.cond(AccountState.has_password, _password_fields(), _no_password()),
            rx.cond(
                AccountState.message != "",
                rx.callout(
                    AccountState.message,
                    color_scheme=rx.cond(AccountState.message_ok, "green", "red"),
                    size="1",
                    width="100%",
                    custom_attrs=tid("account-message"),
                ),
            ),
            rx.button("Save", type="submit", disabled=NOT_LIVE, custom_attrs=tid("account-save")),
            spacing="3",
            width="100%",
            align="start",
        ),
        on_submit=AccountState.save,
        reset_on_submit=True,  # the passwords never stay in the page
        width="100%",
    )


def _sessions() -> rx.Component:
    return rx.vstack(
        rx.heading("Sessions", size="3"),
        rx.text(
            "Signed in on another computer or a lost phone? End every session of this "
            "account, this one included.",
            size="2",
            color_scheme="gray",
        ),
        rx.button(
            rx.icon("log-out", size=14),
            "Log out everywhere",
            variant="soft",
            color_scheme="red",
            on_click=rx.call_script(LOGOUT_ALL_SCRIPT),
            custom_attrs=tid("account-logout-all"),
        ),
        spacing="2",
        width="100%",
        align="start",
    )


def account_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                settings_nav(routes.SETTINGS_ACCOUNT),
                rx.heading("Account", size="6"),
                rx.text(
                    "Signed in as ",
                    rx.text.strong(AccountState.username),
                    rx.cond(AccountState.role == "admin", " (administrator)", ""),
                    ".",
                    color_scheme="gray",
                    custom_attrs=tid("account-username"),
                ),
                _form(),
                rx.separator(),
                _sessions(),
                rx.hstack(
                    rx.link("← Models", href=routes.SETTINGS_MODELS),
                    rx.link("API tokens", href=routes.SETTINGS_TOKENS),
                    spacing="4",
                ),
                class_name="settings-column",
                spacing="4",
            ),
            flex="1",
        ),
    )
