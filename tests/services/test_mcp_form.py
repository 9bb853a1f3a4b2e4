"""Settings → Tools' form text to the use case's values and back (state/mcp_form.py): a stored
secret shows as its name with no value and stays unless typed again; tools and profiles."""

from __future__ import annotations

import pytest

from agent_chat.db.errors import ValidationFailed
from agent_chat.services.mcp_servers import McpServerView
from agent_chat.state.mcp_form import blank_form, edit_form, values

VIEW = McpServerView(
    id=3, name="web", transport="http", command=None, args=[], env_names=[],
    url="https://tools.example/mcp", header_names=["Authorization", "X-Team"],
    include=["a", "b"], exclude=[], profiles=["workspace"], ask=False, enabled=True,
    connect_timeout=30, timeout=45,
)  # fmt: skip


def test_an_edit_keeps_every_stored_secret_unless_typed() -> None:
    form = edit_form(VIEW)
    assert form["headers"] == "X-Team=\n" and form["bearer"] == "" and form["bearer_stored"]
    assert "secret" not in repr(form)
    got = values(form)
    assert got.headers == {"X-Team": None, "Authorization": None}  # None: keep the stored one
    assert got.include == ["a", "b"] and got.exclude == [] and got.profiles == ["workspace"]
    assert (got.url, got.ask, got.timeout) == ("https://tools.example/mcp", False, 45)
    typed = values({**form, "bearer": "new-token", "headers": "X-Team=blue\n"})
    assert typed.headers == {"X-Team": "blue", "Authorization": "Bearer new-token"}
    removed = values({**form, "headers": "", "bearer_stored": ""})
    assert removed.headers == {}


def test_a_command_line_is_split_as_a_shell_would() -> None:
    got = values({**blank_form(), "name": "x", "command": "uvx 'my server' --flag=1",
                  "env": "A=1\nB=\n\n", "tools_mode": "except", "tools": "rm, drop  kill"})  # fmt: skip
    assert (got.command, got.args) == ("uvx", ["my server", "--flag=1"])
    assert got.env == {"A": "1", "B": None}
    assert got.exclude == ["rm", "drop", "kill"] and got.include == []


@pytest.mark.parametrize(
    ("change", "field"),
    [({"command": "uvx 'unclosed"}, "command"), ({"env": "=value"}, "env"),
     ({"timeout": "soon"}, "timeout")],
)  # fmt: skip
def test_text_that_cannot_be_read_names_its_field(change: dict, field: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        values({**blank_form(), "name": "x", **change})
    assert field in refused.value.field_errors
