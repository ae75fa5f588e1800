"""Replay benchmark (not a test): where does a frontier point's deployed-risk estimate err,
and would another bootstrap replay err less?

Per panel and split it runs the default selection on the deployable rows D of
``bench_frontier.py``'s split (seed 100 + i, 20 % of the groups in the research test block T;
``--population N`` adds N fresh synthetic rows to T) and keeps, in ``--cache DIR``, the
result and every frontier point's T-MSE (a selection is the slow part; the replays below run
on the kept result). Per frontier point k it then splits estimate - T-MSE into

* held-out risk - T-MSE: the point's cross-fitted risk against T (what no replay can change:
  T's noise, the path rules varying by fold); at k = 1 also the same judge fixed in every
  fold - T-MSE (T's noise alone) and held-out - fixed;
* replay - held-out risk: what the bootstrap replay of the constrained rule adds (after the
  point's learning-curve correction ``delta``, the same for every replay below);

and evaluates replays on the selection's own draws (group counts W, the choice rule, its
tie sets and members, the limits replayed as :mod:`fcps_core.selection.frontier` does):

* ``oob``: the estimator in use, the choice on the in-bag means scored out of bag;
* ``coupled a``: the coupled bootstrap (Oliveira, Lei and Tibshirani 2021): the rule chooses
  on the group weights 1 + a (W - 1) and the choice is scored by m - u / a (m its mean on
  all held-out rows, u its count-weighted in-bag deviation over all rows). Its mean score
  estimates the risk of a choice made with (1 + a^2) times the sampling noise; the out-of-bag
  replay corresponds to a = 1 (a choice with twice the noise: the source of its pessimism
  among near-tied candidates). Run at a = 1 and a = 1/2 (alpha = a^2 = 1/4);
* ``extrapolated``: (4 coupled(1/2) - coupled(1)) / 3, linear in alpha to alpha = 0;
* ``.632``: 0.368 x the point's held-out risk + 0.632 x ``oob`` (Efron's weighting).

Prints per panel each estimator's mean estimate - T-MSE per k (SE of the mean over splits),
its worst k, the default's, and the decomposition.

    PYTHONPATH=. nice .venv/bin/python bench/bench_replay.py --splits 32 --panels llmbar --cache /tmp/replay
    PYTHONPATH=. nice .venv/bin/python bench/bench_replay.py --splits 16 --population 20000 --panels additive parity mixed --cache /tmp/replay
    PYTHONPATH=. nice .venv/bin/python bench/bench_replay.py --splits 32 --panels llmbar --cache /tmp/replay --judge-offsets
    PYTHONPATH=. nice .venv/bin/python bench/bench_replay.py --splits 32 --panels llmbar --cache /tmp/replay --fixed-one-judge
"""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
from dataclasses import replace

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_frontier as BF  # noqa: E402

from fcps_core.data.encoding import encode_panel  # noqa: E402
from fcps_core.files.json_values import json_ready  # noqa: E402
from fcps_core.selection import FCPSSelector, deployable_label_scale  # noqa: E402
from fcps_core.selection import frontier as F  # noqa: E402
from fcps_core.selection.choice import WITHIN_TIE_RULES, pick_members, rule_pool  # noqa: E402
from fcps_core.selection.baselines import single_judge_columns  # noqa: E402
from fcps_core.selection.honesty import assess  # noqa: E402

#: the coupled replays' a (alpha = a^2 times the sampling noise added to the choice)
COUPLED_A = (1.0, 0.5)


def cached_split(name: str, seed: int, population: int, cache: str, single: bool) -> dict:
    """The split's selection and each frontier point's T-MSE, from ``cache`` or computed and
    written there (a temporary name, then renamed: never half-written)."""
    path = os.path.join(cache, f"{name}{'_sj' if single else ''}_{population}_{seed}.pkl")
    if os.path.exists(path):
        with open(path, "rb") as fh:
            return pickle.load(fh)
    panel = BF.load(name, population)
    blocks = BF.split(panel, name, seed, population)
    T = blocks.T
    res = FCPSSelector(seed=seed, single_judge_candidates=single).fit(panel, blocks)
    d = json_ready(res.to_dict())
    points = {}
    for p in d["frontier"]:
        if p["constraint"] == "max_judges":
            points[p["n_judges"]] = {"tmse": BF.point_tmse(res, p, T), "dr": p["deployed_risk"], "risk": p["risk"],
                                     "judges": p["judges"], "chosen": p["chosen"]}
    rec = {"seed": seed, "J": len(panel.judges), "points": points}
    one = points.get(1)
    sj = res.heldout.baselines.get("single_judges")
    if one is not None and sj is not None and len(one["judges"]) == 1:
        j = panel.judge_names.index(one["judges"][0])
        rec["fixed1"] = float(np.mean([np.mean((res.heldout.y - sj[r, :, j]) ** 2) for r in range(sj.shape[0])]))
    out = {"rec": rec, "res": res}
    with open(path + ".tmp", "wb") as fh:
        pickle.dump(out, fh, protocol=5)
    os.replace(path + ".tmp", path)
    return out


