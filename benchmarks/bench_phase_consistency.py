"""Benchmark: is the default ``phase`` run beaten by more effort?  (self-consistency table)

For every cell K = kmin..kmax, L = 2..lmax (L weight matrices, p = 2/(L + 1)) the value of the
default ``implicitbias phase`` run (effort 1, seed 0: the exact search at the shallow depths and the
low-rank ladder at L >= 4, ``implicitbias.numerics.maxmargin.phase.search_column``) is compared with the
best value over efforts 1..emax and seeds 0..seeds-1 of the exact search alone
(``implicitbias.numerics.maxmargin.search``).  The bare search's own default (effort 1, seed 0, every
depth, no ladder) is counted beside it.  Every run goes through the store (kinds
``maxmargin.search-values`` and the phase diagram's two), so a killed run resumes where it
stopped; run it with ``nice -n 10`` on a shared machine.  Cells with K <= 3 or L = 1 need no search: NC is certified
there (K = 2, 3: exact, ``theory.three_classes``; L = 1: the convex dual bound).

Printed: the table (rows K, columns L): ``=`` where the default value equals the best to a
relative 1e-6 (``<`` where it is below the best by more), else the relative excess of the
default over the best; the summary (cells, how many equal, the largest excess, which
effort/seed found each better value, equal ranks) and CPU time per effort.  With ``--rank-r``,
a second table: one run of the rank-r route (``low_rank.large_search(K, depths, 0)``, the route
that a column above K = 16 adds from effort 2 on) against the same best, signed (``-``: below the
best of the exact searches), with its CPU time per K.

The ledger (``--ledger``, default ``benchmarks/phase_consistency.jsonl``, committed): one JSON line per
finished search (config, code fingerprint, record).  The sweep runs K by K (all efforts and seeds of
one K, then the next), appends each K's records to the ledger as soon as they are done, and loads
the ledger into the store before it starts, so a sweep of many CPU hours carries over from one
machine or session to the next: a search in the ledger is never repeated.  Records of another code
fingerprint are loaded under their own fingerprint and count only where ``--code`` pins it.

Usage: python benchmarks/bench_phase_consistency.py [--kmin 4] [--kmax 16] [--K 19,25] [--lmax 12] [--depths 3.5,5.5] [--emax 8]
[--seeds 5] [--store PATH] [--workers 2] [--code FINGERPRINT] [--ledger PATH] [--no-table] [--rank-r].
"""

from __future__ import annotations

import argparse
import collections
import functools
import json
import math
import os
import time
from pathlib import Path

from implicitbias.executors import open_executor
from implicitbias.figures import markdown_table
from implicitbias.numerics.maxmargin.low_rank import large_search
from implicitbias.numerics.maxmargin.phase import cells_of, phase_configs, phase_diagram
from implicitbias.numerics.maxmargin.search import SEARCH_KIND, search_cell
from implicitbias.store import Store, default_store_path

TOL = 1e-6  # relative: "equals the best"
LEDGER = Path(__file__).with_name("phase_consistency.jsonl")


def load_ledger(store: Store, path: Path) -> set[str]:
    """Put every ledger line into ``store`` (under its own code fingerprint); the keys already in the ledger."""
    seen = set()
    if path.is_file():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            if store.get(SEARCH_KIND, entry["config"], code=entry["code"]) is None:
                store.put(SEARCH_KIND, entry["config"], entry["record"], code=entry["code"])
            seen.add(json.dumps([entry["config"], entry["code"]], sort_keys=True))
    return seen


