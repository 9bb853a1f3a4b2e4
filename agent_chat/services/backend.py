"""What a use case reaches of the process: the storage, the RunManager and the settings.

A protocol, so the API (which looks the parts up per request) and the page (which holds
`runtime.Services`) hand over whatever they have.
"""

from __future__ import annotations

from typing import Protocol

from agent_chat.config import Settings
from agent_chat.runs.manager import RunManager
from agent_chat.runs.storage import Storage


class Backend(Protocol):
    storage: Storage
    runs: RunManager
    settings: Settings
