"""`/settings/users` (administrators only): the users table, "New user", and per row the
role, disable/enable and a password reset. A member sees "Administrators only" and no data
(the state sends none: `state/users.py`)."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import tid
from agent_chat.components.layout import app_frame
from agent_chat.components.settings_nav import settings_nav
from agent_chat.state.users import RESET_INPUT_ID, UserRow, UsersState

NOT_LIVE = ~rx.State.is_hydrated  # see pages/settings.py: the form waits for the page
ROLES = ("member", "admin")


def _labelled(
    label: str, control: rx.Component, error_key: str = "", hint: str = ""
) -> rx.Component:
    error = UsersState.form_errors.get(error_key, "") if error_key else ""
    return rx.vstack(
        rx.text(label, as_="label", size="2", weight="medium"),
        control,
        rx.cond(
            error != "",
            rx.text(
                error, size="1", color_scheme="red", custom_attrs=tid(f"user-{error_key}-error")
            ),
            rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        )
        if error_key
        else rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        spacing="1",
        width="100%",
    )


def _new_user_form() -> rx.Component:
    return rx.card(
        rx.form(
            rx.vstack(
                rx.heading("New user", size="4"),
                _labelled(
                    "Username",
                    rx.input(
                        name="username",
                        auto_complete="off",
                        disabled=NOT_LIVE,
                        width="100%",
                        custom_attrs=tid("user-username"),
                    ),
                    "username",
                    "Letters, digits, dots, dashes or underscores; what they sign in with.",
                ),
                _labelled(
                    "Display name",
                    rx.input(
                        name="display_name",
                        max_length=100,
                        disabled=NOT_LIVE,
                        width="100%",
                        custom_attrs=tid("user-display-name"),
                    ),
                    "display_name",
                    "Optional: the username when empty.",
                ),
                _labelled(
                    "Password",
                    rx.input(
                        name="password",
                        type="password",
                        auto_complete="new-password",
                        disabled=NOT_LIVE,
                        width="100%",
                        custom_attrs=tid("user-password"),
                    ),
                    "password",
                    "At least 8 characters. Tell it to them; they can change it on their account page.",
                ),
                _labelled(
                    "Role",
                    rx.select.root(
                        rx.select.trigger(custom_attrs=tid("user-role")),
                        rx.select.content(
                            rx.select.item("Member", value="member"),
                            rx.select.item("Administrator", value="admin"),
                        ),
                        value=UsersState.new_role,
                        on_change=UsersState.set_new_role,
                    ),
                    "role",
                    "Administrators manage users and models; members chat and choose among the models.",
                ),
                rx.hstack(
                    rx.button(
                        "Create user",
                        type="submit",
                        disabled=NOT_LIVE,
                        custom_attrs=tid("user-save"),
                    ),
                    rx.button(
                        "Cancel",
                        type="button",
                        variant="ghost",
                        on_click=UsersState.close_form,
                        custom_attrs=tid("user-cancel"),
                    ),
                    spacing="2",
                ),
                spacing="3",
                width="100%",
            ),
            on_submit=UsersState.create,
            reset_on_submit=False,  # a refused username stays to be corrected
            width="100%",
        ),
        width="100%",
        max_width="560px",
        custom_attrs=tid("user-form"),
    )


def _role_select(row: UserRow) -> rx.Component:
    return rx.select.root(
        rx.select.trigger(variant="soft", custom_attrs=tid("user-role-select")),
        rx.select.content(
            rx.select.item("Member", value="member"),
            rx.select.item("Administrator", value="admin"),
        ),
        value=row["role"],
        on_change=lambda role: UsersState.set_role(row["id"], role),
        size="1",
    )


def _actions(row: UserRow) -> rx.Component:
    return rx.hstack(
        _role_select(row),
        rx.cond(
            row["disabled"],
            rx.button(
                "Enable",
                size="1",
                variant="soft",
                on_click=UsersState.set_disabled(row["id"], False),
                custom_attrs=tid("user-enable"),
            ),
            rx.button(
                "Disable",
                size="1",
                variant="soft",
                color_scheme="red",
                on_click=UsersState.set_disabled(row["id"], True),
                custom_attrs=tid("user-disable"),
            ),
        ),
        rx.button(
            "Reset password",
            size="1",
            variant="soft",
            on_click=UsersState.open_reset(row["id"]),
            custom_attrs=tid("user-reset"),
        ),
        spacing="2",
        align="center",
        wrap="wrap",  # on a narrow window the buttons go to a second line, not off the edge
    )


def _reset_form() -> rx.Component:
    return rx.form(
        rx.hstack(
            rx.input(
                id=RESET_INPUT_ID,
                name="new_password",
                type="password",
                auto_complete="new-password",
                placeholder="New password (at least 8 characters)",
                size="1",
                width="20em",
                max_width="100%",
                custom_attrs=tid("user-reset-password"),
            ),
            rx.button("Set password", size="1", type="submit", custom_attrs=tid("user-reset-save")),
            rx.button(
                "Cancel", size="1", type="button", variant="ghost", on_click=UsersState.close_reset
            ),
            rx.cond(
                UsersState.reset_error != "",
                rx.text(
                    UsersState.reset_error,
                    size="1",
                    color_scheme="red",
                    custom_attrs=tid("user-reset-error"),
                ),
                rx.text("Their sessions end at once.", size="1", color_scheme="gray"),
            ),
            spacing="2",
            align="center",
            wrap="wrap",
        ),
        on_submit=UsersState.reset_password,
        reset_on_submit=True,  # the password never stays in the page
    )


def _cell(label: str, content: rx.Component | rx.Var, test_id: str = "", **props) -> rx.Component:
    """A cell, labelled on a phone (where each row is a block of lines: styles.css)."""
    attrs = {"data-label": label} | (tid(test_id) if test_id else {})
    return rx.table.cell(content, custom_attrs=attrs, **props)


def _row(row: UserRow) -> rx.Component:
    admin = row["role"] == "admin"
    return rx.fragment(
        rx.table.row(
            rx.table.cell(
                rx.text(row["username"], weight="medium"), custom_attrs=tid("user-username-cell")
            ),
            _cell("Display name", row["display_name"]),
            _cell(
                "Role",
                rx.badge(
                    rx.cond(admin, "administrator", "member"),
                    color_scheme=rx.cond(admin, "violet", "gray"),
                ),
                "user-role-cell",
            ),
            _cell(
                "Status",
                rx.cond(
                    row["disabled"],
                    rx.badge("disabled", color_scheme="red"),
                    rx.badge("active", color_scheme="green"),
                ),
                "user-status",
            ),
            _cell("Created", row["created"], white_space="nowrap"),
            _cell("Last sign-in", row["last_login"], white_space="nowrap"),
            rx.table.cell(_actions(row)),
            custom_attrs={"data-testid": "user-row", "data-username": row["username"]},
        ),
        rx.cond(
            UsersState.reset_for == row["id"],
            rx.table.row(
                rx.table.cell(_reset_form(), col_span=7), custom_attrs=tid("user-reset-row")
            ),
        ),
    )


HEADERS = ("Username", "Display name", "Role", "Status", "Created", "Last sign-in", "")


def _table() -> rx.Component:
    return rx.box(
        rx.table.root(
            rx.table.header(rx.table.row(*(rx.table.column_header_cell(name) for name in HEADERS))),
            rx.table.body(rx.foreach(UsersState.users, _row)),
            size="1",
            width="100%",
            class_name="users-table",
        ),
        width="100%",
        class_name="users-table-wrap",
    )


def _message() -> rx.Component:
    return rx.cond(
        UsersState.message != "",
        rx.callout(
            UsersState.message,
            color_scheme=rx.cond(UsersState.message_ok, "green", "red"),
            size="1",
            width="100%",
            role=rx.cond(UsersState.message_ok, "status", "alert"),
            custom_attrs=tid("users-message"),
        ),
    )


def _admin_view() -> rx.Component:
    return rx.vstack(
        rx.text(
            "People who can sign in. Users are never deleted (their conversations stay theirs): "
            "disable an account to remove someone; it signs them out at once.",
            color_scheme="gray",
            size="2",
        ),
        _message(),
        rx.cond(
            UsersState.form_open,
            _new_user_form(),
            rx.button(
                rx.icon("user-plus", size=14),
                "New user",
                on_click=UsersState.open_form,
                disabled=NOT_LIVE,
                custom_attrs=tid("user-new"),
            ),
        ),
        _table(),
        spacing="4",
        width="100%",
    )


def _refused_view() -> rx.Component:
    return rx.callout(
        "Administrators only. Ask an administrator to add, change or disable accounts.",
        icon="lock",
        color_scheme="amber",
        width="100%",
        custom_attrs=tid("users-admins-only"),
    )


def users_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                settings_nav(routes.SETTINGS_USERS),
                rx.heading("Users", size="6"),
                rx.cond(
                    UsersState.allowed,
                    _admin_view(),
                    rx.cond(UsersState.checked, _refused_view(), rx.spinner()),
                ),
                class_name="settings-column settings-wide",
                spacing="4",
            ),
            flex="1",
            class_name="users-scroll",
        ),
    )
