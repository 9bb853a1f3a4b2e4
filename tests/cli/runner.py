"""The CLI run as a user runs it (a process) against the shared stack, for tests/cli."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass

from tests.support.stack import Stack


@dataclass
class Cli:
    stack: Stack
    token: str

    def env(self, token: str | None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AGENT_CHAT_")}
        env["AGENT_CHAT_URL"] = self.stack.url
        if token:
            env["AGENT_CHAT_TOKEN"] = token
        return env

    def run(self, *args: str, token: str | None = "", timeout: float = 120):
        return subprocess.run(
            [sys.executable, "-m", "agent_chat.cli", *args],
            env=self.env(self.token if token == "" else token),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


def session_of(stderr: str) -> str:
    """The session id `ask` prints after its answer."""
    line = next(line for line in stderr.splitlines() if line.startswith("session "))
    return line.split()[1]
