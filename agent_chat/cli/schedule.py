"""`agent-chat schedule …`: scheduled runs over the API (`/api/schedules`).

    agent-chat schedule add "prompt" (--cron EXPR | --daily HH:MM | --weekdays HH:MM |
                        --weekly DAY HH:MM | --hourly MINUTE) [--tz ZONE] [--title T]
                        [--model ID] [--append SESSION]
    agent-chat schedule list
    agent-chat schedule pause|resume|run|delete ID
    agent-chat schedule history ID

`--tz` defaults to this machine's zone (TZ, else /etc/localtime, else UTC). A refusal is the
API's own sentence on one line, exit status 1; a firing that could not start too.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any
from zoneinfo import available_timezones

from rich.console import Console
from rich.table import Table

from agent_chat.cli.ask import resolve
from agent_chat.cli.client import Client

# 0 = Monday, as the API counts.
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_CLOCK = re.compile(r"([01]?[0-9]|2[0-3]):[0-5][0-9]")
LOCALTIME = Path("/etc/localtime")
TIMEZONE_FILE = Path("/etc/timezone")


@cache
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _zone_in_path(path: str) -> str | None:
    """ "Europe/Berlin" of ".../zoneinfo/Europe/Berlin" (also under posix/ or right/)."""
    if "zoneinfo/" not in path:
        return None
    name = re.sub(r"^(posix|right)/", "", path.split("zoneinfo/", 1)[1])
    return name if name in _zones() else None


def local_zone(
    env: dict[str, str] | None = None,
    localtime: Path = LOCALTIME,
    timezone_file: Path = TIMEZONE_FILE,
) -> str:
    """This machine's IANA zone: TZ (a name, or a zone file's path), else where
    /etc/localtime points, else /etc/timezone; UTC when none of them names one."""
    tz = (os.environ if env is None else env).get("TZ", "").lstrip(":").strip()
    if tz in _zones():
        return tz
    if tz.startswith("/") and (found := _zone_in_path(tz)):
        return found
    try:
        if found := _zone_in_path(os.path.realpath(localtime)):
            return found
        named = timezone_file.read_text().strip()
    except OSError:
        return "UTC"
    return named if named in _zones() else "UTC"


def clock(value: str) -> str:
    """argparse `type=`: a time of day, HH:MM."""
    if not _CLOCK.fullmatch(value.strip()):
        raise argparse.ArgumentTypeError(f"{value!r} is not a time of day; write it as HH:MM")
    return value.strip()


def minute(value: str) -> int:
    if not value.isdigit() or not 0 <= int(value) <= 59:
        raise argparse.ArgumentTypeError(f"{value!r} is not a minute (0-59)")
    return int(value)


def weekday(value: str) -> int:
    """argparse `type=`: "mon", "Monday" … (0 = Monday)."""
    day = value.strip().lower()
    for number, name in enumerate(DAYS):
        if len(day) >= 3 and name.startswith(day):
            return number
    raise argparse.ArgumentTypeError(f"{value!r} is not a day (mon, tue, … sun)")


def schedule_id(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) <= 2**31 - 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a schedule id (see schedule list)")
    return int(value)


class WeeklyAction(argparse.Action):
    """`--weekly DAY HH:MM`, each part checked as a usage error."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option: Any = None) -> None:
        day, time = values
        try:
            setattr(namespace, self.dest, (weekday(day), clock(time)))
        except argparse.ArgumentTypeError as exc:
            parser.error(f"argument --weekly: {exc}")


def add_parser(commands: Any) -> None:
    schedule = commands.add_parser("schedule", help="prompts run at set times")
    actions = schedule.add_subparsers(dest="action", required=True)

    add = actions.add_parser("add", help="a new schedule")
    add.add_argument("prompt")
    when = add.add_mutually_exclusive_group(required=True)
    when.add_argument("--cron", help='five fields, e.g. "0 9 * * 1-5" (at most every 5 min)')
    when.add_argument("--daily", type=clock, metavar="HH:MM", help="every day at this time")
    when.add_argument("--weekdays", type=clock, metavar="HH:MM", help="Monday to Friday")
    when.add_argument(
        "--weekly", nargs=2, action=WeeklyAction, metavar=("DAY", "HH:MM"), help="e.g. mon 09:00"
    )
    when.add_argument("--hourly", type=minute, metavar="MINUTE", help="every hour at :MINUTE")
    add.add_argument("--tz", help="an IANA time zone (default: this machine's)")
    add.add_argument("--title", help="default: the prompt's first words")
    add.add_argument("--model", help="a model's id or name (default: the default model)")
    add.add_argument("--append", metavar="SESSION", help="add to this conversation each time")

    actions.add_parser("list", help="your schedules, the next to run first")
    for action, text in (
        ("pause", "stop firing until resumed"),
        ("resume", "fire again from the next time"),
        ("run", "fire it now"),
        ("delete", "delete it and its history"),
        ("history", "its firings, newest first"),
    ):
        actions.add_parser(action, help=text).add_argument("id", type=schedule_id)


