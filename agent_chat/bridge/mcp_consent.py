"""An MCP server set to "ask before each call": each call of its tools waits for a person's
consent in the same approval card as a dangerous command (once, this conversation, always,
deny), through the run's approval callback (bridge/approvals.py, `Run.approve`).

hermes makes every MCP tool's handler with `tools.mcp_tool._make_tool_handler`, also when it
registers a server's tools again after a reconnect or a `tools/list_changed`; so the gate wraps
that factory (the one place hermes is overridden for it) and asks, at each call, whether the
server asks now (`set_asking`, kept by bridge/mcp.py from the run's settings). A server it has
never been told about asks: a gate that fails open would let a call through unasked.

"This conversation" is hermes' session approval under the run's session key and "always" its
permanent allowlist (`command_allowlist`, shown and revoked in the settings like a command's),
both under the key `mcp:<server>:<tool>`. Where no person can be asked (no approval callback on
the thread: a context that is not a run's), the call is refused with a reason the agent reads.

hermes also registers, per server, four tools of its own that its tool factory does not
make (`_register_server_tools`, each from a factory of its own, looked up at each
registration): `mcp__<server>__read_resource` (a uri), `…__get_prompt` (a name and
arguments), `…__list_resources` and `…__list_prompts`. Each sends a request to the server
and brings what the server answers into the model's context, as a tool call does: a read
resource or a prompt is the server's content, and a listing is too (the resources' and
prompts' names, uris and descriptions, written by the server; hermes asks for them only when
the agent calls the tool: what the agent gets at registration is the server's tools alone).
So for a server that asks, each of the four asks as well, through the same card, under
`mcp:<server>:read_resource` (and so on): a person who allowed the server's tools was not
asked about its resources, and what they allow for one of the four does not cover another.
The card names the server and the call's arguments (the uri, the prompt's name and
arguments), cut to `ARGS_SHOWN` characters like a tool's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from agent_chat.bridge.approvals import ALWAYS, DENY, SESSION

logger = logging.getLogger(__name__)

_lock = threading.Lock()
_asking: dict[str, bool] = {}
_installed = False
ARGS_SHOWN = 2000  # characters of a call's arguments in the approval card
# hermes' factory of each utility tool it registers per server → the tool's name (the rule's
# last part) and what the card says it does
UTILITIES = {
    "_make_read_resource_handler": ("read_resource", "read a resource of"),
    "_make_get_prompt_handler": ("get_prompt", "get a prompt of"),
    "_make_list_resources_handler": ("list_resources", "list the resources of"),
    "_make_list_prompts_handler": ("list_prompts", "list the prompts of"),
}


def set_asking(server: str, ask: bool) -> None:
    with _lock:
        _asking[server] = ask


def asks(server: str) -> bool:
    with _lock:
        return _asking.get(server, True)


def key(server: str, tool: str) -> str:
    return f"mcp:{server}:{tool}"


def install() -> None:
    """Wrap hermes' MCP handler factories (its tools' and its utility tools') once per
    process."""
    global _installed
    import tools.mcp_tool as mcp

    with _lock:
        if _installed:
            return
        make = mcp._make_tool_handler

        def gated_factory(server: str, tool: str, timeout: float) -> Callable[..., str]:
            return gated(server, tool, make(server, tool, timeout))

        mcp._make_tool_handler = gated_factory
        for factory, (tool, what) in UTILITIES.items():
            setattr(mcp, factory, _gated_utility(getattr(mcp, factory), tool, what))
        _installed = True


def _gated_utility(
    make: Callable[..., Callable[..., str]], tool: str, what: str
) -> Callable[..., Callable[..., str]]:
    def factory(server: str, timeout: float) -> Callable[..., str]:
        return gated(server, tool, make(server, timeout), what)

    return factory


def gated(
    server: str, tool: str, handler: Callable[..., str], what: str | None = None
) -> Callable[..., str]:
    """`handler`, asking first while `server` asks; `what` the call does, for the card (a
    tool's: calling it)."""
    what = what or f"call the tool {tool!r} of"

    def call(args: dict, **kwargs: Any) -> str:
        if not asks(server):
            return handler(args, **kwargs)
        refusal = _consent(server, tool, args, what)
        return refusal if refusal is not None else handler(args, **kwargs)

    return call


def _consent(server: str, tool: str, args: dict, what: str) -> str | None:
    """None when the call may go on, else the tool's result saying why not."""
    from tools.approval import (
        approve_permanent,
        approve_session,
        get_current_session_key,
        is_approved,
        load_permanent_allowlist,
        save_permanent_allowlist,
    )
    from tools.terminal_tool import _get_approval_callback

    rule = key(server, tool)
    session_key = get_current_session_key(default="")
    if is_approved(session_key, rule):
        return None
    ask = _get_approval_callback()
    if ask is None:
        return _error(f"The MCP tool {tool!r} of {server!r} needs a person's consent for each "
                      "call, and no one can be asked here.")  # fmt: skip
    shown = json.dumps(args, ensure_ascii=False)
    if len(shown) > ARGS_SHOWN:
        shown = shown[:ARGS_SHOWN] + "…"
    answer = ask(
        f"{server} · {tool} {shown}",
        f"{what} the MCP server {server!r}",
        allow_permanent=True,
    )
    if answer == SESSION and session_key:
        approve_session(session_key, rule)
    elif answer == ALWAYS:
        approve_permanent(rule)
        patterns = load_permanent_allowlist()
        patterns.add(rule)
        save_permanent_allowlist(patterns)
    elif answer == DENY or answer not in (SESSION, ALWAYS, "once"):
        return _error(f"The person did not allow this call of the MCP tool {tool!r} of {server!r}.")
    logger.info("MCP call %s allowed (%s)", rule, answer)
    return None


def _error(message: str) -> str:
    return json.dumps({"error": message})
