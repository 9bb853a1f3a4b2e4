"""Workspace tools run commands on this machine: never offered beyond loopback to whoever
reaches the port without a login, and profiles are named, not guessed."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from agent_chat.tool_profiles import exposure_problem, parse_profiles


def test_profiles_parse_in_order_and_unknown_names_are_errors() -> None:
    assert parse_profiles("") == ("chat",)
    assert parse_profiles(" Workspace , chat,workspace") == ("workspace", "chat")
    with pytest.raises(ValueError, match="unknown profile 'shell'"):
        parse_profiles("chat,shell")


@pytest.mark.parametrize(
    ("profiles", "host", "password", "refused"),
    [
        (("chat",), "0.0.0.0", None, False),
        (("chat", "workspace"), "127.0.0.1", None, False),
        (("chat", "workspace"), "0.0.0.0", "secret", False),
        (("chat", "workspace"), "0.0.0.0", None, True),
        (("workspace",), "192.168.1.20", None, True),
    ],
)
def test_workspace_beyond_loopback_needs_a_login(
    profiles: tuple[str, ...], host: str, password: str | None, refused: bool
) -> None:
    assert (exposure_problem(profiles, host, password) is not None) == refused


def test_serve_refuses_to_start_workspace_on_all_interfaces_without_a_login() -> None:
    env = {
        **os.environ,
        "AGENT_CHAT_TOOL_PROFILES": "chat,workspace",
        "AGENT_CHAT_HOST": "0.0.0.0",
        # Nothing may start: a bridge URL nobody serves would show if it tried.
        "AGENT_CHAT_BRIDGE_URL": "http://127.0.0.1:9",
    }
    env.pop("AGENT_CHAT_PASSWORD", None)
    done = subprocess.run(
        [sys.executable, "-m", "agent_chat.serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "Refusing to start" in done.stderr and "AGENT_CHAT_PASSWORD" in done.stderr
