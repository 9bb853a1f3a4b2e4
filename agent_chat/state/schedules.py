"""The schedules page (`/schedules`): the person's scheduled runs, the form that makes or
changes one, Run now, pause, delete and each one's history. Every handler calls a use case
of services/schedules.py or services/schedule_fire.py and turns its refusal into words next
to the field at fault; the form keeps what was typed. Rows and form fields:
state/schedule_rows.py."""

from __future__ import annotations

import asyncio
import contextlib

import reflex as rx

from agent_chat.common import tool_profiles
from agent_chat.db.errors import NotFound, StoreError, ValidationFailed
from agent_chat.services import schedule_fire, schedule_overview, schedules
from agent_chat.services.conversations import ConversationNotFound, conversation_for
from agent_chat.services.models import list_models
from agent_chat.services.schedule_times import ScheduleInvalid, check_timezone
from agent_chat.state.base import AppState
from agent_chat.state.schedule_rows import (
    DEFAULT_MODEL,
    HistoryRow,
    ScheduleRow,
    blank_form,
    edit_form,
    field_messages,
    history_row,
    schedule_row,
    when_of,
)
from agent_chat.state.sidebar import SidebarState

BROWSER_ZONE = "Intl.DateTimeFormat().resolvedOptions().timeZone"
WATCH_S = 600  # how long a page follows a run it started, for its outcome and the sidebar


