"""The self-consistency sweep's ledger (benchmarks/bench_phase_consistency.py): a search written to the
ledger on one machine is loaded into a fresh store on another and never computed again; the
committed ledger holds whole K (every effort x seed) of one code fingerprint each, and values between
a cell's certified lower bound (``lower_bounds.certified_lower_bound``, an independent route) and NC's
S_p = K - 1 (NC's singular values are all 1 at unit margin; NC is suboptimal in every such cell)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

from implicitbias.numerics.maxmargin.lower_bounds import certified_lower_bound
from implicitbias.numerics.maxmargin.search import SEARCH_KIND
from implicitbias.store import Store

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_phase_consistency.py"


def _bench():
    spec = importlib.util.spec_from_file_location("bench_phase_consistency", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _never(config):
    raise AssertionError(f"recomputed a search the ledger holds: {config}")


def test_a_ledgered_search_is_loaded_into_a_fresh_store_and_never_recomputed(tmp_path):
    bench = _bench()
    ledger = tmp_path / "ledger.jsonl"
    configs = [{"K": 17, "depths": [2, 3], "effort": e, "seed": 0} for e in (1, 2)]
    records = [{"K": 17, "values": {"2": 13.5 + e, "3": 10.7 + e}, "ranks": {"2": 6, "3": 4}, "cpu_seconds": 1.0}
               for e in (1, 2)]
    bench.append_ledger(ledger, set(), configs, records, "abc")
    with Store(tmp_path / "other.sqlite") as other:
        bench.append_ledger(ledger, bench.load_ledger(other, ledger), configs, records, "abc")
    assert len(ledger.read_text().splitlines()) == 2  # appending the same searches again adds nothing
    with Store(tmp_path / "fresh.sqlite") as store:
        seen = bench.load_ledger(store, ledger)
        assert len(seen) == 2
        assert store.map(SEARCH_KIND, _never, configs, code="abc", progress=False) == records
        assert store.status(SEARCH_KIND, configs[0], code="another") == "stale"  # other code is not reused


def test_the_committed_ledger_holds_whole_columns_of_one_code():
    lines = [json.loads(line) for line in (BENCH.parent / "phase_consistency.jsonl").read_text().splitlines()]
    by_k: dict[int, set] = {}
    for entry in lines:
        c, r = entry["config"], entry["record"]
        assert r["K"] == c["K"] and set(r["values"]) == {str(L) for L in c["depths"]} == set(r["ranks"])
        assert all(math.isfinite(v) and v > 0 for v in r["values"].values())
        by_k.setdefault(c["K"], set()).add((c["effort"], c["seed"], entry["code"]))
    assert by_k, "the ledger is empty"
    best: dict[tuple[int, int], float] = {}
    for entry in lines:
        for L, v in entry["record"]["values"].items():
            key = (entry["config"]["K"], int(L))
            best[key] = min(best.get(key, math.inf), v)
    for (K, L), v in best.items():
        assert certified_lower_bound(K, L)["value"] * (1 - 1e-9) <= v < K - 1, (K, L, v)
    for K, runs in by_k.items():
        assert {(e, s) for e, s, _ in runs} == {(e, s) for e in range(1, 9) for s in range(5)}, K
        assert len({code for *_, code in runs}) == 1, K
