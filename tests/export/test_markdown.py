"""The Markdown export keeps its structure: headings in order, thinking, tools, tasks and
questions as details blocks, message text that cannot break the document, and every version
labelled in an "all branches" export."""

from __future__ import annotations

import json
import re

from markdown_it import MarkdownIt
from markdown_it.token import Token
from sqlalchemy import Engine

from agent_chat.export import to_markdown
from tests.support.exports import (
    EXPORTED_AT,
    TOOL_ARGS,
    build_conversation,
    db_messages,
    read_export,
)

_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.S)


def _parse(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").enable("strikethrough").parse(markdown)


def _headings(tokens: list[Token], max_level: int = 4) -> list[tuple[int, str]]:
    found = []
    for opening, content in zip(tokens, tokens[1:], strict=False):
        if opening.type == "heading_open" and int(opening.tag[1]) <= max_level:
            found.append((int(opening.tag[1]), content.content))
    return found


def _details_summaries(tokens: list[Token]) -> list[str]:
    return [m for t in tokens if t.type == "html_block" for m in _SUMMARY.findall(t.content)]


def _assert_only_our_html(tokens: list[Token]) -> None:
    """Raw HTML may only be our own <details>/<summary> lines, balanced."""
    depth = 0
    for token in tokens:
        assert token.type != "html_inline"
        for child in token.children or []:
            assert child.type != "html_inline", child.content
        if token.type == "html_block":
            text = token.content.strip()
            if text == "</details>":
                depth -= 1
            else:
                assert re.fullmatch(r"<details>\n<summary>[^<>]*</summary>", text), text
                depth += 1
            assert depth in (0, 1), "details blocks are never nested or unbalanced"
    assert depth == 0


def test_markdown_has_title_and_turn_headings_in_order(engine: Engine) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    headings = _headings(tokens)
    assert headings[0] == (1, "Trip to Rome")
    assert [(level, text.split(" · ")[0]) for level, text in headings[1:]] == [
        (2, "You"),
        (2, "Assistant"),
        (2, "You"),
        (2, "Assistant"),
        (2, "You"),
        (2, "Assistant"),
    ]
    assert all(re.search(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", text) for _, text in headings[1:])
    meta = next(t.content for t in tokens if t.type == "inline" and "Exported" in t.content)
    assert "Model: Test model (fake-model)" in meta
    assert "Exported: 2025-01-31 09:30 UTC" in meta


def test_markdown_keeps_thinking_tools_tasks_and_questions_as_details_blocks(
    engine: Engine,
) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    summaries = _details_summaries(tokens)
    assert summaries[:4] == [
        "Thinking",
        "Tool: web_search (0.4 s)",
        "Tasks (1/2 done)",
        "Question: Which month?",
    ]
    assert "Summary of earlier messages" in summaries[4]
    inline_texts = [t.content for t in tokens if t.type == "inline"]
    assert "Let me think about Rome." in inline_texts
    assert "I will look it up." in inline_texts
    assert "Answer: June" in inline_texts
    assert "Choices: May, June" in inline_texts
    assert "Go in June and visit the Colosseum." in inline_texts
    assert "[x] Book flights" in inline_texts
    assert "[ ] Find a hotel (in progress)" in inline_texts
    assert "[ ] ~~Rent a car~~ (cancelled)" in inline_texts
    fences = [t for t in tokens if t.type == "fence"]
    assert json.loads(next(f.content for f in fences if "query" in f.content)) == TOOL_ARGS
    assert json.loads(next(f.content for f in fences if "hits" in f.content)) == {
        "hits": ["Colosseum", "Pantheon"]
    }
    # The failed answer says so, with its error; the stopped one says it was stopped.
    assert "**This answer failed.**" in inline_texts
    assert any(f.content.strip() == "Model endpoint down" for f in fences)
    assert "Half an answ" in inline_texts
    assert "**Stopped before the answer was complete.**" in inline_texts
    assert any(t.type == "hr" for t in tokens)
    assert any(text.startswith("**Context reset**") for text in inline_texts)


def test_markdown_survives_fences_script_tags_and_headings_inside_a_message(engine: Engine) -> None:
    conv = build_conversation(engine)
    markdown = to_markdown(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    html = MarkdownIt("commonmark").render(markdown)
    assert "<script" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    # The unclosed fence of the message ends with the message: what follows is still parsed.
    code = next(t for t in tokens if t.type == "fence" and "alert(2)" in t.content)
    assert code.info == "python"
    assert code.content == "print('<script>alert(2)</script>')\n"
    # The message's own heading sits below the export's headings.
    assert (5, "A heading of mine") in _headings(tokens, max_level=6)
    assert [text.split(" · ")[0] for _, text in _headings(tokens)][-2:] == ["You", "Assistant"]
    # The tool arguments contain ``` and still come back whole from a longer fence.
    args_fence = next(t for t in tokens if t.type == "fence" and "query" in t.content)
    assert len(args_fence.markup) > 3


def test_markdown_of_all_branches_contains_every_version_labelled(engine: Engine) -> None:
    conv = build_conversation(engine)
    active_md = to_markdown(read_export(engine, conv, "active"), exported_at=EXPORTED_AT)
    markdown = to_markdown(read_export(engine, conv, "all"), exported_at=EXPORTED_AT)
    tokens = _parse(markdown)
    _assert_only_our_html(tokens)
    for message in db_messages(engine):
        if message.content and message.id not in (conv.ids["tricky"], conv.ids["reset"]):
            assert message.content in markdown, message.content
    for text in ("Answer number 1", "Paris answer", "Old follow-up answer"):
        assert text not in active_md
    headings = _headings(tokens)
    assert (2, "Other versions") in headings
    labels = [text for level, text in headings if level == 3]
    assert labels == [
        "Version 1/3 of the answer to: Plan a trip to Rome",
        "Version 2/3 of the answer to: Plan a trip to Rome",
        "Version 1/2 of the message after: Go in June and visit the Colosseum.",
        "Version 2/2 of the first message",
    ]
    # Each message appears once: as many You/Assistant headings as user/assistant messages.
    turns = [text for _, text in _headings(tokens) if text.startswith(("You", "Assistant"))]
    db = db_messages(engine)
    assert len(turns) == sum(1 for m in db if m.role in ("USER", "ASSISTANT"))
    assert any("version 3/3" in text for text in turns)
