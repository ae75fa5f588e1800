"""Active against random labelling (issue "Which items to label next"); a benchmark, not a test.

Protocol (the issue's check): per seed, 30 % of the groups are held out as the scoring
block; the other 70 % is the pool. 100 pool items are labelled at random; then batches of
50 are added, chosen by ``label-next``'s rule (:func:`fcps_core.planning.label_next.choose_batch`
on the default selection of the labels at hand) or at random, up to 300 labels (600 in
``--full`` where the pool allows). At every budget the default selection is fitted on the
labelled pool items and its deployed predictor scored on the held-out groups (T-MSE). The
same seed gives both arms the same split and the same first 100 labels.

Printed per panel: mean T-MSE by budget for each arm (with the paired SE of active -
random), the labels active needs to reach random's T-MSE at 300 (linear interpolation
between budgets; "labels saved" = 300 minus that), and the bias of the deployed-risk
estimate (estimate - T-MSE, averaged over seeds) at 300 labels for random labelling, for
active labelling read naively on all labelled rows, and for active labelling read on the
audit rows only (``eval_rows``).

    python bench/bench_label_next.py            # quick: 3 seeds, up to 300 labels
    python bench/bench_label_next.py --full     # 8 seeds, up to 600 where the pool allows
    python bench/bench_label_next.py --panels llmbar --seeds 2
    python bench/bench_label_next.py --random-cache /tmp/random.json --plain-file   # reuse the random arm;
                                                                                    # E = all labelled rows
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fcps_core.ingest import as_panel  # noqa: E402
from fcps_core.planning.label_next import choose_batch, random_batch  # noqa: E402
from fcps_core.selection.selector import select  # noqa: E402
from fcps_core.paper.synthetic import make_regime, target_probability  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def continuous_label_panel(seed: int = 0):
    """The additive regime (7 pairwise judges, 3000 rows) with a continuous label: the
    target probability plus Gaussian noise (sd 0.15), clipped to [0, 1]."""
    panel = make_regime("additive", rows=3000, judges=7, seed=seed)
    x = np.column_stack([np.asarray(j.vocab, dtype=object)[j.codes] == "A" for j in panel.judges]).astype(float)
    p = target_probability("additive", x)
    rng = np.random.default_rng(seed + 1)
    return panel.with_labels(np.clip(p + rng.normal(0, 0.15, len(p)), 0, 1))


def load(name: str):
    if name == "llmbar":
        return as_panel(os.path.join(ROOT, "data/llmbar.csv"))
    if name == "hanna":
        return as_panel(os.path.join(ROOT, "data/hanna.csv"))
    if name == "parity":
        return make_regime("parity", rows=3000, judges=7, seed=0)
    if name == "mixed":
        return make_regime("mixed", rows=3000, judges=7, seed=0, judge_noise=0.1)
    if name == "additive_continuous":
        return continuous_label_panel()
    raise SystemExit(f"unknown panel {name}")


def split(panel, seed: int):
    groups = np.unique(panel.group_ids)
    rng = np.random.default_rng([seed, 7])
    test_groups = set(rng.permutation(groups)[: int(round(0.3 * len(groups)))].tolist())
    is_test = np.array([g in test_groups for g in panel.group_ids])
    return np.flatnonzero(~is_test), np.flatnonzero(is_test)


def deploy(pool, labels, test, options):
    res = select(pool.with_labels(labels), **options)
    pred = res.predictor().predict(test)
    return res, float(np.mean((pred - test.labels) ** 2))


def run_arm(panel, seed, arm, budgets, options, audit_share, plain_file=False):
    pool_rows, test_rows = split(panel, seed)
    pool, test = panel.take(pool_rows), panel.take(test_rows)
    truth = pool.labels.copy()
    rng = np.random.default_rng([seed, 11])
    labels = np.full(pool.n_rows, np.nan)
    first = rng.choice(pool.n_rows, budgets[0], replace=False)
    labels[first] = truth[first]
    evaluated = ~np.isnan(labels)
    out = {"tmse": [], "estimate": [], "honest": []}
    for i, b in enumerate(budgets):
        res, tmse = deploy(pool, labels, test, options)
        out["tmse"].append(tmse)
        dr = res.deployed_risk or {}
        out["estimate"].append(dr.get("estimate", np.nan))
        if arm == "active" and i == len(budgets) - 1 and not plain_file:
            honest = select(pool.with_labels(labels), **options, eval_rows=evaluated)
            out["honest"].append((honest.deployed_risk or {}).get("estimate", np.nan))
        if i + 1 == len(budgets):
            break
        n = budgets[i + 1] - b
        if arm == "random":
            rows = random_batch(pool.with_labels(labels), n, seed=seed * 1000 + i)
        else:
            if plain_file:
                evaluated = ~np.isnan(labels)
            batch = choose_batch(res, n, seed=seed * 1000 + i, audit_share=audit_share, evaluated=evaluated)
            rows = batch.rows
            evaluated[batch.rows[batch.audit]] = True
            evaluated[batch.free_audit_rows] = True
        labels[rows] = truth[rows]
    return out


def labels_to_reach(budgets, curve, target):
    """Smallest budget (linear interpolation) at which ``curve`` reaches ``target``."""
    for (b0, r0), (b1, r1) in zip(zip(budgets, curve), zip(budgets[1:], curve[1:])):
        if r0 <= target:
            return b0
        if r1 <= target:
            return b0 + (b1 - b0) * (r0 - target) / (r0 - r1)
    return budgets[0] if curve[0] <= target else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--full", action="store_true")
    ap.add_argument("--seeds", type=int)
    ap.add_argument("--panels", nargs="+", default=["llmbar", "hanna", "parity", "additive_continuous"])
    ap.add_argument("--audit-share", type=float, default=None,
                    help="fixed audit share of every batch (default: label-next's precision rule)")
    ap.add_argument("--plain-file", action="store_true",
                    help="E = every labelled row at each round (label-next on a plain file, which records "
                         "no earlier choice) instead of the store's record of the audit rows")
    ap.add_argument("--random-cache", help="JSON file keeping the random arm's results (it does not depend "
                                           "on the rule): read when it holds the panel and seeds, else written")
    ap.add_argument("--max-budget", type=int)
    args = ap.parse_args(argv)
    seeds = args.seeds or (8 if args.full else 3)
    top = args.max_budget or (600 if args.full else 300)
    options = {"n_jobs": 1}
    rule = "precision rule" if args.audit_share is None else f"audit share {args.audit_share}"
    print(f"# seeds {seeds}, {rule}{', plain file' if args.plain_file else ''}, up to {top} labels; default selection (n_jobs=1)")
    for name in args.panels:
        panel = load(name)
        pool_size = len(split(panel, 0)[0])
        budgets = list(range(100, min(top, pool_size - 50) + 1, 50))
        t0, c0 = time.perf_counter(), time.process_time()
        cache = {}
        if args.random_cache and os.path.exists(args.random_cache):
            with open(args.random_cache) as fh:
                cache = json.load(fh)
        res = {"random": []}
        n_cached = sum(f"{name}/seed {s}/{budgets[-1]}" in cache for s in range(seeds))
        for s in range(seeds):
            key = f"{name}/seed {s}/{budgets[-1]}"
            if key not in cache:
                cache[key] = run_arm(panel, s, "random", budgets, options, None)
                if args.random_cache:
                    with open(args.random_cache + ".tmp", "w") as fh:
                        json.dump(cache, fh)
                    os.replace(args.random_cache + ".tmp", args.random_cache)
            res["random"].append(cache[key])
        res["active"] = [run_arm(panel, s, "active", budgets, options, args.audit_share, args.plain_file)
                         for s in range(seeds)]
        R = np.array([r["tmse"] for r in res["random"]])
        A = np.array([r["tmse"] for r in res["active"]])
        print(f"\n## {name}: {panel.n_rows} rows, {len(panel.judges)} judges, pool {pool_size}; "
              f"{time.perf_counter() - t0:.0f} s wall, {time.process_time() - c0:.0f} s CPU"
              f"{f' (random arm of {n_cached} seed(s) read from the cache)' if n_cached else ''}")
        print("budget  random_TMSE  active_TMSE  active-random (paired SE)")
        for k, b in enumerate(budgets):
            d = A[:, k] - R[:, k]
            print(f"{b:6d}  {R[:, k].mean():11.4f}  {A[:, k].mean():11.4f}  {d.mean():+.4f} ({d.std(ddof=1) / np.sqrt(seeds) if seeds > 1 else float('nan'):.4f})")
        ref = 300 if 300 in budgets else budgets[-1]
        target = R[:, budgets.index(ref)].mean()
        need = labels_to_reach(budgets, A.mean(axis=0), target)
        if np.isnan(need):
            print(f"active does not reach random's {ref}-label T-MSE {target:.4f} by {budgets[-1]} labels")
        else:
            print(f"active reaches random's {ref}-label T-MSE {target:.4f} at {need:.0f} labels "
                  f"(saved: {ref - need:.0f})")
        k = len(budgets) - 1
        est_r = np.array([r["estimate"][k] for r in res["random"]]) - R[:, k]
        est_a = np.array([r["estimate"][k] for r in res["active"]]) - A[:, k]
        hon = np.array([r["honest"][0] if r["honest"] else np.nan for r in res["active"]]) - A[:, k]
        print(f"deployed-risk estimate - T-MSE at {budgets[k]} labels: random {est_r.mean():+.4f}, "
              f"active on all rows {est_a.mean():+.4f}, active on audit rows "
              f"{np.nanmean(hon) if np.isfinite(hon).any() else float('nan'):+.4f}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
