"""Which profiles may hand work to child agents: Workspace always, Chat when the operator
says so (AGENT_CHAT_DELEGATION_IN_CHAT)."""

from __future__ import annotations

import pytest

from agent_chat.bridge.settings import load_bridge_settings
from agent_chat.common.tool_profiles import TOOLSETS


def test_workspace_delegates_and_chat_does_not_by_default() -> None:
    assert "delegation" in TOOLSETS["workspace"] and "delegation" not in TOOLSETS["chat"]
    settings = load_bridge_settings({"AGENT_CHAT_TOOL_PROFILES": "chat,workspace"})
    assert not settings.delegation_in_chat
    assert "delegation" not in settings.toolsets_for("chat")
    assert settings.toolsets_for("workspace").count("delegation") == 1


@pytest.mark.parametrize("raw", ["on", " ON "])
def test_the_operator_can_give_chat_delegation(raw: str) -> None:
    settings = load_bridge_settings({"AGENT_CHAT_DELEGATION_IN_CHAT": raw})
    assert settings.delegation_in_chat
    assert settings.toolsets_for("chat") == ["todo", "clarify", "memory", "skills", "delegation"]
    assert settings.toolsets == settings.toolsets_for("chat")
    # Named among the extra toolsets too, it is there once.
    both = load_bridge_settings(
        {"AGENT_CHAT_DELEGATION_IN_CHAT": raw, "AGENT_CHAT_TOOLSETS": "delegation,web"}
    )
    assert both.toolsets_for("chat")[-2:] == ["delegation", "web"]
    assert both.toolsets_for("workspace").count("delegation") == 1


def test_off_and_unset_are_the_default_and_anything_else_is_refused() -> None:
    assert not load_bridge_settings({"AGENT_CHAT_DELEGATION_IN_CHAT": "off"}).delegation_in_chat
    assert not load_bridge_settings({"AGENT_CHAT_DELEGATION_IN_CHAT": ""}).delegation_in_chat
    with pytest.raises(ValueError, match="AGENT_CHAT_DELEGATION_IN_CHAT must be on or off"):
        load_bridge_settings({"AGENT_CHAT_DELEGATION_IN_CHAT": "yes"})