def _level_choices(res, fc, boot) -> list[list[tuple]]:
    """Per level of the panel-size chain (loosest first), every draw's choice (sorted member
    indices, or the one candidate) when the rule chooses on ``boot``'s means and weights:
    the frontier's replay (:class:`fcps_core.selection.frontier._Replays`) without its
    scoring."""
    rp = F._Replays(replace(res, bootstrap=boot), res.heldout, fc.grouped, fc.rule, fc.tie_rank, fc.simple_rank,
                    fc.lines, fc.signatures, fc.bits)
    decided = fc.chains[0]
    masks = [m for _, _, m in decided]
    cands = res.candidates
    levels = F.nested_draw_best(rp.Mc, rp.tie_rank, masks)
    ties = rp._pair_ties([lv[0] for lv in levels], [lv[2] for lv in levels], masks)
    out = []
    for (constraint, _, allowed), (best, _, _) in zip(decided, levels):
        if rp.rule == "argmin":
            out.append([(int(b),) for b in best])
            continue
        tied = ties(best)
        if allowed is not None:
            tied &= allowed[None, :]
        if rp.rule in WITHIN_TIE_RULES:
            pool = rule_pool(rp.rule, tied, best, rp.lines)
            out.append([(int(b),) for b in np.where(pool, rp.simple_rank[None, :], len(cands) + 1).argmin(axis=1)])
            continue
        fit = constraint.members_test(cands, res.panel.judge_names, rp.bits)
        out.append([tuple(sorted(pick_members(np.flatnonzero(tied[b]), rp.Mc[b], rp.tie_rank, rp.signatures,
                                              rp.max_members, fit))) for b in range(len(best))])
    return out, rp


def replay_estimates(split: dict) -> dict:
    """Per panel size k: T-MSE, held-out risk, ``delta`` and each replay's estimate (before
    the learning-curve correction)."""
    res, rec = split["res"], split["rec"]
    heldout = res.heldout
    boot = assess(res, heldout)["bootstrap"]            # the selection's draws (not kept in the result)
    fc = F.FrontierChoices(res, heldout)
    g = fc.grouped
    ng = np.asarray(g.rows_per_group, dtype=float)
    n_rows = ng.sum()
    group_losses = np.asarray(g.group_matrix @ g.losses)                 # (groups, distinct columns)
    W = boot["W"].astype(float)                                          # group counts
    Z = (W == 0).astype(float)
    ON = Z @ ng
    keep = ON > 0
    decided = fc.chains[0]
    keys = [pred.key for _, pred, _ in decided]
    ks = [c.max_judges for c, _, _ in decided]
    sums: dict[tuple, np.ndarray] = {}

    def group_sums(rp, key) -> np.ndarray:
        key = tuple(sorted(key))
        if key not in sums:
            if len(key) > 1:
                rp._average_unit_sums([key])             # one group's sums per unit
                sums[key] = rp._units_of[key][g.group_unit]
            else:
                sums[key] = group_losses[:, int(g.col[key[0]])]
        return sums[key]
    est: dict[int, dict] = {k: {} for k in ks}
    for a in COUPLED_A:
        Wa = 1.0 + a * (W - 1.0)
        Na = Wa @ ng
        choices, rp = _level_choices(res, fc, {"W": Wa, "M": (Wa @ group_losses) / Na[:, None], "N": Na,
                                               "best": None, "tied": None, "allowed": np.zeros(1, bool),
                                               "keep": keep})
        tightest = None
        for i in range(len(decided) - 1, -1, -1):
            # levels deploying the same predictor share the tightest one's replay (as the frontier does)
            if not (i + 1 < len(decided) and keys[i + 1] == keys[i]):
                tightest = i
            level = choices[tightest]
            distinct = sorted(set(level))
            S = np.column_stack([group_sums(rp, u) for u in distinct])
            idx = np.array([distinct.index(c) for c in level])
            b = np.arange(len(idx))
            m = S.sum(axis=0) / n_rows
            u = (W @ S - (W @ ng)[:, None] * m[None, :]) / n_rows
            est[ks[i]][f"coupled {a:g}"] = float((m[idx] - u[b, idx] / a)[keep].mean())
            if a == 1.0:
                est[ks[i]]["oob"] = float(((Z @ S) / np.where(keep, ON, 1.0)[:, None])[b, idx][keep].mean())
    out = {}
    for i, k in enumerate(ks):
        p = rec["points"][k]
        dr = p["dr"] or {}
        delta = (dr.get("training_size_correction") or {}).get("delta", 0.0)
        heldout_risk = float(group_sums(rp, keys[i]).sum() / n_rows)
        e = est[k]
        e["extrapolated"] = (4 * e["coupled 0.5"] - e["coupled 1"]) / 3
        e[".632"] = 0.368 * heldout_risk + 0.632 * e["oob"]
        out[k] = {"tmse": p["tmse"], "heldout": heldout_risk, "delta": delta, "estimates": e}
    return {"points": out, "fixed1": rec.get("fixed1"), "J": rec["J"]}


