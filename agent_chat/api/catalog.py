"""What a run can use: the models (never their API keys) and the skills."""

from __future__ import annotations

from fastapi import APIRouter

from agent_chat import routes
from agent_chat.api.deps import Svc
from agent_chat.api.schemas import ModelOut, SkillOut
from agent_chat.api.views import model_out, skill_out
from agent_chat.services import models as model_service
from agent_chat.skills import list_skills

router = APIRouter(tags=["catalog"])


@router.get(routes.API_MODELS, response_model=list[ModelOut])
async def models(svc: Svc) -> list[ModelOut]:
    """The configured models; `hasApiKey` says whether one is set, never what it is."""
    return [model_out(m) for m in await model_service.list_models(svc)]


@router.get(routes.API_SKILLS, response_model=list[SkillOut])
async def skills(svc: Svc) -> list[SkillOut]:
    """The skill folders; invalid ones too, with the reason (as the page lists them)."""
    return [skill_out(s) for s in list_skills(svc.settings.skills_dir)]
