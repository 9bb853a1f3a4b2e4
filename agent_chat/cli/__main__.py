"""`agent-chat` (also `python -m agent_chat.cli`): the app's HTTP API from a terminal.

    agent-chat ask "question" [--session ID] [--model NAME] [--skill NAME] [--answer TEXT]...
                   [--attach FILE]...
    agent-chat sessions [--limit N] [--archived]
    agent-chat export ID [--format md|json] [--files] [-o FILE]
    agent-chat schedule add|list|pause|resume|run|delete|history … (cli/schedule.py)
    agent-chat mcp add|list|status|test|enable|disable|delete|session … (cli/mcp.py)
    agent-chat changes ANSWER [--undo]   what a workspace answer changed (cli/changes.py)

`--url` (or AGENT_CHAT_URL, default http://127.0.0.1:3000) and `--token` (or
AGENT_CHAT_TOKEN: a personal API token, needed when the app has a password).
Exit status: 0 answered, 1 the run failed or was stopped or the API refused, 2 usage.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table

from agent_chat.cli import changes, mcp, schedule
from agent_chat.cli.ask import NeedsAnswer, interactive_answers, run_ask
from agent_chat.cli.attach import MAX_ATTACHMENTS, AttachAction, readable_file
from agent_chat.cli.client import ApiError, Client
from agent_chat.cli.view import Screen

DEFAULT_URL = "http://127.0.0.1:3000"


def parser() -> argparse.ArgumentParser:
    main = argparse.ArgumentParser(prog="agent-chat", description="Agent Chat from the terminal.")
    main.add_argument("--url", default=os.environ.get("AGENT_CHAT_URL", DEFAULT_URL))
    main.add_argument(
        "--token", default=os.environ.get("AGENT_CHAT_TOKEN"), help="a personal API token"
    )
    commands = main.add_subparsers(dest="command", required=True)

    ask = commands.add_parser("ask", help="ask a question and stream the answer")
    ask.add_argument("message")
    ask.add_argument("--session", help="continue this session (its id); default: a new one")
    ask.add_argument("--model", help="a model's name, model name or id")
    ask.add_argument("--skill", help="a skill's folder or name")
    ask.add_argument(
        "--answer",
        action="append",
        default=[],
        help="the answer to the agent's next question (a choice's number or text); repeat "
        "for several questions. Without it a terminal asks you.",
    )
    ask.add_argument(
        "--attach",
        action=AttachAction,
        type=readable_file,
        default=[],
        metavar="FILE",
        help=f"send this file with the message (repeat for up to {MAX_ATTACHMENTS})",
    )

    sessions = commands.add_parser("sessions", help="list sessions, most recent first")
    sessions.add_argument("--limit", type=int, default=20)
    sessions.add_argument("--archived", action="store_true", help="include archived ones")

    export = commands.add_parser("export", help="a session as Markdown or JSON")
    export.add_argument("session")
    export.add_argument("--format", choices=("md", "json"), default="md")
    export.add_argument(
        "--files",
        action="store_true",
        help="JSON only: carry the attached files' bytes too (an import restores them)",
    )
    export.add_argument("-o", "--output", type=Path, help="write to this file (default stdout)")
    schedule.add_parser(commands)
    mcp.add_parser(commands)
    changes.add_parser(commands)
    return main


def cmd_ask(client: Client, args: argparse.Namespace, console: Console, err: Console) -> int:
    screen = Screen(console, err)
    try:
        result = run_ask(
            client,
            screen,
            message=args.message,
            session_id=args.session,
            model=args.model,
            skill=args.skill,
            answers=interactive_answers(args.answer, console),
            attachments=args.attach,
        )
    except NeedsAnswer as exc:
        screen.pause()
        err.print(
            f"The agent asks: {exc}. Run in a terminal to answer, or pass --answer; "
            "the run was stopped."
        )
        return 1
    err.print(f"session {result.session_id} · run {result.run_id}", style="dim", highlight=False)
    if result.outcome == "run_completed":
        return 0
    if result.outcome == "run_failed":
        err.print(f"The run failed: {result.error or 'no reason given'}", style="red")
    else:
        err.print("The run was stopped.", style="yellow")
    return 1


def cmd_sessions(client: Client, args: argparse.Namespace, console: Console) -> int:
    """A table in a terminal; tab-separated lines (id, title, last activity, state) piped."""
    rows = client.sessions(limit=args.limit, archived=args.archived)
    table = Table("id", "title", "last activity", "state", box=None, pad_edge=False)
    for row in rows:
        state = "waiting" if row["waiting"] else "running" if row["hasActiveRun"] else ""
        if not state and row["unread"]:
            state = "unread"
        if row["status"] == "ARCHIVED":
            state = (state + " archived").strip()
        when = str(row["lastMessageAt"])[:16].replace("T", " ")
        cells = (row["id"], row["title"] or "(untitled)", when, state)
        if console.is_terminal:
            table.add_row(*cells)
        else:
            sys.stdout.write("\t".join(cells) + "\n")
    if console.is_terminal:
        table.columns[0].no_wrap = True
        console.print(table)
    return 0


def cmd_export(client: Client, args: argparse.Namespace) -> int:
    data = client.export(args.session, args.format, files=args.files)
    if args.output:
        args.output.write_bytes(data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    return 0


def main(argv: list[str] | None = None) -> int:
    options = parser()
    args = options.parse_args(argv)
    if args.command == "export" and args.files and args.format != "json":
        options.error("--files needs --format json (a Markdown export names the files only)")
    console, err = Console(), Console(stderr=True, soft_wrap=True)
    try:
        with Client(args.url, args.token) as client:
            if args.command == "ask":
                return cmd_ask(client, args, console, err)
            if args.command == "sessions":
                return cmd_sessions(client, args, console)
            if args.command == "schedule":
                return schedule.run(client, args, console, err)
            if args.command == "mcp":
                return mcp.run(client, args, console, err)
            if args.command == "changes":
                return changes.run(client, args, console)
            return cmd_export(client, args)
    except ApiError as exc:
        where = f" (HTTP {exc.status})" if exc.status else ""
        err.print(f"agent-chat: {exc.message}{where}", style="red", highlight=False)
        if exc.status == 401:
            err.print("Pass a personal API token (Settings → API tokens) with --token.")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
