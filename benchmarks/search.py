"""Full-text search at 100,000 and 1,000,000 messages, and the sidebar's first
page at 100,000 conversations, server side, on SQLite and PostgreSQL.

Synthetic data (benchmarks/search_data.py: conversations of 10 messages of 20–60 words from
a 30,000-word Zipf vocabulary, one message in 10 with a Chinese sentence, 1 % archived),
bulk loaded into a migrated database with the full-text index built after the rows, as the
migration builds it for existing rows; then 20 conversations are pinned and 500 filed in 20
folders through the app's store functions.

Timed: `agent_chat.db.search.search(query)`, the whole store function as the sidebar calls
it (index query, one result per conversation, rows, snippets), each call in its own
transaction, for typical two-word queries: two words of middle frequency (ranks 100–3,000),
the second one as typed, i.e. a prefix. p50/p95 over N distinct queries after a warm-up.
Also reported: a rare word, a very common word, a quoted phrase, a 2- and a 4-character
Chinese query. The sidebar: what `SidebarState.refresh` reads on the server
(`sidebar_listing(limit=50)`, `open_pauses_by_session`, each in its own transaction, and the
rows made of them), p95, with all 20 folders open and with 17 of them folded.
Targets: search p95 ≤ 50 ms; sidebar first page ≤ 50 ms. Last, a snippet's CPU for answers of
50, 2,000 and 15,000 words, beside the token walk that the highlighter replaced.

Run: python benchmarks/search.py [--quick] [--sizes 100000,1000000] [--db sqlite,postgresql]
     [--pg-url URL] [--repeat N] [--data-dir DIR] [--ab] [--no-sidebar] [--load-only]
--ab: on PostgreSQL each query is also timed as the plain query `search_vector @@ q` (the
prefix lookup of migration 9d5e7f1a3b6c off), alternately, and both must find the same.
Without --pg-url a throwaway PostgreSQL server is started (scripts/postgres.sh). With
--data-dir the loaded databases are kept (SQLite files in DIR, PostgreSQL databases
`bench_search_<size>` on the --pg-url server) and reused by the next run.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import search_data as data  # noqa: E402

from agent_chat.db import folders, pauses, search_text  # noqa: E402
from agent_chat.db import search as search_module  # noqa: E402
from agent_chat.db.engine import make_engine, migrate, open_session  # noqa: E402
from agent_chat.db.folders import sidebar_listing  # noqa: E402
from agent_chat.db.search import search  # noqa: E402
from agent_chat.display.rows import session_row  # noqa: E402


def organise(engine, conversations: int) -> None:
    """20 pinned conversations and 500 in 20 folders, as a person would have."""
    rng = random.Random(7)
    with open_session(engine) as session:
        ids = [
            folders.create_folder(session=session, user_id=h.BENCH_OWNER, name=f"Folder {i}").id
            for i in range(20)
        ]
        picks = rng.sample(range(1, conversations + 1), 520)
        for n, s in enumerate(picks):
            chat_uuid = data.session_uuid(s)
            if n < 20:
                folders.set_pinned(
                    session=session, user_id=h.BENCH_OWNER, session_uuid=chat_uuid, pinned=True
                )
            else:
                folders.move_session(
                    session=session,
                    user_id=h.BENCH_OWNER,
                    session_uuid=chat_uuid,
                    folder_id=ids[n % 20],
                )


def timed(engine, fn, **kwargs) -> tuple[float, int]:
    t0 = time.perf_counter()
    with open_session(engine) as session:
        result = fn(session=session, user_id=h.BENCH_OWNER, **kwargs)
    return (time.perf_counter() - t0) * 1000, len(result)


def server_cpu_s(engine) -> float:
    """CPU seconds used so far by the PostgreSQL backends of this database (0 on SQLite):
    with the process's own CPU time, the work done, whatever the other processes' load."""
    name = engine.url.database
    if engine.dialect.name == "sqlite" or not name:
        return 0.0
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            cmdline = (stat.parent / "cmdline").read_bytes().replace(b"\0", b" ")
            if b"postgres: " in cmdline and f" {name} ".encode() in cmdline:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        except OSError:
            continue
    return total


class Cpu:
    """This process's CPU time per call and the PostgreSQL server's for the whole batch."""

    def __init__(self, engine):
        self.engine, self.calls = engine, []
        self.server0, self.server = server_cpu_s(engine), 0.0

    def call(self, fn, *args, **kwargs):
        t0 = time.process_time()
        out = fn(*args, **kwargs)
        self.calls.append((time.process_time() - t0) * 1000)
        return out

    def summary(self, server_per_call: float | None = None) -> str:
        """`server_per_call`: measured by the caller (--ab: around each call, the batch
        figure would mix both variants)."""
        if server_per_call is None:
            server_per_call = (server_cpu_s(self.engine) - self.server0) * 1000 / len(self.calls)
        self.server = server_per_call
        out = (
            f"CPU of this process per call p50 {h.percentile(self.calls, 50):.1f} ms, "
            f"p95 {h.percentile(self.calls, 95):.1f} ms"
        )
        if self.engine.dialect.name != "sqlite":
            out += f"; PostgreSQL server CPU per call (mean) {self.server:.1f} ms"
        return out


def queries(words: list[str], count: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(count):
        first, second = rng.sample(words[100:3000], 2)
        out.append(f"{first} {second[: max(3, len(second) - 1)]}")  # the last word as typed
    return out


@contextmanager
def plain_query():
    """PostgreSQL's search without the prefix lookup: the plain `search_vector @@ q`, as before
    migration 9d5e7f1a3b6c (for --ab; the results are the same)."""
    saved = search_module.pg_prefix_lookup
    search_module.pg_prefix_lookup = lambda terms: None
    try:
        yield
    finally:
        search_module.pg_prefix_lookup = saved


def measure(engine, words: list[str], repeat: int, label: str, report: h.Report, ab: bool) -> dict:
    """The app's search; with `ab` (PostgreSQL) each query also as the plain query, in turn
    (ABBA), so both variants meet the same machine speed."""
    variants = {"": nullcontext}
    if ab and engine.dialect.name != "sqlite":
        variants["plain query: "] = plain_query
    rng = random.Random(99)
    for q in queries(words, 5, random.Random(1)):  # warm the caches
        for variant in variants.values():
            with variant():
                timed(engine, search, query=q)
    times = {v: [] for v in variants}
    found = {v: [] for v in variants}
    cpu = {v: Cpu(engine) for v in variants}
    server = {v: [] for v in variants}
    for i, q in enumerate(queries(words, repeat, rng)):
        order = list(variants) if i % 2 == 0 else list(variants)[::-1]
        for v in order:
            with variants[v]():
                s0 = server_cpu_s(engine) if ab else 0.0
                ms, n = cpu[v].call(timed, engine, search, query=q)
                server[v].append((server_cpu_s(engine) - s0) * 1000 if ab else 0.0)
            times[v].append(ms)
            found[v].append(n)
    if len(variants) > 1:
        assert found[""] == found["plain query: "], "the two variants found different results"
    extra = {
        "rare word": words[25_000],
        "very common word": words[3],
        "quoted phrase": f'"{words[10]} {words[11]}"',
        "Chinese, 2 characters": "学习",
        "Chinese, 4 characters": "机器数据",
    }
    figures = {}
    for v, variant in variants.items():
        p50, p95 = h.percentile(times[v], 50), h.percentile(times[v], 95)
        # --ab: the server's CPU read around each call (10 ms ticks: a mean over many calls)
        summary = cpu[v].summary(sum(server[v]) / len(server[v]) if ab else None)
        report.add(
            f"{label}: {v}search p95, two-word query",
            f"{p95:.1f} ms",
            "≤ 50 ms",
            p95 <= 50,
            f"p50 {p50:.1f} ms, max {max(times[v]):.1f} ms over {repeat} queries; "
            f"conversations found per query: median {h.median(found[v]):.0f}, "
            f"max {max(found[v])}; " + summary,
        )
        key = "plain_" if v else ""
        figures |= {f"{key}p50_ms": p50, f"{key}p95_ms": p95}
        figures |= {f"{key}cpu_p50_ms": h.percentile(cpu[v].calls, 50)}
        figures |= {f"{key}cpu_p95_ms": h.percentile(cpu[v].calls, 95)}
        figures |= {f"{key}server_cpu_mean_ms": cpu[v].server}
        for name, q in extra.items():
            with variant():
                runs = [timed(engine, search, query=q) for _ in range(max(5, repeat // 10))]
            ms = h.median([r[0] for r in runs])
            report.add(
                f"{label}: {v}{name}", f"{ms:.1f} ms", "report", None, f"{q!r}, {runs[0][1]} found"
            )
            figures[f"{key}{name}"] = ms
    return figures


def sidebar_read(engine) -> tuple[float, int]:
    """What SidebarState.refresh reads: the listing, the open questions, the rows."""
    t0 = time.perf_counter()
    with open_session(engine) as session:
        listed = sidebar_listing(
            session=session, user_id=h.BENCH_OWNER, limit=50, include_archived=False
        )
    with open_session(engine) as session:
        pauses.open_pauses_by_session(session=session, user_id=h.BENCH_OWNER)
    chats = listed.pinned + listed.unfiled[:50]
    for folder in listed.folders:
        chats += folder.sessions
    rows = [session_row(c) for c in chats]
    return (time.perf_counter() - t0) * 1000, len(rows)


def set_folded(engine, folded: int) -> None:
    with open_session(engine) as session:
        for n, folder in enumerate(folders.list_folders(session=session, user_id=h.BENCH_OWNER)):
            folders.set_collapsed(
                session=session, user_id=h.BENCH_OWNER, folder_id=folder.id, collapsed=n < folded
            )


def sidebar(engine, repeat: int, label: str, report: h.Report) -> dict:
    out = {}
    for folded in (0, 17):
        set_folded(engine, folded)
        sidebar_read(engine)
        cpu = Cpu(engine)
        runs = [cpu.call(sidebar_read, engine) for _ in range(repeat)]
        times = [ms for ms, _ in runs]
        p50, p95 = h.percentile(times, 50), h.percentile(times, 95)
        name = "all 20 folders open" if folded == 0 else "17 of 20 folders folded"
        report.add(
            f"{label}: sidebar first page, {name}",
            f"{p95:.1f} ms",
            "≤ 50 ms",
            p95 <= 50,
            f"p95 (p50 {p50:.1f} ms) of {repeat}: 20 pins, 20 folders of 25, {runs[0][1]} rows; "
            + cpu.summary(),
        )
        out[f"sidebar_{folded}_folded_p50_ms"] = p50
        out[f"sidebar_{folded}_folded_p95_ms"] = p95
    set_folded(engine, 0)
    return out


def long_snippets(report: h.Report, rounds: int = 5) -> None:
    """A snippet's cost by answer length (the data's messages are 20–60 words; answers are
    often thousands): the app's highlighter beside the walk over every token it replaced
    (`search_text._exact_spans`), in turn, CPU per snippet."""
    rng = random.Random(5)
    vocab = data.vocabulary(rng)
    terms = search_text.parse_query("needle hays")
    walk, regex = search_text._exact_spans, search_text._match_spans
    for words in (50, 2_000, 15_000):
        text = " ".join(rng.choice(vocab) for _ in range(words)) + " a needle in the haystack"
        cost: dict[str, list[float]] = {"walk": [], "regex": []}
        for _ in range(rounds):
            for name, spans in (("walk", walk), ("regex", regex)):
                search_text._match_spans = spans  # snippet() looks it up on each call
                started = time.process_time()
                for _ in range(20):
                    search_text.snippet(text, terms)
                cost[name].append((time.process_time() - started) / 20 * 1000)
        search_text._match_spans = regex
        old, new = h.median(cost["walk"]), h.median(cost["regex"])
        report.add(
            f"snippet of a {words:,}-word answer, CPU",
            f"{new:.3f} ms",
            detail=f"the token walk it replaced: {old:.3f} ms ({old / new:.1f}×), median of {rounds}",
        )


def start_postgres(tmp: Path) -> str:
    script = h.ROOT / "scripts" / "postgres.sh"
    out = subprocess.run([str(script), "start", str(tmp / "pg")], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return out.stdout.strip()


def pg_database(server: str, name: str, fresh: bool) -> tuple[str, bool]:
    """The URL of database `name` on `server` and whether it holds a finished load (a kept
    one); `fresh`: drop it first."""
    from sqlalchemy import create_engine
    from sqlalchemy.engine import make_url

    url = make_url(server)
    target = url.set(database=name).render_as_string(hide_password=False)
    admin = create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        exists = connection.exec_driver_sql(
            "SELECT 1 FROM pg_database WHERE datname = %(n)s", {"n": name}
        ).first()
        if exists and not fresh and loaded(target):
            admin.dispose()
            return target, True
        connection.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.exec_driver_sql(f'CREATE DATABASE "{name}"')
    admin.dispose()
    return target, False


def loaded(url: str) -> bool:
    """A finished load: its folders exist (they are made last)."""
    from sqlalchemy import create_engine, text

    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text("SELECT count(*) FROM chat_folder")).scalar() > 0
    except Exception:
        return False
    finally:
        engine.dispose()


def prepare(kind: str, size: int, where: Path, pg_server: str, keep: bool, rows_for):
    """A loaded database of `size` messages: (url, load seconds or None when kept, file)."""
    path = where / f"search-{size}.db"
    if kind == "sqlite":
        url = h.sqlite_url(path)
        if keep and path.exists() and loaded(url):
            migrate(url)  # a kept database gets the app's newer migrations
            return url, None, path
        path.unlink(missing_ok=True)
        migrate(url)
        rows = rows_for(size)
        t0 = time.perf_counter()
        data.populate_sqlite(path, rows)
    else:
        url, ready = pg_database(pg_server, f"bench_search_{size}", fresh=not keep)
        if ready:
            migrate(url)
            return url, None, None
        migrate(url)
        rows = rows_for(size)
        t0 = time.perf_counter()
        data.populate_postgresql(url, rows)
    load_s = time.perf_counter() - t0
    engine = make_engine(url)
    organise(engine, size // data.PER_CONVERSATION)
    engine.dispose()
    return url, load_s, path if kind == "sqlite" else None


def main(argv: list[str] | None = None) -> h.Report:
    def extra(p):
        p.add_argument("--sizes", default="100000,1000000")
        p.add_argument("--db", default="sqlite,postgresql")
        p.add_argument("--pg-url", default="")
        p.add_argument("--data-dir", default="", help="keep the loaded databases here, reuse them")
        p.add_argument(
            "--ab",
            action="store_true",
            help="PostgreSQL: time each search also without the prefix lookup (the plain "
            "query), in turn, with the server's CPU read around each call",
        )
        p.add_argument("--no-sidebar", action="store_true", help="search only")
        p.add_argument(
            "--load-only",
            action="store_true",
            help="with --data-dir: load (or migrate) the databases, measure nothing (run the "
            "load under `nice`, the measurement without)",
        )

    args = h.parse_common(__doc__.splitlines()[0], argv, extra)
    sizes = [10_000, 30_000] if args.quick else [int(s) for s in args.sizes.split(",")]
    repeat = args.repeat or (20 if args.quick else 100)
    kinds = args.db.split(",")
    report = h.Report("search", "full-text search and the sidebar, server side")
    words = data.vocabulary(random.Random(16))  # as data.messages draws it
    generated: dict[int, list] = {}

    def rows_for(size: int) -> list:
        if size not in generated:
            generated.clear()
            t0 = time.perf_counter()
            generated[size] = data.messages(size)[0]
            h.log(f"{size:,} messages generated in {time.perf_counter() - t0:.0f} s")
        return generated[size]

    with tempfile.TemporaryDirectory(prefix="agent-chat-search-") as tmp_name:
        tmp = Path(tmp_name)
        where = Path(args.data_dir) if args.data_dir else tmp
        where.mkdir(parents=True, exist_ok=True)
        pg_server = args.pg_url or (start_postgres(tmp) if "postgresql" in kinds else "")
        try:
            for size in sizes:
                for kind in kinds:
                    label = f"{kind} {size:,} msgs"
                    url, load_s, path = prepare(
                        kind, size, where, pg_server, bool(args.data_dir), rows_for
                    )
                    if load_s is not None:
                        h.log(f"{label}: loaded in {load_s:.0f} s")
                        report.notes.append(f"{label}: bulk load with indexing {load_s:.0f} s")
                    if args.load_only:
                        continue
                    before = h.load()
                    h.log(f"{label}: measuring (load average {before})")
                    engine = make_engine(url)
                    figures = measure(engine, words, repeat, label, report, args.ab)
                    conversations = size // data.PER_CONVERSATION
                    if not args.no_sidebar:
                        listing = f"{kind} {conversations:,} conversations"
                        figures.update(sidebar(engine, repeat, listing, report))
                    engine.dispose()
                    if path is not None:
                        figures["db_mb"] = path.stat().st_size / 1e6
                    after = h.load()
                    report.runs.append(
                        {"db": kind, "messages": size, "load_s": load_s, **figures}
                        | {"load_average_before": before, "load_average_after": after}
                    )
                    report.notes.append(f"{label}: load average {before} → {after}")
        finally:
            if pg_server and not args.pg_url:
                subprocess.run(
                    [str(h.ROOT / "scripts" / "postgres.sh"), "stop", str(tmp / "pg")], check=False
                )
    if not args.load_only:  # keep the last measurement's results/search.json
        long_snippets(report)
        report.finish()
    return report


if __name__ == "__main__":
    main()
