"""MCP servers over the HTTP API: administrators list, add, change, delete and test them and
see their status on each bridge; anyone asks which servers one of their conversations gets.
Each route is the page's use case (services/mcp_servers.py); a member asking for an
administrator's route gets 403, a refused value a 422 naming the field."""

from __future__ import annotations

from fastapi import APIRouter, Path, Response
from fastapi.responses import FileResponse
from pydantic.alias_generators import to_camel

from agent_chat import routes
from agent_chat.api.deps import Me, Svc
from agent_chat.api.errors import responses
from agent_chat.api.mcp_schemas import (
    ConversationMcpOut,
    McpServerIn,
    McpServerList,
    McpServerOut,
    McpStatusList,
    McpStatusOut,
    McpTestOut,
    McpToolOut,
)
from agent_chat.api.schemas import MAX_ID
from agent_chat.common.workspaces import IMAGE_TYPES
from agent_chat.db.errors import ValidationFailed
from agent_chat.services import mcp_servers as use
from agent_chat.services.mcp_servers import McpServerView, McpTest, McpValues

router = APIRouter(tags=["mcp"])
ServerId = Path(..., ge=1, le=MAX_ID)


def _values(body: McpServerIn) -> McpValues:
    return McpValues(**body.model_dump(by_alias=False))


def _out(view: McpServerView) -> McpServerOut:
    return McpServerOut(**view.__dict__)


def _test_out(test: McpTest) -> McpTestOut:
    tools = [McpToolOut(**t) for t in test.tools]
    return McpTestOut(ok=test.ok, tools=tools, error=test.error, seconds=test.seconds)


async def _checked(call):  # noqa: ANN001, ANN202 - a use case's awaitable
    """The store names fields in snake_case; the API's bodies are camelCase."""
    try:
        return await call
    except ValidationFailed as exc:
        raise ValidationFailed({to_camel(k): v for k, v in exc.field_errors.items()}) from exc


@router.get(routes.API_MCP_SERVERS, response_model=McpServerList, responses=responses(403))
async def list_servers(svc: Svc, me: Me) -> McpServerList:
    """Every MCP server, by name (administrators)."""
    return McpServerList(servers=[_out(v) for v in await use.list_servers(svc, user_id=me)])


@router.post(
    routes.API_MCP_SERVERS,
    status_code=201,
    response_model=McpServerOut,
    responses=responses(403, 422),
)
async def create_server(svc: Svc, me: Me, body: McpServerIn) -> McpServerOut:
    """A new server; runs of its profiles get its tools from their next start."""
    saved = use.save_server(svc, user_id=me, server_id=None, values=_values(body))
    return _out(await _checked(saved))


@router.get(routes.API_MCP_SERVER, response_model=McpServerOut, responses=responses(403, 404))
async def get_server(svc: Svc, me: Me, server_id: int = ServerId) -> McpServerOut:
    return _out(await use.get_server(svc, user_id=me, server_id=server_id))


@router.put(routes.API_MCP_SERVER, response_model=McpServerOut, responses=responses(403, 404, 422))
async def replace_server(
    svc: Svc, me: Me, body: McpServerIn, server_id: int = ServerId
) -> McpServerOut:
    """New settings, all or nothing (a secret given as `null` keeps its stored value)."""
    saved = use.save_server(svc, user_id=me, server_id=server_id, values=_values(body))
    return _out(await _checked(saved))


@router.delete(
    routes.API_MCP_SERVER,
    status_code=204,
    response_class=Response,
    responses=responses(403, 404),
)
async def delete_server(svc: Svc, me: Me, server_id: int = ServerId) -> Response:
    await use.delete_server(svc, user_id=me, server_id=server_id)
    return Response(status_code=204)


@router.post(routes.API_MCP_SERVER_TEST, response_model=McpTestOut, responses=responses(403, 404))
async def test_stored_server(svc: Svc, me: Me, server_id: int = ServerId) -> McpTestOut:
    """Connect to the server once, on an agent service, and list its tools; `ok` false with
    `error` saying why not (command not found, its stderr, timed out, refused, unauthorised)."""
    return _test_out(await use.test_server(svc, user_id=me, server_id=server_id))


@router.post(routes.API_MCP_TEST, response_model=McpTestOut, responses=responses(403, 422))
async def test_unsaved_server(svc: Svc, me: Me, body: McpServerIn) -> McpTestOut:
    """Test settings before saving them (checked as a save checks them; to test a change of
    a stored server with its secrets, use its own test route after saving)."""
    return _test_out(await _checked(use.test_server(svc, user_id=me, values=_values(body))))


@router.get(routes.API_MCP_STATUS, response_model=McpStatusList, responses=responses(403))
async def mcp_status(svc: Svc, me: Me) -> McpStatusList:
    """Each server on each agent service: connected (with its tool count) or its last error;
    `connected` false and no error: not used there yet."""
    rows = await use.status(svc, user_id=me)
    return McpStatusList(servers=[McpStatusOut(**r.__dict__) for r in rows])


@router.get(routes.API_SESSION_MCP, response_model=ConversationMcpOut, responses=responses(404))
async def conversation_servers(svc: Svc, me: Me, session_id: str) -> ConversationMcpOut:
    """The MCP servers this conversation's tool profile gets (names only)."""
    names = await use.conversation_servers(svc, user_id=me, session_uuid=session_id)
    return ConversationMcpOut(servers=names)


@router.get(
    routes.API_SESSION_TOOL_IMAGE,
    response_class=FileResponse,
    responses={
        200: {
            "content": {
                t: {"schema": {"type": "string", "format": "binary"}}
                for t in ("image/png", "image/jpeg", "image/gif", "image/webp")
            },
            "description": "The picture as the tool returned it.",
        },
        **responses(404),
    },
)
async def tool_image(svc: Svc, me: Me, session_id: str, name: str) -> FileResponse:
    """A picture an MCP tool returned in this conversation (its name is in the call's
    result: `MEDIA:…/img_<hex>.png`); 404 for anything that is not one of yours."""
    path = await use.tool_image(svc, user_id=me, session_uuid=session_id, name=name)
    headers = {
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        # A name is hermes' random one, never reused: the browser keeps the picture.
        "Cache-Control": "private, max-age=31536000, immutable",
    }
    return FileResponse(path, media_type=IMAGE_TYPES[path.suffix], headers=headers)
