"""Workspace tools run commands on this machine: never offered beyond loopback before an
administrator exists or is set (until then the first visitor of /setup would be one), and
profiles are named, not guessed."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from agent_chat.common.tool_profiles import exposure_problem, parse_profiles
from agent_chat.config import load_settings
from agent_chat.launch.serve import admin_known


def test_profiles_parse_in_order_and_unknown_names_are_errors() -> None:
    assert parse_profiles("") == ("chat",)
    assert parse_profiles(" Workspace , chat,workspace") == ("workspace", "chat")
    with pytest.raises(ValueError, match="unknown profile 'shell'"):
        parse_profiles("chat,shell")


@pytest.mark.parametrize(
    ("profiles", "host", "admin_known", "refused"),
    [
        (("chat",), "0.0.0.0", False, False),
        (("chat", "workspace"), "127.0.0.1", False, False),
        (("chat", "workspace"), "0.0.0.0", True, False),
        (("chat", "workspace"), "0.0.0.0", False, True),
        (("workspace",), "192.168.1.20", False, True),
    ],
)
def test_workspace_beyond_loopback_needs_an_administrator_first(
    profiles: tuple[str, ...], host: str, admin_known: bool, refused: bool
) -> None:
    asked: list[bool] = []

    def known() -> bool:
        asked.append(admin_known)
        return admin_known

    assert (exposure_problem(profiles, host, admin_known=known) is not None) == refused
    # The database is read only when Workspace would be beyond loopback.
    assert bool(asked) == ("workspace" in profiles and host != "127.0.0.1")


def test_an_administrator_is_known_from_the_database_or_the_start_settings(
    tmp_path: Path, db_url: str, user: int
) -> None:
    empty = f"sqlite:///{tmp_path / 'fresh' / 'agent_chat.db'}"
    fresh = replace(load_settings(), db_url=empty, password=None, admin_user=None)
    assert not admin_known(fresh)  # no tables yet: /setup is open to the first visitor
    assert admin_known(replace(fresh, admin_user="ada", admin_password="a-long-password"))
    assert admin_known(replace(fresh, password="old-shared-password"))
    assert admin_known(replace(fresh, db_url=db_url))  # `user` made a person there


def test_serve_refuses_to_start_workspace_on_all_interfaces_before_an_administrator(
    tmp_path: Path,
) -> None:
    env = {
        **os.environ,
        "AGENT_CHAT_TOOL_PROFILES": "chat,workspace",
        "AGENT_CHAT_HOST": "0.0.0.0",
        "AGENT_CHAT_DB_URL": f"sqlite:///{tmp_path / 'agent_chat.db'}",  # no user in it
        # Nothing may start: a bridge URL nobody serves would show if it tried.
        "AGENT_CHAT_BRIDGE_URL": "http://127.0.0.1:9",
    }
    for name in ("AGENT_CHAT_PASSWORD", "AGENT_CHAT_ADMIN_USER", "AGENT_CHAT_ADMIN_PASSWORD"):
        env.pop(name, None)
    done = subprocess.run(
        [sys.executable, "-m", "agent_chat.launch.serve"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "Refusing to start" in done.stderr and "/setup" in done.stderr
    assert "AGENT_CHAT_ADMIN_USER" in done.stderr
