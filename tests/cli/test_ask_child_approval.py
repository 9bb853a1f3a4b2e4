"""`agent-chat ask` names the child agent an approval is for (the stream's `subagent`), so
a person at a terminal knows which helper wants to run the command."""

from __future__ import annotations

import io
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from agent_chat.cli.ask import Answers, NeedsAnswer, follow
from agent_chat.cli.view import Screen


class FakeClient:
    """The three calls `follow` makes of the app's API, answered from a script."""

    def __init__(self, events: list[tuple[str, dict[str, Any]]]) -> None:
        self._events = events
        self.stopped = False

    def events(self, run_id: str):  # noqa: ANN201
        for kind, data in self._events:
            yield SimpleNamespace(type=kind, data=data)

    def state(self, run_id: str) -> dict[str, Any]:
        pending = {"kind": "approval", "clarifyId": "c1", "question": "rm -rf victim"}
        return {"pending": {**pending, "detail": "recursive delete", "choices": ["once", "deny"]}}

    def stop(self, run_id: str) -> None:
        self.stopped = True


@pytest.mark.parametrize("subagent", ["sa-1", None])
def test_an_approval_for_a_child_names_its_goal(subagent: str | None) -> None:
    started = {"subagent": "sa-1", "parent_call_id": "d1", "goal": "gamma: clean up\nCALL …"}
    asked = {"clarify_id": "c1", "command": "rm -rf victim", "subagent": subagent}
    client = FakeClient([("subagent_start", started), ("approval_request", asked)])
    quiet = Console(file=io.StringIO())
    with pytest.raises(NeedsAnswer) as raised:
        follow(client, Screen(quiet, quiet), "r1", Answers())  # type: ignore[arg-type]
    question = str(raised.value)
    assert question.startswith("Allow this step? rm -rf victim (recursive delete)")
    named = "[asked by a subagent: gamma: clean up]"
    assert question.endswith(named) if subagent else named not in question
    assert client.stopped  # nobody could answer: the run is stopped, as for any question
