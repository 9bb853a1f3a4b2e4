"""One benchmark, two checkouts, interleaved: A, B, A, B, ... in one session.

On a shared 2-core machine the load moves between minutes, so two figures measured at
different times are not comparable; interleaving one repetition of each in turn exposes both
to the same load. Each repetition is a fresh run of the benchmark script inside its checkout
(its own stack and frontend build), with `--repeat 1`; the load average is noted before each.

This checkout's measuring code (harness.py, fake_model.py, the script named, and the test
suite's launchers and fake model they import) is copied into both checkouts first, so both are
driven by the same measuring code; the code measured is each checkout's own app. Use throwaway
worktrees (the copy overwrites their benchmarks/ and tests/ files):

    git worktree add --detach /tmp/bench-before <old commit>
    git worktree add --detach /tmp/bench-after HEAD
    for d in /tmp/bench-before /tmp/bench-after; do
      ln -s "$PWD/.venv" $d/.venv; ln -s "$PWD/.tools" $d/.tools; done
    python benchmarks/ab.py --a /tmp/bench-before --b /tmp/bench-after --rounds 3 \\
        stream_cost.py [script options]

The copied launchers (tests/support) may import app code an older checkout lacks: then take
them from an older revision with `--support-rev` (e.g. e6d9db9 for checkouts before 451f34b).

Prints every repetition and the medians side by side, and writes results/ab_<name>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as h  # noqa: E402

# The measuring code, copied into both checkouts (the harness imports the test suite's
# launchers and fake model, which older checkouts keep elsewhere or not at all).
COPIED = (
    "benchmarks/harness.py",
    "benchmarks/fake_model.py",
    "tests/support/__init__.py",
    "tests/support/browser.py",
    "tests/support/processes.py",
    "tests/fakes/model_server.py",
)
# stream_cost figures: key, label, format, target of the live feed rework (None: report).
FIGURES = [
    ("ws_ratio", "#1 websocket bytes ÷ answer", "{:.2f} ×", 1.6),
    ("lag_s", "#2 last token → full text in DOM", "{:.2f} s", 0.2),
    ("lag_script_s", "#2a last token → script runs in page", "{:.2f} s", None),
    ("lag_render_s", "#2b script → text in DOM", "{:.2f} s", None),
    ("browser_cpu_ratio", "#3 browser CPU s ÷ stream s", "{:.3f}", 0.25),
    ("renderer_cpu_ratio", "#3 renderer main thread ÷ stream s", "{:.3f}", None),
    ("app_cpu_per_1k", "#3 app CPU s per 1,000 events", "{:.3f} s", None),
    ("stream_s", "stream duration at the model", "{:.1f} s", None),
    ("ws_bytes_total", "websocket bytes", "{:,.0f}", None),
    ("ws_frames_total", "websocket frames", "{:,.0f}", None),
]


def git_label(tree: Path) -> str:
    out = subprocess.run(
        ["git", "log", "-1", "--format=%h %s"], cwd=tree, capture_output=True, text=True
    ).stdout.strip()
    return out[:70]


def copy_measuring_code(tree: Path, script: str, support_rev: str | None) -> None:
    for name in (*COPIED, f"benchmarks/{script}"):
        target = tree / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if support_rev and name.startswith("tests/"):
            shown = subprocess.run(
                ["git", "show", f"{support_rev}:{name}"], cwd=h.ROOT, capture_output=True
            )
            if shown.returncode == 0:
                target.write_bytes(shown.stdout)
        elif (h.ROOT / name).exists():
            shutil.copy2(h.ROOT / name, target)


def run_once(
    tree: Path, script: str, args: list[str], support_rev: str | None
) -> tuple[dict, str, str]:
    """One repetition in `tree`: (its raw figures, load before, the printed report)."""
    copy_measuring_code(tree, script, support_rev)
    python = tree / ".venv" / "bin" / "python"
    load_before = h.load()
    proc = subprocess.run(
        [str(python if python.exists() else sys.executable), f"benchmarks/{script}", *args],
        cwd=tree,
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: {script} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    name = proc.stdout.split("\n", 1)[0].removeprefix("== ").split(":", 1)[0]
    sub = "quick" if "--quick" in args else ""
    data = json.loads((tree / "benchmarks" / "results" / sub / f"{name}.json").read_text())
    return data, load_before, proc.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=Path, required=True, help="checkout A (e.g. before)")
    parser.add_argument("--b", type=Path, required=True, help="checkout B (e.g. after)")
    parser.add_argument("--rounds", type=int, default=3, help="repetitions of each (A, B) pair")
    parser.add_argument(
        "--support-rev",
        default=None,
        help="copy the tests/ files from this revision instead of the working tree (when "
        "today's launchers import app code an older checkout lacks, e.g. e6d9db9)",
    )
    parser.add_argument("script", help="benchmark script in benchmarks/, e.g. stream_cost.py")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="options for the script")
    ns = parser.parse_args()
    args = [*ns.args, "--repeat", "1"]
    trees = {"A": ns.a.resolve(), "B": ns.b.resolve()}
    labels = {k: git_label(t) for k, t in trees.items()}
    runs: dict[str, list[dict]] = {"A": [], "B": []}
    name = ns.script
    for i in range(ns.rounds):
        for key, tree in trees.items():
            h.log(f"round {i + 1}/{ns.rounds}: {key} = {tree} ({labels[key]})")
            data, load_before, out = run_once(tree, ns.script, args, ns.support_rev)
            name = data["benchmark"]
            run = {**data["runs"][0], "load_before": load_before, "load_after": data["load"]}
            runs[key].append(run)
            h.log(
                "  "
                + ", ".join(
                    f"{k} {run[k]:.3g}" for k, *_ in FIGURES[:3] if isinstance(run.get(k), float)
                )
                + f"; load {load_before} → {data['load']}"
            )
            title = data["title"]

    lines = [f"== ab_{name}: {title}, A and B interleaved, {ns.rounds} rounds"]
    lines.append(f"A: {trees['A']}  ({labels['A']})")
    lines.append(f"B: {trees['B']}  ({labels['B']})")
    header = f"{'figure':<38} | {'A median':>10} | {'B median':>10} | {'B ÷ A':>6} | target | A runs | B runs"
    lines += [header, "-" * len(header)]
    for key, label, fmt, target in FIGURES:
        a = [r[key] for r in runs["A"] if key in r]
        b = [r[key] for r in runs["B"] if key in r]
        if not a or not b:
            continue
        ma, mb = h.median(a), h.median(b)
        ratio = f"{mb / ma:.2f}" if ma else "—"
        tgt = "report" if target is None else f"≤ {target:g}"
        met = "" if target is None else (" (B met)" if mb <= target else " (B NOT met)")
        lines.append(
            f"{label:<38} | {fmt.format(ma):>10} | {fmt.format(mb):>10} | {ratio:>6} | {tgt}{met} | "
            + " / ".join(fmt.format(x) for x in a)
            + " | "
            + " / ".join(fmt.format(x) for x in b)
        )
    for key in ("A", "B"):
        lines.append(
            f"load before each {key} run: " + "; ".join(r["load_before"] for r in runs[key])
        )
        paras = [r.get("dom_paragraphs") for r in runs[key]]
        lines.append(
            f"{key}: <p> in the DOM at the last token: {paras}; page errors: "
            f"{[r.get('page_errors') for r in runs[key]]}"
        )
    lines.append(f"machine: {h.machine()}")
    lines.append(f"command: {h.command()}")
    lines.append(f"when:    {time.strftime('%Y-%m-%d %H:%M:%S %Z')}")
    print("\n".join(lines), flush=True)
    h.RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    (h.RESULTS_DIR / f"ab_{name}.json").write_text(
        json.dumps(
            {
                "benchmark": f"ab_{name}",
                "title": title,
                "a": {"tree": str(trees["A"]), "commit": labels["A"], "runs": runs["A"]},
                "b": {"tree": str(trees["B"]), "commit": labels["B"], "runs": runs["B"]},
                "machine": h.machine(),
                "command": h.command(),
                "when": time.strftime("%Y-%m-%d %H:%M:%S %Z"),
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    main()