def append_ledger(path: Path, seen: set[str], configs: list[dict], records: list[dict], code: str) -> None:
    """Append the (config, record) pairs of ``code`` not yet in the ledger, one JSON line each."""
    with path.open("a") as f:
        for config, record in zip(configs, records):
            key = json.dumps([config, code], sort_keys=True)
            if key not in seen:
                f.write(json.dumps({"config": config, "code": code, "record": record}, sort_keys=True) + "\n")
                seen.add(key)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kmin", type=int, default=4)
    ap.add_argument("--kmax", type=int, default=16)
    ap.add_argument("--lmax", type=int, default=12)
    ap.add_argument("--K", type=listed(int, "class counts", 4), default=None,
                    help="comma-separated class counts >= 4 (instead of kmin..kmax)")
    ap.add_argument("--depths", type=listed(depth, "depths", 2), default=None,
                    help="comma-separated depths, reals >= 2 allowed (instead of 2..lmax): fresh cells for a judgement")
    ap.add_argument("--emax", type=int, default=8)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--store", default=None)
    ap.add_argument("--workers", type=int, default=1, help="process pool size (1: in this process)")
    ap.add_argument("--code", default=None,
                    help="pin the records to this code fingerprint (a long sweep survives later edits that do not "
                         "change what the search does for K <= 16; the default row is then recomputed with the "
                         "current code and compared)")
    ap.add_argument("--ledger", type=Path, default=LEDGER, help="JSON-lines ledger of finished searches (module docstring)")
    ap.add_argument("--no-table", action="store_true", help="only run the searches (and fill the ledger)")
    ap.add_argument("--rank-r", action="store_true", help="also compare one run of the rank-r route (module docstring)")
    args = ap.parse_args()
    depths = args.depths or list(range(2, args.lmax + 1))
    Ks = args.K or list(range(args.kmin, args.kmax + 1))
    configs = [{"K": K, "depths": depths, "effort": e, "seed": s}
               for K in Ks for e in range(1, args.emax + 1) for s in range(args.seeds)]
    code = args.code or Store.code_of(search_cell)
    load = os.getloadavg()[0]
    t0 = time.perf_counter()
    with Store(args.store or default_store_path()) as store, open_executor(
        "process" if args.workers > 1 else "inline", args.workers
    ) as executor:
        seen = load_ledger(store, args.ledger)
        records = []
        for K in Ks:
            own = [c for c in configs if c["K"] == K]
            done = store.map(SEARCH_KIND, search_cell, own, executor=executor, desc=f"self-consistency K = {K}", code=code)
            append_ledger(args.ledger, seen, own, done, code)
            records += done
        if args.no_table:
            return
        if args.code:
            defaults = [c for c in configs if c["effort"] == 1 and c["seed"] == 0]
            current = store.map(SEARCH_KIND, search_cell, defaults, executor=executor, desc="default, current code")
        t1 = time.perf_counter()
        columns = phase_diagram(functools.partial(store.map, executor=executor),
                                [c for c in phase_configs(max(Ks), 1 if args.depths else args.lmax, depths=depths, kmin=min(Ks)) if c["K"] in Ks])
        phase_wall = time.perf_counter() - t1
    wall = time.perf_counter() - t0
    bare = {c["K"]: r for c, r in zip(configs, records) if c["effort"] == 1 and c["seed"] == 0}
    phase = {(c.K, c.L): c for c in cells_of(columns) if c.L >= 2}
    best, best_rank = best_of(configs, records)
    rows, worse, below = [], [], 0
    bare_equal = sum((bare[K]["values"][str(L)] - best[(K, L)][0]) / best[(K, L)][0] <= TOL for K in Ks for L in depths)
    for K in Ks:
        row = [K]
        for L in depths:
            d = phase[(K, L)].value
            b, e, s = best[(K, L)]
            kind, excess = relation(d, b)
            if kind == "below":
                row.append("<")
                below += 1
            elif kind == "=":
                row.append("=")
            else:
                row.append(f"+{excess:.1e}")
                worse.append((K, L, d, b, e, s))
        rows.append(row)
    print(markdown_table(["K \\ L", *depths], rows))
    print()
    cells = len(Ks) * len(depths)
    cpu = collections.defaultdict(float)
    for c, r in zip(configs, records):
        cpu[c["effort"]] += r["cpu_seconds"]
    same = "not pinned: one code"
    if args.code:
        pinned = {c["K"]: r for c, r in zip(configs, records) if c["effort"] == 1 and c["seed"] == 0}
        equal = sum(pinned[r["K"]]["values"][L] == v for r in current for L, v in r["values"].items())
        same = f"{equal} / {sum(len(r['values']) for r in current)} cells bit-identical"
    print(markdown_table(["quantity", "value"], [
        ["cells (K x L)", cells],
        [f"default recomputed with the current code (records pinned to {args.code})", same],
        ["default phase run equals or beats the best (rel. 1e-6)", f"{cells - len(worse)} / {cells}"],
        ["... of which below the best by more than 1e-6", below],
        ["largest relative excess of the default phase run", f"{max((w[2] - w[3]) / w[3] for w in worse):.2e}" if worse else "0"],
        ["bare search default (effort 1, seed 0, no ladder) equals the best", f"{bare_equal} / {cells}"],
        ["rank of the default phase run's best = rank of the best found", f"{sum(phase[k].rank == best_rank[k] for k in phase)} / {cells}"],
        ["runs (efforts x seeds x K)", len(configs)],
        *[[f"CPU s, effort {e} (all seeds, all K)", f"{cpu[e]:.0f}"] for e in sorted(cpu)],
        [f"CPU s, default phase run, columns K = {args.kmin}..{args.kmax} (searches + cells)",
         f"{sum(c['search_cpu_seconds'] + c['cpu_seconds'] for c in columns):.0f}"],
        ["wall s, default phase run (both passes, this invocation)", f"{phase_wall:.0f}"],
        ["wall s of this invocation", f"{wall:.0f}"],
        ["load average (1 min) at start / end", f"{load:.1f} / {os.getloadavg()[0]:.1f}"],
    ]))
    if worse:
        print()
        print(markdown_table(["K", "L", "default", "best", "effort", "seed"],
                             [[K, L, f"{d:.9f}", f"{b:.9f}", e, s] for K, L, d, b, e, s in worse]))
    if args.rank_r:
        print()
        rank_r_table(Ks, depths, best, best_rank)


