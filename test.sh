#!/usr/bin/env bash
# Set everything up (first time only) and run the whole test suite: lint, a production
# build (`reflex export`), then pytest (unit, bridge with the real hermes-agent, browser).
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
source scripts/env.sh
ruff check .
ruff format --check .
reflex export --no-zip --loglevel warning >/dev/null
python -m pytest -q "$@"
