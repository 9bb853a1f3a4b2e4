"""`agent-chat ask`'s view of child agents: one line as each starts and one as it ends, and
none of a child's work in the answer or its status line."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from agent_chat.cli.view import RunView, Screen

EVENTS = [
    ("run_started", {}),
    ("tool_start", {"tool": "delegate_task", "call_id": "d1"}),
    ("subagent_start", {"subagent": "sa-0", "parent_call_id": "d1", "goal": "Count  the\nfiles"}),
    ("subagent_start", {"subagent": "sa-1", "parent_call_id": "d1", "goal": "Read " + "x" * 80}),
    ("subagent_text_delta", {"subagent": "sa-0", "text": "not the answer"}),
    ("subagent_tool_start", {"subagent": "sa-0", "call_id": "t1", "tool": "terminal"}),
    ("subagent_tool_end", {"subagent": "sa-0", "call_id": "t1"}),
    ("subagent_todo_update", {"subagent": "sa-0", "todos": [{"status": "pending"}]}),
    ("subagent_end", {"subagent": "sa-0", "state": "succeeded", "summary": "12"}),
    ("subagent_end", {"subagent": "sa-1", "state": "failed", "error": "No answer."}),
    ("tool_end", {"call_id": "d1"}),
    ("text_delta", {"text": "Done."}),
]


def test_a_child_has_a_line_as_it_starts_and_ends() -> None:
    view = RunView()
    for kind, data in EVENTS:
        view.apply(kind, data)
    assert view.lines == [
        "↳ subagent: Count the files …",
        "↳ subagent: Read " + "x" * 55 + "… …",
        "↳ subagent: Count the files … done (1 tool)",
        "↳ subagent: Read " + "x" * 55 + "… … failed (0 tools): No answer.",
    ]
    assert view.text == "Done." and view.todos == [] and view.tools_done == 1


def test_piped_the_lines_go_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    err = io.StringIO()
    screen = Screen(Console(file=io.StringIO()), Console(file=err, width=200))
    screen.live_mode = False
    for kind, data in EVENTS:
        screen.update(kind, data)
    screen.finish()
    assert capsys.readouterr().out == "Done.\n"
    assert "↳ subagent: Count the files … done (1 tool)" in err.getvalue()
