"""The Reflex app: pages, lifespan wiring. Nothing else lives here."""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable

import reflex as rx
from starlette.types import ASGIApp

from agent_chat import routes
from agent_chat.api import create_api
from agent_chat.api.bearer import bearer_check
from agent_chat.api.first_paint import first_paint_with
from agent_chat.auth import login_gate_with
from agent_chat.auth.origins import origin_guard, without_credentials_header
from agent_chat.launch.supervisor import exit_with_supervisor, respawn_failed_web_workers
from agent_chat.pages.account import account_page
from agent_chat.pages.chat import chat_page, index_page
from agent_chat.pages.schedules import schedules_page
from agent_chat.pages.settings import models_page
from agent_chat.pages.tokens import tokens_page
from agent_chat.pages.tools import tools_page
from agent_chat.pages.users import users_page
from agent_chat.runs.redis_watch import RedisRestartWatch
from agent_chat.services.runtime import services, start_services, stop_services
from agent_chat.state.account import AccountState
from agent_chat.state.approvals import AlwaysAllowedState
from agent_chat.state.base import AppState
from agent_chat.state.bridges import BridgesState
from agent_chat.state.chat import ChatState
from agent_chat.state.hosting import HostingState
from agent_chat.state.live import LiveState
from agent_chat.state.mcp import McpState
from agent_chat.state.models import ModelsState
from agent_chat.state.notify_settings import NotifySettingsState
from agent_chat.state.schedules import SchedulesState
from agent_chat.state.sidebar import SidebarState
from agent_chat.state.tokens import TokensState
from agent_chat.state.users import UsersState
from agent_chat.state.workspace import WorkspaceState

# Imported by granian's supervisor before it builds its server: a dead worker is replaced.
respawn_failed_web_workers()


log = logging.getLogger(__name__)


def _tab_connected(token: str) -> bool:
    """Whether the tab's socket is on this process (this worker). With several workers
    Reflex's RedisTokenManager also keeps other workers' sockets it looked up in
    `token_to_sid`, so the record's instance decides: a per-tab loop whose tab reconnected
    to another worker ends (the page load there starts its own), as does one whose tab is
    gone. Reflex 0.10.1 has no public "is this socket mine", hence `_token_manager`."""
    namespace = app.event_namespace
    if namespace is None:
        return False
    tokens = namespace._token_manager
    record = tokens.token_to_socket.get(token)
    return record is not None and record.instance_id == tokens.instance_id


@contextlib.asynccontextmanager
async def services_lifespan():
    logging.basicConfig(level=logging.INFO)
    exit_with_supervisor()  # a forked web worker ends with its granian supervisor
    # httpx logs every request at INFO, here mostly the bridge's /health polls: noise.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    await start_services(tab_connected=_tab_connected)
    watch = None
    if url := os.environ.get("REFLEX_REDIS_URL", "").strip():
        watch = RedisRestartWatch(url, _after_redis_restart)
        watch.start()
    try:
        yield
    finally:
        if watch is not None:
            await watch.close()
        await stop_services()


async def _after_redis_restart() -> None:
    """Reflex's Redis came back empty: every tab's state and socket record is gone. Reflex
    0.10.1 neither notices nor re-enables the keyspace notifications its state locks wait
    on, so: set them again, then close this worker's engine.io sockets (not the socket.io
    namespace, whose "io server disconnect" a client would not recover from), so each tab
    reconnects as after a network cut and its page load reloads everything it shows."""
    manager = app.state_manager
    if hasattr(manager, "_redis_notify_keyspace_events_enabled"):
        manager._redis_notify_keyspace_events_enabled = False  # noqa: SLF001
        try:
            await manager._enable_keyspace_notifications()  # noqa: SLF001
        except Exception:
            log.exception("Redis keyspace notifications could not be enabled again")
    namespace, sio = app.event_namespace, app.sio
    if namespace is None or sio is None:
        return
    closed = 0
    for sid in list(namespace.sid_to_token):
        eio_sid = sio.manager.eio_sid_from_sid(sid, namespace.namespace)
        socket = sio.eio.sockets.get(eio_sid) if eio_sid is not None else None
        if socket is None:
            continue
        # engine.io's own disconnect sends a CLOSE packet that a websocket client ignores and
        # keeps the socket open until the ping timeout: abort it, and wake its writer, which
        # then closes the websocket (python-engineio 4: `AsyncSocket._websocket_handler`).
        await socket.close(wait=False, abort=True)
        socket.queue.put_nowait(None)
        closed += 1
    log.info("Redis restarted: %d tab socket(s) of this worker closed to reconnect", closed)


