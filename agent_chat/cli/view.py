"""What `agent-chat ask` shows while a run goes: in a terminal a compact live view (rich):
the answer as it streams, and one status line (state, current tool, TODO progress); piped,
the answer text on stdout as it comes and the status changes as lines on stderr."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.live import Live
from rich.markdown import Markdown
from rich.spinner import Spinner
from rich.text import Text

TAIL_LINES = 12  # of the streaming answer in the live view (the whole one is printed at the end)
GOAL_CHARS = 60  # of a child agent's goal on its line


@dataclass
class Child:
    """A child agent (hermes' delegate_task) as its lines tell it."""

    goal: str
    tools: int = 0

    def line(self, ending: str = "") -> str:
        goal = " ".join(self.goal.split())
        goal = goal if len(goal) <= GOAL_CHARS else goal[:GOAL_CHARS] + "…"
        return f"↳ subagent: {goal} … {ending}" if ending else f"↳ subagent: {goal} …"


def _ending(data: dict[str, Any], tools: int) -> str:
    counted = f"({tools} tool{'s' if tools != 1 else ''})"
    state = data.get("state")
    if state == "succeeded":
        return f"done {counted}"
    if state == "stopped":
        return f"stopped {counted}"
    return f"failed {counted}: {data.get('error') or 'no reason given'}"


@dataclass
class RunView:
    """The run as the CLI sees it, from the stream's events."""

    state: str = "starting"
    text: str = ""
    thinking: str = ""
    tool: str | None = None
    tools_done: int = 0
    todos: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, Any] | None = None
    outcome: str | None = None  # run_completed / run_failed / run_stopped
    children: dict[str, Child] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)  # one per child's start and end, in order

    def _child(self, kind: str, data: dict[str, Any]) -> None:
        """A child agent's start and end are lines of their own; its work is not the
        answer's (its text, tools and todos stay out of the answer's view)."""
        key = str(data.get("subagent") or "")
        if kind == "subagent_start" and key not in self.children:
            child = self.children[key] = Child(str(data.get("goal") or "(no goal)"))
            self.lines.append(child.line())
        elif (child := self.children.get(key)) is None:
            return
        elif kind == "subagent_tool_end":
            child.tools += 1
        elif kind == "subagent_end":
            self.lines.append(child.line(_ending(data, child.tools)))

    def apply(self, kind: str, data: dict[str, Any]) -> None:
        if kind.startswith("subagent_"):
            self._child(kind, data)
        elif kind == "run_started":
            self.state = "running"
        elif kind == "text_delta":
            self.text += str(data.get("text", ""))
            self.state = "answering"
        elif kind == "text_break":
            self.thinking, self.text = (self.thinking + self.text).strip(), ""
        elif kind == "reasoning_delta":
            self.state = "thinking"
        elif kind == "tool_start":
            self.tool, self.state = str(data.get("tool") or "tool"), "using a tool"
        elif kind == "tool_end":
            self.tool, self.tools_done = None, self.tools_done + 1
            self.state = "running"
        elif kind == "todo_update":
            self.todos = [t for t in data.get("todos") or [] if isinstance(t, dict)]
        elif kind in ("clarify_request", "approval_request"):
            self.state = "waiting for you"
        elif kind in ("clarify_resolved", "approval_resolved"):
            self.state = "running"
        elif kind == "bridge_link":
            self.state = "running" if data.get("connected") else "reconnecting to the agent…"
        elif kind == "reconnecting":
            self.state = "reconnecting…"
        elif kind in ("run_completed", "run_failed", "run_stopped"):
            self.final, self.outcome = data, kind
            self.state = {"run_completed": "done", "run_failed": "failed"}.get(kind, "stopped")

    def todo_progress(self) -> str:
        if not self.todos:
            return ""
        done = sum(1 for t in self.todos if t.get("status") == "completed")
        return f"todo {done}/{len(self.todos)}"

    def status_line(self) -> str:
        parts = [self.state]
        if self.tool:
            parts.append(f"tool: {self.tool}")
        if progress := self.todo_progress():
            parts.append(progress)
        if self.tools_done:
            parts.append(f"{self.tools_done} tool call{'s' if self.tools_done != 1 else ''}")
        return " · ".join(parts)

    def answer(self) -> str:
        if self.final and self.outcome == "run_completed":
            return str(self.final.get("final_text") or self.text)
        return self.text


class Screen:
    """Where the view goes: `live` (a terminal) or plain lines (pipes, scripts)."""

    def __init__(self, console: Console | None = None, err: Console | None = None) -> None:
        self.console = console or Console()
        self.err = err or Console(stderr=True)
        self.live_mode = self.console.is_terminal
        self.view = RunView()
        self._live: Live | None = None
        self._printed = 0  # plain mode: characters of `view.text` written so far
        self._status = ""

    # ---- the live view ----------------------------------------------------------------

    def _render(self) -> Group:
        lines = self.view.text.splitlines()[-TAIL_LINES:]
        status = Spinner("dots", text=Text(self.view.status_line(), style="cyan"))
        return Group(Text("\n".join(lines)), status)

    def start(self) -> None:
        if self.live_mode and self._live is None:
            self._live = Live(
                self._render(), console=self.console, refresh_per_second=8, transient=True
            )
            self._live.start()

    def pause(self) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None
        elif self._printed:
            sys.stdout.write("\n")
            sys.stdout.flush()

    def update(self, kind: str, data: dict[str, Any]) -> None:
        before = self.view.text
        told = len(self.view.lines)
        self.view.apply(kind, data)
        for line in self.view.lines[told:]:  # a child agent started or ended
            if self.live_mode:
                self.console.print(Text(line, style="dim"))  # above the live view
            else:
                self.err.print(line, style="dim", highlight=False, markup=False)
        if self._live is not None:
            self._live.update(self._render())
            return
        if self.live_mode:
            return
        if kind == "text_delta":
            sys.stdout.write(self.view.text[self._printed :])
            sys.stdout.flush()
            self._printed = len(self.view.text)
        elif kind == "text_break" and before:
            sys.stdout.write("\n")
            self._printed = 0
        status = self.view.status_line()
        if status != self._status and kind != "text_delta":
            self._status = status
            self.err.print(f"[{status}]", style="dim", highlight=False, markup=False)

    def finish(self) -> None:
        """The run ended: the whole answer (terminal) or the end of its line (piped)."""
        if self.live_mode:
            self.pause()
            if self.view.thinking:
                self.console.print(Text(self.view.thinking, style="dim"))
            if answer := self.view.answer():
                self.console.print(Markdown(answer))
            return
        if self.view.outcome == "run_completed" and not self._printed and self.view.answer():
            sys.stdout.write(self.view.answer())
            self._printed = len(self.view.answer())
        if self._printed:
            sys.stdout.write("\n")
        sys.stdout.flush()
