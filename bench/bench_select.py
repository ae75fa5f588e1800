"""Selection wall time on synthetic panels (run: make bench). Not a test: prints numbers.

Work units: a 2,000-row, 7-judge pairwise panel (A/B/tie/parse_error) with the default full
menu (3 path rules x K=1..7 x all ten families), and the 65-judge LLMBar panel. The ratio
compares the full menu with a table-only menu measured in the same run.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from fcps_core import make_blocks, read_panel, select
from fcps_core.synthetic import make_regime


def timed(fn, repeat=3):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main() -> None:
    panel = make_regime("mixed", rows=2000, judges=7, seed=0, tie_rate=0.1, group_size=2)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    t_full, r = timed(lambda: select(panel, blocks))
    t_table, _ = timed(lambda: select(panel, blocks, families=["table"]))
    print(f"2000 rows x 7 judges, full menu ({r.menu_size} fitted candidates): {t_full:.2f} s (median of 3)")
    print(f"same panel, table-only menu: {t_table:.3f} s; full/table ratio {t_full / t_table:.1f}x")
    llmbar = read_panel(str(Path(__file__).resolve().parent.parent / "data" / "llmbar.csv"))
    lb = make_blocks(llmbar, split="1:2:1:1", seed=0)
    t_llm, r2 = timed(lambda: select(llmbar, lb), repeat=1)
    print(f"LLMBar 838 rows x 65 judges, full menu ({r2.menu_size} fitted candidates): {t_llm:.2f} s")


if __name__ == "__main__":
    main()
