"""How much of the candidates' differences is fold-partition noise? (not a test)

Why the default keeps two cross-fit repeats on large panels (docs/performance.md, "One
repeat on large panels?"). Per panel: the default selection (seed 0); per repeat r each
of the 40 best candidates' held-out risk, d_r(c) = risk_r(c) - risk_r(best). The partition
SD of the two-repeat mean of d is estimated by the rms of (d_1 - d_2) / 2 (two draws of
the partition: E (d_1 - d_2)^2 / 4 = var(d_r) / 2); the sampling SE is the group-clustered
SE of the per-row difference of the repeat-averaged losses. Their ratio says how much a
second repeat steadies the choice relative to the noise it cannot remove.

    PYTHONPATH=. .venv/bin/python bench/bench_partition.py data/llmbar.csv data/hanna.csv PANEL ...
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from fcps_core.selection.selector import select  # noqa: E402


def partition_noise(path: str, top: int = 40) -> dict:
    t0 = time.perf_counter()
    res = select(path, seed=0)
    h = res.heldout
    col, _ = h.columns()
    means = np.array([c.val_risk for c in res.candidates])
    order = np.argsort(means, kind="stable")[:top]
    P = h.tables.gather(col[order])                          # (repeats, distinct rows, top)
    L = (h.y_distinct[None, :, None] - P) ** 2
    if h.inverse is not None:
        L = L[:, h.inverse, :]                               # (repeats, rows, top)
    if L.shape[0] != 2:
        raise SystemExit("needs the default's two repeats")
    risk_r = L.mean(axis=1)
    d = risk_r - risk_r[:, :1]
    partition_sd = float(np.sqrt(np.mean(((d[0] - d[1]) / 2) ** 2)))
    diff = L.mean(axis=0)
    diff = diff - diff[:, :1]
    _, g = np.unique(h.groups, return_inverse=True)
    n, G = len(g), int(g.max()) + 1
    sums = np.zeros((G, diff.shape[1]))
    np.add.at(sums, g, diff - diff.mean(axis=0))
    se = np.sqrt(G / (G - 1) * (sums ** 2).sum(axis=0)) / n
    paired_se = float(np.sqrt(np.mean(se[1:] ** 2)))
    return {"panel": path, "rows": n, "groups": G, "partition_sd": partition_sd, "paired_se": paired_se,
            "ratio": partition_sd / paired_se, "seconds": time.perf_counter() - t0}


def main(argv=None) -> int:
    for path in (argv if argv is not None else sys.argv[1:]):
        r = partition_noise(path)
        print(f"{r['panel']}: {r['rows']} rows, {r['groups']} groups; partition SD {r['partition_sd']:.1e}, "
              f"paired SE {r['paired_se']:.1e}, ratio {r['ratio']:.2f} ({r['seconds']:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
