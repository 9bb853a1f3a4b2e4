"""The MCP servers' table: the team's own tools the agent may use (docs/architecture.md §4c).
Imported by `db/models.py`, so it is on `SQLModel.metadata` with the others.

- `mcp_server`: a name (lower-case letters, digits, `-`, `_`: it is part of the tool names
  hermes makes, `mcp__<name>__<tool>`), its transport, stdio (`command`, `args`, `env`) or
  HTTP (`url`, `headers`); which of its tools the agent gets (`include` / `exclude`), which
  tool profiles have it, whether each call waits for a person's consent (`ask`), `enabled`,
  its timeouts. `env` and `headers` hold secrets (tokens, keys): they go to the bridge with a
  run and nowhere else (never to a browser, an export or a log); what is shown of them is
  their names. The JSON columns are JSON text (one form on SQLite and PostgreSQL).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from sqlalchemy import DateTime, Text
from sqlmodel import Field, SQLModel

TRANSPORTS = ("stdio", "http")


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)  # naive UTC, as models.utcnow


class McpServer(SQLModel, table=True):
    __tablename__ = "mcp_server"
    __table_args__ = {"extend_existing": True}

    id: int | None = Field(default=None, primary_key=True)
    name: str = Field(max_length=32, unique=True)
    transport: str = Field(max_length=10)
    command: str | None = Field(default=None, sa_type=Text)
    args_json: str = Field(default="[]", sa_type=Text)
    env_json: str = Field(default="{}", sa_type=Text)  # secret values
    url: str | None = Field(default=None, sa_type=Text)
    headers_json: str = Field(default="{}", sa_type=Text)  # secret values
    include_json: str = Field(default="[]", sa_type=Text)
    exclude_json: str = Field(default="[]", sa_type=Text)
    profiles_json: str = Field(default="[]", sa_type=Text)  # [] : every profile
    ask: bool = True  # each call waits for a person's consent
    enabled: bool = True
    connect_timeout: float = 30
    timeout: float = 120
    created_at: datetime = Field(default_factory=_now, sa_type=DateTime)
    updated_at: datetime = Field(default_factory=_now, sa_type=DateTime)

    @property
    def args(self) -> list[str]:
        return json.loads(self.args_json)

    @property
    def env(self) -> dict[str, str]:
        return json.loads(self.env_json)

    @property
    def headers(self) -> dict[str, str]:
        return json.loads(self.headers_json)

    @property
    def include(self) -> list[str]:
        return json.loads(self.include_json)

    @property
    def exclude(self) -> list[str]:
        return json.loads(self.exclude_json)

    @property
    def profiles(self) -> list[str]:
        return json.loads(self.profiles_json)

    def spec(self) -> dict[str, object]:
        """What the bridge is sent (`bridge/schemas.py:McpServerSpec`), secrets included."""
        spec: dict[str, object] = {
            "name": self.name,
            "transport": self.transport,
            "include": self.include,
            "exclude": self.exclude,
            "connect_timeout": self.connect_timeout,
            "timeout": self.timeout,
            "ask": self.ask,
        }
        if self.transport == "stdio":
            spec.update(command=self.command, args=self.args, env=self.env)
        else:
            spec.update(url=self.url, headers=self.headers)
        return spec
