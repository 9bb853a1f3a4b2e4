"""Settings → Tools' form as text fields, to and from the use case's `McpValues` (plain
Python, no Reflex). The form never holds a stored secret: an edit shows each stored name with
an empty value, and an empty value for a stored name keeps it (`None`); a name removed from
the text is removed."""

from __future__ import annotations

import re
import shlex
from typing import TypedDict

from agent_chat.db.errors import ValidationFailed
from agent_chat.services.mcp_servers import McpServerView, McpStatus, McpValues

TOOLS_ALL, TOOLS_ONLY, TOOLS_EXCEPT = "all", "only", "except"
_TOOL_SPLIT = re.compile(r"[\s,]+")
BEARER = "Authorization"


class McpRow(TypedDict):
    id: int
    name: str
    transport: str
    target: str  # the command line or the URL
    profiles: str  # "All profiles" or the names
    tools_rule: str  # "" (all tools) or "Only: a, b" / "All but: c"
    ask: bool
    enabled: bool
    secrets: str  # the secrets' names, never their values
    status: str  # on the bridges: connected, its error, or not used yet
    status_ok: bool


def row(view: McpServerView, statuses: list[McpStatus]) -> McpRow:
    target = (
        shlex.join([view.command or "", *view.args])
        if view.transport == "stdio"
        else view.url or ""
    )
    rule = (
        f"Only: {', '.join(view.include)}"
        if view.include
        else f"All but: {', '.join(view.exclude)}"
        if view.exclude
        else ""
    )
    mine = [s for s in statuses if s.name == view.name]
    text, ok = status_text(mine, several=len({s.bridge for s in statuses}) > 1)
    return {
        "id": view.id,
        "name": view.name,
        "transport": "stdio" if view.transport == "stdio" else "HTTP",
        "target": target,
        "profiles": ", ".join(view.profiles) if view.profiles else "All profiles",
        "tools_rule": rule,
        "ask": view.ask,
        "enabled": view.enabled,
        "secrets": ", ".join([*view.env_names, *view.header_names]),
        "status": text,
        "status_ok": ok,
    }


def status_text(rows: list[McpStatus], *, several: bool) -> tuple[str, bool]:
    if not rows:
        return "Not used yet", True
    parts = []
    for r in rows:
        where = f" ({r.bridge})" if several else ""
        if r.connected:
            parts.append(f"Connected · {r.tools} tools{where}")
        elif r.error:
            parts.append(f"Failed: {r.error}{where}")
        else:
            parts.append(f"Not used yet{where}")
    return " · ".join(parts), all(r.connected or not r.error for r in rows)


def blank_form() -> dict[str, str]:
    return {
        "name": "",
        "transport": "stdio",
        "command": "",
        "env": "",
        "url": "",
        "headers": "",
        "bearer": "",
        "tools_mode": TOOLS_ALL,
        "tools": "",
        "profiles": "",
        "ask": "1",
        "enabled": "1",
        "timeout": "120",
    }


def edit_form(view: McpServerView) -> dict[str, str]:
    headers = [n for n in view.header_names if n != BEARER]
    mode = TOOLS_ONLY if view.include else TOOLS_EXCEPT if view.exclude else TOOLS_ALL
    return {
        **blank_form(),
        "name": view.name,
        "transport": view.transport,
        "command": shlex.join([view.command, *view.args]) if view.command else "",
        "env": "".join(f"{n}=\n" for n in view.env_names),
        "url": view.url or "",
        "headers": "".join(f"{n}=\n" for n in headers),
        "bearer_stored": "1" if BEARER in view.header_names else "",
        "tools_mode": mode,
        "tools": ", ".join(view.include or view.exclude),
        "profiles": ",".join(view.profiles),
        "ask": "1" if view.ask else "",
        "enabled": "1" if view.enabled else "",
        "timeout": f"{view.timeout:g}",
    }


def values(form: dict[str, str]) -> McpValues:
    """`ValidationFailed` naming the form's field when the text cannot be read at all (the
    use case checks the rest)."""
    errors: dict[str, str] = {}
    stdio = form.get("transport", "stdio") != "http"
    words: list[str] = []
    if stdio:
        try:
            words = shlex.split(form.get("command", ""))
        except ValueError as exc:
            errors["command"] = f"The command line cannot be read: {exc}."
    env = _pairs(form.get("env", ""), "env", errors)
    headers = _pairs(form.get("headers", ""), "headers", errors)
    bearer = form.get("bearer", "").strip()
    if bearer:
        headers[BEARER] = f"Bearer {bearer}"
    elif form.get("bearer_stored"):
        headers[BEARER] = None
    try:
        timeout = float(form.get("timeout") or 120)
    except ValueError:
        errors["timeout"] = "A number of seconds."
        timeout = 120
    if errors:
        raise ValidationFailed(errors)
    tools = [t for t in _TOOL_SPLIT.split(form.get("tools", "")) if t]
    mode = form.get("tools_mode", TOOLS_ALL)
    return McpValues(
        name=form.get("name", "").strip(),
        transport="stdio" if stdio else "http",
        command=words[0] if words else "",
        args=words[1:],
        env=env,
        url=form.get("url", "").strip() or None,
        headers=headers,
        include=tools if mode == TOOLS_ONLY else [],
        exclude=tools if mode == TOOLS_EXCEPT else [],
        profiles=[p for p in form.get("profiles", "").split(",") if p],
        ask=bool(form.get("ask")),
        enabled=bool(form.get("enabled")),
        timeout=timeout,
    )


def _pairs(text: str, field: str, errors: dict[str, str]) -> dict[str, str | None]:
    """`NAME=value` lines; `NAME=` (or `NAME`) keeps a stored value."""
    pairs: dict[str, str | None] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        name, _, value = line.partition("=")
        name = name.strip()
        if not name:
            errors[field] = f"A line without a name: {line.strip()[:40]!r} (NAME=value)."
            continue
        pairs[name] = value if value else None
    return pairs
