"""One panel's selection timed warm, in one process (not a test): the panel read and its
blocks drawn (``make_blocks(seed=0)``), one untimed selection (imports, first calls), then
three timed, each printed as wall / CPU seconds of this process (the fold workers of the
cross-fitted protocol are not counted). Run it in two trees alternately to compare them on
the same host: ``cd TREE && PYTHONPATH=. python bench/warm_select.py PANEL [split|crossfit]``
(default split)."""

from __future__ import annotations

import sys
import time


def main() -> None:
    from fcps_core import make_blocks, read_panel, select
    panel = read_panel(sys.argv[1])
    blocks = make_blocks(panel, seed=0)
    protocol = sys.argv[2] if len(sys.argv) > 2 else "split"
    select(panel, blocks, protocol=protocol)
    out = []
    for _ in range(3):
        t, c = time.perf_counter(), time.process_time()
        select(panel, blocks, protocol=protocol)
        out.append(f"{time.perf_counter() - t:.2f} / {time.process_time() - c:.2f}")
    print(", ".join(out))


if __name__ == "__main__":
    main()
