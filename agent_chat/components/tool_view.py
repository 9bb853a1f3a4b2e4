"""A tool call as what it is (the shapes come from agent_chat/display/tool_views.py; this only
renders them, as text): a console block for terminal, code and output for execute_code, a
diff for write_file / patch, a numbered excerpt for read_file, JSON for anything else; an
MCP tool's pictures behind "Show image" (loaded on the click, from the owner-checked route).
The look lives in assets/workspace.css (classes `tv-*`)."""

from __future__ import annotations

import reflex as rx

from agent_chat.components.common import tid
from agent_chat.state.chat import ChatState


def labelled_code(label: str, text: rx.Var) -> rx.Component:
    """A tool's arguments or result: a small label over a scrollable code block."""
    return rx.cond(
        text != "",
        rx.vstack(
            rx.text(label, size="1", weight="bold", color_scheme="gray"),
            rx.el.pre(text, class_name="tool-code"),
            spacing="1",
            width="100%",
        ),
    )


def _token(token: rx.Var) -> rx.Component:
    return rx.el.span(token["t"], class_name=token["c"])


def highlighted(code: rx.Var, tokens: rx.Var, class_name: str, test_id: str) -> rx.Component:
    """Code as highlighted tokens when there are some, else the plain text."""
    return rx.el.pre(
        rx.cond(tokens.length() > 0, rx.foreach(tokens, _token), code),
        class_name=class_name,
        custom_attrs=tid(test_id),
    )


def _exit_badge(view: rx.Var) -> rx.Component:
    return rx.cond(
        view["exit_code"] != "",
        rx.el.span(
            "exit ",
            view["exit_code"],
            class_name=rx.cond(
                view["exit_code"] == "0", "tv-exit tv-exit-ok", "tv-exit tv-exit-bad"
            ),
            custom_attrs=tid("tool-exit-code"),
        ),
    )


def _note_and_error(view: rx.Var) -> rx.Component:
    return rx.fragment(
        rx.cond(
            view["error"] != "",
            rx.el.pre(view["error"], class_name="tv-error", custom_attrs=tid("tool-error")),
        ),
        rx.cond(
            view["note"] != "",
            rx.text(view["note"], size="1", class_name="tv-note", custom_attrs=tid("tool-note")),
        ),
    )


def _output(view: rx.Var) -> rx.Component:
    return rx.cond(
        view["output"] != "",
        rx.el.pre(view["output"], class_name="tv-output", custom_attrs=tid("tool-output")),
    )


def console(view: rx.Var) -> rx.Component:
    """terminal: `$ command`, what it printed, and the exit code."""
    return rx.box(
        rx.el.pre(
            rx.el.span("$ ", class_name="tv-prompt"),
            view["code"],
            class_name="tv-command",
            custom_attrs=tid("tool-command"),
        ),
        _output(view),
        rx.hstack(_exit_badge(view), justify="end", class_name="tv-console-foot"),
        class_name="tv-console",
        custom_attrs=tid("tool-console"),
    )


def code_run(view: rx.Var) -> rx.Component:
    """execute_code: the code, highlighted, then its output as a console block."""
    return rx.vstack(
        highlighted(view["code"], view["tokens"], "tv-code", "tool-code"),
        rx.cond(
            (view["output"] != "") | (view["exit_code"] != ""),
            rx.box(
                _output(view),
                rx.hstack(_exit_badge(view), justify="end", class_name="tv-console-foot"),
                class_name="tv-console",
                custom_attrs=tid("tool-console"),
            ),
        ),
        spacing="1",
        width="100%",
    )


def _line(line: rx.Var) -> rx.Component:
    return rx.el.div(
        rx.el.span(line["num"], class_name="tv-num"),
        rx.el.span(line["text"], class_name="tv-text"),
        class_name="tv-line tv-" + line["kind"].to(str),
        custom_attrs={"data-testid": "diff-line", "data-kind": line["kind"]},
    )


def lines_block(view: rx.Var, test_id: str) -> rx.Component:
    return rx.cond(
        view["lines"].length() > 0,
        rx.el.div(
            rx.el.div(rx.foreach(view["lines"], _line), class_name="tv-lines-inner"),
            class_name=f"tv-lines tv-{test_id}",
            custom_attrs=tid(f"tool-{test_id}"),
        ),
    )


def _picture(name: rx.Var) -> rx.Component:
    # A lazy picture in a closed <details> is not fetched: it loads when unfolded.
    url = "/api/chat/sessions/" + ChatState.current_uuid + "/tool-images/" + name.to(str)
    return rx.el.details(
        rx.el.summary(
            rx.icon("image", size=14),
            "Show image",
            class_name="tv-picture-toggle",
            display="inline-flex",
            align_items="center",
            gap="4px",
            cursor="pointer",
            font_size="var(--font-size-1)",
            color="var(--accent-11)",
            custom_attrs=tid("tool-image-show"),
        ),
        rx.el.img(
            src=url,
            loading="lazy",
            alt="A picture the tool returned",
            max_width="100%",
            max_height="24rem",
            margin_top="4px",
            border_radius="var(--radius-2)",
            border="1px solid var(--gray-a5)",
            custom_attrs=tid("tool-image"),
        ),
        custom_attrs={"data-testid": "tool-image-item", "data-name": name},
    )


def _pictures(view: rx.Var) -> rx.Component:
    return rx.cond(
        view["images"].length() > 0,
        rx.vstack(rx.foreach(view["images"], _picture), spacing="1", width="100%"),
    )


def tool_body(view: rx.Var, generic: rx.Component) -> rx.Component:
    """The call's body by kind; `generic` for tools without a shape of their own."""
    return rx.vstack(
        rx.match(
            view["kind"],
            ("terminal", console(view)),
            ("code", code_run(view)),
            ("diff", rx.fragment(lines_block(view, "diff"), _output(view))),
            ("read", rx.fragment(lines_block(view, "excerpt"), _output(view))),
            generic,
        ),
        _note_and_error(view),
        _pictures(view),
        spacing="1",
        width="100%",
        class_name="tv-body",
    )


def tool_label(view: rx.Var) -> rx.Component:
    """The one line after the tool's name: the command, the path."""
    return rx.cond(
        view["label"] != "",
        rx.el.span(view["label"], class_name="tv-label", custom_attrs=tid("tool-label")),
    )


def summary_exit(view: rx.Var) -> rx.Component:
    """A failed command's exit code, visible while the item is folded."""
    return rx.cond(
        (view["exit_code"] != "") & (view["exit_code"] != "0"),
        rx.el.span("exit ", view["exit_code"], class_name="tv-exit tv-exit-bad"),
    )


def tool_name(name: rx.Var, server: rx.Var, size: str = "2") -> rx.Component:
    """A tool's name as the panel shows it: an MCP tool's own name with its server as a
    small badge (display/subagent_rows.py:mcp_name), any other tool's name as it is."""
    return rx.hstack(
        rx.code(name, variant="ghost", size=size, class_name="tv-name"),
        rx.cond(
            server != "",
            rx.badge(
                server,
                " (MCP)",
                variant="soft",
                color_scheme="iris",
                size="1",
                custom_attrs=tid("tool-mcp-server"),
            ),
        ),
        align="center",
        spacing="1",
        display="inline-flex",
    )
