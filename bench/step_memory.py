"""Peak memory step by step through one split-protocol selection (not a test): the process's
peak and current RSS (``VmHWM`` / ``VmRSS``, MiB) before and after each step of
:func:`~fcps_core.selection.split_protocol.fit_split` (the menu, the baselines, the held-out
matrix, the choice, the assessment, the frontier's levels and replays), so a peak can be
placed before it is chased. PANEL is a panel file, or ``1m`` for ``bench/bench_large.py``'s
1,000,000 x 10 work unit (``split="1:2:1:1"``, seed 0):

    PYTHONPATH=. python bench/step_memory.py 1m|PANEL
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def rss() -> str:
    """'peak / current' MiB of this process."""
    with open("/proc/self/status") as fh:
        st = {ln.split(":")[0]: int(ln.split()[1]) for ln in fh if ln.startswith(("VmHWM", "VmRSS"))}
    return f"{st['VmHWM'] / 1024:.0f} / {st['VmRSS'] / 1024:.0f}"


def main() -> None:
    from fcps_core import make_blocks, read_panel, select
    from fcps_core.selection import frontier, split_protocol
    marks: list[str] = []

    def traced(module, name):
        step = getattr(module, name)

        def wrapper(*args, **kwargs):
            before = rss()
            out = step(*args, **kwargs)
            marks.append(f"{name:<30} {before:>13} -> {rss():>13}")
            return out
        setattr(module, name, wrapper)
    for name in ("fit_menu", "baseline_predictions", "validation_prediction_matrix", "choose_deployed", "assess"):
        traced(split_protocol, name)
    for name in ("FrontierChoices", "frontier_replays"):
        traced(frontier, name)
    if sys.argv[1] == "1m":
        from bench.bench_large import build_panel
        panel = build_panel(1_000_000, 10)
        blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    else:
        panel = read_panel(sys.argv[1])
        blocks = make_blocks(panel, seed=0)
    start = rss()
    select(panel, blocks, protocol="split")
    print(f"{'panel read':<30} {start:>13}   (peak / current MiB)")
    print("\n".join(marks))
    print(f"{'selection done':<30} {rss():>13}")


if __name__ == "__main__":
    main()
