"""`/schedules`: prompts the agent runs at set times (state/schedules.py)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.components.layout import app_frame
from agent_chat.components.schedule_form import NOT_LIVE, schedule_form
from agent_chat.components.schedules import schedule_card
from agent_chat.state.schedules import SchedulesState


def schedules_page() -> rx.Component:
    return app_frame(
        rx.scroll_area(
            rx.vstack(
                rx.hstack(
                    rx.heading("Schedules", size="6", flex="1"),
                    rx.button(
                        rx.icon("plus", size=16),
                        "New schedule",
                        on_click=SchedulesState.new,
                        disabled=NOT_LIVE | SchedulesState.form_open,
                        custom_attrs=tid("schedule-new"),
                    ),
                    align="center",
                    width="100%",
                ),
                rx.text(
                    "Prompts the agent runs at set times, as you: each answer lands in a "
                    "conversation, marked with a clock in the list, and waits there for you. "
                    "Times are shown in your browser's time zone (",
                    SchedulesState.zone,
                    ").",
                    color_scheme="gray",
                ),
                rx.cond(SchedulesState.form_open, schedule_form()),
                rx.foreach(SchedulesState.rows, schedule_card),
                rx.cond(
                    (SchedulesState.rows.length() == 0) & ~SchedulesState.form_open,
                    rx.text(
                        "No schedule yet. “New schedule”, or “Schedule…” in a conversation's "
                        "menu, makes one.",
                        color_scheme="gray",
                        custom_attrs=tid("schedules-empty"),
                    ),
                ),
                class_name="settings-column",
                spacing="4",
            ),
            flex="1",
        ),
    )
