#!/usr/bin/env bash
# A throwaway PostgreSQL server for the tests: Debian's postgresql (installed if missing), a
# fresh cluster in DIR owned by a non-root user, listening on 127.0.0.1 only, on a free port.
#
#   scripts/postgres.sh start DIR   # prints the SQLAlchemy URL of its database `agent_chat`
#   scripts/postgres.sh stop DIR    # stops the server and deletes DIR
#
# Tuned for tests, not for data: fsync and synchronous commit are off.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# = 2 ] || usage
action=$1
dir=$(realpath -m "$2")
# The tools run as `postgres`, which may not be allowed into the current folder.
cd /

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

bindir() {
  local found
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
  [ -n "$found" ] && [ -x "$found/initdb" ] && echo "$found"
}

# initdb and postgres refuse to run as root: as root, the cluster belongs to `postgres`.
run_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

case $action in
  start)
    if ! bin=$(bindir); then
      echo "postgres.sh: installing Debian's postgresql" >&2
      as_root apt-get update -qq
      DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql >/dev/null
      bin=$(bindir) || { echo "postgres.sh: no initdb after installing postgresql" >&2; exit 1; }
    fi
    mkdir -p "$dir"
    chmod 700 "$dir"
    password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
    printf '%s\n' "$password" >"$dir/password"
    if [ "$(id -u)" = 0 ]; then
      chown -R postgres: "$dir"
      runuser -u postgres -- test -r "$dir/password" ||
        { echo "postgres.sh: user postgres cannot reach $dir (try a folder in /tmp)" >&2; exit 1; }
    fi
    run_as_owner "$bin/initdb" --pgdata="$dir/data" --username=postgres --pwfile="$dir/password" \
      --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 --locale=C.UTF-8 \
      >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; exit 1; }
    # A free port: ask the kernel, and try again if another process took it meanwhile.
    for _ in 1 2 3 4 5; do
      port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      options="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir"
      options="$options -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
      options="$options -c max_connections=300 -c shared_buffers=64MB"
      if run_as_owner "$bin/pg_ctl" --pgdata="$dir/data" --log="$dir/server.log" --wait \
        --timeout=60 --options="$options" start >/dev/null; then
        started=1
        break
      fi
      started=0
    done
    [ "${started:-0}" = 1 ] || { tail -n 30 "$dir/server.log" >&2; exit 1; }
    run_as_owner "$bin/psql" --host="$dir" --port="$port" --username=postgres --dbname=postgres \
      --quiet --no-psqlrc --command="CREATE DATABASE agent_chat" >/dev/null
    echo "postgresql+psycopg://postgres:$password@127.0.0.1:$port/agent_chat"
    ;;
  stop)
    if [ -f "$dir/data/postmaster.pid" ] && bin=$(bindir); then
      run_as_owner "$bin/pg_ctl" --pgdata="$dir/data" --mode=immediate --wait stop >/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
