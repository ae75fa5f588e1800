"""Large judge pools: one selection's time and peak memory against the number of judges
(not a test; the large-pools issue's benchmark).

Runs ``python -m fcps_core select PANEL --protocol split`` (every other option at its
default) in a fresh process per panel: synthetic ``additive`` panels of 2,000 rows with 20,
50, 100 and 200 judges, and data/hanna.csv (960 x 92). Prints, per panel, the selection's
wall time (the ``select`` call inside the process: reading the panel, the selection and
the report; interpreter start-up and imports excluded; ``select s``: the selection alone, the
result's own ``select_seconds``; ``cpu s``: the CPU seconds of the select call, all
threads, which other processes' load disturbs less than the wall time), the process's peak
RSS and the 1-minute load average after the row, then the
fitted growth exponents of time and memory in the number of judges (least squares on
log-log) and time(200)/time(20). The implementation at ``--base`` (default: the commit
before the path-wise fits) runs on the smaller pools and on HANNA in the same run (checked out into a
temporary git worktree), giving the speed-up and the memory ratio on the same machine,
under the same load. ``--repeat N`` runs each panel N times, the base and the working
tree alternately, and keeps each one's fastest selection (the run least disturbed by the
machine's other work).

    PYTHONPATH=. .venv/bin/python bench/bench_pool.py [--base a0ca848] [--base-max 50]
        [--judges 20 50 100 200] [--repeat 1] [--crossfit]

``--crossfit`` also times the default protocol (cross-fitted, 5 folds x 2 repeats) on the
largest synthetic panel. The machine has 2 cores and is shared: the load average is printed
beside the figures; ratios measured in one run hold better than absolute times.
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: the child process a select runs in (bench/select_child.py)
from bench.select_child import CHILD, bench_report  # noqa: E402 (the repository on the path first)


def measure(tree: Path, panel: Path, extra: list[str], timeout: float) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree), "FCPS_STORE": str(Path(tempfile.mkdtemp()) / "s.duckdb")}
    try:
        out = subprocess.run([sys.executable, "-c", CHILD, "select", str(panel), "--quiet", "--json", *extra],
                             cwd=tree, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": math.nan, "rss_mib": math.nan, "note": f"over {timeout:.0f} s"}
    run = bench_report(out.stderr)
    if out.returncode != 0 or run is None:
        tail = out.stderr.strip().splitlines()[-1:] or ["no output"]
        return {"seconds": math.nan, "rss_mib": math.nan, "note": f"failed: {tail[0][:120]}"}
    # this process's own CPU and peak, as this bench has always compared them
    return {**run, "cpu_seconds": run["main_cpu"], "rss_mib": run["main_mib"]}


def _sel(run: dict | None) -> float:
    v = None if run is None else run.get("select_seconds")
    return math.nan if v is None else float(v)


def _cpu(run: dict | None) -> float:
    v = None if run is None else run.get("cpu_seconds")
    return math.nan if v is None else float(v)


def fastest(runs: list[dict]) -> dict:
    """The run with the shortest selection (failed runs last)."""
    return min(runs, key=lambda r: (not math.isfinite(_sel(r)), _sel(r) if math.isfinite(_sel(r)) else 0.0))


def exponent(x: list[float], y: list[float]) -> float:
    """Least-squares slope of log y on log x (y ~ x^slope)."""
    ok = [(a, b) for a, b in zip(x, y) if b > 0 and math.isfinite(b)]
    if len(ok) < 2:
        return math.nan
    lx, ly = np.log([a for a, _ in ok]), np.log([b for _, b in ok])
    return float(np.polyfit(lx, ly, 1)[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="a0ca848", help="revision to compare against ('' = none)")
    ap.add_argument("--base-max", type=int, default=50, help="largest pool the base runs on")
    ap.add_argument("--judges", type=int, nargs="+", default=[20, 50, 100, 200])
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--crossfit", action="store_true", help="also time the default protocol on the largest pool")
    ap.add_argument("--repeat", type=int, default=1, help="runs per panel and tree; the fastest is kept")
    ap.add_argument("--timeout", type=float, default=900.0)
    args = ap.parse_args()

    from fcps_core.paper.synthetic import make_regime
    from fcps_core.files.csv_writer import write_wide_csv

    work = Path(tempfile.mkdtemp(prefix="bench_pool_"))
    panels = []
    for J in args.judges:
        path = work / f"additive_{J}.csv"
        write_wide_csv(make_regime("additive", rows=args.rows, judges=J, seed=1), str(path))
        panels.append((f"additive {args.rows} x {J}", J, path))
    hanna = ROOT / "data" / "hanna.csv"
    split = ["--protocol", "split"]

    base_tree = None
    if args.base:
        base_tree = Path(tempfile.mkdtemp()) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base_tree), args.base], cwd=ROOT,
                       check=True, capture_output=True)
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}; base = {args.base or 'none'}")
    print(f"{'panel':<24} {'select s':>8} {'cpu s':>6} {'wall s':>8} {'peak MiB':>9} {'base sel':>8} "
          f"{'base cpu':>8} {'base s':>8} {'base MiB':>9} {'speed-up':>9} {'memory':>7} {'load':>5}")
    rows = []
    try:
        for name, J, path in panels + [("hanna 960 x 92", 92, hanna)]:
            with_base = base_tree is not None and (J <= args.base_max or path == hanna)
            news, olds = [], []
            for _ in range(max(1, args.repeat)):
                news.append(measure(ROOT, path, split, args.timeout))
                if with_base:
                    olds.append(measure(base_tree, path, split, args.timeout))
            new, old = fastest(news), (fastest(olds) if with_base else None)
            rows.append((name, J, new, old))
            speed = (old["seconds"] / new["seconds"]) if old else math.nan
            mem = (old["rss_mib"] / new["rss_mib"]) if old else math.nan
            print(f"{name:<24} {_sel(new):8.2f} {_cpu(new):6.2f} {new['seconds']:8.2f} {new['rss_mib']:9.0f} "
                  f"{_sel(old):8.2f} {_cpu(old):8.2f} {old['seconds'] if old else math.nan:8.2f} "
                  f"{old['rss_mib'] if old else math.nan:9.0f} "
                  f"{speed:8.1f}x {mem:6.1f}x {os.getloadavg()[0]:5.2f}"
                  + (f"  {new.get('note', '')}" if new.get("note") else ""),
                  flush=True)
        synth = [(J, new) for name, J, new, _ in rows if name.startswith("additive")]
        js = [J for J, _ in synth]
        t = [n["seconds"] for _, n in synth]
        ts = [_sel(n) for _, n in synth]
        m = [n["rss_mib"] for _, n in synth]
        print(f"growth exponent in judges (time ~ J^a): wall a = {exponent(js, t):.2f}, "
              f"selection a = {exponent(js, ts):.2f}, peak memory a = {exponent(js, m):.2f}")
        if min(js) == 20 and max(js) == 200:
            print(f"time(200 judges) / time(20 judges) = {t[js.index(200)] / t[js.index(20)]:.1f} wall, "
                  f"{ts[js.index(200)] / ts[js.index(20)]:.1f} selection (target <= 12)")
        if args.crossfit:
            J, path = max((J, p) for _, J, p in panels)
            cf = measure(ROOT, path, [], args.timeout)
            ratio = cf["seconds"] / t[js.index(J)]
            print(f"default cross-fitted protocol, {args.rows} x {J}: {cf['seconds']:.1f} s, "
                  f"{cf['rss_mib']:.0f} MiB peak ({ratio:.1f}x the split protocol; load "
                  f"{os.getloadavg()[0]:.2f})")
    finally:
        if base_tree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, capture_output=True)
    print(f"load average after: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
