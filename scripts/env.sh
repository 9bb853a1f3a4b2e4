# Sourced by run.sh and test.sh: the project's tools first on PATH, Reflex kept offline-friendly.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$root/.venv/bin:$root/.tools/node_modules/.bin:$PATH"
export REFLEX_TELEMETRY_ENABLED=false
export REFLEX_CHECK_LATEST_VERSION=false
# Python's bytecode caches (__pycache__/, in .venv/ and the gitignored folders here) on, even where
# the machine's environment turns them off (PYTHONDONTWRITEBYTECODE=1, as on the test machines):
# every process started from here (the app, the bridge, each test worker) would otherwise
# compile every module it imports again. Importing the app took 5.1-6.4 CPU-s without them and
# 2.9-3.2 with them on the 2-core test machine (`python -c "import agent_chat.agent_chat"`).
unset PYTHONDONTWRITEBYTECODE
