"""Cost of keeping every candidate's figures in a sweep (issue: reproduce the whole paper).

The sweep work unit of ``bench_sweep.py`` (2,000 x 7 mixed panel, budgets 50..800, full
menu, 30 splits by default) run back to back without and with per-candidate records, each
followed by storing the sweep in a fresh DuckDB store; prints both wall times, their ratio
(target: at most 1.5) and the number of candidate rows kept. Alternating order over
``--rounds`` evens out load drift on a shared machine.

Run: PYTHONPATH=. .venv/bin/python bench/bench_sweep_records.py [--splits 30] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from fcps_core.paper.experiments import calibration_growth
from fcps_core.store import Store
from fcps_core.paper.synthetic import make_regime

BUDGETS = [50, 100, 200, 400, 800]
SIZES = {"n_select": 300, "n_val": 300, "n_test": 400}


def one(panel, splits: int, workers: int, keep: bool, folder: Path) -> tuple[float, int]:
    t0 = time.perf_counter()
    res = calibration_growth(panel, BUDGETS, splits=splits, workers=workers, keep_candidates=keep, **SIZES)
    store = Store(folder / f"{'with' if keep else 'without'}-{time.monotonic_ns()}.duckdb")
    store.add_panel(panel, name="work-unit")
    store.save_sweep(res, panel="work-unit")
    return time.perf_counter() - t0, 0 if res.candidates is None else len(res.candidates["K"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--splits", type=int, default=30)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    panel = make_regime("mixed", rows=2000, judges=7, tie_rate=0.1, group_size=2, seed=0)
    print(f"sweep work unit, {args.splits} splits, workers {args.workers}; load average {os.getloadavg()[0]:.2f}")
    times = {False: [], True: []}
    rows = 0
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.rounds):
            for keep in ((False, True) if r % 2 == 0 else (True, False)):
                t, n = one(panel, args.splits, args.workers, keep, Path(tmp))
                times[keep].append(t)
                rows = max(rows, n)
                print(f"  round {r + 1}: {'with' if keep else 'without'} records {t:6.2f} s")
    a, b = sum(times[False]) / len(times[False]), sum(times[True]) / len(times[True])
    print(f"without records {a:.2f} s, with {b:.2f} s ({rows:,} candidate rows stored): ratio {b / a:.2f} "
          f"(target <= 1.5: {'met' if b / a <= 1.5 else 'NOT met'}); load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
