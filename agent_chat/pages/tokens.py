"""`/settings/tokens`: personal API tokens for the HTTP API and the `agent-chat` CLI."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import tid
from agent_chat.components.layout import app_frame
from agent_chat.components.revocable import revocable
from agent_chat.components.settings_nav import settings_nav
from agent_chat.state.tokens import TokenRow, TokensState

NOT_LIVE = ~rx.State.is_hydrated  # see pages/settings.py: the form waits for the page


def _token_card(row: TokenRow) -> rx.Component:
    return revocable(
        rx.text(row["name"], weight="bold"),
        rx.text(
            rx.code(row["prefix"] + "…"),
            " · made ",
            row["created"],
            " · last used ",
            row["last_used"],
            size="1",
            color_scheme="gray",
        ),
        on_revoke=TokensState.revoke(row["id"]),
        revoke_test_id="token-revoke",
        attrs={"data-testid": "token-card", "data-token-id": row["id"]},
        card=True,
    )


def _new_token() -> rx.Component:
    return rx.cond(
        TokensState.new_token != "",
        rx.callout(
            rx.vstack(
                rx.text(
                    "Token “", TokensState.new_token_name, "”: copy it now, it is not shown again."
                ),
                rx.code(TokensState.new_token, custom_attrs=tid("new-token")),
                rx.button("Done", size="1", variant="soft", on_click=TokensState.dismiss_token),
                spacing="2",
            ),
            color_scheme="green",
            width="100%",
        ),
    )


def _form() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                name="name",
                placeholder="What will use it (e.g. CI job)",
                max_length=100,
                disabled=NOT_LIVE,
                custom_attrs=tid("token-name-input"),
                flex="1",
            ),
            rx.button(
                "Create token", type="submit", disabled=NOT_LIVE, custom_attrs=tid("token-create")
            ),
            width="100%",
        ),
        rx.cond(
            TokensState.form_error != "",
            rx.text(TokensState.form_error, color_scheme="red", size="2"),
        ),
        on_submit=TokensState.create,
        reset_on_submit=True,
        width="100%",
    )


def tokens_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                settings_nav(routes.SETTINGS_TOKENS),
                rx.heading("API tokens", size="6"),
                rx.text(
                    "Personal tokens for the HTTP API and the agent-chat command line "
                    "(Authorization: Bearer <token>), needed when the app has a password. "
                    "Only a hash is stored.",
                    color_scheme="gray",
                ),
                rx.link("API reference", href=routes.API_DOCS, is_external=True),
                _new_token(),
                rx.foreach(TokensState.tokens, _token_card),
                rx.cond(
                    TokensState.tokens.length() == 0,
                    rx.text("No token yet.", color_scheme="gray"),
                ),
                _form(),
                rx.link("← Models", href=routes.SETTINGS_MODELS),
                class_name="settings-column",
                spacing="4",
            ),
            flex="1",
        ),
    )
