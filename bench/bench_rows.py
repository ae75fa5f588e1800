"""The default selection's growth in rows: wall time, CPU time and peak memory of ``select``
under the default protocol and under ``--protocol split`` (not a test; issue 25's benchmark).

Panels (CSV files written to a temporary folder first, not timed): ``synth --regime
additive`` with 10 judges at 5,000, 20,000, 80,000 and 200,000 rows (``make_regime``,
seed 0, one row per group), and a synthetic translation-quality panel of continuous
metrics (25,000 x 31 by default, :func:`continuous_csv`, seed 0): metrics of varied
quality that read one latent item quality (so they correlate) on their own scales, an
MQM-style error score as the label (mostly small, many exact zeros), items in groups of
15 sharing a segment difficulty.

Each run is ``python -m fcps_core select PANEL --seed 0 --quiet --json [--protocol split]``
in a fresh process (the engine imported before the clock starts, as bench_pool.py does).
Printed per run: ``select s`` the CLI's select call (reading the panel, the selection, the
report), ``sel s`` the selection alone (its own ``select_seconds``), ``cpu s`` the CPU
seconds of the select call plus those of its fold workers (shut down and reaped after the
call, so ``RUSAGE_CHILDREN`` holds them, their start-up included), ``main MiB`` the
selecting process's peak RSS (``ru_maxrss``), ``max MiB`` the largest peak RSS of it and
its workers, and the 1-minute load average after the run. Then, per protocol, the least-squares growth exponent
of time in rows (time ~ rows^a on log-log), time(80k)/time(20k), and the default
protocol's time as a multiple of the split protocol's in the same run.

The machine is shared: note the load beside every figure; ratios within one run hold better
than absolute times. The host's own speed drifts too (bench/host_speed.py): its reference
workload's time is printed before and after the runs, to read absolute times against. Long runs: prefix ``nice``.

    PYTHONPATH=. .venv/bin/python bench/bench_rows.py [--rows 5000 20000 80000 200000]
        [--judges 10] [--continuous 25000x31] [--protocols default split] [--repeat 1]

A quick run: ``--rows 5000 20000 --continuous 5000x31``; ``--continuous ''`` skips it.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the child process a select runs in (bench/select_child.py)
from bench.select_child import CHILD, bench_report  # noqa: E402 (the repository on the path first)
from bench.host_speed import host_seconds  # noqa: E402


def additive_csv(path: Path, rows: int, judges: int) -> None:
    from fcps_core.paper.synthetic import make_regime
    from fcps_core.files.csv_writer import write_wide_csv
    write_wide_csv(make_regime("additive", rows=rows, judges=judges, seed=0), str(path), force=True)


def continuous_csv(path: Path, rows: int, judges: int, seed: int = 0, group_size: int = 15) -> None:
    """A translation-quality-like panel of continuous metrics (see the module docstring),
    written as a wide CSV; every draw from one generator seeded by ``seed``.

    Items come in groups of ``group_size`` (a source segment and its systems'
    translations) sharing a segment difficulty; each item has a latent quality. The label
    is an MQM-style error score: minor errors (weight 1, a few 0.1 punctuation errors) and
    major errors (weight 5), Poisson counts whose rate falls with the quality, capped at 25
    and divided by 25, so most labels are small, many exactly 0, a few near 1. Each metric
    reads the quality (negated: high metric, few errors) through its own noise level (from
    near-oracle to weak), a share of the segment difficulty it also sees, and its own
    monotone scale (raw, squashed to (0, 1) like a learned metric, or 0-100 like a string
    overlap score), rounded to 2-4 decimals."""
    rng = np.random.default_rng(seed)
    segment = np.arange(rows) // group_size
    difficulty = rng.normal(size=segment.max() + 1)[segment]
    quality = rng.normal(size=rows) + 0.6 * difficulty
    rate = 0.8 * np.exp(-1.2 * quality)
    errors = (rng.poisson(rate) + 5.0 * rng.poisson(0.25 * rate) + 0.1 * rng.poisson(0.3 * rate, rows))
    label = np.minimum(errors, 25.0) / 25.0
    noise = rng.uniform(0.2, 1.6, judges)
    seen = rng.uniform(0.0, 0.5, judges)
    latent = (quality[:, None] - seen[None, :] * difficulty[:, None]
              + noise[None, :] * rng.normal(size=(rows, judges)))
    scale = rng.choice(["raw", "squashed", "percent"], size=judges)
    decimals = rng.choice([2, 3, 4], size=judges)
    cols = []
    for j in range(judges):
        v = latent[:, j]
        if scale[j] == "squashed":
            v = 1.0 / (1.0 + np.exp(-v))
        elif scale[j] == "percent":
            v = 100.0 / (1.0 + np.exp(-0.8 * v))
        cols.append(np.char.mod(f"%.{decimals[j]}f", v))
    labels = np.char.mod("%.4f", label)
    with open(path, "w") as fh:
        fh.write("item_id,group_id,label," + ",".join(f"M{j + 1}" for j in range(judges)) + "\n")
        for i in range(rows):
            fh.write(f"s{i},seg{segment[i]},{labels[i]}," + ",".join(c[i] for c in cols) + "\n")


def measure(panel: Path, extra: list[str], timeout: float) -> dict:
    """One select run in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FCPS_STORE": str(Path(tempfile.mkdtemp()) / "s.duckdb")}
    t0 = time.perf_counter()
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, "select", str(panel), "--seed", "0", "--quiet",
                              "--json", *extra], cwd=ROOT, env=env, capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": math.nan, "note": f"over {timeout:.0f} s"}
    process_seconds = time.perf_counter() - t0
    run = bench_report(out.stderr)
    if out.returncode != 0 or run is None:
        tail = out.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"seconds": math.nan, "note": f"failed: {tail[0][:120]}"}
    run["tree_cpu"] = run["cpu"]
    run["max_mib"] = run["mib"]
    run["process_seconds"] = process_seconds
    run["load"] = os.getloadavg()[0]
    return run


