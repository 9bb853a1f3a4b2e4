"""Settings → Tools (services/mcp_servers.py): the MCP servers, their status on the agent
services, a form to add or change one (a refusal under its field, nothing typed lost), Test
(before or after saving: the tools it offers, or why it does not connect), enable, delete.
Administrators only: a member's page says so and is sent nothing.

Test and the status wait on a bridge (a connect may take its whole timeout): background
events, so the tab's state is not held meanwhile (with several workers Reflex would drop a
handler's changes after 10 s)."""

from __future__ import annotations

import reflex as rx

from agent_chat.common import tool_profiles
from agent_chat.db.errors import Forbidden, NotFound, StoreError, ValidationFailed
from agent_chat.services import mcp_servers as use
from agent_chat.state.base import AppState
from agent_chat.state.mcp_form import McpRow, blank_form, edit_form, row, values

PROFILE_CHOICES = [(p, tool_profiles.LABELS.get(p, p)) for p in tool_profiles.TOOLSETS]


class McpState(AppState):
    servers: list[McpRow] = []
    forbidden: bool = False
    loaded: bool = False
    form_open: bool = False
    editing_id: int = 0
    form: dict[str, str] = {}
    field_errors: dict[str, str] = {}
    form_error: str = ""
    testing: bool = False
    test_ok: bool = False
    test_error: str = ""
    test_tools: list[dict[str, str]] = []
    test_for: str = ""  # which server (or "the form") the result is of

    async def _reload(self, *, with_status: bool) -> None:
        svc, me = self.svc(), await self.user_id()
        try:
            views = await use.list_servers(svc, user_id=me)
            statuses = await use.status(svc, user_id=me) if with_status and views else []
        except Forbidden:
            self.forbidden, self.servers = True, []
            return
        self.forbidden = False
        self.servers = [row(v, statuses) for v in views]

    @rx.event(background=True)
    async def load(self):
        async with self:
            # `form` may hold a secret typed in it: never kept for the next sync of the tab.
            self.form_open, self.editing_id, self.loaded, self.form = False, 0, False, {}
            self._clear_test()
            await self._reload(with_status=False)
            self.loaded = True
        async with self:  # the bridges' status after the list is shown
            if not self.forbidden and self.servers:
                await self._reload(with_status=True)

    def _clear_test(self) -> None:
        self.test_ok, self.test_error, self.test_tools, self.test_for = False, "", [], ""

    def _open(self, form: dict[str, str]) -> None:
        self.form, self.field_errors, self.form_error = form, {}, ""
        self.form_open = True
        self._clear_test()

    @rx.event
    def new(self) -> None:
        self.editing_id = 0
        self._open(blank_form())

    @rx.event
    async def edit(self, server_id: int) -> None:
        try:
            view = await use.get_server(
                self.svc(), user_id=await self.user_id(), server_id=server_id
            )
        except (NotFound, Forbidden):
            self.show_error("This MCP server no longer exists.")
            await self._reload(with_status=False)
            return
        self.editing_id = server_id
        self._open(edit_form(view))

    @rx.event
    def cancel(self) -> None:
        self.form_open, self.editing_id, self.field_errors, self.form_error = False, 0, {}, ""
        self.form = {}

    @rx.event
    def set_field(self, name: str, value: str | bool) -> None:
        text = ("1" if value else "") if isinstance(value, bool) else str(value)
        self.form = {**self.form, name: text}
        if name == "transport" and not self.editing_id:
            # A new stdio server asks before each call by default (it runs on this machine).
            self.form = {**self.form, "ask": "1" if text == "stdio" else ""}
        self.field_errors = {k: v for k, v in self.field_errors.items() if k != name}

    @rx.event
    def toggle_profile(self, profile: str, on: bool) -> None:
        chosen = [p for p in self.form.get("profiles", "").split(",") if p and p != profile]
        self.form = {**self.form, "profiles": ",".join([*chosen, *([profile] if on else [])])}

    def _refused(self, exc: ValidationFailed) -> None:
        shown = {"args": "command", "include": "tools", "exclude": "tools"}
        known = {"name", "command", "env", "url", "headers", "tools", "profiles", "timeout"}
        fields: dict[str, str] = {}
        rest: list[str] = []
        for key, message in exc.field_errors.items():
            key = shown.get(key, key)
            if key in known:
                fields[key] = message
            else:
                rest.append(message)
        self.field_errors, self.form_error = fields, " ".join(rest)

    @rx.event
    async def save(self):
        self.field_errors, self.form_error = {}, ""
        try:
            given = values(self.form)
            await use.save_server(
                self.svc(),
                user_id=await self.user_id(),
                server_id=self.editing_id or None,
                values=given,
            )
        except ValidationFailed as exc:
            self._refused(exc)
            return None
        except NotFound:
            self.form_error = "This server was deleted meanwhile: save it as a new one."
            self.editing_id = 0
            return None
        except Forbidden as exc:
            self.form_error = str(exc)
            return None
        self.form_open, self.editing_id, self.form = False, 0, {}
        await self._reload(with_status=False)
        return rx.toast(f"MCP server {given.name} saved", duration=2000)

    @rx.event(background=True)
    async def test_form(self):
        async with self:
            self.field_errors, self.form_error = {}, ""
            self._clear_test()
            try:
                given = values(self.form)
            except ValidationFailed as exc:
                self._refused(exc)
                return
            self.testing, self.test_for = True, "form"
            server_id, me = self.editing_id or None, await self.user_id()
        await self._test(me, server_id=server_id, values=given)

    @rx.event(background=True)
    async def test_row(self, server_id: int, name: str):
        async with self:
            self._clear_test()
            self.testing, self.test_for = True, name
            me = await self.user_id()
        if await self._test(me, server_id=server_id):
            async with self:
                await self._reload(with_status=True)

    async def _test(self, me: int, **which: object) -> bool:
        """Run the use case's test outside the state's lock and show its answer (or the
        form's refusal); False when it could not run."""
        try:
            result = await use.test_server(self.svc(), user_id=me, **which)
        except ValidationFailed as exc:
            async with self:
                self.testing = False
                self._refused(exc)
            return False
        except StoreError as exc:
            async with self:
                self.testing, self.test_error = False, str(exc)
            return False
        async with self:
            self.testing, self.test_ok = False, result.ok
            # A failure always says something: an empty callout would read as nothing done.
            failed = "The test failed, and the agent service gave no reason."
            self.test_error = result.error or ("" if result.ok else failed)
            self.test_tools = list(result.tools)
        return True

    @rx.event
    async def set_enabled(self, server_id: int, enabled: bool) -> None:
        try:
            await use.set_enabled(
                self.svc(), user_id=await self.user_id(), server_id=server_id, enabled=enabled
            )
        except StoreError as exc:
            self.show_error(f"Could not change the server: {exc}")
        await self._reload(with_status=False)

    @rx.event
    async def delete(self, server_id: int) -> None:
        try:
            await use.delete_server(self.svc(), user_id=await self.user_id(), server_id=server_id)
        except NotFound:
            pass  # gone already: the list below says so
        except StoreError as exc:
            self.show_error(f"Could not delete the server: {exc}")
        if self.editing_id == server_id:
            self.form_open, self.editing_id, self.form = False, 0, {}
        await self._reload(with_status=False)
