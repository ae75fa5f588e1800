"""Selection wall time (run: make bench). Not a test: prints numbers and ratios.

Work units: a 2,000-row, 7-judge pairwise panel (A/B/tie/parse_error) with the default full
menu (3 path rules x K=1..7 x all ten families), and the 65-judge LLMBar panel. For each it
times, in the same run:

* the default selection (cross-fitted protocol, tie_average, BBC-CV estimate, baselines),
* the split protocol with the same reporting (bootstrap over V, baselines),
* the paper's bare split protocol (argmin, no estimate, no baselines),

and prints the ratio default / split. Issue 9's targets: default under 2 s (2,000 x 7) and
under 30 s (LLMBar) on 2 cores, and at most folds x repeats + 2 = 12 times the split protocol.

Then the frontier's share of the default selection on the same two panels (issue 24's target:
at most +20 %), measured as ``bench/bench_frontier.py --timing`` measures it: pairs of runs
with and without the frontier points' learning-curve refits, the order alternating, each
pair's share with the frontier's own time taken out, the median of the pairs with its 90 %
sign-test interval. ``--no-frontier`` leaves it out (it takes a few minutes);
``--frontier-repeat N`` sets the pairs per panel (default 5).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

from fcps_core import make_blocks, read_panel, select
from fcps_core.selection import PAPER_PROTOCOL, progress_to_stderr
from fcps_core.paper.synthetic import make_regime


def timed(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def measure(name, panel, blocks, repeat):
    t_split, _ = timed(lambda: select(panel, blocks, protocol="split"), repeat)
    t_paper, r_paper = timed(lambda: select(panel, blocks, **PAPER_PROTOCOL), repeat)
    show = "--progress" in sys.argv
    t_cf, r = timed(lambda: select(panel, blocks, progress=progress_to_stderr if show else None), repeat)
    print(f"{name}: default (crossfit {r.selector.folds}x{r.selector.repeats}, {r.selector.choice}, BBC, "
          f"baselines; {r.menu_size} candidates) {t_cf:.2f} s; split protocol with the same reporting "
          f"{t_split:.2f} s; paper's bare split protocol ({r_paper.menu_size} candidates) {t_paper:.2f} s; "
          f"ratio default/split {t_cf / t_split:.1f}x (bound {r.selector.folds * r.selector.repeats + 2}), "
          f"default/bare {t_cf / t_paper:.1f}x")
    return t_cf


def main() -> None:
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    panel = make_regime("mixed", rows=2000, judges=7, seed=0, tie_rate=0.1, group_size=2)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    t = measure("2000 rows x 7 judges", panel, blocks, 3)
    print(f"  target under 2 s: {'met' if t < 2 else 'NOT met'}")
    t_table, _ = timed(lambda: select(panel, blocks, families=["table"], **PAPER_PROTOCOL))
    print(f"  same panel, paper protocol, table-only menu: {t_table:.3f} s")
    llmbar = read_panel(str(Path(__file__).resolve().parent.parent / "data" / "llmbar.csv"))
    lb = make_blocks(llmbar, split="1:2:1:1", seed=0)
    t = measure("LLMBar 838 rows x 65 judges", llmbar, lb, 1)
    print(f"  target under 30 s: {'met' if t < 30 else 'NOT met'}")
    if "--no-frontier" not in sys.argv:
        from bench.bench_frontier import timing
        repeat = int(sys.argv[sys.argv.index("--frontier-repeat") + 1]) if "--frontier-repeat" in sys.argv else 5
        print("the frontier's share of the default selection (target: at most +20 %; 'from the choice on' "
              "leaves out the folds' run-to-run noise):", flush=True)
        timing(repeat)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
