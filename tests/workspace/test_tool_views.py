"""Tool calls shaped as what they are (live/tool_views.py), from results as hermes-agent 0.19
returns them (captured from its tools run in a scratch folder)."""

from __future__ import annotations

import json

from agent_chat.bridge.truncation import cut_args, cut_text
from agent_chat.display.diff_lines import DIFF_LINES, EXCERPT_LINES
from agent_chat.display.tool_views import ShapeCache, shape, shape_calls
from agent_chat.protocol.reducer import ToolCall

# What hermes' tools returned (tools/terminal_tool.py, file_tools.py, code_execution_tool.py).
TERMINAL_OK = '{"output": "print(\'hi\')\\nx = 5\\nerr", "exit_code": 0, "error": null}'
TERMINAL_EXIT_3 = '{"output": "", "exit_code": 3, "error": null}'
WRITE_OK = (
    '{"bytes_written": 18, "dirs_created": true, "lint": {"status": "ok", "output": ""}, '
    '"resolved_path": "/w/hello.py", "files_modified": ["/w/hello.py"]}'
)
READ_OK = (
    '{"content": "1|print(\'hi\')\\n2|x = 2\\n3|", "total_lines": 2, "file_size": 18, '
    '"truncated": false, "is_binary": false, "is_image": false}'
)
READ_MISSING = (
    '{"content": "", "total_lines": 0, "file_size": 0, "truncated": false, "is_binary": false,'
    ' "is_image": false, "error": "File not found: nope.py", "similar_files": ["./hello.py"]}'
)
PATCH_OK = (
    '{"success": true, "diff": "--- a//w/hello.py\\n+++ b//w/hello.py\\n@@ -1,2 +1,3 @@\\n'
    ' print(\'hi\')\\n-x = 2\\n+x = 3\\n+y = 4\\n", "files_modified": ["/w/hello.py"]}'
)
PATCH_NO_MATCH = (
    '{"success": false, "error": "Could not find a match for old_string in the file", '
    '"_hint": "old_string not found."}'
)
V4A_OK = (
    '{"success": true, "diff": "--- a/hello.py\\n+++ b/hello.py\\n@@ -1,3 +1,3 @@\\n'
    " print('hi')\\n-x = 3\\n+x = 5\\n y = 4\\n\\n--- /dev/null\\n+++ b/new.txt\\n+line one\","
    ' "files_modified": ["/w/hello.py", "/w/new.txt"], "files_created": ["new.txt"]}'
)
CODE_OK = (
    '{"status": "success", "output": "hello\\n", "exit_code": 0, "tool_calls_made": 0, '
    '"duration_seconds": 0.18, "stdout_truncated": false}'
)
CODE_TRACEBACK = (
    '{"status": "error", "output": "\\n--- stderr ---\\nTraceback (most recent call last):\\n'
    '  File \\"script.py\\", line 1\\nZeroDivisionError: division by zero\\n", "exit_code": 1, '
    '"error": "Traceback (most recent call last):\\n  File \\"script.py\\", line 1\\n'
    'ZeroDivisionError: division by zero\\n"}'
)


def call(tool: str, args: dict, result: str | None = None, n: int = 1) -> ToolCall:
    return ToolCall(f"c{n}", tool, args, result, done=result is not None)


def kinds(view) -> list[str]:
    return [line["kind"] for line in view["lines"]]


def test_terminal_is_a_console_block_with_command_output_and_exit_code() -> None:
    view = shape(call("terminal", {"command": "cat hello.py; echo err >&2"}, TERMINAL_OK))
    assert view["kind"] == "terminal"
    assert view["label"] == "cat hello.py; echo err >&2"
    assert view["code"] == "cat hello.py; echo err >&2"
    assert view["output"] == "print('hi')\nx = 5\nerr"
    assert view["exit_code"] == "0" and view["error"] == ""
    failed = shape(call("terminal", {"command": "exit 3"}, TERMINAL_EXIT_3))
    assert failed["exit_code"] == "3" and failed["output"] == ""


def test_a_running_command_shows_the_command_and_no_exit_code_yet() -> None:
    view = shape(call("terminal", {"command": "sleep 5\necho done"}))
    assert view["kind"] == "terminal" and view["label"] == "sleep 5 …"
    assert view["exit_code"] == "" and view["output"] == ""


