"""One frontend build for every test stack: `reflex export` once, copied to each stack.

A stack's app used to build its own frontend (`reflex run --env prod`: compile, bun, vite,
prerender: 30-80 s on this 2-core machine), and a suite starts about ten stacks. The bundle
differs between stacks only in the backend address Reflex bakes into one asset
(`reflex-env-*.js`: `http://localhost:<port>/ping`, `ws://…/_event`, …) and in what the
pages decide when they compile from the environment (`COMPILE_SETTINGS`). So the bundle is
built once per source tree and compile-time setting, for a placeholder port, under a file
lock (both xdist workers and both database runs share it), and each stack gets a copy with
its own port written into that asset; the app then starts the way `reflex run --env prod
--single-port` starts it after its build (tests/support/stack.py).

A build is keyed by the content of everything that goes into it (the package, assets,
rxconfig.py, reflex.lock and the installed Reflex), so an edited page is never served stale.
"""

from __future__ import annotations

import contextlib
import fcntl
import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from importlib.metadata import version
from pathlib import Path
from urllib.parse import urlsplit

from tests.support.processes import ROOT

CACHE = ROOT / ".web-test"  # gitignored
PLACEHOLDER_PORT = "39999"
# What the pages read from the environment when they compile: a stack with another value
# gets a build of its own. None today (the logout button was one, before accounts); a page
# that reads a setting when it compiles must name it here.
COMPILE_SETTINGS: tuple[str, ...] = ()
_SOURCES = ("agent_chat", "assets", "rxconfig.py", "reflex.lock")
_STATIC = Path("build") / "client"
_KEEP_S = 3600  # other builds are removed once they are an hour old


def shareable(env: Mapping[str, str]) -> bool:
    """A bundle built for the placeholder address can serve this stack: its page connects
    over plain http (the app itself, or a test proxy given in REFLEX_API_URL)."""
    api_url = env.get("REFLEX_API_URL")
    return not env.get("REFLEX_DEPLOY_URL") and (not api_url or api_url.startswith("http://"))


def install_frontend(web_dir: Path, port: int, env: Mapping[str, str]) -> None:
    """Put the shared bundle for `env` into `web_dir` (a stack's REFLEX_WEB_WORKDIR), its
    page connecting where Reflex would have pointed it: REFLEX_API_URL, or the app's port."""
    built = _shared_build(env)
    target = web_dir / _STATIC
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(built / _STATIC, target)
    api_url = env.get("REFLEX_API_URL") or f"http://localhost:{port}"
    old, new = f"//localhost:{PLACEHOLDER_PORT}", "//" + urlsplit(api_url).netloc
    assets = sorted((target / "assets").glob("reflex-env-*.js"))
    if not assets:
        raise RuntimeError(f"no reflex-env asset in {target}: has Reflex changed its bundle?")
    for asset in assets:
        text = asset.read_text(encoding="utf-8")
        if old not in text:
            raise RuntimeError(f"{asset} does not hold {old}: has Reflex changed its bundle?")
        asset.write_text(text.replace(old, new), encoding="utf-8")
        # The static files are served precompressed when a sidecar is there: rewrite the
        # .gz; drop the brotli and zstd ones (no compressor for them in Python here), so
        # this tiny asset goes out gzip and never with the placeholder port.
        zipped = asset.with_name(asset.name + ".gz")
        if zipped.exists():
            zipped.write_bytes(gzip.compress(asset.read_bytes(), mtime=0))
        for suffix in (".br", ".zst"):
            asset.with_name(asset.name + suffix).unlink(missing_ok=True)


def client_build(env: Mapping[str, str]) -> Path:
    """The shared bundle's static files (index.html, assets/), built if need be."""
    return _shared_build(env) / _STATIC


def _shared_build(env: Mapping[str, str]) -> Path:
    key = _build_key(env)
    folder = CACHE / key
    CACHE.mkdir(exist_ok=True)
    with _locked(CACHE / f"{key}.lock"):
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)
            _export(folder, env)
            (folder / "done").write_text(time.strftime("%Y-%m-%d %H:%M:%S"), encoding="utf-8")
            _remove_old_builds(keep=key)
    return folder / "web"


def _export(folder: Path, env: Mapping[str, str]) -> None:
    log = folder / "export.log"
    folder.mkdir(parents=True)
    build_env = {
        **env,
        "REFLEX_WEB_WORKDIR": str(folder / "web"),
        "REFLEX_STATES_WORKDIR": str(folder / "states"),
        "REFLEX_BACKEND_PORT": PLACEHOLDER_PORT,
        "REFLEX_API_URL": f"http://localhost:{PLACEHOLDER_PORT}",
        "REFLEX_FRONTEND_PORT": PLACEHOLDER_PORT,
    }
    command = [sys.executable, "-m", "reflex", "export", "--frontend-only", "--no-zip"]
    command += ["--env", "prod", "--loglevel", "warning"]
    with log.open("wb") as out:
        result = subprocess.run(
            command, cwd=ROOT, env=build_env, stdout=out, stderr=subprocess.STDOUT, timeout=900
        )
    if result.returncode != 0 or not (folder / "web" / _STATIC / "index.html").exists():
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"reflex export failed ({result.returncode}):\n{tail}")


def _build_key(env: Mapping[str, str]) -> str:
    digest = hashlib.sha256(f"reflex {version('reflex')}\n".encode())
    for name in COMPILE_SETTINGS:
        digest.update(f"{name}={bool(env.get(name))}\n".encode())
    for path in _source_files():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def _source_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", *_SOURCES],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    files = {ROOT / name for name in listed.decode().split("\0") if name}
    return sorted(path for path in files if path.is_file())


def _remove_old_builds(*, keep: str) -> None:
    now = time.time()
    for entry in CACHE.iterdir():
        if entry.is_dir() and entry.name != keep and now - entry.stat().st_mtime > _KEEP_S:
            shutil.rmtree(entry, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                (CACHE / f"{entry.name}.lock").unlink()


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    with open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def main() -> None:
    """`python -m tests.support.builds`: build the bundles the suite's stacks use (test.sh
    runs it first: it also shows the production frontend builds, as `reflex export` does)."""
    started = time.monotonic()
    folder = _shared_build(dict(os.environ))
    print(f"frontend build {folder.parent.name} ({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
