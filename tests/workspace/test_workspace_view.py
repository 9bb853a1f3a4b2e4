"""The drawer's rows: sizes and times people read, code highlighted, previews that say
why they show less, URLs of the download route."""

from __future__ import annotations

from agent_chat.common.workspaces import FileEntry, Listing, Preview
from agent_chat.display.highlight import MAX_CHARS
from agent_chat.display.workspace_view import ago, file_rows, human_size, preview_row

UUID = "0b3c8a52-6a43-4b6f-9a53-1f0e6f3c2d11"
NOW = 1_800_000_000.0


def test_sizes_and_times_read_like_a_file_manager() -> None:
    assert [human_size(n) for n in (0, 1023, 1024, 1536, 10 * 1024, 5 * 1024**2)] == [
        "0 B", "1023 B", "1.0 KB", "1.5 KB", "10 KB", "5.0 MB",
    ]  # fmt: skip
    assert ago(NOW - 5, NOW) == "just now"
    assert ago(NOW - 125, NOW) == "2 min ago"
    assert ago(NOW - 7300, NOW) == "2 h ago"
    assert ago(NOW - 3 * 86400, NOW) == "2027-01-12"


def test_file_rows_split_folder_and_name_and_pick_an_icon() -> None:
    listing = Listing(
        (FileEntry("a.py", 10, NOW - 1), FileEntry("docs/readme.md", 2048, NOW - 90),
         FileEntry("img/x.png", 5, NOW), FileEntry("blob", 1, NOW)),
        exists=True,
    )  # fmt: skip
    rows = file_rows(listing, NOW)
    assert [(r["folder"], r["name"], r["icon"]) for r in rows] == [
        ("", "a.py", "file-code"),
        ("docs/", "readme.md", "file-text"),
        ("img/", "x.png", "file-image"),
        ("", "blob", "file"),
    ]
    assert rows[1]["size"] == "2.0 KB" and rows[1]["modified"] == "1 min ago"
    assert (
        rows[0]["stamp"] != file_rows(Listing((FileEntry("a.py", 11, NOW - 1),)), NOW)[0]["stamp"]
    )


def test_code_is_highlighted_text_is_plain_and_markdown_is_left_to_the_renderer() -> None:
    code = preview_row(UUID, Preview("s/run.py", "text", "def f():\n    return 1\n", 22, NOW))
    assert code["kind"] == "code" and code["language"] == "python"
    assert "".join(t["t"] for t in code["tokens"]) == "def f():\n    return 1\n"
    assert code["download_url"] == f"/api/chat/sessions/{UUID}/workspace/s/run.py"
    assert code["image_url"] == ""
    plain = preview_row(UUID, Preview("notes.txt", "text", "hello", 5, NOW))
    assert plain["kind"] == "text" and plain["tokens"] == []
    markdown = preview_row(UUID, Preview("README.md", "markdown", "# Hi", 4, NOW))
    assert markdown["kind"] == "markdown" and markdown["tokens"] == []
    big = preview_row(
        UUID, Preview("big.py", "text", "x = 1\n" * (MAX_CHARS // 6 + 10), 10**6, NOW)
    )
    assert big["kind"] == "code" and big["tokens"] == []  # too long to highlight: plain


def test_previews_say_why_they_show_less() -> None:
    cut = preview_row(UUID, Preview("log.txt", "text", "a" * 1024, 4096, NOW, truncated=True))
    assert cut["note"] == "Showing the first 1.0 KB of 4.0 KB: download it for all."
    binary = preview_row(UUID, Preview("x.bin", "binary", "", 10, NOW))
    assert "download it" in binary["note"]
    large = preview_row(UUID, Preview("x.png", "large", "", 10**9, NOW))
    assert "too large" in large["note"] and large["image_url"] == ""


def test_an_image_preview_loads_inline_and_changes_url_when_the_file_does() -> None:
    one = preview_row(UUID, Preview("a b/p#1.png", "image", "", 10, NOW))
    two = preview_row(UUID, Preview("a b/p#1.png", "image", "", 11, NOW))
    assert one["image_url"].startswith(
        f"/api/chat/sessions/{UUID}/workspace/a%20b/p%231.png?inline=1&v="
    )
    assert one["image_url"] != two["image_url"]


def test_the_button_shows_with_the_workspace_profile_or_an_existing_folder(tmp_path) -> None:
    from agent_chat.display.workspace_view import workspace_available

    root = {"AGENT_CHAT_WORKSPACES_DIR": str(tmp_path)}
    assert not workspace_available(UUID, {**root, "AGENT_CHAT_TOOL_PROFILES": "chat"})
    assert not workspace_available(UUID, root)  # the default is Chat alone
    assert workspace_available(UUID, {**root, "AGENT_CHAT_TOOL_PROFILES": "chat,workspace"})
    (tmp_path / UUID).mkdir()
    assert workspace_available(UUID, {**root, "AGENT_CHAT_TOOL_PROFILES": "chat"})
    assert workspace_available(UUID, {**root, "AGENT_CHAT_TOOL_PROFILES": "nonsense"})
    assert not workspace_available("", {**root, "AGENT_CHAT_TOOL_PROFILES": "workspace"})
    assert not workspace_available("../x", root)
