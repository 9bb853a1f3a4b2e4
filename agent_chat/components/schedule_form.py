"""The schedules page's form (state/schedules.py): makes or changes a schedule; a refusal
shows under the field at fault and the form keeps what was typed."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.schedule_rows import DEFAULT_MODEL, PRESETS, WEEKDAYS
from agent_chat.state.schedules import SchedulesState

# The prerendered page shows the form before its scripts run (pages/settings.py says why).
NOT_LIVE = ~rx.State.is_hydrated
FORM = SchedulesState.form


def _error(name: str) -> rx.Component:
    message = SchedulesState.field_errors.get(name, "")
    return rx.cond(
        message != "",
        rx.text(
            message,
            size="1",
            color_scheme="red",
            role="alert",
            custom_attrs=tid(f"schedule-{name}-error"),
        ),
    )


def _label(text: str, *extra: rx.Component) -> rx.Component:
    return rx.text(text, *extra, size="2", weight="medium")


def _field(label: str, name: str, *boxes: rx.Component, hint: str = "") -> rx.Component:
    return rx.vstack(
        _label(label),
        *boxes,
        _error(name),
        rx.cond(hint != "", rx.text(hint, size="1", color_scheme="gray")),
        spacing="1",
        width="100%",
    )


def _input(name: str, **props) -> rx.Component:
    return rx.input(
        value=FORM.get(name, ""),
        on_change=lambda v: SchedulesState.set_field(name, v),
        disabled=NOT_LIVE,
        custom_attrs=tid(f"schedule-{name}"),
        **props,
    )


def _select(
    name: str, items: list[tuple[str, str]] | rx.Component, test_id: str = "", **props
) -> rx.Component:
    content = (
        [rx.select.item(label, value=value) for value, label in items]
        if isinstance(items, list)
        else [items]
    )
    return rx.select.root(
        rx.select.trigger(custom_attrs=tid(test_id or f"schedule-{name}"), **props),
        rx.select.content(*content),
        value=FORM.get(name, ""),
        on_change=lambda v: SchedulesState.set_field(name, v),
        disabled=NOT_LIVE,
    )


def _when() -> rx.Component:
    preset = FORM.get("preset", "")
    at_time = (preset == "daily") | (preset == "weekdays") | (preset == "weekly")
    return rx.vstack(
        _label("When"),
        rx.flex(
            _select("preset", list(PRESETS), "schedule-when", aria_label="How often"),
            rx.cond(
                preset == "weekly",
                _select("weekday", [(str(i), d) for i, d in enumerate(WEEKDAYS)], aria_label="Day"),
            ),
            rx.cond(at_time, _input("time", type="time", aria_label="Time", width="8em")),
            rx.cond(
                preset == "hourly",
                rx.hstack(
                    rx.text("at minute", size="2"),
                    _input("minute", type="number", min=0, max=59, width="5em"),
                    align="center",
                    spacing="2",
                ),
            ),
            rx.cond(
                preset == "custom",
                _input("cron", placeholder="0 9 * * 1-5", aria_label="Cron", flex="1"),
            ),
            spacing="2",
            wrap="wrap",
            align="center",
            width="100%",
            class_name="schedule-when",
        ),
        rx.cond(
            preset == "custom",
            rx.text(
                "Five fields: minute, hour, day of month, month, day of week (0 = Sunday).",
                size="1",
                color_scheme="gray",
            ),
        ),
        _error("cron"),
        spacing="1",
        width="100%",
    )


def _where() -> rx.Component:
    return rx.vstack(
        _label("Where the answers go"),
        rx.radio_group.root(
            rx.vstack(
                rx.text(
                    rx.flex(
                        rx.radio_group.item(value="new", custom_attrs=tid("schedule-where-new")),
                        "A new conversation each time",
                        spacing="2",
                        align="center",
                    ),
                    as_="label",
                    size="2",
                    class_name="schedule-choice",
                ),
                rx.cond(
                    FORM.get("conversation", "") != "",
                    rx.text(
                        rx.flex(
                            rx.radio_group.item(
                                value="append", custom_attrs=tid("schedule-where-append")
                            ),
                            rx.text.span(
                                "Add to this conversation: “",
                                FORM.get("conversation_title", ""),
                                "”",
                            ),
                            spacing="2",
                            align="center",
                        ),
                        as_="label",
                        size="2",
                        class_name="schedule-choice",
                    ),
                ),
                spacing="2",
            ),
            value=FORM.get("mode", "new"),
            on_change=lambda v: SchedulesState.set_field("mode", v),
            disabled=NOT_LIVE,
            custom_attrs=tid("schedule-where"),
        ),
        _error("mode"),
        spacing="1",
        width="100%",
    )


def _model_items() -> rx.Component:
    return rx.fragment(
        rx.select.item("Default model", value=DEFAULT_MODEL),
        rx.foreach(SchedulesState.models, lambda m: rx.select.item(m[1], value=m[0])),
    )


def schedule_form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.heading(
                rx.cond(SchedulesState.editing_id == 0, "New schedule", "Edit schedule"), size="4"
            ),
            _field(
                "Prompt",
                "prompt",
                rx.text_area(
                    value=FORM.get("prompt", ""),
                    on_change=lambda v: SchedulesState.set_field("prompt", v),
                    placeholder="What should the agent do each time?",
                    rows="4",
                    disabled=NOT_LIVE,
                    width="100%",
                    custom_attrs=tid("schedule-prompt"),
                ),
            ),
            _field(
                "Title",
                "title",
                _input("title", placeholder="Optional: the prompt's first words", width="100%"),
            ),
            _when(),
            _field(
                "Time zone",
                "timezone",
                _input("timezone", placeholder="Europe/Berlin", width="100%"),
                hint="Your browser's is filled in; any IANA name works.",
            ),
            rx.flex(
                rx.vstack(
                    _label("Model"),
                    _select("model", _model_items(), aria_label="Model"),
                    _error("model"),
                    spacing="1",
                ),
                rx.cond(
                    SchedulesState.profiles.length() > 1,
                    rx.vstack(
                        _label("Tools"),
                        _select(
                            "profile",
                            rx.foreach(
                                SchedulesState.profiles,
                                lambda p: rx.select.item(p[1], value=p[0]),
                            ),
                            aria_label="Tools",
                        ),
                        _error("profile"),
                        spacing="1",
                    ),
                ),
                spacing="4",
                wrap="wrap",
            ),
            _where(),
            rx.cond(
                SchedulesState.form_error != "",
                rx.text(
                    SchedulesState.form_error,
                    color_scheme="red",
                    size="2",
                    role="alert",
                    custom_attrs=tid("schedule-form-error"),
                ),
            ),
            rx.hstack(
                rx.button(
                    "Save",
                    on_click=SchedulesState.save,
                    disabled=NOT_LIVE,
                    custom_attrs=tid("schedule-save"),
                ),
                rx.button(
                    "Cancel",
                    variant="soft",
                    color_scheme="gray",
                    on_click=SchedulesState.cancel,
                    custom_attrs=tid("schedule-cancel"),
                ),
                spacing="2",
            ),
            spacing="3",
            width="100%",
        ),
        width="100%",
        custom_attrs=tid("schedule-form"),
    )
