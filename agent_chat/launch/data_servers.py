"""PostgreSQL and Redis for the scaled set-up on one machine (`agent_chat/launch/scaled.py`): Debian's
`postgresql` and `redis-server` (installed with apt-get if missing, as scripts/postgres.sh and
scripts/redis.sh do for the tests), run in the foreground as children of the launcher, their
data kept in a folder across restarts (the test scripts' servers are throwaway: fsync off,
deleted at stop).

- PostgreSQL: a cluster in `<dir>/pgdata` made by `initdb` on the first start (password in
  `<dir>/password`, mode 0600; as root the cluster belongs to the `postgres` user), listening
  on 127.0.0.1 only, database `agent_chat` made once. Stopped with SIGINT (fast shutdown:
  committed data is on disk).
- Redis: `redis-server` with its RDB file in `<dir>` (`--save` points, and a save at
  shutdown on SIGTERM), on 127.0.0.1 only. Run streams and Reflex's states are short-lived;
  keeping them means a restart within minutes loses nothing a tab was following.

Each server runs in its own process group (the launcher stops them in order, after the app).
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("agent_chat.launch.serve")
DATABASE = "agent_chat"


def _as_root(args: list[str]) -> list[str]:
    return args if os.geteuid() == 0 else ["sudo", *args]


def apt_install(package: str) -> None:
    """`apt-get install` Debian's `package` (as the test scripts do when it is missing)."""
    log.info("installing Debian's %s", package)
    subprocess.run(_as_root(["apt-get", "update", "-qq"]), check=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    cmd = _as_root(["apt-get", "install", "-y", "-qq", package])
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)


def port_free(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


def port_answers(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, port)) == 0


@dataclass
class Server:
    """A server process in its own process group; `stop_signal` ends it cleanly."""

    name: str
    process: subprocess.Popen
    stop_signal: int = signal.SIGTERM

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float = 30) -> None:
        stop_group(self.process, self.stop_signal, timeout_s)


def stop_group(process: subprocess.Popen, signum: int, timeout_s: float) -> None:
    """Send `signum` to the process group `process` leads; SIGKILL the group after
    `timeout_s`. Every process of the group is gone when this returns (or reported)."""
    pgid = process.pid
    if process.poll() is None:
        _killpg(pgid, signum)
        try:
            process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("pid %d did not stop within %.0f s: killing its group", pgid, timeout_s)
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)  # the leader is gone; its group's other processes end too
    if _group_alive(pgid):
        _killpg(pgid, signal.SIGKILL)
    if process.poll() is None:
        process.wait(5)


def _killpg(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signum)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def spawn(
    args: list[str], logfile: Path | None, *, env: dict[str, str] | None = None, cwd: str = "/"
) -> subprocess.Popen:
    """Start `args` in a process group of its own (a Ctrl-C in the terminal reaches only the
    launcher, which stops everything in order), its output appended to `logfile` (None: the
    launcher's own output)."""
    if logfile is None:
        return subprocess.Popen(
            args, stdin=subprocess.DEVNULL, start_new_session=True, cwd=cwd, env=env
        )
    logfile.parent.mkdir(parents=True, exist_ok=True)
    with logfile.open("ab") as out:
        return subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=cwd,
            env=env,
        )


# ---- PostgreSQL ------------------------------------------------------------------------------


def postgres_bindir() -> Path:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=lambda p: int(p.parts[-3]))
    if not found:
        apt_install("postgresql")
        return postgres_bindir()
    return found[-1].parent


def _as_owner(args: list[str]) -> list[str]:
    """initdb and postgres refuse to run as root: as root, they run as `postgres`."""
    return ["runuser", "-u", "postgres", "--", *args] if os.geteuid() == 0 else args


