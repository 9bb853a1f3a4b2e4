"""`agent-chat changes ANSWER [--undo]`: what a Workspace answer changed in its
conversation's folder (`GET /api/chat/messages/{id}/workspace-changes`), each text file as a
unified diff and a binary by its sizes; `--undo` puts the folder back as before the answer
(`POST …/undo`: only the shown branch's last Workspace answer, never while a run goes on).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from rich.console import Console

from agent_chat.cli.client import Client


def add_parser(commands: Any) -> None:
    changes = commands.add_parser("changes", help="what a workspace answer changed; undo it")
    changes.add_argument("answer", type=int, help="the answer's message id")
    changes.add_argument(
        "--undo", action="store_true", help="put the files back as before the answer"
    )


def _size(n: int | None) -> str:
    return "none" if n is None else f"{n} bytes"


def run(client: Client, args: argparse.Namespace, console: Console) -> int:
    path = f"/api/chat/messages/{args.answer}/workspace-changes"
    if args.undo:
        client.call("POST", f"{path}/undo")
        console.print(
            f"Undone: the files are back as before answer {args.answer}.", highlight=False
        )
        return 0
    body = client.call("GET", path).json()
    if not body["known"]:
        console.print("Not recorded: what the folder held around this answer is unknown.")
        return 0
    if body["undone"]:
        console.print("Its changes were undone.")
    for change in body["changes"]:
        line = f"{change['change']}\t{change['path']}"
        if change["binary"] or change["truncated"]:
            line += f"\t{_size(change['sizeBefore'])} -> {_size(change['sizeAfter'])}"
        # Plain lines, tabs kept: a diff is read by tools as much as by people.
        sys.stdout.write(line + "\n")
        if change["diff"]:
            sys.stdout.write(change["diff"])
    if not body["changes"]:
        console.print("No files changed.")
    return 0
