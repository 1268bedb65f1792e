"""Regime search for the toy tier of Spec B (issue 20, item 1), on calibration seeds only.

Where is the hierarchy the source reports (low-lr SGD remembers sigma_w, Adam forgets) clearest
for the CPU it costs, in a regime where the validation-selected checkpoint comes after
interpolation (as in the paper's setting, where every run interpolates and is then selected)?
Each candidate is the toy tier's design (BatchNorm MLP on MNIST-1D, b 64, sigma_w {0.25, 0.5, 1,
1.5, 2.5}) with its own width, training-set size, SGD learning rate and horizon, trained for
SGD and for Adam (lr 0.01, the tier's) on the calibration seeds ``CALIBRATION_SEEDS`` (never used
for verdicts) as one ensemble per candidate (``validation.batched``).  Per candidate:

    test acc        mean over runs of the validation-selected test accuracy (SGD | Adam), %
    tau_interp      first epoch with >= 99.5% training accuracy, median over the SGD runs (n interp.)
    selected        epoch of minimum validation loss, median over the SGD runs; "after" = share of
                    SGD runs selected at or after their interpolation epoch
    spread          best minus worst seed-mean selected test accuracy across sigma_w (points)
    noise sd        per-run noise: sd over seeds of the selected test accuracy at fixed sigma_w,
                    pooled over sigma_w and both optimisers (points)
    (SGD - Adam) / (noise / sqrt(seeds)): the hierarchy in units of the noise of a seed mean
    CPU s           process CPU seconds of the candidate's training (one thread)

Every candidate's row is cached in the store (kind ``benchmarks.regime_search``): rerunning the
script skips finished candidates and a killed search resumes with the next one;
``--budget-seconds`` stops starting candidates once the CPU spent in this call exceeds it.  The
candidates are read from ``benchmarks/regime_candidates.toml``, apart from this script, so adding
one keeps the others' rows.

    python benchmarks/regime_search.py --budget-seconds 1500     # results in benchmarks/RESULTS.md
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
import tomllib
from pathlib import Path

CALIBRATION_SEEDS = (100, 101, 102, 103)
SIGMA_W = (0.25, 0.5, 1.0, 1.5, 2.5)
ADAM_LR = 0.01
BASE = {"dataset": "mnist1d", "val_size": 500, "test_size": 1000, "arch": "mlp", "batch_size": 64}
CANDIDATES = Path(__file__).with_name("regime_candidates.toml")  # name, width, train_size, data_size, lr, epochs


def candidate_configs(candidate: dict) -> list[dict]:
    """The SGD and Adam runs of a candidate (sigma_w x calibration seeds each)."""
    base = {**BASE, "width": candidate["width"], "train_size": candidate["train_size"],
            "data_size": candidate.get("data_size"), "epochs": candidate["epochs"]}
    return [{**base, **opt, "sigma_w": s, "seed": k} for opt in ({"optimizer": "sgd", "lr": candidate["lr"]},
                                                                 {"optimizer": "adam", "lr": ADAM_LR})
            for s in SIGMA_W for k in CALIBRATION_SEEDS]


def measure(candidate: dict) -> dict:
    """Train a candidate's runs (one ensemble) and return its row (module docstring)."""
    from implicitbias.validation.analysis import group_runs, summarise
    from implicitbias.validation.batched import ensembles, execute_group
    from implicitbias.validation.run import canonical_config

    configs = [canonical_config(c) for c in candidate_configs(candidate)]
    t0 = time.process_time()
    runs = []
    for group in ensembles(configs, 48):
        runs += list(zip(group, execute_group({"runs": group}, options={"threads": 1})["records"]))
    cpu = time.process_time() - t0
    row = {"cpu_seconds": cpu}
    within = []
    for g in group_runs(runs):
        s = summarise(g)
        name = g.setting["optimizer"]
        kept = [r for r in s.runs if r.kept]
        row[f"{name}_test_acc"] = statistics.fmean(r.selected_test_acc for r in kept)
        row[f"{name}_spread"] = s.spread_selected.estimate
        row[f"{name}_n_interp"] = s.n_interpolated
        summaries = {(c["sigma_w"], c["seed"]): rec["summary"] for c, rec in g.runs}
        taus = [r.tau_interp for r in kept if r.tau_interp is not None]
        selected = [summaries[r.sigma_w, r.seed]["selected_epoch"] for r in kept]
        row[f"{name}_tau_interp"] = statistics.median(taus) if taus else None
        row[f"{name}_selected_epoch"] = statistics.median(selected)
        row[f"{name}_selected_after"] = sum(
            r.tau_interp is not None and summaries[r.sigma_w, r.seed]["selected_epoch"] >= r.tau_interp
            for r in kept) / len(kept)
        for sigma in SIGMA_W:
            accs = [r.selected_test_acc for r in kept if r.sigma_w == sigma]
            if len(accs) >= 2:
                within.append(statistics.variance(accs))
    row["noise_sd"] = math.sqrt(statistics.fmean(within))
    row["hierarchy_in_noise"] = (row["sgd_spread"] - row["adam_spread"]) / (row["noise_sd"] / math.sqrt(len(CALIBRATION_SEEDS)))
    return row


def table(rows: dict[str, dict]) -> str:
    from implicitbias.figures import markdown_table

    out = []
    for name, (cand, r) in rows.items():
        tau = "-" if r["sgd_tau_interp"] is None else f"{r['sgd_tau_interp']:g}"
        out.append([name, f"{cand['lr']:g}", str(cand["epochs"]), f"{r['sgd_test_acc']:.1f} / {r['adam_test_acc']:.1f}",
                    f"{tau} ({r['sgd_n_interp']}/20)", f"{r['sgd_selected_epoch']:g} ({100 * r['sgd_selected_after']:.0f}%)",
                    f"{r['sgd_spread']:.2f} / {r['adam_spread']:.2f}", f"{r['noise_sd']:.2f}",
                    f"{r['hierarchy_in_noise']:.1f}", f"{r['cpu_seconds']:.0f}"])
    return markdown_table(["candidate", "SGD lr", "epochs", "test acc SGD / Adam [%]", "tau_interp SGD (interp.)",
                           "selected epoch SGD (after interp.)", "spread SGD / Adam [pts]", "noise sd [pts]",
                           "(SGD - Adam) / noise of a seed mean", "CPU s"], out)


def main() -> None:
    from implicitbias.store import Store, default_store_path

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", default=None, help="results store (default: $IMPLICITBIAS_STORE)")
    p.add_argument("--budget-seconds", type=float, default=1500.0, help="stop starting candidates after this CPU time")
    p.add_argument("--candidates", default=str(CANDIDATES), help="TOML file of [[candidate]] tables")
    a = p.parse_args()
    listed = tomllib.loads(Path(a.candidates).read_text())["candidate"]
    rows = {}
    start = time.process_time()
    with Store(a.store or default_store_path()) as store:
        for entry in listed:
            name = entry["name"]
            cand = {**{k: v for k, v in entry.items() if k != "name"}, "seeds": list(CALIBRATION_SEEDS),
                    "sigma_w": list(SIGMA_W), "adam_lr": ADAM_LR}
            cached = store.get("benchmarks.regime_search", cand, code=store.code_of(measure))
            if cached is None and time.process_time() - start > a.budget_seconds:
                print(f"budget spent: {name} not run")
                continue
            rows[name] = (cand, store.map("benchmarks.regime_search", measure, [cand], progress=False)[0])
            print(f"{name}: {rows[name][1]['cpu_seconds']:.0f} CPU s", flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
