"""The repository explains itself: no code, test, script, asset or document points at a
document a reader of the repository cannot open (a design file, a specification seed, an
issue tracker's number, a folder beside the repository). benchmarks/RESULTS.md is a dated
log of measurements and keeps the headings it was written with."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = re.compile(
    r"DESIGN\.md|\bseed 0\d\d\b|\bseeds/|\b[Ii]ssue \d+|hermes-agent-notes|reflex-notes|\.\./shared/"
)
KEPT = {"benchmarks/RESULTS.md", "tests/test_self_contained.py"}
TEXT = (".py", ".md", ".sh", ".toml", ".jsx", ".js", ".css", ".html", ".ini", ".cfg", ".txt")


def pointers_outside(text: str) -> list[str]:
    return [m.group(0) for m in OUTSIDE.finditer(text)]


def test_nothing_points_outside_the_repository() -> None:
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    found = []
    for name in tracked:
        path = ROOT / name
        if name in KEPT or not name.endswith(TEXT) or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pointers_outside(line):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "say what is meant instead of pointing outside:\n" + "\n".join(found)


def test_the_pointers_it_looks_for_are_found() -> None:
    assert pointers_outside("as DESIGN.md §3 says (issue 36 §2, seed 000; ../shared/tools)") == [
        "DESIGN.md",
        "issue 36",
        "seed 000",
        "../shared/",
    ]
    assert pointers_outside("the tissue 3 and seeds of 12 reissue nothing") == []
