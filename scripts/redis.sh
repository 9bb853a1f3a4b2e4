#!/usr/bin/env bash
# A throwaway Redis server for the tests: Debian's redis-server (installed if missing), on a
# free port on 127.0.0.1, its files in DIR, nothing persisted (no RDB snapshots, no AOF).
#
#   scripts/redis.sh start DIR   # prints the URL (redis://127.0.0.1:PORT/0)
#   scripts/redis.sh stop DIR    # stops the server and deletes DIR
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR" >&2; exit 2; }
[ $# = 2 ] || usage
action=$1
dir=$(realpath -m "$2")

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

case $action in
  start)
    if ! command -v redis-server >/dev/null; then
      echo "redis.sh: installing Debian's redis-server" >&2
      as_root apt-get update -qq
      DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq redis-server >/dev/null
    fi
    mkdir -p "$dir"
    # A free port: ask the kernel, and try again if another process took it meanwhile.
    for _ in 1 2 3 4 5; do
      port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
      rm -f "$dir/redis.pid"
      redis-server --bind 127.0.0.1 --port "$port" --dir "$dir" --save "" --appendonly no \
        --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/server.log" \
        --protected-mode yes >/dev/null
      for _ in $(seq 50); do
        if redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null | grep -q PONG; then
          started=1
          break 2
        fi
        sleep 0.1
      done
      [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    done
    [ "${started:-0}" = 1 ] || { tail -n 30 "$dir/server.log" >&2; exit 1; }
    echo "$port" >"$dir/port"
    echo "redis://127.0.0.1:$port/0"
    ;;
  stop)
    if [ -f "$dir/port" ]; then
      redis-cli -h 127.0.0.1 -p "$(cat "$dir/port")" shutdown nosave >/dev/null 2>&1 || true
    fi
    if [ -f "$dir/redis.pid" ]; then
      kill "$(cat "$dir/redis.pid")" 2>/dev/null || true
    fi
    rm -rf "$dir"
    ;;
  *) usage ;;
esac
