"""What the endpoints reach: the app's storage, RunManager and settings (`services()`),
looked up per request because the services start after the API is built."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from agent_chat.api.acting_user import Me, acting_user
from agent_chat.services.backend import Backend


def backend(request: Request) -> Backend:
    return request.app.state.get_backend()


Svc = Annotated[Backend, Depends(backend)]

__all__ = ["Backend", "Me", "Svc", "acting_user", "backend"]
