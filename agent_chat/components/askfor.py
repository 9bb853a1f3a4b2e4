"""⑤ AskFor: the agent's question, choice buttons and a free-text answer."""

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


def askfor_panel() -> rx.Component:
    return rx.cond(
        LiveState.clarify_id != "",
        rx.card(
            rx.vstack(
                rx.hstack(
                    rx.icon("message-circle-question", size=18, color=rx.color("amber", 10)),
                    rx.text(
                        "The agent needs your answer",
                        size="1",
                        weight="bold",
                        color=rx.color("amber", 11),
                    ),
                    align="center",
                    spacing="2",
                ),
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
                spacing="3",
                width="100%",
            ),
            class_name="askfor-card",
            width="100%",
            custom_attrs=tid("askfor-panel"),
        ),
    )
