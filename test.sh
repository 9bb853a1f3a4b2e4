#!/usr/bin/env bash
# Set everything up (first time only) and run the whole test suite: lint, a production
# build (`reflex export`), then pytest (unit, bridge with the real hermes-agent, browser) twice:
# on SQLite, then on a throwaway PostgreSQL server (scripts/postgres.sh installs Debian's
# postgresql if missing). AGENT_CHAT_TEST_DBS="sqlite" (or "postgresql") runs only one of them.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
source scripts/env.sh
ruff check .
ruff format --check .
lint-imports --no-logo
reflex export --no-zip --loglevel warning >/dev/null

# Both runs go on even when the first fails; the exit status says whether any failed.
failed=""
for database in ${AGENT_CHAT_TEST_DBS:-sqlite postgresql}; do
  case $database in
    sqlite)
      echo "test.sh: pytest on SQLite"
      env -u AGENT_CHAT_TEST_DB_URL python -m pytest -q "$@" || failed="$failed SQLite"
      ;;
    postgresql)
      pg_dir=$(mktemp -d -t agent-chat-pg.XXXXXX)
      trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
      pg_url=$(scripts/postgres.sh start "$pg_dir")
      echo "test.sh: pytest on PostgreSQL"
      # Every test makes its own database on this server (tests/databases.py).
      AGENT_CHAT_TEST_DB_URL=$pg_url AGENT_CHAT_DB_URL=$pg_url python -m pytest -q "$@" ||
        failed="$failed PostgreSQL"
      ;;
    *)
      echo "test.sh: unknown database '$database' in AGENT_CHAT_TEST_DBS" >&2
      exit 2
      ;;
  esac
done
if [ -n "$failed" ]; then
  echo "test.sh: tests failed on:$failed" >&2
  exit 1
fi
