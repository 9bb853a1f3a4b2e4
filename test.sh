#!/usr/bin/env bash
# Set everything up (first time only) and run the whole test suite: lint, a production build
# (`reflex export`, shared by every test stack, made while the first tests run) and pytest
# (unit, bridge with the real hermes-agent, browser) on SQLite and, at the same time, on a
# throwaway PostgreSQL server (scripts/postgres.sh installs Debian's postgresql if missing):
# what uses a database on both, the rest once (see below).
# AGENT_CHAT_TEST_DBS="sqlite" (or "postgresql") runs everything on that one only.
set -euo pipefail
cd "$(dirname "$0")"
scripts/setup.sh --dev
source scripts/env.sh
ruff check .
ruff format --check .
lint-imports --no-logo

# Which tests run on which database. The browser tests (tests/e2e) take about two thirds of
# a run and the tests that open no database (bridge, reducer and protocol, fake model, pure
# units) most of the rest (`python -m pytest --durations=30`), so running everything on both
# databases spent half the time on what cannot differ. tests/conftest.py marks `db` every test
# that gets a database (a database fixture, or e2e), and gives each browser file one of the
# databases (`browser_first`: the first run's; BROWSER_ON_FIRST in tests/support/selection.py):
# - tests without a database run once, in the first database's run;
# - store, run manager and export tests (`db`) run on every database;
# - each browser file drives the app on one database, half of them (by time) on each, so the
#   app's database code is driven through the page on both; those marked `every_database`
#   (several writers at once, where SQLite's single-writer lock differs most) run on both.
# With one database (AGENT_CHAT_TEST_DBS=sqlite or =postgresql) its run takes everything; a
# `-m` given to test.sh replaces this choice in every run.
#
# The database runs go at once (AGENT_CHAT_TEST_SERIAL=1: one after the other), each with two
# pytest-xdist workers (AGENT_CHAT_TEST_WORKERS; 0 runs in its pytest process): the browser
# tests mostly wait (on streams, on the page), so four share this 2-core machine better than
# two did (measured in README). Each run's output is shown when it ends, whole.
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
work=$(mktemp -d -t agent-chat-tests.XXXXXX)
pg_dir=""
build_pid=""
cleanup() {
  if [ -n "$build_pid" ]; then kill "$build_pid" 2>/dev/null || true; fi
  if [ -n "$pg_dir" ]; then scripts/postgres.sh stop "$pg_dir"; fi
  rm -rf "$work"
}
trap cleanup EXIT
# The production frontend (`reflex export --frontend-only`), once per source tree: every test
# stack serves a copy of it (tests/support/builds.py) instead of building its own. Built while
# PostgreSQL starts and the tests without a browser run (those go first): the first stack waits
# for it on the build's file lock (15 s on a fresh clone here, more with an empty bun cache).
python -m tests.support.builds >"$work/build.log" 2>&1 &
build_pid=$!
case " ${databases[*]} " in
  *" postgresql "*)
    # Its own folder: the server runs as user postgres, who cannot enter $work (root's, 700).
    pg_dir=$(mktemp -d -t agent-chat-pg.XXXXXX)
    # Every test makes its own database on this server (tests/support/databases.py).
    pg_url=$(scripts/postgres.sh start "$pg_dir")
    ;;
esac

# One database's run: its part of the suite (above) on its own pytest (own tmp folder).
run_part() {
  local i=$1 database=${databases[$1]}
  shift
  local part=()
  if [ "$last" -gt 0 ]; then
    if [ "$i" -eq 0 ]; then
      part=(-m "not e2e or every_database or browser_first")
    elif [ "$i" -eq "$last" ]; then
      part=(-m "db and (not e2e or every_database or not browser_first)")
    else
      part=(-m "db and (not e2e or every_database)")
    fi
  fi
  local name database_env
  case $database in
    sqlite) name=SQLite database_env=(-u AGENT_CHAT_TEST_DB_URL) ;;
    postgresql) name=PostgreSQL database_env=("AGENT_CHAT_TEST_DB_URL=$pg_url" "AGENT_CHAT_DB_URL=$pg_url") ;;
  esac
  echo "test.sh: pytest on $name${part[1]+ -m \"${part[1]}\"}"
  env "${database_env[@]}" python -m pytest -q --basetemp "$work/tmp-$database" \
    ${parallel[@]+"${parallel[@]}"} ${part[@]+"${part[@]}"} "$@"
}

# Every run goes on even when another fails; the exit status says whether any failed.
failed=""
if [ "$last" -gt 0 ] && [ "${AGENT_CHAT_TEST_SERIAL:-0}" != 1 ]; then
  pids=()
  for i in "${!databases[@]}"; do
    run_part "$i" "$@" >"$work/${databases[$i]}.log" 2>&1 &
    pids+=($!)
  done
  echo "test.sh: the ${databases[*]} runs started at once; each run's output follows when it ends"
  for i in "${!databases[@]}"; do
    status=0
    wait "${pids[$i]}" || status=$?
    cat "$work/${databases[$i]}.log"
    [ "$status" = 0 ] || failed="$failed ${databases[$i]}"
  done
else
  for i in "${!databases[@]}"; do
    run_part "$i" "$@" || failed="$failed ${databases[$i]}"
  done
fi
build_status=0
wait "$build_pid" || build_status=$?
build_pid=""
cat "$work/build.log"
[ "$build_status" = 0 ] || failed="$failed (the frontend build)"
if [ -n "$failed" ]; then
  echo "test.sh: tests failed on:$failed" >&2
  exit 1
fi
