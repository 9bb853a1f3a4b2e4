"""Every event handler and computed var of every State class that takes or reads a
conversation reaches it only through owner-checked calls (tests/support/owner_walk.py says
the rule), so the next handler cannot forget. The walk is proved able to fail on the
handlers that once leaked another person's workspace (before their owner checks)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from tests.support.owner_walk import EXEMPT, state_classes, walk_states


def test_no_state_handler_reads_a_conversation_without_its_owner() -> None:
    import agent_chat.agent_chat  # noqa: F401 (registers every page's states)
    from agent_chat.state.base import AppState

    classes = list(state_classes(AppState))
    walk = walk_states(classes)
    assert not walk.findings, "unchecked conversation reads:\n" + "\n".join(map(str, walk.findings))
    # Not vacuous: the handlers known to take or read a conversation were walked through it.
    for entry in (
        "ChatState.load_chat",
        "ChatState.switch_version",
        "LiveState.send",
        "LiveState.regenerate",
        "MemoryState.load",
        "ShareState.open_share",
        "SidebarState.delete",
        "SearchState.open_result",
        "WorkspaceState.ws_poll",
    ):
        assert entry in walk.touching, entry
    assert set(EXEMPT) <= {f"{c.__name__}.{n}" for c in classes for n in c.computed_vars}


# ---- the walk finds what leaked before (shaped like the old WorkspaceState) -------------


def _listing(session_uuid: str) -> list[str]:
    return [session_uuid]


def read_preview(root: str, session_uuid: str, path: str) -> str:
    return f"{root}/{session_uuid}/{path}"


def get_session(*, session_uuid: str, user_id: int) -> str:
    return session_uuid


class _Leaky:
    current_uuid = ""
    ws_selected = ""

    async def open_workspace(self) -> None:
        await self._refresh()

    async def _refresh(self) -> None:
        session_uuid = self.current_uuid
        await asyncio.to_thread(_listing, session_uuid)

    async def select_file(self, path: str) -> None:
        self.ws_selected = path
        await self._preview(self.ws_selected, self.current_uuid)

    async def _preview(self, path: str, session_uuid: str) -> None:
        read_preview("root", session_uuid, path)

    async def open_result(self, session_uuid: str, message_id: int) -> None:
        self.current_uuid = session_uuid  # stored: harmless until read without a check
        read_preview("root", session_uuid, "x")

    async def owned(self, session_uuid: str) -> None:
        get_session(session_uuid=session_uuid, user_id=1)  # checked: no finding


def _as_state(cls: type) -> type:
    handlers = {
        name: SimpleNamespace(fn=getattr(cls, name))
        for name in ("open_workspace", "select_file", "open_result", "owned")
    }
    cls.event_handlers = handlers  # type: ignore[attr-defined]
    cls.computed_vars = {}  # type: ignore[attr-defined]
    return cls


def test_the_walk_finds_an_unchecked_read() -> None:
    walk = walk_states([_as_state(_Leaky)], package=__name__)
    found = {(f.where, f.line.split("(")[0]) for f in walk.findings}
    assert found == {
        ("_Leaky._refresh", "asyncio.to_thread"),
        ("_Leaky._preview", "read_preview"),
        ("_Leaky.open_result", "read_preview"),
    }
