#!/usr/bin/env bash
# Set everything up (first time only) and run the whole test suite: lint, a production
# build (`reflex export`, shared by every test stack), then pytest (unit, bridge with the real hermes-agent, browser) on
# SQLite, then on a throwaway PostgreSQL server (scripts/postgres.sh installs Debian's
# postgresql if missing): what uses a database on both, the rest once (see below).
# AGENT_CHAT_TEST_DBS="sqlite" (or "postgresql") runs everything on that one only.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
source scripts/env.sh
ruff check .
ruff format --check .
lint-imports --no-logo
# The production frontend (`reflex export --frontend-only`), once per source tree: every test
# stack serves a copy of it (tests/support/builds.py) instead of building its own.
python -m tests.support.builds

# Which tests run on which database. The browser tests (tests/e2e) take about two thirds of
# a run and the tests that open no database (bridge, reducer and protocol, fake model, pure
# units) most of the rest (`python -m pytest --durations=30`), so running everything on both
# databases spent half the time on what cannot differ. tests/conftest.py marks `db` every test
# that gets a database (a database fixture, or e2e):
# - tests without a database run once, in the first database's run;
# - store, run manager and export tests (`db`) run on every database;
# - the browser tests drive the app, whose database code those tests cover on both: they all
#   run in the last run (PostgreSQL by default, the database day-to-day runs do not use), and
#   the ones marked `every_database` (several writers at once, where SQLite's single-writer
#   lock differs most) on the others too.
# With one database (AGENT_CHAT_TEST_DBS=sqlite or =postgresql) its run takes everything; a
# `-m` given to test.sh replaces this choice in every run.
#
# Each run has two pytest-xdist workers (AGENT_CHAT_TEST_WORKERS; 0 runs in this process): the
# browser tests mostly wait (on streams, on the page), so two share this 2-core machine well.
# `--dist loadfile` keeps each file on one worker, in order (a browser file shares one stack
# and may rely on its order); `--no-loadscope-reorder` hands files out in collection order,
# where tests/conftest.py puts the browser tests last (a worker that ran sync Playwright can no
# longer run asyncio tests; by default xdist hands out the biggest files first). (`loadgroup`
# would group across files, but pytest-xdist 3.8 cannot mark its groups on pytest 9's node
# ids, so it distributes test by test.)
workers=${AGENT_CHAT_TEST_WORKERS:-2}
parallel=()
if [ "$workers" != 0 ]; then
  parallel=(-n "$workers" --dist loadfile --no-loadscope-reorder)
fi
read -r -a databases <<<"${AGENT_CHAT_TEST_DBS:-sqlite postgresql}"
for database in "${databases[@]}"; do
  case $database in
    sqlite | postgresql) ;;
    *)
      echo "test.sh: unknown database '$database' in AGENT_CHAT_TEST_DBS" >&2
      exit 2
      ;;
  esac
done
last=$((${#databases[@]} - 1))
# Every run goes on even when an earlier one fails; the exit status says whether any failed.
failed=""
for i in "${!databases[@]}"; do
  database=${databases[$i]}
  part=()
  if [ "$last" -gt 0 ]; then
    if [ "$i" -eq 0 ]; then
      part=(-m "not e2e or every_database")
    elif [ "$i" -eq "$last" ]; then
      part=(-m "db")
    else
      part=(-m "db and (not e2e or every_database)")
    fi
  fi
  case $database in
    sqlite)
      echo "test.sh: pytest on SQLite${part[1]+ -m \"${part[1]}\"}"
      env -u AGENT_CHAT_TEST_DB_URL python -m pytest -q ${parallel[@]+"${parallel[@]}"} \
        ${part[@]+"${part[@]}"} "$@" ||
        failed="$failed SQLite"
      ;;
    postgresql)
      pg_dir=$(mktemp -d -t agent-chat-pg.XXXXXX)
      trap 'scripts/postgres.sh stop "$pg_dir"' EXIT
      pg_url=$(scripts/postgres.sh start "$pg_dir")
      echo "test.sh: pytest on PostgreSQL${part[1]+ -m \"${part[1]}\"}"
      # Every test makes its own database on this server (tests/support/databases.py).
      AGENT_CHAT_TEST_DB_URL=$pg_url AGENT_CHAT_DB_URL=$pg_url \
        python -m pytest -q ${parallel[@]+"${parallel[@]}"} ${part[@]+"${part[@]}"} "$@" ||
        failed="$failed PostgreSQL"
      ;;
  esac
done
if [ -n "$failed" ]; then
  echo "test.sh: tests failed on:$failed" >&2
  exit 1
fi
