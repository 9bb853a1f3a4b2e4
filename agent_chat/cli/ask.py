"""`agent-chat ask`: start a run, follow its stream, answer its questions."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rich.console import Console
from rich.prompt import Prompt

from agent_chat.cli.attach import upload_all
from agent_chat.cli.client import ApiError, Client
from agent_chat.cli.view import Screen

QUESTION_EVENTS = frozenset({"clarify_request", "approval_request"})


class NeedsAnswer(Exception):
    """A question came, nobody can answer it here (no terminal) and no --answer is left."""


@dataclass
class Answers:
    """Where answers come from: the `--answer` values in order, then the terminal."""

    given: list[str] = field(default_factory=list)
    interactive: bool = False
    ask: Callable[[str, list[str]], str] | None = None

    def next(self, question: str, choices: list[str]) -> str:
        """The answer to a question (or an approval, whose choices the API gives)."""
        if self.given:
            return pick(self.given.pop(0), choices)
        if self.interactive and self.ask is not None:
            return self.ask(question, choices)
        raise NeedsAnswer(question)


def pick(reply: str, choices: list[str]) -> str:
    """A number picks that choice; anything else is the answer as typed."""
    reply = reply.strip()
    if reply.isdigit() and 1 <= int(reply) <= len(choices):
        return choices[int(reply) - 1]
    return reply


def prompt_answer(console: Console) -> Callable[[str, list[str]], str]:
    def ask(question: str, choices: list[str]) -> str:
        console.print(f"[bold yellow]?[/] [bold]{question}[/]")
        for number, choice in enumerate(choices, 1):
            console.print(f"  [cyan]{number})[/] {choice}")
        hint = f"1-{len(choices)} or your own answer" if choices else "your answer"
        while True:
            reply = Prompt.ask(f"[dim]{hint}[/]", console=console, default="", show_default=False)
            if reply.strip():
                return pick(reply, choices)

    return ask


def resolve(items: list[dict], wanted: str, keys: tuple[str, ...], what: str) -> dict:
    for item in items:
        if wanted == str(item.get("id", "")) or any(wanted == str(item.get(k)) for k in keys):
            return item
    names = ", ".join(str(item.get(keys[0])) for item in items) or "none"
    raise ApiError(0, f"There is no {what} {wanted!r} (there are: {names}).")


@dataclass
class AskResult:
    session_id: str
    run_id: str
    outcome: str | None
    error: str | None


def run_ask(
    client: Client,
    screen: Screen,
    *,
    message: str,
    session_id: str | None,
    model: str | None,
    skill: str | None,
    answers: Answers,
    attachments: list[Path] | None = None,
) -> AskResult:
    body: dict = {"message": message}
    if model:
        body["modelId"] = resolve(client.models(), model, ("name", "model"), "model")["id"]
    if skill:
        found = resolve(client.skills(), skill, ("folderName", "name"), "skill")
        body["skillFolder"] = found["folderName"]
    # Before the conversation is made: a refused file leaves no empty new one behind.
    if attachments:
        body["attachmentIds"] = upload_all(client, attachments)
    session_id = session_id or client.new_session()
    run = client.start_run(session_id, body)
    run_id = run["runId"]
    screen.start()
    try:
        follow(client, screen, run_id, answers)
    except KeyboardInterrupt:
        screen.pause()
        screen.err.print("Stopping the run…")
        client.stop(run_id)
        follow(client, screen, run_id, Answers())
    screen.finish()
    final = screen.view.final or {}
    return AskResult(session_id, run_id, screen.view.outcome, final.get("error"))


def follow(client: Client, screen: Screen, run_id: str, answers: Answers) -> None:
    events: Iterator = client.events(run_id)
    for event in events:
        screen.update(event.type, event.data)
        if event.type in QUESTION_EVENTS:
            child = screen.view.children.get(str(event.data.get("subagent") or ""))
            answer_pending(client, screen, run_id, answers, asker=child.goal if child else "")


def answer_pending(
    client: Client, screen: Screen, run_id: str, answers: Answers, *, asker: str = ""
) -> None:
    """Answer the run's pending question or approval, whatever its kind (from its state);
    `asker`: the goal of the child agent it is for (from the stream's event)."""
    pending = client.state(run_id).get("pending")
    if not pending:
        return  # answered meanwhile (in a browser tab)
    screen.pause()
    question = str(pending["question"])
    if pending.get("kind") == "approval":
        question = f"Allow this step? {question}"
        if pending.get("detail"):
            question += f" ({pending['detail']})"
        if asker.strip():  # a blank goal has no first line to name it by
            question += f" [asked by a subagent: {asker.strip().splitlines()[0][:120]}]"
    try:
        answer = answers.next(question, list(pending.get("choices") or []))
    except NeedsAnswer:
        client.stop(run_id)
        raise
    try:
        client.answer(run_id, pending["clarifyId"], answer)
    except ApiError as exc:
        if exc.code != "not_open":  # someone else answered first: the run goes on
            raise
    screen.start()


def interactive_answers(given: list[str], console: Console) -> Answers:
    tty = sys.stdin.isatty()
    return Answers(given=list(given), interactive=tty, ask=prompt_answer(console) if tty else None)
