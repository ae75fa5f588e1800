"""Why ``--max-judges 3`` loses to a practitioner's top-three stack (not a test): per split or
draw of bench_frontier's panels, what the k=3 point deploys against the top three, and the
T-MSE of counterfactual k<=3 choices on the same selection (same held-out matrix, same refits):

* ``max3``: the frontier's k=3 point (the tie average under the limit);
* ``argmin3``: the lowest cross-fitted risk among the candidates the limit admits (no average);
* ``top3menu``: the menu's candidates on exactly the practitioner's top-three judge set (any
  path, any family), the lowest cross-fitted risk among them (None: no such candidate);
* ``info3``: the ``info_first`` path's 3-prefix on D (the deployed set), the lowest
  cross-fitted risk among its ridge_iso / logistic candidates;
* ``oracle3``: the lowest T-MSE among the admitted candidates (hindsight, a bound);
* ``top3``: the practitioner's stack (bench_frontier.practitioner).

    PYTHONPATH=. python bench/max3_diagnosis.py --panels shape:pair_15x300_tie --splits 10 --out FILE
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

from bench.bench_frontier import load, practitioner, shape_split, split
from fcps_core.files.json_values import json_ready
from fcps_core.selection import FCPSSelector, deployable_label_scale
from fcps_core.selection.constraints import PanelConstraint
from fcps_core.selection.frontier import RuleReplay
from fcps_core.selection.members import deployed_weights


#: --light: no hindsight bound (it scores every admitted candidate on T)
LIGHT = False


def tmse(res, members_weights, T) -> float:
    p = np.sum([w * res.predict_rows(res.candidates[i], T) for i, w in members_weights], axis=0)
    return float(np.mean((res.panel.labels[T] - p) ** 2))


def desc(c) -> str:
    return f"{c.path_label or c.path_rule}/K{c.K}/{c.family}"


def one(name, k, options):
    shape = name.removeprefix("shape:") if name.startswith("shape:") else None
    if shape:
        seed = 0
        panel, blocks = shape_split(shape, k)
    else:
        seed = 100 + k
        panel = load(name)
        blocks = split(panel, name, seed, 0)
    scaled = deployable_label_scale(panel, blocks)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
    T = blocks.T
    t0 = time.perf_counter()
    res = FCPSSelector(seed=seed, **(options or {})).fit(panel, blocks)
    secs = time.perf_counter() - t0
    d = json_ready(res.to_dict())
    names = panel.judge_names
    pt = next(p for p in d["frontier"] if p["constraint"] == "max_judges" and p["n_judges"] == 3)
    prac = practitioner(scaled, D, T, seed)
    top3 = set(prac["top3_judges"])
    cands = res.candidates
    rr = RuleReplay(res, res.heldout)
    means = rr.grouped.means()
    ok = PanelConstraint(max_judges=3).mask(cands)
    adm = np.flatnonzero(ok)
    cache = {}

    def t_of(i):
        if i not in cache:
            cache[i] = tmse(res, [(i, 1.0)], T)
        return cache[i]
    rec = {"split": k, "seconds": secs, "top3_judges": sorted(top3), "top3_family": prac["top3_family"],
           "top3": prac["top3"], "single": prac["single"]}
    rec["max3"] = tmse(res, [(m["index"], m["weight"]) for m in pt["members"]], T)
    rec["max3_members"] = [{"desc": desc(cands[m["index"]]), "judges": cands[m["index"]].judges,
                            "w": m["weight"], "cv": float(means[m["index"]]), "stab": cands[m["index"]].stability,
                            "tmse": t_of(m["index"])} for m in pt["members"]]
    rec["max3_judges"] = sorted(pt["judges"])
    rec["max3_is_top3"] = set(pt["judges"]) == top3
    b = int(adm[np.argmin(means[adm])])
    rec["argmin3"] = t_of(b)
    rec["argmin3_desc"] = desc(cands[b])
    rec["argmin3_cv"] = float(means[b])
    on = [int(i) for i in adm if set(cands[i].judges) == top3]
    rec["top3menu_n"] = len(on)
    rec["top3menu_descs"] = sorted({desc(cands[i]) for i in on})
    if on:
        i = min(on, key=lambda i: means[i])
        rec["top3menu"] = t_of(i)
        rec["top3menu_desc"] = desc(cands[i])
        rec["top3menu_cv"] = float(means[i])
        rec["top3menu_rank"] = int(np.sum(means[adm] < means[i]))
        rec["top3menu_stab"] = cands[i].stability
    info = next(p for p in res.paths if p.rule == "info_first")
    rec["info3_judges"] = sorted(names[j] for j in info.judges[:3])
    rec["info3_is_top3"] = set(rec["info3_judges"]) == top3
    inf = [int(i) for i in adm if cands[i].path_rule == "info_first" and cands[i].K == 3
           and cands[i].family in ("ridge_iso", "logistic")]
    if inf:
        i = min(inf, key=lambda i: means[i])
        rec["info3"] = t_of(i)
        rec["info3_desc"] = desc(cands[i])
        rec["info3_cv"] = float(means[i])
        rec["info3_stab"] = cands[i].stability
    rec["oracle3"] = min(t_of(int(i)) for i in adm) if len(adm) < 400 and not LIGHT else None
    # the limited rule (the tie average under the limit) on restricted admissible sets:
    # which restriction would have recovered the loss
    con = PanelConstraint(max_judges=3)
    test = con.members_test(cands, names)
    n_j = np.array([len(set(c.judge_idx)) for c in cands])
    fam = np.array([c.family for c in cands])
    rule_ = np.array([c.path_rule for c in cands])
    kmax = int(n_j[ok].max())
    variants = {"all": ok, "no_random": ok & (rule_ != "random"), "full_k": ok & (n_j == kmax),
                "info_first": ok & (rule_ == "info_first"),
                "ridge_logistic": ok & np.isin(fam, ["ridge_iso", "logistic"]),
                "no_random_full_k": ok & (rule_ != "random") & (n_j == kmax),
                "stable": ok & np.array([c.stability is None or c.stability >= 1 - 1e-9 for c in cands]),
                "info_first_ridge_logistic": ok & (rule_ == "info_first") & np.isin(fam, ["ridge_iso", "logistic"]),
                "info_first_full_k": ok & (rule_ == "info_first") & (n_j == kmax)}
    wcache = {}
    rec["variants"] = {}
    for vname, allowed in variants.items():
        if not allowed.any():
            continue
        ch = rr.decide(allowed, test)
        members = list(ch.members or [ch.chosen])
        weighted = deployed_weights(res, members, wcache)
        rec["variants"][vname] = {"tmse": tmse(res, weighted, T), "cv": float(rr.grouped.means()[ch.chosen]),
                                  "members": [desc(cands[i]) for i, _ in weighted],
                                  "judges": sorted({j for i, _ in weighted for j in cands[i].judges})}
    rec["variants"]["argmin_ridge_logistic_top3set"] = None
    rl = [int(i) for i in on if cands[i].family in ("ridge_iso", "logistic")]
    if rl:
        i = min(rl, key=lambda i: means[i])
        rec["variants"]["argmin_ridge_logistic_top3set"] = {"tmse": t_of(i), "cv": float(means[i]),
                                                            "members": [desc(cands[i])], "judges": sorted(top3)}
    rec["n_admissible"] = int(len(adm))
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--panels", nargs="+", default=["shape:pair_15x300_tie"])
    ap.add_argument("--splits", type=int, default=5)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--out")
    ap.add_argument("--random-under-limits", choices=["true", "false"], default=None)
    ap.add_argument("--light", action="store_true", help="skip the hindsight bound oracle3 (slow on 40,000 T rows)")
    args = ap.parse_args(argv)
    global LIGHT
    LIGHT = args.light
    opts = {} if args.random_under_limits is None else {"random_under_limits": args.random_under_limits == "true"}
    out = {}
    for name in args.panels:
        recs = []
        for k in range(args.first, args.first + args.splits):
            r = one(name, k, opts)
            recs.append(r)
            print(f"{name} {k}: max3 {r['max3']:.4f} top3 {r['top3']:.4f} ({r['top3_family']}) argmin3 "
                  f"{r['argmin3']:.4f} [{r['argmin3_desc']}] top3menu {r.get('top3menu', float('nan')):.4f} "
                  f"[{r.get('top3menu_desc')}, rank {r.get('top3menu_rank')}] info3 {r.get('info3', float('nan')):.4f} "
                  f"oracle3 {r['oracle3'] if r['oracle3'] is None else round(r['oracle3'], 4)}; max3=top3 set "
                  f"{r['max3_is_top3']}, info3=top3 set {r['info3_is_top3']}; members "
                  + "; ".join(f"{m['desc']} {m['judges']} w{m['w']:.2f} cv{m['cv']:.4f} t{m['tmse']:.4f} s{m['stab']}"
                              for m in r["max3_members"])
                  + f" (load {os.getloadavg()[0]:.1f})", flush=True)
            if args.out:
                out[name] = recs
                with open(args.out, "w") as fh:
                    json.dump(json_ready(out), fh, indent=1)
        out[name] = recs
        for key in ("argmin3", "top3menu", "info3", "oracle3"):
            v = [r["max3"] - r[key] for r in recs if r.get(key) is not None]
            if len(v) < 2:
                continue
            print(f"  max3 - {key}: {np.mean(v):+.4f} (SE {np.std(v, ddof=1) / np.sqrt(len(v)):.4f}, n {len(v)})")
        for key in ("max3", "argmin3", "top3menu", "info3", "oracle3"):
            v = [r[key] - r["top3"] for r in recs if r.get(key) is not None]
            if len(v) < 2:
                continue
            print(f"  {key} - top3: {np.mean(v):+.4f} (SE {np.std(v, ddof=1) / np.sqrt(len(v)):.4f}, n {len(v)})")
        vn = sorted({v for r in recs for v, x in r["variants"].items() if x is not None})
        for v in vn:
            rows = [r for r in recs if r["variants"].get(v) is not None]
            a = [r["variants"][v]["tmse"] - r["top3"] for r in rows]
            b = [r["variants"][v]["tmse"] - r["max3"] for r in rows]
            print(f"  variant {v}: - top3 {np.mean(a):+.4f} (SE {np.std(a, ddof=1) / np.sqrt(len(a)):.4f}); - max3 "
                  f"{np.mean(b):+.4f} (SE {np.std(b, ddof=1) / np.sqrt(len(b)):.4f}); n {len(rows)}; deploys the top-three "
                  f"set {sum(set(r['variants'][v]['judges']) == set(r['top3_judges']) for r in rows)}")
        print(f"  max3 deploys the top-three set {sum(r['max3_is_top3'] for r in recs)}/{len(recs)}; info_first's "
              f"3-prefix on D is the top-three set {sum(r['info3_is_top3'] for r in recs)}/{len(recs)}; the menu "
              f"has a candidate on the top-three set {sum(r['top3menu_n'] > 0 for r in recs)}/{len(recs)}; "
              f"max3 averages >1 member {sum(len(r['max3_members']) > 1 for r in recs)}/{len(recs)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
