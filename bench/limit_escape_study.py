"""Would a clear-margin escape from the full-limit rule help? (issue 24; not a test).

Under a binding limit of k judges the default deploys the ``info_first`` prefix that uses the
whole limit (``full_limit_sets=True``; A below). The old rule (``full_limit_sets=False``; B)
chose among every candidate within the limit; it lost to a practitioner's top-three stack on
several panels (the winner's curse of choosing among many judge sets on a few labels), but on
some panels it finds a judge set far better than A (complementary judges that are weak alone).

This study scores, per frontier level k of each split, an *escape* rule that deploys B only
where B's cross-fitted risk is below A's by more than ``z`` group-clustered paired SEs (the
same held-out matrix; A and B decided as the selection decides them, from one selection with
both settings' frontiers, :func:`bench.bench_frontier.other_random_setting`), and A
otherwise. It prints, per panel and ``z``, over splits x levels: how often the escape fires,
the mean T-MSE of the escape minus A's (with its SE over splits, levels averaged within a
split) and at k = 1 and 3 (the issue's max1 and max3 checks), and the worst level. The
deployed-risk estimate of an escape would need its own replay (the rule per bootstrap draw);
this study does not estimate it.

    PYTHONPATH=. nice python bench/limit_escape_study.py --panels llmbar shape:pair_15x300_tie --splits 12

A panel may also be a CSV file (``--panels FILE.csv``, e.g. ``bench/panels/walk4_pair400.csv``): its splits put 20 % of the labelled
groups in T, as LLMBar's (:func:`bench.bench_frontier.split`).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

from bench.bench_frontier import _points, load, other_random_setting, split_k
from fcps_core import read_panel
from fcps_core.selection import FCPSSelector
from fcps_core.selection.choice import GroupedLosses

Z_LEVELS = (1.96, 2.58, 3.29)


def _members(p: dict) -> list[int]:
    return sorted(int(m["index"]) for m in p["members"])


def paired_z(res, a: list[int], b: list[int]) -> tuple[float, float]:
    """(B - A, its group-clustered paired SE) of the two averages' cross-fitted risks."""
    H = res.heldout
    obj = res.selector.objective
    u = H.units()
    losses = np.column_stack([H.average_losses(obj, a), H.average_losses(obj, b)])
    g = GroupedLosses.from_units(losses, u.matrix, u.groups, u.group_unit, np.array([0, 1]))
    m = g.means()
    return float(m[1] - m[0]), float(g.paired_se(0)[1])


def run(name: str, splits: int, quiet: bool) -> list[dict]:
    """Per split and binding level: k, B - A on the held-out rows and its SE, T-MSE of A and B."""
    panel = None if name.startswith("shape:") else \
        (read_panel(name) if name.endswith((".csv", ".csv.gz")) else load(name))
    rows = []
    with other_random_setting("full_limit_sets") as others:
        for s in range(splits):
            panel, blocks, seed = split_k(name, panel, s)
            t0 = time.perf_counter()
            res = FCPSSelector(seed=seed).fit(panel, blocks)
            d = res.to_dict()
            J = len(panel.judges)
            mine = [p for p in d["frontier"] if p["constraint"] == "max_judges" and p["n_judges"] < J]
            theirs = {p["n_judges"]: p for p in others[-1] if p["constraint"] == "max_judges"}
            cache: dict = {}
            a_pts = _points(res, mine, blocks.T, cache)
            b_pts = _points(res, [theirs[p["n_judges"]] for p in mine], blocks.T, cache)
            for p in mine:
                k = p["n_judges"]
                a, b = _members(p), _members(theirs[k])
                diff, se = (0.0, 0.0) if a == b else paired_z(res, a, b)
                rows.append({"split": s, "k": k, "diff": diff, "se": se,
                             "a": a_pts[k]["tmse"], "b": b_pts[k]["tmse"]})
            if not quiet:
                sys.stderr.write(f"{name} split {s}: {time.perf_counter() - t0:.1f} s "
                                 f"(load {os.getloadavg()[0]:.1f})\n")
    return rows


def summary(name: str, rows: list[dict]) -> list[str]:
    out = []
    splits = sorted({r["split"] for r in rows})
    for z in Z_LEVELS:
        fires = [r for r in rows if r["se"] > 0 and r["diff"] < -z * r["se"]]
        gain = {s: [] for s in splits}
        for r in rows:
            esc = r["b"] if (r["se"] > 0 and r["diff"] < -z * r["se"]) else r["a"]
            gain[r["split"]].append(esc - r["a"])
        per_split = np.array([np.mean(v) for v in gain.values()])
        line = (f"{name} z={z}: fires at {len(fires)} of {len(rows)} levels; escape - A T-MSE, levels averaged: "
                f"{per_split.mean():+.5f} (SE {per_split.std(ddof=1) / np.sqrt(len(per_split)) if len(per_split) > 1 else float('nan'):.5f})")
        for k in (1, 3):
            v = np.array([(r["b"] if (r["se"] > 0 and r["diff"] < -z * r["se"]) else r["a"]) - r["a"]
                          for r in rows if r["k"] == k])
            if len(v):
                line += f"; k={k} {v.mean():+.5f} ({int(np.sum(v != 0))} fired)"
        worse = [r["b"] - r["a"] for r in fires]
        if worse:
            line += (f"; where it fires B - A on T: mean {np.mean(worse):+.5f}, worst {max(worse):+.5f}, "
                     f"best {min(worse):+.5f}")
        out.append(line)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--panels", nargs="+", default=["llmbar", "shape:pair_15x300_tie"])
    ap.add_argument("--splits", type=int, default=12)
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    print(f"load average at start: {os.getloadavg()[0]:.2f}", flush=True)
    for name in args.panels:
        for line in summary(name, run(name, args.splits, args.quiet)):
            print(line, flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
