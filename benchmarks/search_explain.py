"""PostgreSQL's first match query of a search (db/search.py `_pg_any_matches`), with and
without the prefix lookup, under `EXPLAIN (ANALYZE, BUFFERS)`: the server's own execution time
per query, which the load of the other processes on the machine hardly changes (the wall
clock of benchmarks/search.py does), the plan and the rows.

For the 100 typical two-word queries of benchmarks/search.py (the same generator) and its
special queries, on a database it loaded and kept (`--data-dir`), both variants in turn:
- plain: `search_vector @@ to_tsquery('simple', :q) LIMIT 3001` (as before migration
  9d5e7f1a3b6c);
- prefix: what the app asks now (the two-column index for a typed prefix, unless the
  planner would read the plain query by a scan of the table: then the plain query).
Both must return the same rows (checked; the same number when there are more than 3,000).

Run: python benchmarks/search_explain.py URL_OF_bench_search_1000000 [--repeat 100] [--json F]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402
import search_data as data  # noqa: E402
from search import queries  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402

from agent_chat.db.search import PG_ALL_MATCHES, PG_MATCH, _pg_any_matches  # noqa: E402
from agent_chat.db.search_text import parse_query, pg_tsquery  # noqa: E402


def nodes(plan: dict):
    yield plan
    for child in plan.get("Plans", []):
        yield from nodes(child)


def explain(connection, where: str, params: dict) -> tuple[float, dict, list]:
    sql = f"SELECT id, session_id FROM chat_message WHERE {where} LIMIT :n"
    plan = connection.execute(
        text(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}"), params
    ).scalar()[0]
    rows = sorted(connection.execute(text(sql), params).all())
    return plan["Execution Time"], plan["Plan"], rows


def condition(connection, variant: str, terms) -> tuple[str, dict]:
    """The plain query's condition, or the one the app chooses (the prefix lookup unless the
    planner reads the plain query by a scan)."""
    if variant == "plain":
        return PG_MATCH, {}
    return _pg_any_matches(connection, terms, pg_tsquery(terms))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("url")
    parser.add_argument("--repeat", type=int, default=100)
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    words = data.vocabulary(random.Random(16))
    typical = queries(words, args.repeat, random.Random(99))
    special = {
        "rare word": words[25_000],
        "very common word": words[3],
        "quoted phrase": f'"{words[10]} {words[11]}"',
        "Chinese, 2 characters": "学习",
        "a typed word alone": words[500][:3],
        "three characters and a common word": f"{words[3]} {words[800][:3]}",
    }
    engine = create_engine(args.url)
    out: dict = {"load_before": os.getloadavg(), "typical": {}, "special": {}}
    with engine.connect() as connection:
        for q in typical[:5]:  # warm the caches
            for variant in ("plain", "prefix"):
                terms = parse_query(q)
                where, params = condition(connection, variant, terms)
                explain(
                    connection, where, {"q": pg_tsquery(terms), "n": PG_ALL_MATCHES + 1, **params}
                )
        times: dict[str, list[float]] = {"plain": [], "prefix": []}
        slowest: dict[str, tuple[float, str, str]] = {}
        for i, q in enumerate(typical + list(special.values())):
            terms = parse_query(q)
            results = {}
            for variant in ("plain", "prefix") if i % 2 == 0 else ("prefix", "plain"):
                where, params = condition(connection, variant, terms)
                ms, plan, rows = explain(
                    connection, where, {"q": pg_tsquery(terms), "n": PG_ALL_MATCHES + 1, **params}
                )
                results[variant] = rows
                shape = " > ".join(
                    f"{n['Node Type']}"
                    + (f" on {n['Index Name']}" if "Index Name" in n else "")
                    + f" ({n['Actual Total Time']:.1f} ms, {n.get('Shared Hit Blocks', 0) + n.get('Shared Read Blocks', 0)} buf)"
                    for n in nodes(plan)
                )
                if i < len(typical):
                    times[variant].append(ms)
                    if ms > slowest.get(variant, (0,))[0]:
                        slowest[variant] = (ms, q, shape)
                else:
                    name = list(special)[i - len(typical)]
                    out["special"].setdefault(name, {"query": q})[variant] = {
                        "ms": ms,
                        "rows": len(rows),
                        "plan": shape,
                    }
            plain, prefix = results["plain"], results["prefix"]
            if len(plain) > PG_ALL_MATCHES:  # any 3,001 of them (the app then reads the newest)
                plain, prefix = len(plain), len(prefix)
            assert plain == prefix, f"different rows for {q!r}"
    for variant, values in times.items():
        out["typical"][variant] = {
            "p50_ms": h.percentile(values, 50),
            "p95_ms": h.percentile(values, 95),
            "max_ms": max(values),
            "slowest": slowest[variant],
        }
    out["load_after"] = os.getloadavg()
    engine.dispose()
    print(json.dumps(out, indent=1, ensure_ascii=False))
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
