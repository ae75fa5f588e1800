"""Scoring wall time: ``score`` versus the predictor compiled to SQL (run: python -m
bench.bench_deploy). Not a test: prints numbers and ratios.

Work unit: 1,000,000 traffic rows x 10 pairwise judges (A/B/tie/parse_error, a few missing
outputs), written once as a CSV file. Predictors are calibrated on a separate 20,000-row
labelled panel of the same regime: the default selection (cross-fitted protocol,
tie_average), and the paper's split protocol forced to the ``table`` and to the
``logistic`` family. For each predictor it times, in the same run:

* library: ``read_panel`` (the predictor's schemas, no labels) + ``FCPSPredictor.predict``,
  each on its own, and their sum;
* library, the ``score`` command's reader: ``deploy.traffic.read_traffic`` (DuckDB read of
  the file, Arrow columns, only the predictor's judges built) + ``FCPSPredictor.score``;
* CLI end to end: ``python -m fcps_core score P.json traffic.csv --out preds.csv`` in a
  subprocess (interpreter start, imports, reading, scoring, writing), wall and CPU
  (user + system, all threads) seconds; and its breakdown, from a subprocess that runs the
  command's steps one by one: reading (the predictor file and the traffic), scoring,
  writing the predictions file, and the rest of that subprocess's wall time (interpreter
  start, imports, exit);
* SQL: ``predictor_sql`` run by DuckDB straight over the same CSV file (a view on
  ``read_csv``: parsing included), the result fetched to numpy, and written to a CSV
  file with ``COPY`` (what ``score --out`` produces); and over the file already loaded
  as a table (the warehouse case).

and checks the SQL's predictions against the library's (max abs difference). Issue
"Deploy and monitor" targets: score under 3 s, and the SQL at least as fast.
Options: ``--rows N`` (default 1,000,000), ``--keep DIR`` (reuse/keep the files there),
``--reuse-predictors`` (with ``--keep``: load the predictors saved there by an earlier run
instead of selecting them again), ``--repeat N`` (median of N runs, default 3).
The machine's load average is printed at the start and the end: on a shared machine
compare the ratios and CPU seconds of one run, not wall times across runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from fcps_core import FCPSPredictor, make_blocks, read_panel, select  # noqa: E402
from fcps_core.deploy.sql import predictor_sql  # noqa: E402
from fcps_core.deploy.traffic import read_traffic  # noqa: E402
from fcps_core.selection import PAPER_PROTOCOL  # noqa: E402
from fcps_core.paper.synthetic import make_regime  # noqa: E402


#: the steps of ``score`` (fcps_core.cli.deploy_commands.cmd_score), timed one by one in a
#: fresh interpreter: argv = [repo root, predictor, traffic, output]
PHASES = r"""
import os, sys, time
t0 = time.perf_counter()
sys.path.insert(0, sys.argv[1])
from fcps_core.cli.main import build_parser
from fcps_core.cli.context import RunContext
from fcps_core.cli import deploy_commands as dc
t1 = time.perf_counter()
args = build_parser().parse_args(["score", sys.argv[2], sys.argv[3], "--out", sys.argv[4], "--force", "--quiet"])
ctx = RunContext()
predictor = dc.load_predictor(args.model)
panel, ids = dc._score_traffic(args, ctx, predictor)
t2 = time.perf_counter()
pred, support = predictor.score(panel)
t3 = time.perf_counter()
dc.write_predictions(args.out, panel, pred, support, force=True, item_ids=ids)
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, "fast-reader" if ids is not None else "panel-reader")
"""


def timed(fn, repeat=3):
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def child_cpu(run) -> float:
    """CPU seconds (user + system, every thread) of the subprocess ``run()`` starts."""
    import resource
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    run()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def write_traffic(path: Path, rows: int) -> None:
    """The traffic file, written with pandas (the writer is not what is timed)."""
    import pandas as pd
    panel = make_regime("mixed", rows=rows, judges=10, seed=1, tie_rate=0.05)
    rng = np.random.default_rng(2)
    cols = {"item_id": panel.item_ids}
    for j in panel.judges:
        out = np.asarray(j.vocab, dtype=object)[j.codes]
        out[rng.random(rows) < 0.01] = ""            # 1% missing outputs
        cols[j.name] = out
    pd.DataFrame(cols).to_csv(path, index=False)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--keep", help="directory for the traffic file and predictors (reused if present)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--reuse-predictors", action="store_true",
                    help="with --keep: load the predictors saved there instead of selecting again")
    opts = ap.parse_args()
    import duckdb
    print(f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    if sys.flags.dont_write_bytecode and not any((ROOT / "fcps_core").rglob("*.pyc")):
        print("note: no bytecode cache (PYTHONDONTWRITEBYTECODE): every CLI start compiles fcps_core's "
              "modules again (about 0.1-0.2 s of the imports)")
    work = Path(opts.keep or tempfile.mkdtemp(prefix="fcps-bench-deploy-"))
    work.mkdir(parents=True, exist_ok=True)
    traffic = work / f"traffic-{opts.rows}.csv"
    if not traffic.exists():
        t0 = time.perf_counter()
        write_traffic(traffic, opts.rows)
        print(f"wrote {traffic} ({traffic.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.1f} s")

    names = ("default", "table", "logistic")
    predictors = {}
    if opts.reuse_predictors and all((work / f"predictor-{n}.json").exists() for n in names):
        predictors = {n: FCPSPredictor.load(str(work / f"predictor-{n}.json")) for n in names}
        print(f"predictors reused from {work}")
    else:
        cal = make_regime("mixed", rows=20_000, judges=10, seed=0, tie_rate=0.05)
        blocks = make_blocks(cal, split="1:2:1", seed=0)
        t0 = time.perf_counter()
        predictors["default"] = select(cal, blocks).predictor()
        print(f"default selection on the 20,000-row calibration panel: {time.perf_counter() - t0:.1f} s")
        for fam in ("table", "logistic"):
            predictors[fam] = select(cal, blocks, families=[fam], **PAPER_PROTOCOL).predictor()

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name, pred in predictors.items():
        model = work / f"predictor-{name}.json"
        pred.save(str(model), force=True)
        pred = FCPSPredictor.load(str(model))
        members = pred.families
        print(f"\n== {name}: {pred.family} ({len(members)} member(s): {', '.join(sorted(set(members)))}), "
              f"{len(pred.judges)} judges")
        schemas = pred.judge_schemas()
        t_read, panel = timed(lambda: read_panel(str(traffic), schema=schemas, require_labels=False), opts.repeat)
        t_pred, py = timed(lambda: pred.predict(panel), opts.repeat)
        t_lib = t_read + t_pred
        t_fast, fast = timed(lambda: read_traffic(str(traffic), pred.judges, schema=schemas), opts.repeat)
        t_score, _ = timed(lambda: pred.score(fast.panel), opts.repeat)
        out_csv = work / "preds.csv"
        cmd = [sys.executable, "-m", "fcps_core", "score", str(model), str(traffic), "--out", str(out_csv), "--force"]
        t_cli, proc = timed(lambda: subprocess.run(cmd, env=env, cwd=work, capture_output=True), opts.repeat)
        if proc.returncode != 0:
            print("  score failed:", proc.stderr.decode()[-300:])
        cpu_cli, _ = timed(lambda: child_cpu(lambda: subprocess.run(cmd, env=env, cwd=work, capture_output=True)),
                           opts.repeat)
        phase_cmd = [sys.executable, "-c", PHASES, str(ROOT), str(model), str(traffic), str(work / "preds-phases.csv")]
        runs = [timed(lambda: subprocess.run(phase_cmd, env=env, cwd=work, capture_output=True, text=True), 1)
                for _ in range(opts.repeat)]
        if any(p.returncode for _, p in runs):
            print("  phases failed:", runs[0][1].stderr[-300:])
            breakdown = None
        else:
            # imports: the run's wall time less its timed steps (interpreter start and exit included)
            split = [[wall - sum(float(x) for x in p.stdout.split()[1:4])] + [float(x) for x in p.stdout.split()[1:4]]
                     for wall, p in runs]
            breakdown = [statistics.median(s[k] for s in split) for k in range(4)] + [runs[0][1].stdout.split()[4]]

        sql = predictor_sql(pred)
        con = duckdb.connect()
        con.execute(f"CREATE VIEW traffic AS SELECT * FROM read_csv('{traffic}')")
        t_sql_file, res = timed(lambda: con.execute(sql).fetchnumpy(), opts.repeat)
        sql_csv = work / "preds-sql.csv"
        t_sql_copy, _ = timed(lambda: con.execute(f"COPY ({sql}) TO '{sql_csv}' (HEADER)"), opts.repeat)
        con.execute("DROP VIEW traffic")
        con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv('{traffic}')")
        t_sql_table, res_t = timed(lambda: con.execute(sql).fetchnumpy(), opts.repeat)
        con.close()

        order = {item: i for i, item in enumerate(panel.item_ids)}
        got = np.empty(len(py))
        got[[order[i] for i in res["item_id"]]] = res["prediction"]
        diff = float(np.max(np.abs(got - py)))

        print(f"  library: read_panel {t_read:.2f} s + predict {t_pred:.2f} s = {t_lib:.2f} s "
              f"(score target under 3 s: {'met' if t_lib < 3 else 'NOT met'})")
        print(f"  library, score's reader: read_traffic {t_fast:.2f} s + score {t_score:.2f} s "
              f"= {t_fast + t_score:.2f} s ({t_read / t_fast:.1f}x faster reading than read_panel)")
        print(f"  CLI score end to end: {t_cli:.2f} s wall, {cpu_cli:.2f} s CPU "
              f"({'met' if t_cli < 3 else 'NOT met'}; load average {os.getloadavg()[0]:.2f})")
        if breakdown:
            imp, rd, sc, wr, how = breakdown
            print(f"  CLI breakdown: start and imports {imp:.2f} s, read {rd:.2f} s ({how}, predictor "
                  f"file included), score {sc:.2f} s, write {wr:.2f} s = {imp + rd + sc + wr:.2f} s")
        print(f"  SQL over the CSV file: fetch {t_sql_file:.2f} s, COPY to CSV {t_sql_copy:.2f} s; "
              f"over a loaded table {t_sql_table:.2f} s; SQL text {len(sql) / 1024:.0f} KiB")
        print(f"  ratios: library / SQL-over-file {t_lib / t_sql_file:.1f}x, CLI / SQL COPY {t_cli / t_sql_copy:.1f}x, "
              f"predict alone / SQL-on-table {t_pred / t_sql_table:.1f}x; max |SQL - predict| = {diff:.2g}")
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
