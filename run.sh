#!/usr/bin/env bash
# Set everything up (first time only) and run Agent Chat: the bridge and the web app.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh
source scripts/env.sh
exec python -m agent_chat.launch.serve "$@"
