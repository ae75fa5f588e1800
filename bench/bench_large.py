"""One full-menu selection on 1,000,000 rows x 10 judges: wall time and peak RSS.

The panel is built in memory from integer codes (``JudgeColumn`` objects made directly,
no string parsing: the target is selection, not reading files). It follows
``make_regime('mixed', tie_rate=0.1)``: verdicts A/B at random, 10% of outputs a tie (80%)
or parse_error (20%), the label Bernoulli(1/2 additive + 1/2 three-way parity). Blocks are
drawn by ratio 1:2:1:1 (S:M:V:T) over groups of two rows; the menu is the default one
(info_first, complexity_penalized, random; every family; K up to 10, tables up to 8).

Targets (issue 3): <= 10 s wall for the selection, <= 4 GiB peak RSS for the process; the
large-pools issue: at or below 5.2 s and 1.1 GiB under ``--protocol split``. Under the split
protocol the choice rule, the bootstrap and the baselines run on the distinct V rows (10
discrete judges: about 60,000 distinct (outputs, label) rows of 200,000), see
``fcps_core.selection.folds``. On a shared machine, run it next to a checkout of the
previous code in the same session and note the load average printed beside each run.
Run: PYTHONPATH=. .venv/bin/python bench/bench_large.py [--rows N] [--judges J] [--protocol split]

``--base REV [--rounds N]``: the same work unit in fresh processes of this tree and of a
detached worktree of REV (each tree running its own bench/bench_large.py), alternating for N
rounds (default 2), then each tree's selection wall and CPU seconds and peak RSS and the ratio
of the medians: the split protocol's figures against the tree an issue was filed on (issue 25:
``--base 78ada3b``), which a chain of branch-against-its-parent comparisons does not show.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from fcps_core import make_blocks, select
from fcps_core.selection import PAPER_PROTOCOL
from fcps_core.data.panel import JudgeColumn, Panel
from fcps_core.paper.synthetic import target_probability

#: "split" = the command line's select --protocol split (choice rule, estimate and baselines
#: at their defaults)
PROTOCOL = {"split": {"protocol": "split"}, "paper": dict(PAPER_PROTOCOL), "crossfit": {}}
VOCAB = ["A", "B", "parse_error", "tie"]          # sorted, as the CSV reader orders them
SCALAR = {"A": 1.0, "B": 0.0, "parse_error": 0.5, "tie": 0.5}


def build_panel(rows: int, judges: int, seed: int = 0) -> Panel:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(rows, judges)).astype(float)
    codes = np.where(x == 1, 0, 1).astype(np.int64)                 # A = 0, B = 1
    tie = rng.random((rows, judges)) < 0.1
    kind = rng.random((rows, judges)) < 0.8
    codes[tie] = np.where(kind[tie], 3, 2)                           # tie = 3, parse_error = 2
    x[tie] = 0.5
    y = (rng.random(rows) < target_probability("mixed", x)).astype(float)
    cols = [JudgeColumn(name=f"J{j + 1}", schema="pairwise", codes=np.ascontiguousarray(codes[:, j]),
                        vocab=list(VOCAB), values=None, scalar_map=dict(SCALAR))
            for j in range(judges)]
    ids = np.arange(rows, dtype=np.int64)
    return Panel(item_ids=ids, group_ids=ids // 2, labels=y, judges=cols, name="large-mixed")


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20   # KiB on Linux


def _run_tree(tree: Path, args) -> dict:
    """One fresh-process run of ``tree``'s own bench/bench_large.py: its printed selection
    wall and CPU seconds and peak RSS (GiB)."""
    out = subprocess.run([sys.executable, "bench/bench_large.py", "--rows", str(args.rows), "--judges",
                          str(args.judges), "--protocol", args.protocol], cwd=tree, capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(tree)}, timeout=3600)
    sel = re.search(r"selection: ([0-9.]+) s wall, ([0-9.]+) s CPU", out.stdout)
    rss = re.search(r"peak RSS \(whole process\): ([0-9.]+) GiB", out.stdout)
    if out.returncode or not sel or not rss:
        raise SystemExit(f"bench_large in {tree} failed: {(out.stderr or out.stdout).strip()[-500:]}")
    return {"wall": float(sel.group(1)), "cpu": float(sel.group(2)), "rss": float(rss.group(1))}


def against_base(args) -> None:
    """--base: this tree and REV's alternately, fresh processes, the medians' ratios."""
    import statistics
    import tempfile
    here = Path(__file__).resolve().parent.parent
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(base), args.base], cwd=here, check=True,
                       capture_output=True)
        try:
            runs = {"this tree": [], args.base: []}
            for r in range(args.rounds):
                for name, tree in (("this tree", here), (args.base, base))[::1 if r % 2 == 0 else -1]:
                    run = _run_tree(tree, args)
                    runs[name].append(run)
                    print(f"round {r + 1}: {name}: selection {run['wall']:.2f} s wall, {run['cpu']:.2f} s CPU, "
                          f"peak {run['rss']:.2f} GiB (load {os.getloadavg()[0]:.2f})", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], cwd=here, capture_output=True)
    med = {k: {m: statistics.median(x[m] for x in v) for m in ("wall", "cpu", "rss")} for k, v in runs.items()}
    mine, theirs = med["this tree"], med[args.base]
    print(f"medians: this tree {mine['wall']:.2f} s wall / {mine['cpu']:.2f} s CPU / {mine['rss']:.2f} GiB; "
          f"{args.base} {theirs['wall']:.2f} / {theirs['cpu']:.2f} / {theirs['rss']:.2f}; ratio (this / base) "
          f"wall {mine['wall'] / theirs['wall']:.2f}, CPU {mine['cpu'] / theirs['cpu']:.2f}, "
          f"peak {mine['rss'] / theirs['rss']:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--judges", type=int, default=10)
    ap.add_argument("--protocol", choices=sorted(PROTOCOL), default="split",
                    help="split: the default selection under --protocol split (the large-pools "
                         "issue's target); paper: the paper's bare protocol; crossfit: the default")
    ap.add_argument("--base", default=None, help="a revision to run alternately with this tree (fresh processes)")
    ap.add_argument("--rounds", type=int, default=2, help="--base: rounds of one run per tree")
    args = ap.parse_args()
    if args.base:
        against_base(args)
        return
    t0 = time.perf_counter()
    panel = build_panel(args.rows, args.judges)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    t_build = time.perf_counter() - t0
    print(f"panel: {panel.n_rows:,} rows x {len(panel.judges)} judges, blocks "
          f"{blocks.sizes()} (built in {t_build:.1f} s, not timed below); "
          f"load average {os.getloadavg()[0]:.2f}; RSS after build {peak_rss_gib():.2f} GiB")
    cpu0, t0 = time.process_time(), time.perf_counter()
    result = select(panel, blocks, **PROTOCOL[args.protocol])
    t_sel = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    rss = peak_rss_gib()
    sel = result.selected
    # the selection uses up to two threads, so CPU can exceed wall; wall well above CPU
    # means the process waited for cores other processes held
    waited = " (wall well above CPU: other load on the machine)" if t_sel > 1.15 * cpu else ""
    print(f"selection: {t_sel:.2f} s wall, {cpu:.2f} s CPU{waited}; {result.menu_size} fitted candidates in "
          f"{len(result.candidates)} (path, K, family) entries")
    print(f"selected: {sel.family} K={sel.K} ({sel.path_rule}) val_mse {sel.val_mse:.5f} "
          f"test_mse {sel.test_mse:.5f}; regime {result.regime.get('quadrant')}")
    print(f"peak RSS (whole process): {rss:.2f} GiB; load average after {os.getloadavg()[0]:.2f}")
    print(f"target: <= 10 s: {'met' if t_sel <= 10 else 'NOT met'}; "
          f"<= 4 GiB: {'met' if rss <= 4 else 'NOT met'}")
    if args.protocol == "split":
        print(f"large-pools target: <= 5.2 s: {'met' if t_sel <= 5.2 else 'NOT met'}; "
              f"<= 1.1 GiB: {'met' if rss <= 1.1 else 'NOT met'}")


if __name__ == "__main__":
    main()
