"""Child agents (hermes' delegate_task) through the real bridge and hermes-agent: each child's
events arrive tagged with its id and the parent's call, in the run's seq order, the run waits
for them (foreground), and a Workspace child stays inside the conversation's folder, sandbox and
approvals like the agent that made it."""

from __future__ import annotations

import json
import sys
import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from agent_chat.bridge.sandbox import unavailable
from agent_chat.common.tool_images import image_path, names_in
from agent_chat.protocol.log_codec import event_to_row, merge_rows, row_to_event
from agent_chat.protocol.reducer import replay
from tests.fakes.model_server import RunningFakeModel
from tests.support.bridge import RunningBridge, StartBridge
from tests.support.mcp_server import PICTURE
from tests.support.sse import Stream, read_events, run_answering, run_body, start_run

CHILD_EVENTS = {
    "subagent_start",
    "subagent_end",
    "subagent_text_delta",
    "subagent_text_break",
    "subagent_reasoning_delta",
    "subagent_status",
    "subagent_step",
    "subagent_tool_start",
    "subagent_tool_progress",
    "subagent_tool_end",
    "subagent_todo_update",
}


def calls(*steps: tuple[str, dict[str, Any]], text: str) -> str:
    return "\n".join([text, *(f"CALL {name} {json.dumps(args)}" for name, args in steps)])


def todo(*items: str) -> tuple[str, dict[str, Any]]:
    todos = [{"id": str(n), "content": c, "status": "pending"} for n, c in enumerate(items, 1)]
    return ("todo", {"todos": todos, "merge": False})


async def run(
    bridge: RunningBridge, fake: RunningFakeModel, message: str, *, profile: str = "chat"
) -> Stream:
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=120) as client:
        body = run_body(bridge.model(fake), message, str(uuid.uuid4()), tool_profile=profile)
        run_id = await start_run(client, body)
        return await read_events(client, run_id)


def live_dicts(stream: Stream) -> list[dict[str, Any]]:
    return [{**e.data, "type": e.type, "seq": e.seq} for e in stream.events]


async def test_two_children_stream_their_own_tagged_events_and_the_run_waits_for_them(
    start_bridge: StartBridge, fake_model: RunningFakeModel
) -> None:
    bridge = start_bridge(keepalive_interval_s=0.5, delegation_in_chat=True)
    # Each child is scripted by its goal; the delays make the two threads overlap.
    alpha = calls(todo("count the files", "report"), text="alpha: plan the count delay=0.01")
    beta = calls(todo("read the notes"), text="beta: plan the reading delay=0.01")
    message = calls(("delegate_task", {"tasks": [{"goal": alpha}, {"goal": beta}]}), text="go")
    stream = await run(bridge, fake_model, message)

    assert stream.events[-1].type == "run_completed"
    seqs = [e.seq for e in stream.events]
    assert seqs == list(range(1, len(seqs) + 1))  # one order, no gap, whatever the threads did
    (delegate,) = [e for e in stream.of("tool_start") if e.data["tool"] == "delegate_task"]
    call_id = delegate.data["call_id"]
    starts = stream.of("subagent_start")
    ids = {s.data["subagent"] for s in starts}
    assert len(starts) == 2 and len(ids) == 2
    assert {s.data["parent_call_id"] for s in starts} == {call_id}
    by_goal = {s.data["goal"]: s.data for s in starts}
    assert set(by_goal) == {alpha, beta}
    assert by_goal[alpha]["index"] == 0 and by_goal[beta]["index"] == 1
    assert "todo" in by_goal[alpha]["toolsets"] and "delegation" not in by_goal[alpha]["toolsets"]
    alpha_id, beta_id = by_goal[alpha]["subagent"], by_goal[beta]["subagent"]

    child_events = [e for e in stream.events if e.type in CHILD_EVENTS]
    assert all(e.data["subagent"] in ids for e in child_events)
    for child in (alpha_id, beta_id):
        mine = [e for e in child_events if e.data["subagent"] == child]
        kinds = [e.type for e in mine]
        assert kinds[0] == "subagent_start" and kinds[-1] == "subagent_end"
        assert "subagent_tool_start" in kinds and "subagent_tool_end" in kinds
        (end,) = [e for e in mine if e.type == "subagent_end"]
        assert end.data["parent_call_id"] == call_id and end.data["state"] == "succeeded"
        assert end.data["usage"]["input_tokens"] > 0 and end.data["summary"]
        assert end.seq < delegate.seq + len(stream.events)  # before the parent's tool end
    delegate_end = next(e for e in stream.of("tool_end") if e.data["call_id"] == call_id)
    assert all(e.seq < delegate_end.seq for e in child_events)  # foreground: within the call
    # The two children worked at once: their events interleave.
    spans = {c: [e.seq for e in child_events if e.data["subagent"] == c] for c in ids}
    first, second = sorted(spans.values(), key=min)
    assert min(second) < max(first)
    # The children's own TODO lists, never the answer's.
    assert not stream.of("todo_update")
    alpha_todos = [e for e in stream.of("subagent_todo_update") if e.data["subagent"] == alpha_id]
    assert [t["content"] for t in alpha_todos[-1].data["todos"]] == ["count the files", "report"]
    # The model saw each child's own conversation, begun by its goal.
    assert fake_model.child_requests("alpha: plan") and fake_model.child_requests("beta: plan")
    assert "Tool delegate_task done" in stream.events[-1].data["final_text"]

    # The thinking view: the call's two children, each with its own tools, todos and usage.
    view = replay(live_dicts(stream))
    children = view.children_of(call_id)
    assert [c.subagent_id for c in children] == [alpha_id, beta_id]
    assert all(c.state == "succeeded" and c.tools[0].tool == "todo" for c in children)
    assert [t["content"] for t in children[1].todos] == ["read the notes"]
    own = stream.events[-1].data["usage"]
    assert view.usage["input_tokens"] == own["input_tokens"] + sum(
        c.usage["input_tokens"] for c in children
    )
    # Stored as the batch writer merges rows (deltas of one child only), it replays the same.
    rows: list[Any] = []
    for e in stream.events:
        row = event_to_row(e.type, e.seq, e.data)
        merged = merge_rows(rows[-1], row) if rows else None
        rows[-1:] = [merged] if merged is not None else [*rows[-1:], row]
    assert len(rows) < len(stream.events)  # something did merge
    assert replay([row_to_event(r.seq, r.kind, r.content, r.meta_json) for r in rows]) == view