def test_a_long_output_cut_by_the_bridge_keeps_its_marker_visible() -> None:
    result = json.dumps({"output": "y\n" * 30_000, "exit_code": 0, "error": None})
    view = shape(call("terminal", {"command": "yes | head -30000"}, cut_text(result)))
    assert view["output"].endswith(f"… [truncated {len(result) - 20 * 1024} chars]")
    huge = "y\n" * 30_000 + "… [truncated 5 chars]"  # longer than the panel shows
    view = shape(call("terminal", {"command": "x"}, json.dumps({"output": huge})))
    assert view["output"].endswith("more characters not shown] … [truncated 5 chars]")
    short = cut_text(json.dumps({"output": "z" * 200, "exit_code": 0}), 100)
    view = shape(call("terminal", {"command": "x"}, short))
    assert view["output"].endswith("chars]") and "[truncated" in view["output"]


def test_a_cut_outside_any_string_is_said_in_the_note() -> None:
    result = '{"output": "ok", "exit_code": 0, "verification_evidence": {"status": 1' + "9" * 50
    view = shape(call("terminal", {"command": "x"}, cut_text(result, len(result) - 10)))
    assert view["output"] == "ok" and "[truncated 10 chars]" in view["note"]


def test_a_plain_text_result_shows_as_output() -> None:
    view = shape(call("terminal", {"command": "x"}, "Error executing tool: boom"))
    assert view["output"] == "Error executing tool: boom"


def test_write_file_of_a_new_file_shows_its_content_as_added_lines() -> None:
    view = shape(
        call("write_file", {"path": "hello.py", "content": "print('hi')\nx = 1\n"}, WRITE_OK)
    )
    assert view["kind"] == "diff" and view["label"] == "hello.py"
    assert [(x["kind"], x["text"]) for x in view["lines"]] == [
        ("add", "+print('hi')"),
        ("add", "+x = 1"),
    ]
    assert view["note"] == "2 lines written" and view["error"] == ""


def test_a_second_write_in_the_run_is_diffed_against_the_first() -> None:
    views = shape_calls(
        [
            call("write_file", {"path": "a.py", "content": "x = 1\ny = 2\n"}, WRITE_OK, 1),
            call("write_file", {"path": "./a.py", "content": "x = 1\ny = 3\n"}, WRITE_OK, 2),
        ]
    )
    assert kinds(views[1]) == ["file", "file", "hunk", "ctx", "del", "add"]
    assert [x["text"] for x in views[1]["lines"]][-2:] == ["-y = 2", "+y = 3"]


def test_a_full_read_is_the_base_of_a_later_write_and_a_command_forgets_it() -> None:
    read = call("read_file", {"path": "hello.py"}, READ_OK, 1)
    write = call("write_file", {"path": "hello.py", "content": "print('hi')\nx = 9\n"}, WRITE_OK, 2)
    diffed = shape_calls([read, write])[1]
    assert "del" in kinds(diffed) and diffed["note"] == "changes since this run last saw the file"
    ran = call("terminal", {"command": "echo >> hello.py"}, TERMINAL_OK, 3)
    after_command = shape_calls([read, ran, write])[2]
    assert set(kinds(after_command)) == {"add"}


def test_write_file_errors_and_cut_content_are_shown() -> None:
    error = '{"error": "Refusing to write outside the workspace: ../x"}'
    view = shape(call("write_file", {"path": "../x", "content": "a"}, error))
    assert view["error"] == "Refusing to write outside the workspace: ../x"
    big = cut_args({"path": "big.txt", "content": "line\n" * 10_000})
    view = shape(call("write_file", big, WRITE_OK))
    assert view["lines"][-1]["kind"] == "cut"
    assert len(view["lines"]) <= DIFF_LINES + 1


def test_patch_replace_shows_hermes_diff_or_the_change_it_tries() -> None:
    args = {
        "mode": "replace",
        "path": "hello.py",
        "old_string": "x = 2",
        "new_string": "x = 3\ny = 4",
    }
    done = shape(call("patch", args, PATCH_OK))
    assert done["label"] == "hello.py"
    assert kinds(done) == ["file", "file", "hunk", "ctx", "del", "add", "add"]
    assert done["lines"][0]["text"] == "--- a//w/hello.py"  # outside a workspace: as hermes said
    in_workspace = PATCH_OK.replace(
        "//w/", "//data/workspaces/0b3c8a52-6a43-4b6f-9a53-1f0e6f3c2d11/"
    )
    headers = [x["text"] for x in shape(call("patch", args, in_workspace))["lines"][:2]]
    assert headers == ["--- a/hello.py", "+++ b/hello.py"]
    running = shape(call("patch", args))
    assert [(x["kind"], x["text"]) for x in running["lines"]] == [
        ("del", "-x = 2"),
        ("add", "+x = 3"),
        ("add", "+y = 4"),
    ]
    failed = shape(call("patch", args, PATCH_NO_MATCH))
    assert (
        failed["error"]
        == "Could not find a match for old_string in the file (old_string not found.)"
    )
    assert kinds(failed) == ["del", "add", "add"]