class _App(rx.App):
    """rx.App whose finished ASGI app (Reflex's CORS layer, outside every api_transformer,
    included) sends no `Access-Control-Allow-Credentials` (auth/origins.py says why)."""

    def __call__(self) -> ASGIApp:
        return without_credentials_header(super().__call__())


app = _App(
    stylesheets=["/styles.css", "/memory.css", "/workspace.css"],
    # Browser notifications and the tab title's count (opt-in on the settings page).
    # The phone's on-screen keyboard shrinks the page (the frame is 100dvh), so the composer
    # and its send button stay above it (components/layout.py).
    head_components=[
        rx.script(src="/notify.js"),
        rx.el.meta(
            name="viewport",
            content="width=device-width, initial-scale=1, interactive-widget=resizes-content",
        ),
    ],
    # The HTTP API, served on the app's port (the services exist once they start), the
    # first HTML of a conversation with its newest messages (api/first_paint.py), the
    # login gate around everything (a session cookie, or a personal API token for /api/*),
    # and outermost the Host/Origin guard (applied in order: the last wraps the rest).
    api_transformer=[
        create_api(services),
        first_paint_with(services),
        login_gate_with(
            lambda: services().storage, bearer=bearer_check(lambda: services().storage)
        ),
        origin_guard,
    ],
)
app.register_lifespan_task(services_lifespan)


def add_page(
    component: Callable[[], rx.Component], *, route: str, on_load: list, title: str
) -> None:
    """A page whose load first makes sure the tab's states are the signed-in person's
    (`AppState.bind_tab`): no page can forget it."""
    app.add_page(component, route=route, on_load=[AppState.bind_tab, *on_load], title=title)


add_page(index_page, route=routes.INDEX, on_load=[ChatState.load_index], title="Agent Chat")
add_page(
    chat_page,
    route=routes.CHAT,
    # On every (re)connect: a tab that reconnects to a restarted worker gets a fresh state
    # (Reflex's token reassignment), and the account footer's own on_mount does not run again.
    on_load=[
        ChatState.load_chat,
        LiveState.start,
        WorkspaceState.resume_poll,
        AccountState.load,
    ],
    title="Agent Chat",
)
add_page(
    models_page,
    route=routes.SETTINGS_MODELS,
    on_load=[
        SidebarState.load_list,
        LiveState.watch_here,
        ModelsState.load,
        ModelsState.new,
        AlwaysAllowedState.load,
        NotifySettingsState.load,
        HostingState.load,
        BridgesState.load,
    ],
    title="Models · Agent Chat",
)
add_page(
    tokens_page,
    route=routes.SETTINGS_TOKENS,
    on_load=[SidebarState.load_list, LiveState.watch_here, TokensState.load],
    title="API tokens · Agent Chat",
)
add_page(
    account_page,
    route=routes.SETTINGS_ACCOUNT,
    on_load=[SidebarState.load_list, LiveState.watch_here, AccountState.open_page],
    title="Account · Agent Chat",
)
add_page(
    users_page,
    route=routes.SETTINGS_USERS,
    on_load=[SidebarState.load_list, LiveState.watch_here, UsersState.load],
    title="Users · Agent Chat",
)
add_page(
    tools_page,
    route=routes.SETTINGS_TOOLS,
    on_load=[SidebarState.load_list, LiveState.watch_here, McpState.load],
    title="Tools · Agent Chat",
)
add_page(
    schedules_page,
    route=routes.SCHEDULES,
    on_load=[SidebarState.load_list, LiveState.watch_here, SchedulesState.load],
    title="Schedules · Agent Chat",
)