@pytest.mark.parametrize(
    ("fault", "reason"),
    [("error401", "HTTP 401"), ("emptyanswer", "The model returned an empty answer")],
)
async def test_a_failing_child_ends_failed_with_the_reason_and_the_run_goes_on(
    start_bridge: StartBridge, fake_model: RunningFakeModel, fault: str, reason: str
) -> None:
    """hermes calls such a child "completed" (its final response holds hermes' own notice);
    the bridge judges its turn as it judges the answer's."""
    bridge = start_bridge(keepalive_interval_s=0.5, delegation_in_chat=True)
    # The fault word in the child's goal only: the fake model reads faults from the last
    # paragraph of the last user message, which for the parent is "go on".
    call = calls(("delegate_task", {"goal": f"gamma: answer nothing {fault}"}), text="do")
    stream = await run(bridge, fake_model, f"{call}\n\ngo on")
    assert stream.events[-1].type == "run_completed"
    (end,) = stream.of("subagent_end")
    assert end.data["state"] == "failed" and reason in end.data["error"], end.data
    assert "summary" not in end.data
    (child,) = replay(live_dicts(stream)).subagents
    assert child.state == "failed" and child.error == end.data["error"]


@pytest.fixture
def workspaces(tmp_path: Path) -> Path:
    return tmp_path / "workspaces"


async def test_a_workspace_child_is_confined_like_its_parent(
    start_bridge: StartBridge, fake_model: RunningFakeModel, workspaces: Path, tmp_path: Path
) -> None:
    """hermes runs children on threads of its own, under task ids of their own: the write
    fence, the approvals and the sandbox must follow them there."""
    bridge = start_bridge(
        keepalive_interval_s=0.5,
        tool_profiles=("chat", "workspace"),
        workspaces_root=workspaces,
    )  # Workspace has delegation of its own
    session = str(uuid.uuid4())
    folder = workspaces / session
    (folder / "victim").mkdir(parents=True)
    (folder / "victim" / "keep.txt").write_text("data")
    writer = calls(
        ("write_file", {"path": "../escape.txt", "content": "x"}),
        ("write_file", {"path": str(tmp_path / "abs-escape.txt"), "content": "x"}),
        ("write_file", {"path": "inside.txt", "content": "made by a child"}),
        text="writer: files",
    )
    shell = calls(
        ("terminal", {"command": "rm -rf victim"}),
        ("terminal", {"command": "echo PID1=$(cat /proc/1/comm); pwd"}),
        text="shell: commands",
    )
    pid1 = ("terminal", {"command": "echo PID1=$(cat /proc/1/comm)"})
    delegate = ("delegate_task", {"tasks": [{"goal": writer}, {"goal": shell}]})
    message = calls(pid1, delegate, text="go")
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=120) as client:
        body = run_body(bridge.model(fake_model), message, session, tool_profile="workspace")
        stream = await run_answering(client, body, ["deny"])
    ends = {s.data["goal"]: s.data["subagent"] for s in stream.of("subagent_start")}
    results = {
        child: [
            e.data["result"] for e in stream.of("subagent_tool_end") if e.data["subagent"] == child
        ]
        for child in ends.values()
    }
    refused, absolute, inside = results[ends[writer]]
    assert "outside this conversation's workspace" in refused
    assert "outside this conversation's workspace" in absolute
    assert not (workspaces / "escape.txt").exists() and not (tmp_path / "abs-escape.txt").exists()
    assert (folder / "inside.txt").read_text() == "made by a child"
    # The person is asked, in the child's name (not hermes' silent answer for children);
    # denied, nothing deleted.
    (asked,) = stream.of("approval_request")
    assert asked.data["subagent"] == ends[shell] and asked.data["command"] == "rm -rf victim"
    denied, where = results[ends[shell]]
    assert "BLOCKED" in denied and (folder / "victim" / "keep.txt").exists()
    output = json.loads(where)["output"]
    assert str(folder.resolve()) in output  # the child's commands start in the folder
    # ... and run where its parent's do: the conversation's sandbox (PID 1 is bubblewrap).
    parents = json.loads(stream.first("tool_end").data["result"])["output"].strip()
    assert output.splitlines()[0] == parents
    if unavailable() is None:
        assert parents == "PID1=bwrap"


