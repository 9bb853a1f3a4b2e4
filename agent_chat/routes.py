"""Route paths and URL builders, in one place."""

from urllib.parse import quote

INDEX = "/"
# One page for a new conversation (`/chat`, no row until its first message) and an existing
# one (`/chat/<uuid>`): the first send moves to the conversation's URL without remounting
# the page, so text typed meanwhile stays in the composer.
CHAT = "/chat/[[session_id]]"
NEW_CHAT = "/chat"
SETTINGS_MODELS = "/settings/models"
SETTINGS_TOKENS = "/settings/tokens"
SETTINGS_ACCOUNT = "/settings/account"
SETTINGS_USERS = "/settings/users"
SETTINGS_TOOLS = "/settings/tools"
SCHEDULES = "/schedules"  # scheduled runs; `?conversation=<uuid>` opens the form adding to it
EXPORT_API = "/api/chat/sessions/{session_id}/export"

# The HTTP API (agent_chat/api/, docs/architecture.md §4a).
API_DOCS = "/api/docs"
API_OPENAPI = "/api/openapi.json"
API_SESSIONS = "/api/chat/sessions"
API_SESSIONS_IMPORT = "/api/chat/sessions/import"
API_SEARCH = "/api/chat/search"
API_FOLDERS = "/api/chat/folders"
API_FOLDER = "/api/chat/folders/{folder_id}"
API_ATTACHMENTS = "/api/chat/attachments"
API_ATTACHMENT = "/api/chat/attachments/{attachment_id}"
API_ATTACHMENT_THUMBNAIL = "/api/chat/attachments/{attachment_id}/thumbnail"
API_SESSION = "/api/chat/sessions/{session_id}"
API_SESSION_RESET = "/api/chat/sessions/{session_id}/reset"
API_SESSION_MESSAGES = "/api/chat/sessions/{session_id}/messages"
API_SESSION_RUNS = "/api/chat/sessions/{session_id}/runs"
API_RUN_STREAM = "/api/chat/runs/{run_id}/stream"
API_RUN_STATE = "/api/chat/runs/{run_id}/state"
API_RUN_RESUME = "/api/chat/runs/{run_id}/resume"
API_RUN_STOP = "/api/chat/runs/{run_id}/stop"
API_MESSAGE = "/api/chat/messages/{message_id}"
API_MESSAGE_REGENERATE = "/api/chat/messages/{message_id}/regenerate"
API_MESSAGE_VERSIONS = "/api/chat/messages/{message_id}/versions"
API_MESSAGE_ACTIVATE = "/api/chat/messages/{message_id}/activate"
API_MODELS = "/api/models"
API_SKILLS = "/api/skills"
API_SCHEDULES = "/api/schedules"
API_SCHEDULE = "/api/schedules/{schedule_id}"
API_SCHEDULE_PAUSE = "/api/schedules/{schedule_id}/pause"
API_SCHEDULE_RESUME = "/api/schedules/{schedule_id}/resume"
API_SCHEDULE_RUN = "/api/schedules/{schedule_id}/run"
API_SCHEDULE_RUNS = "/api/schedules/{schedule_id}/runs"
API_MCP_SERVERS = "/api/mcp/servers"
API_MCP_SERVER = "/api/mcp/servers/{server_id}"
API_MCP_SERVER_TEST = "/api/mcp/servers/{server_id}/test"
API_MCP_TEST = "/api/mcp/test"
API_MCP_STATUS = "/api/mcp/status"
API_SESSION_MCP = "/api/chat/sessions/{session_id}/mcp-servers"
API_SESSION_TOOL_IMAGE = "/api/chat/sessions/{session_id}/tool-images/{name}"
WORKSPACE_FILE_API = "/api/chat/sessions/{session_uuid}/workspace/{path:path}"


def attachment_url(attachment_id: int) -> str:
    return API_ATTACHMENT.format(attachment_id=attachment_id)


def thumbnail_url(attachment_id: int) -> str:
    return API_ATTACHMENT_THUMBNAIL.format(attachment_id=attachment_id)


def chat_url(session_uuid: str) -> str:
    return f"/chat/{session_uuid}"


def export_url(session_uuid: str, fmt: str, branch: str = "active", *, files: bool = False) -> str:
    """`files`: a JSON export that carries the attached files' bytes too."""
    url = EXPORT_API.format(session_id=session_uuid) + f"?format={fmt}&branch={branch}"
    return url + "&files=true" if files else url


def file_url(session_uuid: str, path: str, *, inline: bool = False, version: str = "") -> str:
    """The URL of a workspace file (`version` busts the browser's cache of a preview)."""
    url = f"/api/chat/sessions/{quote(session_uuid, safe='')}/workspace/{quote(path, safe='/')}"
    query = [q for q in ("inline=1" if inline else "", f"v={version}" if version else "") if q]
    return url + ("?" + "&".join(query) if query else "")
