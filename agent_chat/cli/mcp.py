"""`agent-chat mcp …`: MCP servers over the API (`/api/mcp/*`).

    agent-chat mcp add NAME (--command "CMD ARG…" | --url URL) [--env NAME=VALUE]…
                   [--header NAME=VALUE]… [--bearer TOKEN] [--profile P]… [--no-ask]
                   [--include TOOL]… [--exclude TOOL]…
    agent-chat mcp list | status
    agent-chat mcp test|enable|disable|delete NAME
    agent-chat mcp session SESSION        the servers a conversation's runs get

Administrators only, but `session`. `add` saves, then tests the server (exit status 1 when it
does not connect: it stays saved, its reason printed). A secret (`--env`, `--header`,
`--bearer`) goes to the server and is never printed back.
"""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from rich.console import Console

from agent_chat.cli.client import ApiError, Client
from agent_chat.cli.schedule import print_table


def add_parser(commands: Any) -> None:
    mcp = commands.add_parser("mcp", help="MCP servers the agent may use (administrators)")
    actions = mcp.add_subparsers(dest="action", required=True)
    add = actions.add_parser("add", help="add a server, then test it")
    add.add_argument("name")
    where = add.add_mutually_exclusive_group(required=True)
    # dests of their own: `command` and `url` are the CLI's (the subcommand, the app's URL)
    where.add_argument("--command", dest="server_command", help="stdio: the command line")
    where.add_argument("--url", dest="server_url", help="streamable HTTP: its URL")
    add.add_argument("--env", action="append", default=[], metavar="NAME=VALUE")
    add.add_argument("--header", action="append", default=[], metavar="NAME=VALUE")
    add.add_argument("--bearer", help="http: sent as Authorization: Bearer …")
    add.add_argument("--profile", action="append", default=[], help="only these profiles")
    add.add_argument("--include", action="append", default=[], metavar="TOOL")
    add.add_argument("--exclude", action="append", default=[], metavar="TOOL")
    add.add_argument("--no-ask", action="store_true", help="calls do not wait for consent")
    actions.add_parser("list", help="every server")
    actions.add_parser("status", help="each server on each agent service")
    for name in ("test", "enable", "disable", "delete"):
        actions.add_parser(name, help=f"{name} a server").add_argument("name")
    session = actions.add_parser("session", help="the servers a conversation's runs get")
    session.add_argument("session")


def _pairs(items: list[str], what: str) -> dict[str, str]:
    pairs: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise ApiError(0, f"{what} {item!r} is not NAME=VALUE")
        pairs[name] = value
    return pairs


def _body(args: argparse.Namespace) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": args.name,
        "include": args.include,
        "exclude": args.exclude,
        "profiles": args.profile,
        "ask": not args.no_ask,
    }
    if args.server_command:
        words = shlex.split(args.server_command)
        if not words:
            raise ApiError(0, "--command is empty")
        body.update(transport="stdio", command=words[0], args=words[1:])
        body["env"] = _pairs(args.env, "--env")
    else:
        headers = _pairs(args.header, "--header")
        if args.bearer:
            headers["Authorization"] = f"Bearer {args.bearer}"
        body.update(transport="http", url=args.server_url, headers=headers)
    return body


def _by_name(client: Client, name: str) -> dict[str, Any]:
    for row in client.call("GET", "/api/mcp/servers").json()["servers"]:
        if row["name"] == name:
            return row
    raise ApiError(404, f"no MCP server named {name!r}")


def _say(console: Console, text: str) -> None:
    console.print(text, highlight=False, markup=False, soft_wrap=True)


def _tested(console: Console, err: Console, name: str, test: dict[str, Any]) -> int:
    if not test["ok"]:
        err.print(f"agent-chat: {name} does not connect: {test['error']}", style="red",
                  highlight=False, markup=False)  # fmt: skip
        return 1
    tools = ", ".join(t["name"] for t in test["tools"]) or "no tools"
    _say(
        console, f"{name}: connected in {test['seconds']:g} s · {len(test['tools'])} tools: {tools}"
    )
    return 0


def _kept_secrets(row: dict[str, Any]) -> dict[str, Any]:
    """The server's settings as a body that keeps every stored secret (null values)."""
    body = {k: row[k] for k in ("name", "transport", "include", "exclude", "profiles", "ask")}
    body.update(connectTimeout=row["connectTimeout"], timeout=row["timeout"])
    if row["transport"] == "stdio":
        body.update(command=row["command"], args=row["args"])
        body["env"] = dict.fromkeys(row["envNames"])
    else:
        body.update(url=row["url"], headers=dict.fromkeys(row["headerNames"]))
    return body


def run(client: Client, args: argparse.Namespace, console: Console, err: Console) -> int:
    """One `mcp` action; ApiError goes up to the caller (one line, exit 1)."""
    if args.action == "add":
        row = client.call("POST", "/api/mcp/servers", json=_body(args)).json()
        _say(console, f"MCP server {row['name']} saved (id {row['id']})")
        test = client.call("POST", f"/api/mcp/servers/{row['id']}/test", timeout=360).json()
        return _tested(console, err, row["name"], test)
    if args.action == "list":
        rows = client.call("GET", "/api/mcp/servers").json()["servers"]
        print_table(
            console,
            ("name", "transport", "where", "profiles", "ask", "enabled"),
            [
                (
                    r["name"],
                    r["transport"],
                    shlex.join([r["command"], *r["args"]]) if r["command"] else r["url"] or "",
                    ",".join(r["profiles"]) or "all",
                    "ask" if r["ask"] else "",
                    "enabled" if r["enabled"] else "disabled",
                )
                for r in rows
            ],
        )
        return 0
    if args.action == "status":
        rows = client.call("GET", "/api/mcp/status").json()["servers"]
        states = [
            f"connected, {r['tools']} tools" if r["connected"] else r["error"] or "not used yet"
            for r in rows
        ]
        print_table(
            console,
            ("name", "agent service", "state"),
            [(r["name"], r["bridge"], s) for r, s in zip(rows, states, strict=True)],
        )
        return 0
    if args.action == "session":
        names = client.call("GET", f"/api/chat/sessions/{args.session}/mcp-servers").json()
        _say(console, "\n".join(names["servers"]) or "(no MCP servers)")
        return 0
    row = _by_name(client, args.name)
    path = f"/api/mcp/servers/{row['id']}"
    if args.action == "test":
        return _tested(
            console, err, row["name"], client.call("POST", f"{path}/test", timeout=360).json()
        )
    if args.action == "delete":
        client.call("DELETE", path)
        _say(console, f"MCP server {row['name']} deleted")
        return 0
    enabled = args.action == "enable"
    client.call("PUT", path, json={**_kept_secrets(row), "enabled": enabled})
    _say(console, f"MCP server {row['name']} {'enabled' if enabled else 'disabled'}")
    return 0
