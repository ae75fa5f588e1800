"""The frontier's bootstrap replays timed alone (not a test): one selection of PANEL (the
``split`` or ``crossfit`` protocol, ``make_blocks(seed=0)``), its held-out matrix and
bootstrap draws captured where the frontier receives them, the levels decided once
(:class:`~fcps_core.selection.frontier.FrontierChoices`), then
:func:`~fcps_core.selection.frontier.frontier_replays` called N times (default 5) in this
process; prints the mean seconds per call and the load average. Run it in two trees
alternately to compare them: ``cd TREE && PYTHONPATH=. python bench/replay_time.py PANEL
[split|crossfit] [N]``."""

from __future__ import annotations

import os
import sys
import time


def main() -> None:
    from fcps_core import make_blocks, read_panel, select
    from fcps_core.selection import frontier

    from bench.capture import frontier_inputs
    panel = read_panel(sys.argv[1])
    protocol = sys.argv[2] if len(sys.argv) > 2 else "split"
    calls = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    with frontier_inputs() as captured:
        select(panel, make_blocks(panel, seed=0), protocol=protocol)
    result, heldout = captured["result"], captured["heldout"]
    if result.bootstrap is None:
        sys.exit("this selection has no bootstrap draws to replay")
    choices = frontier.FrontierChoices(result, heldout)
    t = time.perf_counter()
    for _ in range(calls):
        frontier.frontier_replays(result, heldout, choices)
    print(f"frontier_replays: {(time.perf_counter() - t) / calls:.3f} s per call, mean of {calls} "
          f"(load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
