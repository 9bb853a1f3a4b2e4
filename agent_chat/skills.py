"""Skills: folders with a SKILL.md (front matter `name`, `description`) under the skills dir.

Choosing a skill injects its SKILL.md as the run's system prompt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

MAX_SKILL_BYTES = 200_000


@dataclass(frozen=True)
class Skill:
    folder: str
    name: str
    description: str
    error: str | None = None  # why the folder is not a usable skill

    @property
    def valid(self) -> bool:
        return self.error is None


def _front_matter(text: str) -> dict[str, str] | None:
    """The `key: value` pairs of a leading `---` block, or None if there is none."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    fields: dict[str, str] = {}
    for line in lines[1:]:
        if line.strip() == "---":
            return fields
        key, sep, value = line.partition(":")
        if sep and key.strip():
            fields[key.strip().lower()] = value.strip().strip("\"'")
    return None


def _read_skill(folder: Path) -> Skill:
    path = folder / "SKILL.md"
    if not path.is_file():
        return Skill(folder.name, folder.name, "", error="no SKILL.md in the folder")
    try:
        if path.stat().st_size > MAX_SKILL_BYTES:
            return Skill(folder.name, folder.name, "", error="SKILL.md is larger than 200 KB")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return Skill(folder.name, folder.name, "", error=f"SKILL.md cannot be read: {exc}")
    meta = _front_matter(text)
    if meta is None:
        return Skill(
            folder.name, folder.name, "", error="SKILL.md has no front matter (--- ... ---)"
        )
    if not meta.get("name"):
        return Skill(folder.name, folder.name, "", error="SKILL.md front matter has no name")
    return Skill(folder.name, meta["name"], meta.get("description", ""))


def list_skills(skills_dir: Path) -> list[Skill]:
    """Every sub-folder of the skills dir, valid or not, sorted by name."""
    if not skills_dir.is_dir():
        return []
    skills = [
        _read_skill(p) for p in skills_dir.iterdir() if p.is_dir() and not p.name.startswith(".")
    ]
    return sorted(skills, key=lambda s: s.name.lower())


def skill_prompt(skills_dir: Path, folder: str) -> str:
    """The system prompt for a skill folder; ValueError with a clear reason if unusable."""
    candidate = (skills_dir / folder).resolve()
    if candidate.parent != skills_dir.resolve():
        raise ValueError(f"Unknown skill {folder!r}.")
    skill = _read_skill(candidate)
    if not skill.valid:
        raise ValueError(f"Skill {folder!r} cannot be used: {skill.error}.")
    body = (candidate / "SKILL.md").read_text(encoding="utf-8")
    return f'Use the skill "{skill.name}" to complete the task.\n\n{body}'
