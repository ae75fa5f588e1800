"""Calibration-growth sweep: the engine against a straightforward implementation, same run.

Work unit (issue 3): a 2,000-row panel in 1,000 groups, 7 pairwise judges with
A/B/tie/parse_error outputs (``make_regime('mixed', rows=2000, judges=7, tie_rate=0.1,
group_size=2, seed=0)``), budgets n_M = 50, 100, 200, 400, 800, 30 grouped splits, the full
menu (3 path rules x K = 1..7 x table, backoff (6 shrinkages), residual (4 bases x 3
shrinkages), the six scalar families, ds_jury), n_S = 300, n_V = 300, n_T = 400.

* engine: ``calibration_growth(panel, budgets, ..., splits=30, workers=2)``, wall time
  including the worker pool start.
* baseline: ``bench.reference.families.reference_candidates`` -- every menu entry
  fitted on its own (pandas groupby for table cells, one sklearn Ridge /
  IsotonicRegression / LogisticRegression per candidate, row-level Python EM for ds_jury),
  on the same nested blocks and the same path rules, in one process. By default it runs on
  the first ``--baseline-splits`` splits (all five budgets) and its time is scaled linearly
  to 30 splits (selections are independent and equally sized, so the cost is linear in the
  number of splits); the output says so. ``--baseline-splits 30`` times it in full.

The ratio is reported as wall time (baseline in 1 process vs the engine with 2 workers)
and per CPU core (engine wall x workers), so neither number hides the parallelism.
The engine's and the baseline's full-menu choices are compared on the splits both ran.

Run: PYTHONPATH=. .venv/bin/python bench/bench_sweep.py [--baseline-splits N] [--workers W]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from fcps_core.paper.experiments import MENUS, calibration_growth, nested_blocks
from fcps_core.families import REGISTRY
from bench.reference.families import reference_candidates
from fcps_core.selection import FCPSSelector
from fcps_core.paper.synthetic import make_regime

BUDGETS = [50, 100, 200, 400, 800]
SIZES = {"n_select": 300, "n_val": 300, "n_test": 400}
SPLITS = 30


def baseline_sweep(panel, n_splits: int, seed: int = 0) -> list[dict]:
    """The straightforward sweep on the first ``n_splits`` splits (same seeds as the engine)."""
    seeds = [int(s) for s in np.random.SeedSequence(seed).generate_state(SPLITS)][:n_splits]
    records = []
    for r, s in enumerate(seeds):
        for n_M, blocks in zip(BUDGETS, nested_blocks(panel, BUDGETS, seed=s, **SIZES)):
            selector = FCPSSelector(seed=s, families=MENUS["full"])
            cands = reference_candidates(panel, blocks, selector)
            best = min(range(len(cands)), key=lambda i: (
                cands[i]["val_risk"], cands[i]["K"], REGISTRY[cands[i]["family"]].complexity_rank, i))
            c = cands[best]
            records.append({"split": r, "n_M": n_M, "family": c["family"], "K": c["K"],
                            "test_mse": c["test_mse"]})
    return records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline-splits", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    panel = make_regime("mixed", rows=2000, judges=7, tie_rate=0.1, group_size=2, seed=0)
    print(f"panel: {panel.n_rows} rows, {len(set(panel.group_ids))} groups, {len(panel.judges)} judges; "
          f"budgets {BUDGETS}; {SPLITS} splits; full menu; cores on this machine: {os.cpu_count()}; "
          f"load average at start: {os.getloadavg()[0]:.2f}")

    t0 = time.perf_counter()
    res = calibration_growth(panel, BUDGETS, splits=SPLITS, workers=args.workers, **SIZES)
    t_engine = time.perf_counter() - t0
    n_sel = len(res.records)
    print(f"engine  : {t_engine:7.2f} s wall for {n_sel} full-menu selections "
          f"(workers={args.workers}; {t_engine / n_sel * 1000 * args.workers:.0f} ms CPU per selection)")

    k = max(1, min(args.baseline_splits, SPLITS))
    t0 = time.perf_counter()
    base = baseline_sweep(panel, k)
    t_base_part = time.perf_counter() - t0
    t_base = t_base_part * SPLITS / k
    scaled = "" if k == SPLITS else (f" (measured {t_base_part:.1f} s on {k} of {SPLITS} splits x "
                                     f"{len(BUDGETS)} budgets = {len(base)} selections, scaled x{SPLITS / k:.1f})")
    print(f"baseline: {t_base:7.2f} s wall, 1 process{scaled}")
    print(f"speed-up: {t_base / t_engine:.1f}x wall (baseline 1 process vs engine {args.workers} workers); "
          f"{t_base / (t_engine * args.workers):.1f}x per CPU core")
    print(f"target  : engine <= 15 s wall: {'met' if t_engine <= 15 else 'NOT met'}; "
          f">= 20x wall: {'met' if t_base / t_engine >= 20 else 'NOT met'}")

    eng = {(r["split"], r["n_M"]): r["menus"]["full"] for r in res.records}
    same = sum(eng[(b["split"], b["n_M"])]["family"] == b["family"] and
               eng[(b["split"], b["n_M"])]["K"] == b["K"] for b in base)
    gap = max(abs(eng[(b["split"], b["n_M"])]["test_mse"] - b["test_mse"]) for b in base)
    print(f"check   : full-menu choice (family, K) identical in {same}/{len(base)} baseline selections; "
          f"max |test_mse difference| {gap:.2e} (the baseline's logistic is sklearn lbfgs at tol=1e-4)")


if __name__ == "__main__":
    main()
