"""Import throughput (run: PYTHONPATH=. .venv/bin/python bench/bench_import.py). Not a test.

Work unit: a 1,000,000-row x 10-judge wide CSV (item_id, group_id, label, 10 pairwise judges
with A/B/tie verdicts), generated in a temporary folder. Measured: the full import (DuckDB
read, panel validation and encoding, one-transaction write to a fresh store) and, for
reference, plain ``pandas.read_csv`` of the same file (parse only: no validation, no store).
The issue's budget is 30 s for the import.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pandas as pd

from fcps_core.ingest import check_importable, load_panel
from fcps_core.store import Store


def write_panel_csv(path: str, rows: int, judges: int, seed: int = 0) -> None:
    """A wide pairwise panel; written in chunks so generation stays within memory."""
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        fh.write("item_id,group_id,label," + ",".join(f"judge{j}" for j in range(judges)) + "\n")
        for start in range(0, rows, 100_000):
            n = min(100_000, rows - start)
            y = rng.integers(0, 2, n)
            agree = rng.random((n, judges)) < np.linspace(0.85, 0.6, judges)
            verdict = np.where(agree, y[:, None], 1 - y[:, None])
            tok = np.array(["B", "A"], dtype=object)[verdict]
            tok[rng.random((n, judges)) < 0.03] = "tie"
            ids = np.arange(start, start + n)
            frame = pd.DataFrame(tok, columns=[f"judge{j}" for j in range(judges)])
            frame.insert(0, "label", y)
            frame.insert(0, "group_id", [f"g{i // 2}" for i in ids])
            frame.insert(0, "item_id", [f"it{i}" for i in ids])
            frame.to_csv(fh, header=False, index=False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--judges", type=int, default=10)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "panel.csv")
        t0 = time.perf_counter()
        write_panel_csv(path, args.rows, args.judges)
        size = os.path.getsize(path) / 2**20
        print(f"generated {args.rows:,} rows x {args.judges} judges ({size:.1f} MB) "
              f"in {time.perf_counter() - t0:.1f} s")

        t0 = time.perf_counter()
        pd.read_csv(path)
        t_pandas = time.perf_counter() - t0

        store = Store(os.path.join(tmp, "bench.duckdb"))
        store.schema_version()            # create the store outside the timed region
        t0 = time.perf_counter()
        panel = load_panel(path, name="bench")
        check_importable(panel)
        t_read = time.perf_counter() - t0
        store.add_panel(panel, name="bench")
        t_import = time.perf_counter() - t0

        t0 = time.perf_counter()
        store.load_panel("bench")
        t_reload = time.perf_counter() - t0

        print(f"import (read + validate + store): {t_import:.2f} s "
              f"(read+validate {t_read:.2f} s, write {t_import - t_read:.2f} s); budget 30 s: "
              f"{'OK' if t_import < 30 else 'OVER'}")
        print(f"pandas.read_csv of the same file: {t_pandas:.2f} s; "
              f"import / pandas ratio: {t_import / t_pandas:.2f}x")
        print(f"reload of the stored panel: {t_reload:.2f} s")


if __name__ == "__main__":
    main()
