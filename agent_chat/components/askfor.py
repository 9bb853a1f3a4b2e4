"""⑤ AskFor: the agent's question, choice buttons and a free-text answer; or a dangerous
command waiting for the person's consent (the same pause, kind "approval")."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.live import LiveState


def _choice(choice: rx.Var) -> rx.Component:
    return rx.button(
        choice,
        variant="outline",
        on_click=LiveState.answer_question(choice),
        disabled=LiveState.answer_sending,
        custom_attrs=tid("askfor-choice"),
    )


# (choice sent to the bridge, label, test id, button look)
APPROVAL_CHOICES = (
    ("once", "Allow once", "approval-once", "solid"),
    ("session", "Allow for this conversation", "approval-session", "soft"),
    ("always", "Always allow", "approval-always", "soft"),
    ("deny", "Deny", "approval-deny", "outline"),
)


def _approval_button(choice: str, label: str, test_id: str, variant: str) -> rx.Component:
    return rx.cond(
        LiveState.choices.contains(choice),
        rx.button(
            label,
            variant=variant,
            color_scheme="red" if choice == "deny" else None,
            on_click=LiveState.answer_question(choice),
            disabled=LiveState.answer_sending,
            min_height="40px",
            custom_attrs=tid(test_id),
        ),
    )


def _card_header(icon: str, text: str, color: str) -> rx.Component:
    return rx.hstack(
        rx.icon(icon, size=18, color=rx.color(color, 10)),
        rx.text(text, size="1", weight="bold", color=rx.color(color, 11)),
        align="center",
        spacing="2",
    )


def _approval_card() -> rx.Component:
    return rx.card(
        rx.vstack(
            _card_header(
                "shield-alert", "The agent wants to run a command that needs your approval", "red"
            ),
            rx.cond(
                LiveState.asker != "",
                rx.text(
                    "Asked by a subagent working on: ",
                    rx.text.span(LiveState.asker, weight="medium"),
                    size="2",
                    custom_attrs=tid("approval-subagent"),
                ),
            ),
            rx.el.pre(
                LiveState.question,
                class_name="approval-command",
                custom_attrs=tid("approval-command"),
            ),
            rx.text(
                "Why: ",
                rx.text.span(LiveState.danger, weight="medium"),
                size="2",
                custom_attrs=tid("approval-reason"),
            ),
            rx.flex(
                *(_approval_button(*choice) for choice in APPROVAL_CHOICES),
                wrap="wrap",
                spacing="2",
            ),
            rx.text(
                "Nothing runs until you choose. Deny tells the agent no; it goes on without it.",
                size="1",
                color_scheme="gray",
            ),
            _sending_and_error(),
            spacing="3",
            width="100%",
        ),
        class_name="askfor-card approval-card",
        width="100%",
        custom_attrs=tid("approval-panel"),
    )


def _sending_and_error() -> rx.Component:
    return rx.fragment(
        rx.cond(
            LiveState.answer_sending,
            rx.hstack(
                rx.spinner(size="1"),
                rx.text("Sending your answer…", size="2"),
                align="center",
            ),
        ),
        rx.cond(
            LiveState.answer_error != "",
            rx.text(
                LiveState.answer_error,
                size="2",
                color_scheme="red",
                custom_attrs=tid("askfor-error"),
            ),
        ),
    )


def askfor_panel() -> rx.Component:
    return rx.cond(
        LiveState.clarify_id != "",
        rx.cond(LiveState.pause_kind == "approval", _approval_card(), _question_card()),
    )


def _question_card() -> rx.Component:
    return rx.fragment(
        rx.card(
            rx.vstack(
                _card_header("message-circle-question", "The agent needs your answer", "amber"),
                rx.text(
                    LiveState.question,
                    size="3",
                    weight="medium",
                    custom_attrs=tid("askfor-question"),
                ),
                rx.cond(
                    LiveState.choices.length() > 0,
                    rx.flex(rx.foreach(LiveState.choices, _choice), wrap="wrap", spacing="2"),
                ),
                rx.form(
                    rx.hstack(
                        rx.input(
                            name="answer",
                            placeholder="Or type your own answer…",
                            disabled=LiveState.answer_sending,
                            flex="1",
                            custom_attrs=tid("askfor-custom-input"),
                        ),
                        rx.button(
                            "Answer",
                            type="submit",
                            disabled=LiveState.answer_sending,
                            custom_attrs=tid("askfor-submit"),
                        ),
                        width="100%",
                    ),
                    on_submit=LiveState.answer_custom,
                    reset_on_submit=False,
                    width="100%",
                ),
                _sending_and_error(),
                spacing="3",
                width="100%",
            ),
            class_name="askfor-card",
            width="100%",
            custom_attrs=tid("askfor-panel"),
        ),
    )