def test_patch_mode_lists_the_files_and_shows_the_diff() -> None:
    patch = (
        "*** Begin Patch\n*** Update File: hello.py\n@@\n print('hi')\n-x = 3\n+x = 5\n"
        "*** Add File: new.txt\n+line one\n*** End Patch"
    )
    running = shape(call("patch", {"mode": "patch", "patch": patch}))
    assert running["label"] == "hello.py, new.txt"
    assert kinds(running) == ["file", "hunk", "ctx", "del", "add", "file", "add"]
    done = shape(call("patch", {"mode": "patch", "patch": patch}, V4A_OK))
    assert [x["text"] for x in done["lines"] if x["kind"] == "add"] == ["+x = 5", "+line one"]


def test_read_file_shows_the_path_and_a_numbered_excerpt() -> None:
    view = shape(call("read_file", {"path": "hello.py"}, READ_OK))
    assert view["kind"] == "read" and view["label"] == "hello.py"
    assert [(x["num"], x["text"]) for x in view["lines"]] == [("1", "print('hi')"), ("2", "x = 2")]
    assert view["note"] == "lines 1–2 of 2"
    content = "\n".join(f"{n}|line {n}" for n in range(1, 201))
    long = json.dumps({"content": content, "total_lines": 500, "truncated": True})
    view = shape(call("read_file", {"path": "big.txt", "limit": 200}, long))
    assert len(view["lines"]) == EXCERPT_LINES + 1
    assert view["lines"][-1] == {"kind": "cut", "num": "", "text": "… 160 more lines not shown"}
    assert view["note"] == f"lines 1–{EXCERPT_LINES} of 500"


def test_read_file_of_a_missing_file_names_the_error_and_similar_files() -> None:
    view = shape(call("read_file", {"path": "nope.py"}, READ_MISSING))
    assert view["error"] == "File not found: nope.py"
    assert view["note"] == "similar: ./hello.py" and view["lines"] == []


def test_execute_code_shows_highlighted_code_and_its_output() -> None:
    view = shape(call("execute_code", {"code": "print('hello')"}, CODE_OK))
    assert view["kind"] == "code" and view["label"] == "print('hello')"
    assert "".join(t["t"] for t in view["tokens"]) == "print('hello')"
    assert {t["c"] for t in view["tokens"]} >= {"hl-b", "hl-s"}
    assert view["output"] == "hello\n" and view["exit_code"] == "0"
    failed = shape(call("execute_code", {"code": "1/0"}, CODE_TRACEBACK))
    assert "ZeroDivisionError" in failed["output"] and failed["exit_code"] == "1"
    assert failed["error"] == ""  # hermes repeats stderr there: shown once


def test_other_tools_and_odd_arguments_stay_generic_and_never_raise() -> None:
    assert shape(call("todo", {"todos": []}, "{}"))["kind"] == "generic"
    for args in (None, "not json", [1, 2], {"command": 5}, {"path": None, "content": None}):
        for tool in ("terminal", "write_file", "patch", "read_file", "execute_code"):
            view = shape(ToolCall("x", tool, args, "{bad json"))
            assert view["kind"] in ("terminal", "diff", "read", "code", "generic")


def test_the_cache_reuses_unchanged_calls_and_reshapes_what_follows_a_change() -> None:
    first = call("write_file", {"path": "a", "content": "1\n"}, WRITE_OK, 1)
    second = call("write_file", {"path": "a", "content": "2\n"}, None, 2)
    cache = ShapeCache()
    one = cache.shape_calls([first, second])
    two = cache.shape_calls([first, second])
    assert one[0] is two[0] and one[1] is two[1]
    done = ToolCall("c2", "write_file", second.args, WRITE_OK, done=True)
    three = cache.shape_calls([first, done])
    assert three[0] is one[0] and three[1] is not one[1]
    assert three == shape_calls([first, done])


def test_an_mcp_tools_pictures_are_named_not_shown() -> None:
    # hermes' result of a call whose server returned text and an image block.
    result = json.dumps(
        {"result": "A red rectangle.\nMEDIA:/h/users/1/cache/images/img_0123456789ab.png"}
    )
    view = shape(ToolCall("c1", "mcp__tst__picture", {}, result, done=True))
    assert view["kind"] == "generic" and view["images"] == ["img_0123456789ab.png"]
    # Only an MCP tool's result; a path that is not hermes' cached name is not a picture.
    assert shape(ToolCall("c2", "terminal", {}, result, done=True))["images"] == []
    odd = json.dumps({"result": "MEDIA:/etc/passwd"})
    assert shape(ToolCall("c3", "mcp__tst__picture", {}, odd, done=True))["images"] == []
