"""Pair two ``bench_frontier.py --out`` files split by split (not a test).

    python bench/pair_frontier_runs.py OFF.json                # per split: the k=1, k=3 and default points'
                                                               # members' judge-set stability and T gaps
    python bench/pair_frontier_runs.py OFF.json ON.json        # on - off, paired by split

With one file it prints, per panel and split, the smallest ``judge_set_stability`` among the
members of the k=1, k=3 and default points, the k=3 point's T-MSE minus the top-three stack's
and whether it deploys exactly the practitioner's top three, and the k=1 estimate - T-MSE; then
those gaps averaged over the splits whose k=1 (k=3) members are all stable (stability 1) and
over the others. With two files it prints ``k1_vs_single``, ``k3_vs_top3``, the default's T-MSE
and every k's estimate - T-MSE for both runs with the paired difference (mean, SE over
splits), and the k whose |estimate - T-MSE| grew by more than that paired SE.
"""

from __future__ import annotations

import json
import sys

import numpy as np


def _ms(v) -> tuple[float, float]:
    v = np.asarray(v, float)
    return float(v.mean()), (float(v.std(ddof=1) / np.sqrt(len(v))) if len(v) > 1 else float("nan"))


def _f(m) -> str:
    return f"{m[0]:+.4f} (SE {m[1]:.4f})"


def load(path: str) -> dict:
    with open(path) as fh:
        return {s["panel"]: s for s in json.load(fh)}


def stability(runs: dict) -> None:
    for name, s in runs.items():
        J = s["J"]
        k3 = min(3, J)
        print(f"== {name}, {len(s['per_split'])} splits")
        rows = []
        for r in s["per_split"]:
            d = r["detail"]
            stab = {k: min(m["stability"] for m in d[str(k)]["members"]) for k in (1, k3, J)}
            rules = {k: sorted({m["rule"] for m in d[str(k)]["members"]}) for k in (1, k3)}
            top3 = sorted(d[str(k3)]["judges"]) == sorted(r["top3_judges"])
            gap3, bias1 = r["k3"] - r["top3"], r["bias"]["1"]
            rows.append((stab[1], bias1, stab[k3], gap3, top3))
            print(f"seed {r['seed']}: k=1 stability {stab[1]:.2f} {rules[1]} estimate - T-MSE {bias1:+.4f} | k=3 "
                  f"least stability {stab[k3]:.2f} {rules[k3]} {len(d[str(k3)]['members'])} members, top three "
                  f"{top3}, - top3 {gap3:+.4f} | default least stability {stab[J]:.2f}")
        for label, i, j in (("k=1 estimate - T-MSE", 0, 1), ("k=3 - top-three stack", 2, 3)):
            for kind, keep in (("stable", lambda x: x >= 1 - 1e-9), ("not stable", lambda x: x < 1 - 1e-9)):
                v = [r[j] for r in rows if keep(r[i])]
                print(f"  {label}, {kind} ({len(v)} splits): " + (_f(_ms(v)) if len(v) > 1 else str(v)))
        print(f"  k=3 deploys the top three on {sum(r[4] for r in rows)} splits")


def paired(off: dict, on: dict) -> None:
    for name in off:
        if name not in on:
            continue
        a, b = off[name]["per_split"], on[name]["per_split"]
        if [x["seed"] for x in a] != [x["seed"] for x in b]:
            raise SystemExit(f"{name}: the two runs have different splits")
        print(f"== {name} ({len(a)} splits): first / second / second - first (paired)")
        for key, fn in (("k1_vs_single", lambda r: r["k1"] - r["single"]),
                        ("k3_vs_top3", lambda r: r["k3"] - r["top3"]), ("default T-MSE", lambda r: r["default"])):
            x, y = [fn(r) for r in a], [fn(r) for r in b]
            print(f"  {key}: {_f(_ms(x))} / {_f(_ms(y))} / {_f(_ms(np.subtract(y, x)))}")
        print("  default identical on every split:", all(abs(r["default"] - q["default"]) < 1e-12 for r, q in zip(a, b)))
        ks = sorted({int(k) for k in a[0]["bias"]})
        worse = []
        for k in ks:
            x, y = [r["bias"][str(k)] for r in a], [r["bias"][str(k)] for r in b]
            d = _ms(np.subtract(y, x))
            grew = abs(_ms(y)[0]) - abs(_ms(x)[0]) > d[1]
            worse += [k] if grew else []
            if k <= 5 or k == ks[-1] or k % 10 == 0:
                print(f"  estimate - T-MSE k={k}: {_f(_ms(x))} / {_f(_ms(y))} / {_f(d)}")
        print(f"  k whose |estimate - T-MSE| grew beyond the paired SE: {worse or 'none'}")
        print("  largest |estimate - T-MSE| over k: %.4f / %.4f" % (
            max(abs(_ms([r["bias"][str(k)] for r in a])[0]) for k in ks),
            max(abs(_ms([r["bias"][str(k)] for r in b])[0]) for k in ks)))


if __name__ == "__main__":
    if len(sys.argv) == 2:
        stability(load(sys.argv[1]))
    elif len(sys.argv) == 3:
        paired(load(sys.argv[1]), load(sys.argv[2]))
    else:
        raise SystemExit(__doc__)