def _preset(args: argparse.Namespace) -> dict[str, Any] | None:
    if args.daily:
        return {"kind": "daily", "time": args.daily}
    if args.weekdays:
        return {"kind": "weekdays", "time": args.weekdays}
    if args.weekly:
        return {"kind": "weekly", "weekday": args.weekly[0], "time": args.weekly[1]}
    if args.hourly is not None:
        return {"kind": "hourly", "minute": args.hourly}
    return None


def _local(stamp: str | None) -> str:
    """An API timestamp (UTC) in this machine's time, or "" for none."""
    if not stamp:
        return ""
    return datetime.fromisoformat(stamp).astimezone().strftime("%a %Y-%m-%d %H:%M")


def _when(row: dict[str, Any]) -> str:
    return f"{row['description']} ({row['timezone']})"


def _add(client: Client, args: argparse.Namespace, console: Console) -> int:
    body: dict[str, Any] = {"prompt": args.prompt, "timezone": args.tz or local_zone()}
    preset = _preset(args)
    body.update({"preset": preset} if preset else {"cron": args.cron})
    if args.title is not None:
        body["title"] = args.title
    if args.model:
        body["modelId"] = resolve(client.models(), args.model, ("name", "model"), "model")["id"]
    if args.append:
        body.update(mode="append", sessionId=args.append)
    row = client.call("POST", "/api/schedules", json=body).json()
    next_run = _local(row["nextRunAt"])
    console.print(
        f"schedule {row['id']}: {row['title']} · {_when(row)} · next run {next_run}",
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return 0


def print_table(console: Console, headers: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    """A table in a terminal; tab-separated lines piped."""
    if not console.is_terminal:
        sys.stdout.write("".join("\t".join(cells) + "\n" for cells in rows))
        return
    table = Table(*headers, box=None, pad_edge=False)
    for cells in rows:
        table.add_row(*cells)
    table.columns[0].no_wrap = True
    console.print(table)


def _list(client: Client, console: Console) -> int:
    rows = client.call("GET", "/api/schedules").json()["schedules"]
    print_table(
        console,
        ("id", "title", "when", "next run", "paused"),
        [
            (str(r["id"]), r["title"], _when(r), _local(r["nextRunAt"]), "paused" * r["paused"])
            for r in rows
        ],
    )
    return 0


def _history(client: Client, ident: int, console: Console) -> int:
    runs = client.call("GET", f"/api/schedules/{ident}/runs").json()["runs"]
    rows = []
    for run in runs:
        kind = "run now" if run["manual"] else "late" if run["late"] else "on time"
        result = f"could not start: {run['error']}" if run["error"] else run["status"] or ""
        rows.append((_local(run["startedAt"]), kind, result, run["sessionId"] or ""))
    print_table(console, ("started", "kind", "result", "conversation"), rows)
    return 0


def run(client: Client, args: argparse.Namespace, console: Console, err: Console) -> int:
    """One `schedule` action; ApiError goes up to the caller (one line, exit 1)."""
    if args.action == "add":
        return _add(client, args, console)
    if args.action == "list":
        return _list(client, console)
    if args.action == "history":
        return _history(client, args.id, console)
    path = f"/api/schedules/{args.id}"
    if args.action == "delete":
        client.call("DELETE", path)
        console.print(f"schedule {args.id} deleted", highlight=False, soft_wrap=True)
        return 0
    if args.action == "run":
        firing = client.call("POST", f"{path}/run").json()
        if firing["error"]:
            why = f"agent-chat: the firing could not start: {firing['error']}"
            err.print(why, style="red", highlight=False, markup=False)
            return 1
        say = f"session {firing['sessionId']} · message {firing['messageId']}"
        console.print(say, highlight=False, soft_wrap=True)
        return 0
    row = client.call("POST", f"{path}/{args.action}").json()
    state = "paused" if row["paused"] else f"next run {_local(row['nextRunAt'])}"
    console.print(f"schedule {row['id']}: {state}", highlight=False, soft_wrap=True)
    return 0
