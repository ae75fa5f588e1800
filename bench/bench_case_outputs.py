"""Scoring traffic whose outputs differ from calibration's only by case (run: python -m
bench.bench_case_outputs). Not a test: prints seconds.

Work unit: a 600-row calibration panel of four judges (three pairwise A/B/tie, one
categorical Good/Poor/Meh), the predictor ``select --families table backoff mean_iso``
deploys (a tie_average), and two traffic files of ``--rows`` rows (default 1,000,000) with
the same outputs: ``exact`` in calibration's spelling, ``cased`` as ``a``/``b``/``Tie``,
`` good ``/``POOR``. It times, alternating exact and cased ``--repeat`` times:

* the predictor's DuckDB SQL (``predictor_sql``) over each file loaded as an all-VARCHAR
  table, one DuckDB thread, wall and process CPU seconds;
* the ``score`` command in a subprocess (``python -m fcps_core score P traffic --out F``),
  wall and user + system CPU seconds of the child.

Run from a checkout (the package imported is the checkout's: ``fcps_core`` beside
``bench/``); to compare two checkouts, run it from each with the same ``--keep DIR`` (the
files are made once and reused). It prints the load average at the start and the end.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

JUDGES = ["j_pair", "j_pair2", "j_cat", "j_pair3"]
CASED = {"A": "a", "B": "b", "tie": "Tie", "Good": " good ", "Poor": "POOR", "Meh": "Meh"}


def _rows(rng, n: int, labelled: bool):
    y = rng.integers(0, 2, n)

    def pairwise(acc):
        out = np.where(np.where(rng.random(n) < acc, y, 1 - y) == 1, "A", "B").astype(object)
        out[rng.random(n) < 0.1] = "tie"
        return out

    cat = np.where(np.where(rng.random(n) < 0.75, y, 1 - y) == 1, "Good", "Poor").astype(object)
    cat[rng.random(n) < 0.1] = "Meh"
    cols = [pairwise(0.8), pairwise(0.7), cat, pairwise(0.9)]
    for i in range(n):
        yield [f"i{i}"] + [c[i] for c in cols] + ([int(y[i])] if labelled else [])


def _write(path: Path, header, rows) -> None:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def make_files(work: Path, n: int) -> dict[str, Path]:
    files = {"calibration": work / "cal.csv", "exact": work / f"exact-{n}.csv", "cased": work / f"cased-{n}.csv",
             "predictor": work / "predictor.json"}
    if not files["calibration"].exists():
        _write(files["calibration"], ["item_id"] + JUDGES + ["label"], _rows(np.random.default_rng(0), 600, True))
    if not files["exact"].exists():
        rows = list(_rows(np.random.default_rng(1), n, False))
        _write(files["exact"], ["item_id"] + JUDGES, rows)
        _write(files["cased"], ["item_id"] + JUDGES, ([r[0]] + [CASED[c] for c in r[1:]] for r in rows))
    if not files["predictor"].exists():
        out = subprocess.run([sys.executable, "-m", "fcps_core", "select", str(files["calibration"]),
                              "--families", "table", "backoff", "mean_iso", "--save-model", str(files["predictor"])],
                             cwd=ROOT, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
    return files


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keep", required=True, help="directory for the files (made once, reused)")
    ap.add_argument("--repeat", type=int, default=3)
    opts = ap.parse_args()
    work = Path(opts.keep)
    work.mkdir(parents=True, exist_ok=True)
    print("load average", os.getloadavg(), "checkout", ROOT, flush=True)
    files = make_files(work, opts.rows)
    import duckdb
    from fcps_core import FCPSPredictor
    from fcps_core.deploy.sql import predictor_sql
    sql = predictor_sql(FCPSPredictor.load(str(files["predictor"]))).split("\n", 1)[1]
    con = duckdb.connect()
    con.execute("SET threads = 1")
    for t in ("exact", "cased"):
        con.execute(f"CREATE TABLE t_{t} AS SELECT * FROM read_csv('{files[t]}', all_varchar = true)")
    for rep in range(opts.repeat):
        for t in ("exact", "cased"):
            con.execute(f"CREATE OR REPLACE VIEW traffic AS SELECT * FROM t_{t}")
            w0, c0 = time.perf_counter(), _cpu()
            total = con.execute(f"SELECT sum(prediction) FROM ({sql})").fetchall()[0][0]
            print(f"sql   {t:5s} run {rep}: wall {time.perf_counter() - w0:6.2f} s  cpu {_cpu() - c0:6.2f} s  "
                  f"sum of predictions {total:.6f}", flush=True)
            before = os.times()
            w0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-m", "fcps_core", "score", str(files["predictor"]), str(files[t]),
                                  "--out", str(work / f"scores-{t}.csv"), "--force", "--quiet"],
                                 cwd=ROOT, capture_output=True, text=True)
            wall, after = time.perf_counter() - w0, os.times()
            assert out.returncode == 0, out.stderr
            cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
            print(f"score {t:5s} run {rep}: wall {wall:6.2f} s  cpu {cpu:6.2f} s", flush=True)
    same = (work / "scores-exact.csv").read_bytes() == (work / "scores-cased.csv").read_bytes()
    print("score's predictions files of exact and cased traffic identical:", same)
    print("load average", os.getloadavg())


if __name__ == "__main__":
    main()
