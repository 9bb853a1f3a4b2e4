"""Long-term memory files (MEMORY.md, USER.md) with hermes' own limits.

Entries are separated by ``"\\n§\\n"`` and the limit counts the joined entries, exactly as
hermes' memory tool does (tools/memory_tool.py), so an edit here never trips hermes' drift
detection.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENTRY_DELIMITER = "\n§\n"
DEFAULT_LIMITS = {"memory": 2200, "user": 1375}
FILE_NAMES = {"memory": "MEMORY.md", "user": "USER.md"}


class MemoryLimitError(ValueError):
    """An edit would exceed hermes' memory limit."""


@dataclass(frozen=True)
class MemoryFiles:
    directory: Path
    limits: dict[str, int]

    def read(self) -> dict[str, object]:
        texts = {target: self._read(target) for target in FILE_NAMES}
        return {
            **texts,
            "limits": dict(self.limits),
            "chars": {target: len(text) for target, text in texts.items()},
        }

    def write(self, updates: dict[str, str | None]) -> dict[str, object]:
        """Check every update against its limit first, then write them all."""
        normalized: dict[str, str] = {}
        for target, text in updates.items():
            if text is None:
                continue
            joined = normalize(text)
            if len(joined) > self.limits[target]:
                raise MemoryLimitError(
                    f"{FILE_NAMES[target]} would hold {len(joined)} characters; "
                    f"hermes allows at most {self.limits[target]}."
                )
            normalized[target] = joined
        for target, joined in normalized.items():
            self._write(target, joined)
        return self.read()

    def _path(self, target: str) -> Path:
        return self.directory / FILE_NAMES[target]

    def _read(self, target: str) -> str:
        path = self._path(target)
        return path.read_text(encoding="utf-8") if path.exists() else ""

    def _write(self, target: str, text: str) -> None:
        # Atomic replace, like hermes: a concurrent reader sees the old or the new file.
        self.directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.directory, prefix=".mem_", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.replace(tmp, self._path(target))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def normalize(text: str) -> str:
    """hermes' on-disk form: stripped, non-empty entries joined by the delimiter."""
    entries = [entry.strip() for entry in text.split(ENTRY_DELIMITER)]
    return ENTRY_DELIMITER.join(entry for entry in entries if entry)


def memory_files(hermes_home: Path) -> MemoryFiles:
    """The memory files of ``hermes_home``, with the limits of its hermes config."""
    return MemoryFiles(directory=hermes_home / "memories", limits=_configured_limits())


def _configured_limits() -> dict[str, int]:
    from hermes_cli.config import load_config  # lazily: after HERMES_HOME is set

    section = load_config().get("memory") or {}
    if not isinstance(section, dict):
        section = {}
    return {
        "memory": int(section.get("memory_char_limit") or DEFAULT_LIMITS["memory"]),
        "user": int(section.get("user_char_limit") or DEFAULT_LIMITS["user"]),
    }
