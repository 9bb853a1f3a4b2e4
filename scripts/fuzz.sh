#!/usr/bin/env bash
# The long run of API fuzzing: schemathesis against the real stack, as the
# suite's tests/api/test_schemathesis.py starts it (fake model, bridge with hermes-agent, the
# app behind its login, a personal API token), for a given time (600 s) in rounds of fresh
# random seeds, every operation, all phases (examples, coverage, fuzzing, stateful along the
# document's links), all checks (tests/support/fuzz.py says which one it replaces and why).
# Prints each round's seed, its test cases and every failure with its curl reproduction;
# exits 1 if any round found one. Heavy: run it alone, not beside the test suite.
#
#   scripts/fuzz.sh                        # ten minutes on SQLite
#   scripts/fuzz.sh --seconds 120          # shorter
#   scripts/fuzz.sh --seed 123 --round 150 # replay one round's seed
#   AGENT_CHAT_TEST_DBS=postgresql scripts/fuzz.sh   # on a throwaway PostgreSQL
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
# The frontend build the stack serves (cached per source tree; tests/support/builds.py).
python -m tests.support.builds >/dev/null
pg_dir=""
cleanup() { if [ -n "$pg_dir" ]; then scripts/postgres.sh stop "$pg_dir"; fi; }
trap cleanup EXIT
case ${AGENT_CHAT_TEST_DBS:-sqlite} in
  sqlite) unset AGENT_CHAT_TEST_DB_URL ;;
  postgresql)
    pg_dir=$(mktemp -d -t agent-chat-pg.XXXXXX)
    pg_url=$(scripts/postgres.sh start "$pg_dir")
    export AGENT_CHAT_TEST_DB_URL=$pg_url AGENT_CHAT_DB_URL=$pg_url
    ;;
  *)
    echo "fuzz.sh: AGENT_CHAT_TEST_DBS is sqlite or postgresql" >&2
    exit 2
    ;;
esac
python -m tests.support.fuzz "$@"