def exponent(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y on log x (y ~ x^slope)."""
    ok = [(a, b) for a, b in zip(x, y) if b > 0 and math.isfinite(b)]
    if len(ok) < 2:
        return math.nan
    return float(np.polyfit(np.log([a for a, _ in ok]), np.log([b for _, b in ok]), 1)[0])


def fastest(runs: list[dict]) -> dict:
    ok = [r for r in runs if math.isfinite(r.get("seconds", math.nan))]
    return min(ok, key=lambda r: r["seconds"]) if ok else runs[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[5_000, 20_000, 80_000, 200_000])
    ap.add_argument("--judges", type=int, default=10)
    ap.add_argument("--continuous", default="25000x31", help="ROWSxJUDGES of the continuous panel ('' = none)")
    ap.add_argument("--protocols", nargs="+", choices=["default", "split"], default=["default", "split"])
    ap.add_argument("--repeat", type=int, default=1, help="runs per panel and protocol; the fastest is kept")
    ap.add_argument("--timeout", type=float, default=1800.0)
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench_rows_"))
    panels = []
    for n in args.rows:
        path = work / f"additive_{n}.csv"
        additive_csv(path, n, args.judges)
        panels.append((f"additive {n:,} x {args.judges}", n, path))
    if args.continuous:
        n, J = (int(v) for v in args.continuous.lower().split("x"))
        path = work / f"continuous_{n}x{J}.csv"
        continuous_csv(path, n, J)
        panels.append((f"continuous {n:,} x {J}", None, path))
    flags = {"default": [], "split": ["--protocol", "split"]}
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; {os.cpu_count()} cores; "
          f"host reference workload {host_seconds():.2f} s (bench/host_speed.py)")
    print(f"{'panel':<24} {'protocol':<8} {'select s':>8} {'sel s':>7} {'cpu s':>7} {'main MiB':>8} "
          f"{'max MiB':>8} {'load':>5}  selected")
    results: dict[tuple[str, str], dict] = {}
    for name, n, path in panels:
        for protocol in args.protocols:
            run = fastest([measure(path, flags[protocol], args.timeout) for _ in range(max(1, args.repeat))])
            results[(name, protocol)] = run
            sel = run.get("select_seconds")
            print(f"{name:<24} {protocol:<8} {run['seconds']:8.2f} "
                  f"{(sel if sel is not None else math.nan):7.2f} {run.get('tree_cpu', math.nan):7.1f} "
                  f"{run.get('main_mib', math.nan):8.0f} {run.get('max_mib', math.nan):8.0f} "
                  f"{run.get('load', math.nan):5.2f}  {run.get('selected', run.get('note', ''))}", flush=True)
    sizes = [(name, n) for name, n, _ in panels if n is not None]
    for protocol in args.protocols:
        xs = [n for _, n in sizes]
        ts = [results[(name, protocol)]["seconds"] for name, _ in sizes]
        line = f"{protocol}: growth exponent in rows a = {exponent(xs, ts):.2f} (time ~ rows^a)"
        if 20_000 in xs and 80_000 in xs:
            ratio = ts[xs.index(80_000)] / ts[xs.index(20_000)]
            line += f"; time(80k)/time(20k) = {ratio:.2f}" + (" (target <= 5)" if protocol == "default" else "")
        print(line)
    if set(args.protocols) == {"default", "split"}:
        ratios = [f"{name.split()[1]}: "
                  f"{results[(name, 'default')]['seconds'] / results[(name, 'split')]['seconds']:.1f}x"
                  for name, _, _ in panels]
        print("default / split, same run: " + ", ".join(ratios))
    if "default" in args.protocols:
        for name, n, _ in panels:
            run = results[(name, "default")]
            if n == 200_000:
                print(f"target 200k x {args.judges}: {run['seconds']:.1f} s (<= 60: "
                      f"{'met' if run['seconds'] <= 60 else 'NOT met'}), main peak "
                      f"{run['main_mib'] / 1024:.2f} GiB (<= 1.5: {'met' if run['main_mib'] <= 1536 else 'NOT met'})")
            if n is None:
                print(f"{name}, default protocol: {run['seconds']:.1f} s (the target: a 26,250 x 31 "
                      f"continuous panel in <= 20 s)")
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; "
          f"host reference workload {host_seconds():.2f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