async def test_delegation_never_goes_to_the_background(
    start_bridge: StartBridge, fake_model: RunningFakeModel
) -> None:
    """hermes sends a top-level delegate_task to the background unless the channel cannot
    take a later message: a bridge run cannot, so the child's result is in this turn."""
    bridge = start_bridge(keepalive_interval_s=0.5, delegation_in_chat=True)
    message = calls(("delegate_task", {"goal": "delta: say hello"}), text="delegate it")
    stream = await run(bridge, fake_model, message)
    (delegate_end,) = [e for e in stream.of("tool_end") if e.data["tool"] == "delegate_task"]
    result = json.loads(delegate_end.data["result"])
    assert result["results"][0]["status"] == "completed"
    assert "Echo: delta: say hello" in result["results"][0]["summary"]
    assert stream.first("subagent_end").seq < delegate_end.seq


async def test_children_working_at_once_ask_one_after_the_other(
    start_bridge: StartBridge, fake_model: RunningFakeModel, workspaces: Path
) -> None:
    """Two children's dangerous commands at the same time: one question is open at a time
    (the run has one pause), each in its child's name, and each runs once allowed."""
    bridge = start_bridge(
        keepalive_interval_s=0.5, tool_profiles=("chat", "workspace"), workspaces_root=workspaces
    )
    session = str(uuid.uuid4())
    folder = workspaces / session
    for name in ("one", "two"):
        (folder / name).mkdir(parents=True)
    goals = [
        calls(("terminal", {"command": f"rm -rf {n}"}), text=f"clean {n}") for n in ("one", "two")
    ]
    delegate = ("delegate_task", {"tasks": [{"goal": g} for g in goals]})
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=120) as client:
        body = run_body(
            bridge.model(fake_model), calls(delegate, text="go"), session, tool_profile="workspace"
        )
        stream = await run_answering(client, body, ["once", "once"])
    children = {s.data["goal"]: s.data["subagent"] for s in stream.of("subagent_start")}
    pauses = [e for e in stream.events if e.type in ("approval_request", "approval_resolved")]
    assert [e.type for e in pauses] == ["approval_request", "approval_resolved"] * 2
    asked = [e.data["subagent"] for e in stream.of("approval_request")]
    assert sorted(asked) == sorted(children.values())
    assert not (folder / "one").exists() and not (folder / "two").exists()


async def test_a_childs_mcp_picture_is_kept_for_the_conversation(
    start_bridge: StartBridge, fake_model: RunningFakeModel, workspaces: Path
) -> None:
    """A child calls MCP tools under a task id of its own: its pictures go with its
    parent's conversation like the parent's."""
    bridge = start_bridge(
        keepalive_interval_s=0.5, delegation_in_chat=True, workspaces_root=workspaces
    )
    conversation = str(uuid.uuid4())
    drawer = calls(("mcp__tst__picture", {}), text="drawer: draw")
    message = calls(("delegate_task", {"goal": drawer}), text="delegate the drawing")
    server = {
        "ask": False,
        "name": "tst",
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", "tests.support.mcp_server"],
    }
    async with httpx.AsyncClient(base_url=bridge.base_url, timeout=120) as client:
        body = run_body(
            bridge.model(fake_model), message, str(uuid.uuid4()), mcp_servers=[server],
            workspace=conversation,
        )  # fmt: skip
        stream = await run_answering(client, body)
    [result] = [
        e.data["result"]
        for e in stream.of("subagent_tool_end")
        if e.data["tool"] == "mcp__tst__picture"
    ]
    [name] = names_in(result)
    assert image_path(workspaces, conversation, name).read_bytes() == PICTURE