class SchedulesState(AppState):
    rows: list[ScheduleRow] = []
    zone: str = "UTC"  # the browser's time zone: times are shown in it, new forms default to it
    models: list[list[str]] = []  # [id, name]
    profiles: list[list[str]] = []  # [name, label] of the enabled tool profiles
    form_open: bool = False
    editing_id: int = 0  # 0: the form makes a new schedule
    form: dict[str, str] = {}
    field_errors: dict[str, str] = {}
    form_error: str = ""
    history_id: int = 0  # the schedule whose history is open
    history: list[HistoryRow] = []
    ran_id: int = 0  # the schedule "Run now" was last pressed on, and what came of it
    ran_text: str = ""
    ran_uuid: str = ""
    ran_ok: bool = False

    async def _reload(self) -> None:
        listed = await schedule_overview.overview(self.svc(), user_id=await self.user_id())
        self.rows = [schedule_row(item, self.zone) for item in listed]

    @rx.event
    async def load(self):
        """The page's load: the list, the form's choices, and (`?conversation=<uuid>`, the
        conversation menu's "Schedule…") the form adding to that conversation."""
        svc = self.svc()
        self.models = [[str(m.id), m.name] for m in await list_models(svc)]
        self.profiles = [[p, tool_profiles.LABELS[p]] for p in svc.settings.tool_profiles]
        self.history_id, self.history, self.ran_id = 0, [], 0
        await self._reload()
        session_uuid = self.router.url.query_parameters.get("conversation", "")
        if session_uuid:
            await self._open_for(session_uuid)
        return rx.call_script(BROWSER_ZONE, callback=SchedulesState.got_zone)

    async def _open_for(self, session_uuid: str) -> None:
        try:
            chat = await conversation_for(
                self.svc(), user_id=await self.user_id(), session_uuid=session_uuid
            )
        except ConversationNotFound:
            self.show_error("That conversation no longer exists.")
            return
        self._open(blank_form(self._default_profile(), self.zone))
        self.form = {
            **self.form,
            "mode": "append",
            "conversation": chat.session_uuid,
            "conversation_title": chat.title or "New conversation",
            "title": chat.title[:120],
        }

    @rx.event
    async def got_zone(self, zone: str) -> None:
        """The browser's time zone (its answer to `BROWSER_ZONE`)."""
        try:
            self.zone = check_timezone(str(zone or ""))
        except ScheduleInvalid:
            return  # an unknown name: times stay in UTC
        if self.form_open and self.editing_id == 0 and not self.form.get("timezone_typed"):
            self.form = {**self.form, "timezone": self.zone}
        await self._reload()

    def _default_profile(self) -> str:
        return tool_profiles.default_profile(self.svc().settings.tool_profiles)

    def _open(self, form: dict[str, str]) -> None:
        self.form, self.field_errors, self.form_error = form, {}, ""
        self.form_open = True

    @rx.event
    def new(self) -> None:
        self.editing_id = 0
        self._open(blank_form(self._default_profile(), self.zone))

    @rx.event
    async def edit(self, schedule_id: int) -> None:
        try:
            row = await schedules.get_schedule(
                self.svc(), user_id=await self.user_id(), schedule_id=schedule_id
            )
        except NotFound:
            self.show_error("This schedule no longer exists.")
            await self._reload()
            return
        listed = next((r for r in self.rows if r["id"] == row.id), None)
        target = (listed["target_uuid"], listed["target_title"]) if listed else ("", "")
        self.editing_id = row.id or 0
        self._open(edit_form(row, *target))

    @rx.event
    def cancel(self) -> None:
        self.form_open, self.editing_id, self.field_errors, self.form_error = False, 0, {}, ""

    @rx.event
    def set_field(self, name: str, value: str) -> None:
        self.form = {**self.form, name: str(value)}
        if name == "timezone":
            self.form = {**self.form, "timezone_typed": "1"}
        cleared = {"preset": ("cron",), "time": ("cron",), "weekday": ("cron",)}.get(name, ())
        self.field_errors = {
            k: v for k, v in self.field_errors.items() if k != name and k not in cleared
        }

    @rx.event
    async def save(self):
        self.field_errors, self.form_error = {}, ""
        form = self.form
        try:
            when = when_of(form)
        except ValidationFailed as exc:
            self.field_errors = dict(exc.field_errors)
            return None
        model = form.get("model", DEFAULT_MODEL)
        model_id = int(model) if model.isdigit() else None
        profile = form.get("profile") or None
        mode = form.get("mode", "new")
        session_uuid = form.get("conversation") or None if mode == "append" else None
        svc, me = self.svc(), await self.user_id()
        try:
            if self.editing_id:
                await schedules.update_schedule(
                    svc,
                    user_id=me,
                    schedule_id=self.editing_id,
                    changes={
                        "title": form.get("title", ""),
                        "prompt": form.get("prompt", ""),
                        "cron": when.cron,
                        "timezone": when.timezone,
                        "model_id": model_id,
                        "tool_profile": profile,
                        "mode": mode,
                    },
                    session_uuid=session_uuid,
                )
            else:
                await schedules.create_schedule(
                    svc,
                    user_id=me,
                    prompt=form.get("prompt", ""),
                    when=when,
                    title=form.get("title", ""),
                    model_id=model_id,
                    tool_profile=profile,
                    mode=mode,
                    session_uuid=session_uuid,
                )
        except ValidationFailed as exc:
            self.field_errors, self.form_error = field_messages(exc)
            return None
        except NotFound:
            self.form_error = "This schedule was deleted meanwhile: save it as a new one."
            self.editing_id = 0
            return None
        self.form_open, self.editing_id = False, 0
        await self._reload()
        return rx.toast("Schedule saved", duration=2000)

    @rx.event
    async def toggle_pause(self, schedule_id: int, paused: bool) -> None:
        svc, me = self.svc(), await self.user_id()
        try:
            if paused:
                await schedules.resume_schedule(svc, user_id=me, schedule_id=schedule_id)
            else:
                await schedules.pause_schedule(svc, user_id=me, schedule_id=schedule_id)
        except StoreError:
            self.show_error("This schedule no longer exists.")
        await self._reload()

    @rx.event
    async def delete(self, schedule_id: int) -> None:
        with contextlib.suppress(NotFound):  # gone already: the list says so
            await schedules.delete_schedule(
                self.svc(), user_id=await self.user_id(), schedule_id=schedule_id
            )
        if self.editing_id == schedule_id:
            self.cancel()
        await self._reload()

    @rx.event
    async def run_now(self, schedule_id: int):
        """Fire it now: the row says where the answer goes, or why it could not start."""
        try:
            run = await schedule_fire.run_now(
                self.svc(), user_id=await self.user_id(), schedule_id=schedule_id
            )
        except NotFound:
            self.show_error("This schedule no longer exists.")
            await self._reload()
            return None
        await self._reload()
        self.ran_id, self.ran_ok = schedule_id, run.error is None
        if run.error is not None:
            self.ran_text, self.ran_uuid = f"Could not start: {run.error}", ""
            return None
        row = next((r for r in self.rows if r["id"] == schedule_id), None)
        self.ran_uuid = row["last_uuid"] if row else ""
        self.ran_text = "Started."
        if self.history_id == schedule_id:
            await self._load_history(schedule_id)
        return [SidebarState.load_list, SchedulesState.follow(schedule_id)]

    @rx.event(background=True)
    async def follow(self, schedule_id: int):
        """Until the run "Run now" started ends: then its outcome and the sidebar (the
        conversation's unread mark) are shown as they are."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WATCH_S
        while loop.time() < deadline:
            await asyncio.sleep(1.0)
            async with self:
                if self.ran_id != schedule_id:
                    return  # another Run now, or the page was loaded again
                try:
                    await self._reload()
                except StoreError:
                    return
                row = next((r for r in self.rows if r["id"] == schedule_id), None)
                if row is None or row["last_status"] != "RUNNING":
                    if self.history_id == schedule_id:
                        await self._load_history(schedule_id)
                    break
        yield SidebarState.load_list

    async def _load_history(self, schedule_id: int) -> None:
        runs = await schedules.schedule_history(
            self.svc(), user_id=await self.user_id(), schedule_id=schedule_id
        )
        self.history = [history_row(info, self.zone) for info in runs]

    @rx.event
    async def toggle_history(self, schedule_id: int) -> None:
        if self.history_id == schedule_id:
            self.history_id, self.history = 0, []
            return
        try:
            await self._load_history(schedule_id)
        except NotFound:
            self.show_error("This schedule no longer exists.")
            await self._reload()
            return
        self.history_id = schedule_id
