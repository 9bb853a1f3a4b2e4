"""The app process's long-lived parts, wired once at start-up (Reflex lifespan task).

Plain Python: the database engine, the bridge client and the RunManager. State classes
reach them through `services()`. With `AGENT_CHAT_BRIDGE=embedded` the bridge itself is one
of them (`agent_chat/runs/embedded.py`): started before the runs re-attach, stopped after.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import Engine

from agent_chat.auth import setup_code
from agent_chat.config import Settings, load_settings
from agent_chat.db import model_configs, users
from agent_chat.db.engine import make_engine, migrate, startup_lock
from agent_chat.runs.bridge_watch import EMBEDDED_HINT, UNREACHABLE_HINT, BridgeWatch
from agent_chat.runs.bridges import BridgeSet
from agent_chat.runs.client import BridgeClient
from agent_chat.runs.manager import RunManager
from agent_chat.runs.redis_bus import redis_run_bus
from agent_chat.runs.storage import Storage
from agent_chat.services import checkpoints
from agent_chat.services.attachment_sweep import AttachmentSweep
from agent_chat.services.schedule_fire import ScheduleFiring

if TYPE_CHECKING:
    from agent_chat.runs.embedded import EmbeddedBridge

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    engine: Engine
    storage: Storage
    bridge: BridgeClient  # the first bridge (memory, always-allow rules)
    runs: RunManager
    bridge_watch: BridgeWatch
    # Whether a browser tab (client token) is still connected to this process: the web
    # layer that owns the sockets says (set by the app module); long-lived per-tab loops
    # end when it says no.
    tab_connected: Callable[[str], bool] = lambda token: True
    # AGENT_CHAT_BRIDGE=embedded: the bridge of this process (agent_chat/runs/embedded.py).
    embedded: EmbeddedBridge | None = None
    attachment_sweep: AttachmentSweep | None = None  # unused attachments, hourly
    schedule_firing: ScheduleFiring | None = None  # due schedules, every 15 s


_services: Services | None = None


def _prepare_database(settings: Settings, storage: Storage) -> str | None:
    """Migrate, and seed the model and the first administrator from the environment: one
    worker at a time (several start at once and share the database)."""
    with startup_lock(settings.db_url):
        migrate(settings.db_url)
        storage.call_sync(model_configs.ensure_env_model, settings=settings)
        return storage.call_sync(
            users.ensure_first_admin,
            admin_user=settings.admin_user,
            admin_password=settings.admin_password,
            legacy_password=settings.password,
        )


def _announce_setup_code(settings: Settings) -> None:
    """No account yet: say where to make the first one, with the code /setup asks for when
    strangers can reach it (auth/setup_code.py)."""
    code = setup_code.code_for(settings.app_host)
    if code:
        log.warning("No account yet: open /setup to make the administrator. Setup code: %s", code)
    else:
        log.warning("No account yet: open /setup on this machine to make the administrator")


async def start_services(
    settings: Settings | None = None, *, tab_connected: Callable[[str], bool] | None = None
) -> Services:
    """Migrate the database, create the clients, and re-attach to running runs."""
    global _services
    if _services is not None:
        return _services
    settings = settings or load_settings()
    engine = make_engine(settings.db_url)
    storage = Storage(engine)
    made = await asyncio.to_thread(_prepare_database, settings, storage)
    if made:
        log.warning("Accounts: %s", made)
    elif not await storage.call(users.has_users):
        _announce_setup_code(settings)
    embedded = None
    if settings.embedded_bridge:  # hermes is imported here, once the settings are read
        from agent_chat.runs.embedded import EmbeddedBridge

        embedded = EmbeddedBridge()
        await embedded.start()
        bridges = BridgeSet([embedded.client()])
    else:  # one client per bridge (AGENT_CHAT_BRIDGE_URLS), each run pinned to one
        bridges = BridgeSet.of(
            settings.all_bridge_urls,
            token=settings.bridge_token,
            reconnect_for=settings.bridge_down_after_s,
        )
    bridge = bridges.first
    bus, leases = None, None
    if settings.redis_url:  # several workers: events, states and leases through Redis
        bus, leases = redis_run_bus(
            settings.redis_url,
            storage=storage,
            stream_ttl_s=settings.redis_stream_ttl_s,
            lease_s=settings.redis_lease_s,
        )
    runs = RunManager(settings=settings, storage=storage, bridges=bridges, bus=bus, leases=leases)
    watch = BridgeWatch(bridges, runs.bus, hint=EMBEDDED_HINT if embedded else UNREACHABLE_HINT)
    runs.recheck_bridges = watch.check
    checkpoints.attach(runs)  # the workspace recorded at each run's end, put back on a new version
    _services = Services(settings, engine, storage, bridge, runs, watch, embedded=embedded)
    if tab_connected is not None:
        _services.tab_connected = tab_connected
    await runs.start()
    watch.start()
    _services.attachment_sweep = AttachmentSweep(_services)
    _services.attachment_sweep.start()
    # After the runs re-attached: a firing missed while the app was down starts now, once.
    _services.schedule_firing = ScheduleFiring(_services)
    _services.schedule_firing.start()
    where = "embedded" if embedded else ", ".join(settings.all_bridge_urls)
    log.info("services started (bridge %s)", where)
    return _services


async def stop_services() -> None:
    global _services
    if _services is None:
        return
    services, _services = _services, None
    await services.bridge_watch.close()
    if services.attachment_sweep is not None:
        await services.attachment_sweep.close()
    if services.schedule_firing is not None:
        await services.schedule_firing.close()
    # The runs are left RUNNING in the database (as by a crash): the next start fails
    # those its bridge no longer knows, with the restart sentence.
    await services.runs.close()
    if services.embedded is not None:
        await services.embedded.stop()
    await services.runs.bridges.aclose()
    services.engine.dispose()


def services() -> Services:
    if _services is None:
        raise RuntimeError("services are not started (the app's lifespan task starts them)")
    return _services
