"""What a workspace checkpoint costs (common/checkpoints.py): a folder of `--files` files
(`--size` bytes each, in 10 subfolders) recorded once, then one file rewritten and recorded
again, then put back (common/checkpoint_restore.py). Medians of `--runs` fresh folders.

The second checkpoint should cost about the change: its bytes (one object) and a delta
manifest of a few hundred bytes; its time a walk of the folder's stats (the stat cache
vouches for the unchanged files) plus hashing one file. The first costs the whole folder.

    python -m benchmarks.checkpoints [--files 1000] [--size 4096] [--runs 5]

The files are written, then the first checkpoint is taken 0.2 s later, as at a run's end
(a run writes its files before it ends); a file written within 100 ms of being hashed is read
once more by the next checkpoint (the stat cache's racy rule), which `--no-pause` shows.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
import uuid
from pathlib import Path

from agent_chat.common.checkpoint_restore import restore
from agent_chat.common.checkpoint_store import store_of
from agent_chat.common.checkpoints import record


def disk_bytes(path: Path) -> int:
    """Bytes of the files under `path` (their sizes, not their blocks)."""
    return sum(
        (Path(top) / name).stat().st_size for top, _, names in os.walk(path) for name in names
    )


def one_run(files: int, size: int, pause: float) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "workspaces"
        chat = str(uuid.uuid4())
        folder = root / chat
        for n in range(files):
            path = folder / f"dir{n % 10}" / f"file{n:04}.txt"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(os.urandom(size // 2).hex().encode()[:size])
        time.sleep(pause)
        store = store_of(root, chat).path

        first = record(root, chat, "1")
        on_disk_1 = disk_bytes(store)

        changed = folder / "dir3" / "file0503.txt"
        changed.write_bytes(os.urandom(size // 2).hex().encode()[:size])
        second = record(root, chat, "2")
        on_disk_2 = disk_bytes(store)

        back = restore(root, chat, "1")
        assert back.written == 1, back
        forth = restore(root, chat, "2")
        assert forth.written == 1, forth
        return {
            "first_ms": first.seconds * 1000,
            "first_added": first.bytes_added,
            "first_read": first.bytes_read,
            "first_disk": on_disk_1,
            "second_ms": second.seconds * 1000,
            "second_added": second.bytes_added,
            "second_read": second.bytes_read,
            "second_disk": on_disk_2 - on_disk_1,
            "manifest_2": second.bytes_added - size,
            "restore_ms": back.seconds * 1000,
            "restore_again_ms": forth.seconds * 1000,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--size", type=int, default=4096)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-pause", action="store_true", help="record at once after writing")
    args = parser.parse_args()
    pause = 0.0 if args.no_pause else 0.2
    results = [one_run(args.files, args.size, pause) for _ in range(args.runs)]

    def med(key: str) -> float:
        return statistics.median(r[key] for r in results)

    total = args.files * args.size
    print(
        f"{args.files} files of {args.size} B ({total / 1e6:.1f} MB), one file changed; "
        f"median of {args.runs}{' (no pause)' if args.no_pause else ''}"
    )
    print(f"{'':34}{'time':>10}{'bytes added':>14}{'bytes read':>13}{'store grew':>13}")
    for label, key in (
        ("first checkpoint (whole folder)", "first"),
        ("one file changed", "second"),
    ):
        print(
            f"{label:34}{med(key + '_ms'):8.1f} ms{med(key + '_added'):14,.0f}"
            f"{med(key + '_read'):13,.0f}{med(key + '_disk'):13,.0f}"
        )
    print(f"  of which the delta manifest: {med('manifest_2'):,.0f} B; the change: {args.size:,} B")
    print(f"restore to the first (one file written): {med('restore_ms'):.1f} ms")
    print(f"restore to the second again:             {med('restore_again_ms'):.1f} ms")


if __name__ == "__main__":
    main()
