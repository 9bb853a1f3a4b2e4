"""The schedules page's rows (state/schedules.py): a schedule with its actions (Run now,
pause, edit, delete) and its history; the form is components/schedule_form.py."""

from __future__ import annotations

import reflex as rx

from agent_chat import routes
from agent_chat.components.common import delete_with_confirm, tid
from agent_chat.state.schedule_rows import HistoryRow, ScheduleRow
from agent_chat.state.schedules import SchedulesState


def _conversation_link(uuid: rx.Var, text: str, test_id: str) -> rx.Component:
    return rx.link(
        text,
        href=routes.NEW_CHAT + "/" + uuid,
        size="2",
        class_name="schedule-link",
        custom_attrs=tid(test_id),
    )


def _history_item(item: HistoryRow) -> rx.Component:
    return rx.hstack(
        rx.text(item["when"], size="1", color_scheme="gray", min_width="9em"),
        rx.text(
            item["outcome"],
            size="1",
            color_scheme=rx.cond(item["bad"], "red", "gray"),
            flex="1",
            min_width="0",
        ),
        rx.cond(
            item["uuid"] != "", _conversation_link(item["uuid"], "Open", "schedule-history-link")
        ),
        align="center",
        width="100%",
        wrap="wrap",
        custom_attrs=tid("schedule-history-item"),
    )


def _history(row: ScheduleRow) -> rx.Component:
    return rx.cond(
        SchedulesState.history_id == row["id"],
        rx.vstack(
            rx.foreach(SchedulesState.history, _history_item),
            rx.cond(
                SchedulesState.history.length() == 0,
                rx.text("It has not run yet.", size="1", color_scheme="gray"),
            ),
            spacing="1",
            width="100%",
            class_name="schedule-history",
            custom_attrs=tid("schedule-history"),
        ),
    )


def _delete(row: ScheduleRow) -> rx.Component:
    return delete_with_confirm(
        title="Delete this schedule?",
        description=[
            "“",
            row["title"],
            "” stops running and its history goes. The conversations it made stay.",
        ],
        on_confirm=SchedulesState.delete(row["id"]),
        test_id="schedule-delete",
    )


def _run_result(row: ScheduleRow) -> rx.Component:
    return rx.cond(
        SchedulesState.ran_id == row["id"],
        rx.hstack(
            rx.text(
                SchedulesState.ran_text,
                size="2",
                color_scheme=rx.cond(SchedulesState.ran_ok, "green", "red"),
                role="status",
                custom_attrs=tid("schedule-run-result"),
            ),
            rx.cond(
                SchedulesState.ran_uuid != "",
                _conversation_link(
                    SchedulesState.ran_uuid, "Open the conversation", "schedule-run-link"
                ),
            ),
            align="center",
            wrap="wrap",
        ),
    )


def _actions(row: ScheduleRow) -> rx.Component:
    return rx.flex(
        rx.button(
            rx.icon("play", size=14),
            "Run now",
            size="1",
            variant="soft",
            on_click=SchedulesState.run_now(row["id"]),
            custom_attrs=tid("schedule-run-now"),
        ),
        rx.button(
            rx.cond(row["paused"], rx.icon("play", size=14), rx.icon("pause", size=14)),
            rx.cond(row["paused"], "Resume", "Pause"),
            size="1",
            variant="soft",
            color_scheme="gray",
            on_click=SchedulesState.toggle_pause(row["id"], row["paused"]),
            custom_attrs=tid("schedule-pause"),
        ),
        rx.button(
            rx.icon("pencil", size=14),
            "Edit",
            size="1",
            variant="soft",
            color_scheme="gray",
            on_click=SchedulesState.edit(row["id"]),
            custom_attrs=tid("schedule-edit"),
        ),
        rx.button(
            rx.icon("history", size=14),
            "History",
            size="1",
            variant="soft",
            color_scheme="gray",
            on_click=SchedulesState.toggle_history(row["id"]),
            aria_expanded=rx.cond(SchedulesState.history_id == row["id"], "true", "false"),
            custom_attrs=tid("schedule-history-toggle"),
        ),
        _delete(row),
        spacing="2",
        wrap="wrap",
    )


def schedule_card(row: ScheduleRow) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.text(row["title"], weight="bold", flex="1", min_width="0", truncate=True),
                rx.cond(
                    row["paused"],
                    rx.badge("paused", color_scheme="gray", custom_attrs=tid("schedule-paused")),
                ),
                align="center",
                width="100%",
            ),
            rx.text(row["when"], size="2", custom_attrs=tid("schedule-when-text")),
            rx.cond(
                row["paused"],
                rx.text("Paused: it does not run until resumed.", size="2", color_scheme="gray"),
                rx.text(
                    "Next run: ",
                    rx.text.span(row["next"], custom_attrs=tid("schedule-next")),
                    size="2",
                ),
            ),
            rx.text(row["where"], size="2", color_scheme="gray"),
            rx.cond(
                row["last"] != "",
                rx.hstack(
                    rx.text(
                        "Last: ",
                        row["last"],
                        size="2",
                        color_scheme=rx.cond(
                            (row["last_status"] == "ERROR") | (row["last_status"] == "FAILED"),
                            "red",
                            "gray",
                        ),
                        custom_attrs=tid("schedule-last"),
                    ),
                    rx.cond(
                        row["last_uuid"] != "",
                        _conversation_link(row["last_uuid"], "Open", "schedule-last-link"),
                    ),
                    align="center",
                    wrap="wrap",
                ),
            ),
            _run_result(row),
            _actions(row),
            _history(row),
            spacing="2",
            width="100%",
        ),
        width="100%",
        custom_attrs={"data-testid": "schedule-row", "data-schedule-id": row["id"]},
    )