def _mean_se(v) -> tuple[float, float]:
    v = np.asarray(v, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan"))


def report(name: str, rows: list[dict]) -> str:
    J = rows[0]["J"]
    shown = [k for k in range(1, J + 1) if k <= 5 or k % 10 == 0 or k == J]
    f = lambda ms: f"{ms[0]:+.4f} ({ms[1]:.4f})"  # noqa: E731
    lines = [f"{name}: {len(rows)} splits, J = {J}; estimate - T-MSE (SE), learning-curve correction included"]
    for est in ("oob", "coupled 1", "coupled 0.5", "extrapolated", ".632"):
        bias = {k: _mean_se([r["points"][k]["estimates"][est] - r["points"][k]["delta"] - r["points"][k]["tmse"]
                             for r in rows]) for k in range(1, J + 1)}
        worst = max(bias, key=lambda k: abs(bias[k][0]))
        lines.append(f"  {est:13s} worst k={worst}: {f(bias[worst])}; default {f(bias[J])}; "
                     + ", ".join(f"{k}: {bias[k][0]:+.4f}" for k in shown))
    held = {k: _mean_se([r["points"][k]["heldout"] - r["points"][k]["tmse"] for r in rows]) for k in shown}
    added = {k: _mean_se([r["points"][k]["estimates"]["oob"] - r["points"][k]["delta"] - r["points"][k]["heldout"]
                          for r in rows]) for k in shown}
    lines.append("  held-out risk - T-MSE: " + ", ".join(f"{k}: {f(held[k])}" for k in shown))
    lines.append("  oob replay (corrected) - held-out risk: " + ", ".join(f"{k}: {f(added[k])}" for k in shown))
    fixed = [r for r in rows if r["fixed1"] is not None]
    if fixed:
        lines.append(f"  k=1: fixed judge - T-MSE {f(_mean_se([r['fixed1'] - r['points'][1]['tmse'] for r in fixed]))}; "
                     f"held-out - fixed {f(_mean_se([r['points'][1]['heldout'] - r['fixed1'] for r in fixed]))}")
    return "\n".join(lines)


def judge_offsets(name: str, split: dict) -> dict:
    """Every judge's cross-fitted single-judge isotonic risk on D (the selection's
    ``single_judges`` baseline) minus its T-MSE (its isotonic map fitted on D, the practitioner's
    recipe): is a point's "held-out above T" shared by every judge of the split (a D-versus-T
    offset of the split) or particular to the judges the selection ranks best?"""
    res, seed = split["res"], split["rec"]["seed"]
    panel0 = BF.load(name, 0)
    blocks = BF.split(panel0, name, seed, 0)
    panel = deployable_label_scale(panel0, blocks)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
    T = blocks.T
    enc = encode_panel(panel, D)
    y = panel.labels
    sj = res.heldout.baselines["single_judges"]          # (repeats, rows, judges)
    cv = np.mean([np.mean((res.heldout.y[:, None] - sj[r]) ** 2, axis=0) for r in range(sj.shape[0])], axis=0)
    tm = np.mean((y[T, None] - single_judge_columns(enc.scores[D], y[D], enc.scores[T])) ** 2, axis=0)
    diff = cv - tm
    order = np.argsort(cv, kind="stable")
    return {"all": float(diff.mean()), "best": float(diff[order[0]]), "top10": float(diff[order[:10]].mean())}


def fixed_one_judge(split: dict) -> dict | None:
    """The k = 1 point's estimate when every draw's choice (one-judge members, chosen as the
    frontier chooses, on the path rules' columns) is scored out of bag on the *fixed*
    cross-fitted column of the judge those members deploy (the selection's ``single_judges``
    baseline: an isotonic map of that judge fitted on each fold's training rows) instead of the
    rules' columns, whose judge varies by fold. None when the split has no one-judge point.
    Also each point's members' mean judge-set stability (1: every fold built the deployed
    set), to see where the rule-versus-set part can matter at all."""
    res, rec = split["res"], split["rec"]
    heldout = res.heldout
    boot = assess(res, heldout)["bootstrap"]
    fc = F.FrontierChoices(res, heldout)
    choices, rp = _level_choices(res, fc, boot)
    decided = fc.chains[0]
    stability = {}
    for (constraint, pred, _) in decided:
        k = constraint.max_judges or rec["J"]
        stability[k] = float(np.mean([res.candidates[m].stability for m in pred.key]))
    level = [i for i, (c, _, _) in enumerate(decided) if c.max_judges == 1]
    point = rec["points"].get(1)
    sj = heldout.baselines.get("single_judges")
    if not level or point is None or sj is None:
        return {"stability": stability}
    fixed_loss = ((heldout.y[None, :, None] - sj) ** 2).mean(axis=0)       # (rows, judges), repeats averaged
    if heldout.inverse is not None:          # one row of each distinct held-out row (they share their folds)
        first = np.unique(heldout.inverse, return_index=True)[1]
        fixed_loss = fixed_loss[first]
    unit = np.asarray(rp.unit_matrix @ fixed_loss)                           # (units, judges)
    judge = np.array([next(iter({j for m in key for j in res.candidates[m].judge_idx})) for key in choices[level[0]]])
    score = np.empty(len(judge))
    for j in np.unique(judge):
        b = np.flatnonzero(judge == j)
        score[b] = rp._oob_sums(unit[:, j], b) / rp._safe_on[b]
    dr = point["dr"]
    delta = (dr.get("training_size_correction") or {}).get("delta", 0.0)
    return {"stability": stability, "tmse": point["tmse"], "estimate": dr["estimate"],
            "fixed_scored": float(score[rp.keep].mean() - delta), "draw_judges": int(len(np.unique(judge)))}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=8)
    ap.add_argument("--panels", nargs="+", default=["llmbar", "hanna"])
    ap.add_argument("--population", type=int, default=0, help="synthetic panels: this many fresh rows in T")
    ap.add_argument("--cache", required=True, help="directory keeping each split's selection (reused when present)")
    ap.add_argument("--single-judge-candidates", action="store_true")
    ap.add_argument("--judge-offsets", action="store_true",
                    help="instead: every judge's cross-fitted risk on D minus its T-MSE (shared panels only)")
    ap.add_argument("--fixed-one-judge", action="store_true",
                    help="instead: the k = 1 estimate with each draw's one-judge choice scored on its judge's "
                         "fixed cross-fitted column, and the points' judge-set stability by k")
    args = ap.parse_args(argv)
    os.makedirs(args.cache, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for name in args.panels:
        if args.judge_offsets:
            offs = [judge_offsets(name, cached_split(name, 100 + i, 0, args.cache, False)) for i in range(args.splits)]
            for key, what in (("all", "every judge"), ("best", "the judge with the lowest cross-fitted risk"),
                              ("top10", "the ten lowest")):
                m, se = _mean_se([o[key] for o in offs])
                print(f"{name}: cross-fitted risk - T-MSE, {what}: {m:+.4f} (SE {se:.4f}, {len(offs)} splits)")
            continue
        if args.fixed_one_judge:
            runs = [fixed_one_judge(cached_split(name, 100 + i, args.population, args.cache, False))
                    for i in range(args.splits)]
            one = [r for r in runs if "tmse" in r]
            for key, what in (("estimate", "today (the rules' columns)"), ("fixed_scored", "scored on fixed columns")):
                m, se = _mean_se([r[key] - r["tmse"] for r in one])
                print(f"{name}: k = 1 estimate - T-MSE, {what}: {m:+.4f} (SE {se:.4f}, {len(one)} splits)")
            m, se = _mean_se([r["fixed_scored"] - r["estimate"] for r in one])
            print(f"{name}: fixed-scored - today, paired: {m:+.4f} (SE {se:.4f})")
            ks = sorted(runs[0]["stability"])
            print(f"{name}: members' mean judge-set stability by k: "
                  + " ".join(f"{k}:{np.mean([r['stability'][k] for r in runs if k in r['stability']]):.2f}"
                             for k in ks if k <= 5 or k % 5 == 0 or k == ks[-1]), flush=True)
            continue
        rows = [replay_estimates(cached_split(name, 100 + i, args.population, args.cache, args.single_judge_candidates))
                for i in range(args.splits)]
        print(report(name, rows), flush=True)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