def best_of(configs, records) -> tuple[dict, dict]:
    """Per cell (K, L): the best value of the searches with its (effort, seed), and that search's rank."""
    best: dict = {}
    best_rank: dict = {}
    for c, r in zip(configs, records):
        for L, v in r["values"].items():
            key = (c["K"], depth(L))
            if key not in best or v < best[key][0]:
                best[key] = (v, c["effort"], c["seed"])
                best_rank[key] = r["ranks"][L]
    return best, best_rank


def ledger_best(path: Path = LEDGER) -> tuple[dict, dict]:
    """``best_of`` the searches of a ledger (module docstring), every code fingerprint in it."""
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    return best_of([e["config"] for e in entries], [e["record"] for e in entries])


def depth(text) -> int | float:
    """A depth as the config and the cells hold it: ``"3"`` -> 3, ``"3.5"`` -> 3.5."""
    value = float(text)
    return int(value) if value.is_integer() else value


def listed(parse, what: str, minimum: float):
    """An argparse type: a comma-separated list of ``parse``d values >= ``minimum`` (argparse turns the
    ``ArgumentTypeError`` into a one-line message and exit status 2)."""
    def convert(text: str) -> list:
        try:
            values = [parse(x) for x in text.split(",")]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{what} must be comma-separated numbers, got {text!r}") from None
        if not all(math.isfinite(v) and v >= minimum for v in values):
            raise argparse.ArgumentTypeError(f"{what} must be finite and >= {minimum}, got {text!r}")
        return values
    return convert


def relation(value: float, best: float) -> tuple[str, float]:
    """``value`` against ``best``: ``=`` (relative ``TOL``), ``below`` or ``above``, and the relative difference."""
    rel = (value - best) / best
    return ("=" if abs(rel) <= TOL else "below" if rel < 0 else "above"), rel


def rank_r_table(Ks, depths: list, best: dict, best_rank: dict) -> None:
    """One run of the rank-r route per K against the best of the exact searches (module docstring)."""
    rows, tally = [], collections.Counter()
    for K in Ks:
        t = time.process_time()
        res = large_search(K, depths, 0)
        row = [K, f"{time.process_time() - t:.1f}"]
        for L in depths:
            sol = res.best[L]
            kind, rel = relation(sol.objective, best[(K, L)][0])
            tally[kind] += 1
            tally["same rank"] += sol.rank == best_rank[(K, L)]
            row.append("=" if kind == "=" else f"{rel:+.1e}")
        rows.append(row)
    print(markdown_table(["K", "CPU s", *[f"L = {L}" for L in depths]], rows))
    print()
    cells = len(Ks) * len(depths)
    print(markdown_table(["rank-r route (one run, seed 0) against the best of the exact searches", "cells"], [
        ["equal (rel. 1e-6)", f"{tally['=']} / {cells}"],
        ["below", tally["below"]],
        ["above", tally["above"]],
        ["same rank as the best of the exact searches", f"{tally['same rank']} / {cells}"],
    ]))


if __name__ == "__main__":
    main()
