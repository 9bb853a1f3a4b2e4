"""Route paths and URL builders, in one place."""

INDEX = "/"
CHAT = "/chat/[session_id]"
SETTINGS_MODELS = "/settings/models"
EXPORT_API = "/api/chat/sessions/{session_uuid}/export"


def chat_url(session_uuid: str) -> str:
    return f"/chat/{session_uuid}"


def export_url(session_uuid: str, fmt: str, branch: str = "active") -> str:
    return EXPORT_API.format(session_uuid=session_uuid) + f"?format={fmt}&branch={branch}"
