#!/usr/bin/env bash
# Idempotent set-up for a fresh clone: a Python venv with the pinned packages and bun from
# the npm registry (Reflex's own bun download needs GitHub, which is not reachable here).
# Usage: scripts/setup.sh [--dev]   (--dev adds the test tools and Debian's chromium)
set -euo pipefail
cd "$(dirname "$0")/.."

dev=0
[ "${1:-}" = "--dev" ] && dev=1
req=requirements.txt
[ $dev = 1 ] && req=requirements-dev.txt

python=${PYTHON:-}
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null && "$candidate" -c 'import sys; sys.exit(not ((3, 11) <= sys.version_info[:2] < (3, 14)))'; then
      python=$candidate
      break
    fi
  done
fi
[ -n "$python" ] || { echo "setup: Python 3.11-3.13 is required" >&2; exit 1; }

[ -x .venv/bin/python ] || "$python" -m venv .venv

# Reinstall only when the requirement files changed: a stamp of their hash per set. The dev
# set includes the runtime one, so after `--dev` a plain run has nothing to install (and says
# nothing); switching between run.sh and test.sh does not reinstall.
hash_of() { cat "$@" | sha256sum | cut -c1-16; }
base_stamp=.venv/.requirements-$(hash_of requirements.txt)
dev_stamp=.venv/.requirements-dev-$(hash_of requirements.txt requirements-dev.txt)
stamp=$base_stamp
[ $dev = 1 ] && stamp=$dev_stamp
# Packages go in with uv (pinned below, itself from the package index): a fresh venv of the
# dev set took pip 45 s on the 2-core test machine and uv 6 s, the same versions. uv reads
# no pip.conf, so where it cannot install (an index only pip is configured for), pip does.
UV_VERSION=0.13.9
install() {
  # `uv --version` says "uv 0.13.9 (x86_64-unknown-linux-gnu)": its second word is the version.
  if [ "$(.venv/bin/uv --version 2>/dev/null | cut -d' ' -f2)" != "$UV_VERSION" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "uv==$UV_VERSION" 2>/dev/null ||
      true
  fi
  if [ -x .venv/bin/uv ] && .venv/bin/uv pip install --quiet --python .venv/bin/python "$@"; then
    return
  fi
  echo "setup: uv could not install, pip does" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "$@"
}

if [ ! -e "$stamp" ] && { [ $dev = 1 ] || [ ! -e "$dev_stamp" ]; }; then
  echo "setup: installing Python packages from $req"
  install -r "$req"
  for old in .venv/.requirements-*; do
    [ "$old" = "$base_stamp" ] || [ "$old" = "$dev_stamp" ] || rm -f "$old"
  done
  touch "$stamp"
  if [ $dev = 1 ]; then touch "$base_stamp"; fi
fi

# The project itself, without dependencies (installed above): the `agent-chat` command.
if [ ! -x .venv/bin/agent-chat ]; then
  echo "setup: installing the project (the agent-chat command)"
  install --no-deps -e .
fi

if [ ! -x .tools/node_modules/.bin/bun ]; then
  command -v npm >/dev/null || { echo "setup: npm (Node.js) is required to fetch bun" >&2; exit 1; }
  echo "setup: installing bun from the npm registry into .tools/"
  npm install --silent --prefix .tools --no-audit --no-fund --save-exact bun@1.4.4
fi

# Reflex's first `run` makes .web/ and then says "Run `uv run reflex run` to start the app",
# which is not how this app starts (./run.sh): make it here, quietly (about a second).
if [ ! -d .web ]; then
  out=$(PATH="$PWD/.venv/bin:$PWD/.tools/node_modules/.bin:$PATH" REFLEX_TELEMETRY_ENABLED=false \
    REFLEX_CHECK_LATEST_VERSION=false .venv/bin/python -m reflex init --no-agents </dev/null 2>&1) ||
    { echo "$out" >&2; exit 1; }
fi

# bubblewrap isolates the Workspace profile's commands (agent_chat/bridge/sandbox.py): the
# app and the suite both want it; without root or sudo it is only said.
if ! command -v bwrap >/dev/null; then
  if command -v apt-get >/dev/null && { [ "$(id -u)" = 0 ] || sudo -n true 2>/dev/null; }; then
    echo "setup: installing Debian's bubblewrap (the sandbox of Workspace commands)"
    sudo_cmd=""
    [ "$(id -u)" = 0 ] || sudo_cmd=sudo
    $sudo_cmd apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq bubblewrap >/dev/null
  else
    echo "setup: bubblewrap is missing; Workspace commands would run without their sandbox" \
      "(Debian/Ubuntu: sudo apt install bubblewrap)" >&2
  fi
fi

# chromium-headless-shell runs the browser tests, chromium (what users run) the benchmarks.
if [ $dev = 1 ] && ! { command -v chromium && command -v chromium-headless-shell; } >/dev/null; then
  echo "setup: installing Debian's chromium and chromium-headless-shell for the browser tests"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq chromium chromium-headless-shell \
    >/dev/null
fi

if [ $dev = 1 ] && ! command -v redis-server >/dev/null; then
  echo "setup: installing Debian's redis-server for the several-workers tests"
  sudo_cmd=""
  [ "$(id -u)" = 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq redis-server >/dev/null
fi
