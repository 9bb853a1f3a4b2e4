"""The composer: model, skill and tool-profile selectors above the text box; Enter sends."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.attach import attach_button, attach_tray
from agent_chat.components.common import tid
from agent_chat.display.rows import SkillRow
from agent_chat.state.chat import COMPOSER_ID, DEFAULT_CHOICE, NO_SKILL, ChatState
from agent_chat.state.live import LiveState


def _model_select() -> rx.Component:
    return rx.select.root(
        rx.select.trigger(placeholder="Model", variant="ghost", custom_attrs=tid("model-select")),
        rx.select.content(
            rx.select.item("Default model", value=DEFAULT_CHOICE),
            rx.foreach(
                ChatState.models,
                lambda m: rx.select.item(m["name"], value=m["id"].to_string()),
            ),
        ),
        value=ChatState.selected_model,
        on_change=ChatState.set_selected_model,
        size="1",
    )


def _skill_item(skill: SkillRow) -> rx.Component:
    return rx.cond(
        skill["error"] == "",
        rx.select.item(skill["name"], value=skill["folder"]),
        rx.select.item(
            skill["folder"] + " — invalid: " + skill["error"],
            value=skill["folder"],
            disabled=True,
            custom_attrs={"data-testid": "skill-invalid"},
        ),
    )


def _skill_select() -> rx.Component:
    return rx.select.root(
        rx.select.trigger(placeholder="Skill", variant="ghost", custom_attrs=tid("skill-select")),
        rx.select.content(
            rx.select.item("No skill", value=NO_SKILL),
            rx.foreach(ChatState.skills, _skill_item),
        ),
        value=ChatState.selected_skill,
        on_change=ChatState.set_selected_skill,
        size="1",
    )


def _profile_item(profile: rx.Var) -> rx.Component:
    return rx.select.item(profile[1], value=profile[0])


def _profile_select() -> rx.Component:
    # Only when the operator enabled more than one profile (AGENT_CHAT_TOOL_PROFILES).
    return rx.cond(
        ChatState.tool_profiles.length() > 1,
        rx.tooltip(
            rx.select.root(
                rx.select.trigger(
                    placeholder="Tools", variant="ghost", custom_attrs=tid("tool-profile-select")
                ),
                rx.select.content(rx.foreach(ChatState.tool_profiles, _profile_item)),
                value=ChatState.selected_profile,
                on_change=ChatState.set_selected_profile,
                size="1",
            ),
            content="Which tools the agent may use in this conversation",
        ),
    )


def _mcp_hint() -> rx.Component:
    # Whatever the number of profiles: which team servers' tools the next answer may use.
    return rx.cond(
        ChatState.mcp_names != "",
        rx.tooltip(
            rx.badge(
                rx.icon("plug", size=12),
                rx.text.span(
                    "MCP: ",
                    ChatState.mcp_names,
                    white_space="nowrap",
                    overflow="hidden",
                    text_overflow="ellipsis",
                    min_width="0",
                ),
                variant="soft",
                color_scheme="gray",
                size="1",
                max_width="16rem",
                custom_attrs=tid("mcp-hint"),
            ),
            # The whole list too: the badge cuts a long one.
            content="The agent may use the tools of these MCP servers here: "
            + ChatState.mcp_names
            + " (an administrator chooses them in Settings → Tools)",
        ),
    )


def _context_meter() -> rx.Component:
    # The conversation's token use and how full the model's window was at the last answer.
    return rx.cond(
        ChatState.context_meter != "",
        rx.hstack(
            rx.cond(
                ChatState.context_percent >= 0,
                rx.progress(
                    value=ChatState.context_percent,
                    size="1",
                    width="48px",
                    color_scheme=rx.cond(ChatState.context_percent >= 80, "red", "gray"),
                ),
            ),
            rx.text(ChatState.context_meter, size="1", color_scheme="gray"),
            align="center",
            spacing="2",
            custom_attrs=tid("context-meter"),
        ),
    )


def _queued_item(item: rx.Var) -> rx.Component:
    return rx.hstack(
        rx.icon("clock", size=14, color=rx.color("gray", 10)),
        rx.text(item[1], size="2", class_name="queued-text", flex="1", min_width="0"),
        rx.button(
            "Edit",
            size="1",
            variant="ghost",
            on_click=LiveState.edit_queued(item[0]),
            custom_attrs=tid("queued-edit"),
        ),
        rx.icon_button(
            rx.icon("x", size=14),
            size="1",
            variant="ghost",
            color_scheme="gray",
            aria_label="Remove from the queue",
            on_click=LiveState.cancel_queued(item[0]),
            custom_attrs=tid("queued-cancel"),
        ),
        align="center",
        width="100%",
        class_name="queued-message",
        custom_attrs={"data-testid": "queued-message", "data-queued-id": item[0]},
    )


def _steer_item(steer: rx.Var) -> rx.Component:
    return rx.text(
        "You steered: ",
        rx.text.span(steer[0], weight="medium"),
        " · ",
        rx.cond(
            steer[1] == "delivered",
            "the agent read it",
            rx.cond(steer[1] == "sent", "waiting for the agent's next step", "not delivered"),
        ),
        size="1",
        color_scheme="gray",
        custom_attrs={"data-testid": "steer-entry", "data-state": steer[1]},
    )


def queue_and_steers() -> rx.Component:
    """Guidance sent to the running agent, and the messages waiting for it to end."""
    return rx.vstack(
        rx.foreach(LiveState.steers, _steer_item),
        rx.foreach(ChatState.queued, _queued_item),
        spacing="1",
        width="100%",
    )


def no_model_notice() -> rx.Component:
    return rx.callout.root(
        rx.callout.icon(rx.icon("info")),
        rx.callout.text(
            "No model is configured yet. ",
            rx.link("Add one in the model settings", href=routes.SETTINGS_MODELS),
            " to start chatting.",
        ),
        color_scheme="blue",
        custom_attrs=tid("no-model-notice"),
    )


def composer() -> rx.Component:
    return rx.vstack(
        rx.cond(ChatState.no_model, no_model_notice()),
        queue_and_steers(),
        rx.form(
            rx.vstack(
                rx.hstack(
                    _model_select(),
                    _skill_select(),
                    _profile_select(),
                    _mcp_hint(),
                    rx.spacer(),
                    _context_meter(),
                    spacing="2",
                    align="center",
                    width="100%",
                    wrap="wrap",
                ),
                attach_tray(),
                rx.hstack(
                    attach_button(),
                    rx.text_area(
                        id=COMPOSER_ID,
                        name="message",
                        placeholder="Ask Hermes anything… (Enter to send, Shift+Enter for a new line)",
                        enter_key_submit=True,
                        auto_height=True,
                        rows="1",
                        max_length=200_000,
                        variant="surface",
                        flex="1",
                        class_name="composer-input",
                        custom_attrs=tid("composer-input"),
                    ),
                    rx.cond(
                        LiveState.running,
                        rx.icon_button(
                            rx.icon("square", size=16),
                            type="button",
                            color_scheme="red",
                            on_click=LiveState.stop,
                            aria_label="Stop",
                            custom_attrs=tid("stop-button"),
                        ),
                    ),
                    rx.cond(
                        LiveState.running,
                        rx.fragment(
                            rx.tooltip(
                                rx.button(
                                    "Steer",
                                    type="button",
                                    variant="soft",
                                    on_click=rx.call_script(
                                        f"document.getElementById('{COMPOSER_ID}').value",
                                        callback=LiveState.steer,
                                    ),
                                    custom_attrs=tid("steer-button"),
                                ),
                                content="Tell the working agent now (it reads it after its "
                                "current step)",
                            ),
                            rx.tooltip(
                                rx.button(
                                    "Queue",
                                    type="submit",
                                    custom_attrs=tid("queue-button"),
                                ),
                                content="Send when this answer ends (Enter)",
                            ),
                        ),
                        rx.icon_button(
                            rx.icon("arrow-up", size=18),
                            type="submit",
                            disabled=ChatState.no_model,
                            aria_label="Send",
                            custom_attrs=tid("send-button"),
                        ),
                    ),
                    align="end",
                    width="100%",
                    spacing="2",
                ),
                spacing="2",
                width="100%",
            ),
            on_submit=LiveState.send,
            width="100%",
        ),
        rx.cond(
            ChatState.composer_error != "",
            rx.text(
                ChatState.composer_error,
                size="2",
                color_scheme="red",
                custom_attrs=tid("composer-error"),
            ),
        ),
        class_name="composer",
        spacing="2",
    )
