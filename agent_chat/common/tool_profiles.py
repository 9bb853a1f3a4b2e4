"""Tool profiles: the named sets of hermes toolsets an operator enables.

Shared by the app (the composer's selector, what a conversation stores) and the bridge
(which toolsets an agent is built with). `AGENT_CHAT_TOOL_PROFILES=chat,workspace` enables
both; the default is `chat` alone, which cannot touch the machine.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

CHAT = "chat"
WORKSPACE = "workspace"
# `skills` lets the agent list and load skills itself when none is chosen.
_CHAT_TOOLSETS = ("todo", "clarify", "memory", "skills")
# hermes' `delegate_task`: child agents that do parts of the work at once, confined like the
# agent that made them (docs/architecture.md §4d). Chat has it only when the operator says
# so (the bridge's AGENT_CHAT_DELEGATION_IN_CHAT).
DELEGATION = "delegation"
TOOLSETS: dict[str, tuple[str, ...]] = {
    CHAT: _CHAT_TOOLSETS,
    # Files, commands and code, in the conversation's own folder, dangerous steps approved.
    WORKSPACE: (*_CHAT_TOOLSETS, "file", "terminal", "code_execution", DELEGATION),
}
LABELS = {CHAT: "Chat", WORKSPACE: "Workspace"}
DESCRIPTIONS = {
    CHAT: "Plans, questions, memory and skills: nothing on the machine.",
    WORKSPACE: "Also files, commands, code and helper agents in this conversation's folder.",
}


def parse_profiles(raw: str) -> tuple[str, ...]:
    """The enabled profiles in the order given (the first is the default for new
    conversations, unless `chat` is among them); ValueError names an unknown one."""
    names: list[str] = []
    for part in raw.split(","):
        name = part.strip().lower()
        if not name:
            continue
        if name not in TOOLSETS:
            known = ", ".join(TOOLSETS)
            raise ValueError(f"AGENT_CHAT_TOOL_PROFILES: unknown profile {name!r} (known: {known})")
        if name not in names:
            names.append(name)
    return tuple(names) or (CHAT,)


def enabled_profiles(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    env = os.environ if env is None else env
    return parse_profiles(env.get("AGENT_CHAT_TOOL_PROFILES", ""))


def default_profile(enabled: tuple[str, ...]) -> str:
    return CHAT if CHAT in enabled else enabled[0]


def uses_workspace(profile: str) -> bool:
    return profile == WORKSPACE


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def exposure_problem(
    profiles: tuple[str, ...], host: str, *, admin_known: Callable[[], bool]
) -> str | None:
    """Why the app must not start, or None: Workspace tools run commands on this machine,
    so they are never offered beyond loopback before an administrator exists or is set
    (`admin_known()`, asked only then: it may read the database): until then, whoever
    first opens /setup would become the administrator."""
    if WORKSPACE not in profiles or host in LOOPBACK_HOSTS or admin_known():
        return None
    return (
        f"Refusing to start: the Workspace tool profile lets the agent run commands on this "
        f"machine, and the app would listen on {host} with no user yet, so whoever first "
        "opens /setup would become its administrator. Set AGENT_CHAT_ADMIN_USER and "
        "AGENT_CHAT_ADMIN_PASSWORD (that administrator is made at start), create the "
        "administrator on 127.0.0.1 first (AGENT_CHAT_HOST), or remove 'workspace' from "
        "AGENT_CHAT_TOOL_PROFILES."
    )