def start_postgres(folder: Path, port: int, logfile: Path) -> tuple[Server, str]:
    """The kept cluster in `folder` (made on the first start), serving on 127.0.0.1:`port`;
    returns the server and the SQLAlchemy URL of its database `agent_chat`."""
    bindir = postgres_bindir()
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o700)
    data, password_file = folder / "pgdata", folder / "password"
    fresh = not (data / "PG_VERSION").exists()
    if fresh:
        shutil.rmtree(data, ignore_errors=True)  # a half-made cluster from a failed first start
        password_file.write_text(secrets.token_hex(16) + "\n")
        password_file.chmod(0o600)
        if os.geteuid() == 0:
            shutil.chown(folder, "postgres", "postgres")
            shutil.chown(password_file, "postgres", "postgres")
            reach = subprocess.run(_as_owner(["test", "-r", str(password_file)]), cwd="/")
            if reach.returncode != 0:
                raise SystemExit(
                    f"the user postgres cannot reach {folder} (a parent folder is closed to "
                    "it): choose a data folder it can reach with --data"
                )
        initdb = [str(bindir / "initdb"), f"--pgdata={data}", "--username=postgres"]
        initdb += [f"--pwfile={password_file}", "--auth-local=trust", "--auth-host=scram-sha-256"]
        initdb += ["--encoding=UTF8", "--locale=C.UTF-8"]
        done = subprocess.run(_as_owner(initdb), capture_output=True, text=True, cwd="/")
        if done.returncode != 0:
            raise SystemExit(f"initdb failed:\n{done.stdout}{done.stderr}")
        log.info("PostgreSQL: new cluster in %s", data)
    if not port_free(port):
        raise SystemExit(f"port {port} (PostgreSQL) is in use: give another with --pg-port")
    password = password_file.read_text().strip()
    cmd = [str(bindir / "postgres"), "-D", str(data), "-c", "listen_addresses=127.0.0.1"]
    cmd += ["-c", f"port={port}", "-c", f"unix_socket_directories={folder}"]
    cmd += ["-c", "max_connections=200"]
    if os.geteuid() == 0:
        logfile.parent.mkdir(parents=True, exist_ok=True)
        logfile.touch()
        shutil.chown(logfile, "postgres", "postgres")
    server = Server("postgresql", spawn(_as_owner(cmd), logfile), signal.SIGINT)
    psql = [str(bindir / "psql"), f"--host={folder}", f"--port={port}", "--username=postgres"]
    psql += ["--dbname=postgres", "--quiet", "--no-psqlrc", "--tuples-only", "--command"]
    deadline = time.monotonic() + 60
    while True:
        if not server.alive():
            raise SystemExit(f"PostgreSQL exited (code {server.process.returncode}): see {logfile}")
        ready = subprocess.run(
            _as_owner([*psql, "SELECT 1"]), capture_output=True, text=True, cwd="/"
        )
        if ready.returncode == 0:
            break
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit(f"PostgreSQL did not answer within 60 s: see {logfile}")
        time.sleep(0.3)
    query = f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"
    exists = subprocess.run(_as_owner([*psql, query]), capture_output=True, text=True, cwd="/")
    if exists.stdout.strip() != "1":
        subprocess.run(_as_owner([*psql, f"CREATE DATABASE {DATABASE}"]), check=True, cwd="/")
    log.info("PostgreSQL ready on 127.0.0.1:%d (data in %s)", port, data)
    return server, f"postgresql+psycopg://postgres:{password}@127.0.0.1:{port}/{DATABASE}"


# ---- Redis -----------------------------------------------------------------------------------


def start_redis(folder: Path, port: int, logfile: Path) -> tuple[Server, str]:
    """redis-server on 127.0.0.1:`port`, its RDB file kept in `folder`; the server and its URL
    (database 0: the caller picks others with a different path)."""
    binary = shutil.which("redis-server")
    if binary is None:
        apt_install("redis-server")
        binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not port_free(port):
        raise SystemExit(f"port {port} (Redis) is in use: give another with --redis-port")
    folder.mkdir(parents=True, exist_ok=True)
    cmd = [binary, "--bind", "127.0.0.1", "--port", str(port), "--dir", str(folder)]
    cmd += ["--dbfilename", "dump.rdb", "--save", "300 1 60 1000", "--appendonly", "no"]
    cmd += ["--daemonize", "no", "--protected-mode", "yes"]
    logfile.parent.mkdir(parents=True, exist_ok=True)
    server = Server("redis", spawn(cmd, logfile), signal.SIGTERM)
    deadline = time.monotonic() + 30
    while not _redis_pong(port):
        if not server.alive():
            raise SystemExit(
                f"redis-server exited (code {server.process.returncode}): see {logfile}"
            )
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit(f"redis-server did not answer within 30 s: see {logfile}")
        time.sleep(0.1)
    log.info("Redis ready on 127.0.0.1:%d (data in %s)", port, folder)
    return server, f"redis://127.0.0.1:{port}"


def _redis_pong(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False
