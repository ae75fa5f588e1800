"""Decomposition of a one-judge frontier point's estimate - T-MSE (not a test).

On the cached selections of ``bench_replay.py`` (the same splits as ``bench_frontier.py``:
seed 100 + i, 20 % of the groups in T; ``--population N`` puts N fresh synthetic rows in T)
it splits the k = 1 point's deployed-risk estimate minus the T-MSE of its refit on D into

* (a) held-out risk - T-MSE: the point's cross-fitted risk (the members' columns, whose
  path rule picks its first judge afresh in every fold) against T; split further into
  (a1) held-out risk - *own* cross-fitted risk: the same members (family, parameters) with
  the deployed judge fixed in every fold, refitted here on the selection's own folds and
  repeats (``fit_menu`` on one fixed path), i.e. the path rule varying by fold; and
  (a2) own cross-fitted risk - T-MSE: what is left with no choice of judge at all;
* (b) bbc_estimate - held-out risk: the bootstrap replay of the constrained rule (winner's curse);
* (c) - delta: the point's learning-curve correction.

(a) + (b) + (c) = estimate - T-MSE. It also checks that the refit of the fixed path on all
of D predicts T exactly as the deployed point does (the refit is the predictor whose own
risk (a2) reads), reports the tie average (members, their rules, families, stability,
judges), the label range and the predictions' range, and, on LLMBar, T's share of
adversarial groups against D's.

    PYTHONPATH=. nice .venv/bin/python bench/k1_decompose.py --panels llmbar --splits 32 --cache /tmp/k1bias_cache
    PYTHONPATH=. nice .venv/bin/python bench/k1_decompose.py --panels llmbar --cache /tmp/k1bias_cache \
        --learning-curve GPT-4/Rating_Metrics_Reference --reps 60

``--learning-curve JUDGE``: is the held-out risk's offset from T (a2) a learning curve the
correction misses? :func:`learning_curve`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import Counter
from unittest import mock

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_replay as BR  # noqa: E402

from fcps_core.measures.judge_paths import JudgePath  # noqa: E402
from fcps_core.selection import frontier as F  # noqa: E402
from fcps_core.selection import menu as MENU  # noqa: E402
from fcps_core.selection.crossfit import _predict_candidates, group_codes  # noqa: E402
from fcps_core.selection.folds import grouped_folds  # noqa: E402
from fcps_core.selection.menu import MenuRows, fit_menu, menu_key  # noqa: E402

FIXED = "fixed"


def fixed_predictions(res, rule: str, judges: tuple, fit_rows, pred_rows, unlabelled, keys) -> dict:
    """Predictions on ``pred_rows`` of the menu's models (``keys``: (family, params) pairs)
    on the fixed judge prefix ``judges``, fitted on ``fit_rows`` (paths are not built: the
    one fixed path replaces them)."""
    path = JudgePath(rule, tuple(judges), (len(judges),), label=FIXED)
    empty = np.zeros(0, dtype=np.int64)
    rows = MenuRows(path_rows=fit_rows, fit=fit_rows, scored=empty, audit=empty, unlabelled=unlabelled)
    only = frozenset(menu_key(FIXED, len(judges), f, dict(p)) for f, p in keys)
    with mock.patch.object(MENU, "build_paths", lambda *a, **k: [path]):
        menu = fit_menu(res.selector, res.panel, rows, expand_grid=True, score_val=False, only=only,
                        diagnostics=False)
    preds = _predict_candidates(menu, pred_rows, keys=only)
    return {(f, p): preds[menu_key(FIXED, len(judges), f, dict(p))] for f, p in keys}


def _params(c) -> tuple:
    return tuple(sorted(c.params.items()))


def decompose(name: str, split: dict, population: int) -> dict:
    res, rec = split["res"], split["rec"]
    panel, sel = res.panel, res.selector
    blocks = res.blocks
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V])).astype(np.int64)
    T = np.asarray(blocks.T, dtype=np.int64)
    seen = np.zeros(panel.n_rows, dtype=bool)
    seen[D] = seen[T] = True
    unlabelled = np.flatnonzero(~seen)
    y = panel.labels
    fc = F.FrontierChoices(res, res.heldout)
    pred = next(p for c, p, _ in fc.chains[0] if c.max_judges == 1)
    members = list(pred.key)
    cands = [res.candidates[m] for m in members]
    judge_sets = {tuple(c.judge_idx) for c in cands}
    assert len(judge_sets) == 1, judge_sets
    judges = next(iter(judge_sets))
    keys = list(dict.fromkeys((c.family, _params(c)) for c in cands))
    point = rec["points"][1]
    dr = point["dr"]
    delta = float((dr.get("training_size_correction") or {}).get("delta", 0.0))
    # the refit on all of D, the deployed judge fixed: must predict T as the point does
    full = fixed_predictions(res, cands[0].path_rule, judges, D, T, unlabelled, keys)
    pT = np.mean([full[(c.family, _params(c))] for c in cands], axis=0)
    tmse_fixed = float(np.mean((y[T] - pT) ** 2))
    # the own cross-fitted risk: the same members, the judge fixed, on the selection's folds
    groups = group_codes(panel.group_ids[D])
    fold_list = grouped_folds(groups, sel.folds, sel.repeats, sel.seed)
    R = sel.repeats
    loss = np.zeros((R, len(D)))
    for r, tr, va in fold_list:
        pr = fixed_predictions(res, cands[0].path_rule, judges, D[tr], D[va], unlabelled, keys)
        loss[r, va] = (y[D[va]] - np.mean([pr[(c.family, _params(c))] for c in cands], axis=0)) ** 2
    # repeats a member was fitted in (the screen keeps a candidate's first repeat only)
    reps = {c.repeats for c in cands}
    own = float(loss[0].mean()) if reps == {1} else float(loss.mean())
    heldout_risk = float(point["risk"])
    tmse = float(point["tmse"])
    out = {"seed": rec["seed"], "estimate": float(dr["estimate"]), "bbc": float(dr.get("bbc_estimate", dr["estimate"])),
           "delta": delta, "heldout": heldout_risk, "own_cv": own, "tmse": tmse, "tmse_fixed_refit": tmse_fixed,
           "n_members": len(members), "judge": panel.judge_names[judges[0]],
           "rules": dict(Counter(c.path_rule for c in cands)), "families": dict(Counter(c.family for c in cands)),
           "stability": [float(c.stability) if c.stability is not None else None for c in cands],
           "repeats": sorted(r for r in reps if r is not None),
           "y_range": [float(y[D].min()), float(y[D].max())], "pred_range_T": [float(pT.min()), float(pT.max())]}
    if name == "llmbar":
        subset = np.array([g.split(":")[0] for g in panel.group_ids])
        out["adv_share_T"] = float(np.mean(subset[T] != "Natural"))
        out["adv_share_D"] = float(np.mean(subset[D] != "Natural"))
        natT = subset[T] == "Natural"
        out["tmse_natural"] = float(np.mean((y[T][natT] - pT[natT]) ** 2))
        out["tmse_adv"] = float(np.mean((y[T][~natT] - pT[~natT]) ** 2))
        natD = subset[D] == "Natural"
        own_rows = loss[0] if reps == {1} else loss.mean(axis=0)
        out["own_cv_natural"] = float(own_rows[natD].mean())
        out["own_cv_adv"] = float(own_rows[~natD].mean())
    return out


#: the k = 1 point's typical members on LLMBar (family, parameters): what the learning curve fits
CURVE_MODELS = [("mean_iso", {}), ("residual", {"base": "logistic", "shrinkage": 8.0}),
                ("residual", {"base": "mean_iso", "shrinkage": 8.0}),
                ("residual", {"base": "one_coin_iso", "shrinkage": 8.0}), ("backoff", {"shrinkage": 0.5})]


def learning_curve(name: str, judge: str, reps: int, sizes=(0.32, 0.64, 0.8)) -> str:
    """The deployed judge's members' risk against training size on the whole panel, paired:
    per rep a random 20 % of the groups is the evaluation set and nested random training sets
    of ``sizes`` x the groups are drawn from the rest (0.64 = a fold's training share of D,
    0.8 = D's, 0.32 = the correction's half). Compares the step from 0.64 to 0.8 (what the
    learning-curve correction must remove) with what r(n) = a + b/n through 0.32 and 0.64
    predicts for it (the correction's model)."""
    from fcps_core import read_panel
    from fcps_core.selection import FCPSSelector
    panel = read_panel(os.path.join(BR.BF.DATA, f"{name}.csv"))
    sel = FCPSSelector()
    j = panel.judge_names.index(judge)
    uniq, inv = np.unique(panel.group_ids, return_inverse=True)
    G = len(uniq)
    subset = np.array([g.split(":")[0] for g in panel.group_ids])
    rng = np.random.default_rng(0)
    empty = np.zeros(0, dtype=np.int64)
    path = JudgePath("info_first", (j,), (1,), label=FIXED)
    keys = [(f, tuple(sorted(p.items()))) for f, p in CURVE_MODELS]
    only = frozenset(menu_key(FIXED, 1, f, dict(p)) for f, p in keys)
    risks = {n: {k: [] for k in keys + ["average"]} for n in sizes}
    nat = {n: [] for n in sizes}
    for _ in range(reps):
        order = rng.permutation(G)
        n_eval = int(round(0.2 * G))
        E = np.flatnonzero(np.isin(inv, order[:n_eval]))
        rest = order[n_eval:]
        for n in sizes:
            tr = np.flatnonzero(np.isin(inv, rest[:int(round(n * G))]))
            rows = MenuRows(path_rows=tr, fit=tr, scored=empty, audit=empty, unlabelled=empty)
            with mock.patch.object(MENU, "build_paths", lambda *a, **k: [path]):
                menu = fit_menu(sel, panel, rows, expand_grid=True, score_val=False, only=only, diagnostics=False)
            preds = _predict_candidates(menu, E, keys=only)
            ps = [preds[menu_key(FIXED, 1, f, dict(p))] for f, p in keys]
            for k, p in zip(keys, ps):
                risks[n][k].append(float(np.mean((panel.labels[E] - p) ** 2)))
            avg = np.mean(ps, axis=0)
            risks[n]["average"].append(float(np.mean((panel.labels[E] - avg) ** 2)))
            natE = subset[E] == "Natural"
            nat[n].append(float(np.mean((panel.labels[E][natE] - avg[natE]) ** 2)))
    lo, mid, hi = sizes
    lines = [f"{name}, {judge}: learning curve over {reps} paired draws (evaluation 20 % of the groups; training "
             f"{lo:.2f} / {mid:.2f} / {hi:.2f} of the groups)"]
    for k in keys + ["average"]:
        r = {n: np.array(risks[n][k]) for n in sizes}
        step = r[mid] - r[hi]
        pred = (r[lo] - r[mid]) * (1 / mid - 1 / hi) / (1 / lo - 1 / mid)
        lines.append(f"  {str(k):60s} r: {r[lo].mean():.4f} {r[mid].mean():.4f} {r[hi].mean():.4f}; step {mid}->{hi} "
                     "{:+.4f} (SE {:.4f}); a + b/n predicts {:+.4f} (SE {:.4f})".format(*_ms(step), *_ms(pred)))
    r = {n: np.array(nat[n]) for n in sizes}
    lines.append("  average, Natural rows only: step {:+.4f} (SE {:.4f})".format(*_ms(r[mid] - r[hi])))
    return "\n".join(lines)


def fixed_offsets(name: str, judge: str, n_splits: int) -> str:
    """(a2) without a selection, over many splits: per split (``bench_frontier``'s, seed 100 +
    i) the :data:`CURVE_MODELS` on ``judge`` fixed, their grouped cross-fitted risk on D (the
    selection's folds and repeats) minus the T-MSE of their refit on D, each model and their
    average. Its mean over many splits is what (a2) is in expectation for a judge the
    selection deploys on every split; over the first 32 it is comparable to the
    decomposition above."""
    from fcps_core.selection import FCPSSelector, deployable_label_scale
    panel0 = BR.BF.load(name, 0)
    j = panel0.judge_names.index(judge)
    path = JudgePath("info_first", (j,), (1,), label=FIXED)
    keys = [(f, tuple(sorted(p.items()))) for f, p in CURVE_MODELS]
    only = frozenset(menu_key(FIXED, 1, f, dict(p)) for f, p in keys)
    empty = np.zeros(0, dtype=np.int64)

    def fitted(panel, tr, rows):
        mr = MenuRows(path_rows=tr, fit=tr, scored=empty, audit=empty, unlabelled=empty)
        with mock.patch.object(MENU, "build_paths", lambda *a, **k: [path]):
            menu = fit_menu(sel, panel, mr, expand_grid=True, score_val=False, only=only, diagnostics=False)
        preds = _predict_candidates(menu, rows, keys=only)
        ps = [preds[menu_key(FIXED, 1, f, dict(p))] for f, p in keys]
        return ps + [np.mean(ps, axis=0)]
    out = []
    for i in range(n_splits):
        seed = 100 + i
        blocks = BR.BF.split(panel0, name, seed, 0)
        panel = deployable_label_scale(panel0, blocks)
        sel = FCPSSelector(seed=seed)
        D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V])).astype(np.int64)
        T = np.asarray(blocks.T, dtype=np.int64)
        y = panel.labels
        folds = grouped_folds(group_codes(panel.group_ids[D]), sel.folds, sel.repeats, sel.seed)
        loss = np.zeros((len(keys) + 1, sel.repeats, len(D)))
        for r, tr, va in folds:
            for m, p in enumerate(fitted(panel, D[tr], D[va])):
                loss[m, r, va] = (y[D[va]] - p) ** 2
        cv = loss.mean(axis=(1, 2))
        tm = np.array([np.mean((y[T] - p) ** 2) for p in fitted(panel, D, T)])
        out.append(cv - tm)
    out = np.array(out)
    lines = [f"{name}, {judge} fixed: cross-fitted risk on D - T-MSE of the refit on D, no selection"]
    for m, k in enumerate(keys + ["average"]):
        first = "{:+.4f} (SE {:.4f})".format(*_ms(out[:32, m]))
        lines.append(f"  {str(k):60s} first 32 splits {first}; all {n_splits} " + "{:+.4f} (SE {:.4f})".format(
            *_ms(out[:, m])))
    return "\n".join(lines)


def _ms(v) -> tuple[float, float]:
    v = np.asarray(v, dtype=float)
    return float(v.mean()), (float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else float("nan"))


def report(name: str, rows: list[dict]) -> str:
    f = lambda v: "{:+.4f} (SE {:.4f})".format(*_ms(v))  # noqa: E731
    col = lambda k: np.array([r[k] for r in rows])  # noqa: E731
    est, bbc, delta, held, own, tm = (col(k) for k in ("estimate", "bbc", "delta", "heldout", "own_cv", "tmse"))
    lines = [f"{name}: {len(rows)} splits, k = 1",
             f"  estimate - T-MSE                     {f(est - tm)}",
             f"  (a)  held-out risk - T-MSE            {f(held - tm)}",
             f"  (a1)   held-out - own cross-fitted    {f(held - own)}   (the path rule's judge varying by fold)",
             f"  (a2)   own cross-fitted - T-MSE       {f(own - tm)}   (the deployed judge fixed in every fold)",
             f"  (b)  bbc_estimate - held-out risk     {f(bbc - held)}   (winner's-curse replay)",
             f"  (c)  - learning-curve delta           {f(-delta)}",
             f"  check: (a)+(b)+(c) - (estimate - T-MSE) max |.| "
             f"{np.max(np.abs((held - tm) + (bbc - held) - delta - (est - tm))):.2e}; "
             f"fixed refit's T-MSE - the point's, max |.| {np.max(np.abs(col('tmse_fixed_refit') - tm)):.2e}",
             f"  tie average: members {Counter(r['n_members'] for r in rows).most_common()}; judges "
             f"{Counter(r['judge'] for r in rows).most_common(6)}",
             f"  members' rules {sum((Counter(r['rules']) for r in rows), Counter()).most_common()}; families "
             f"{sum((Counter(r['families']) for r in rows), Counter()).most_common()}",
             f"  members' stability (share of folds picking the deployed judge): mean "
             f"{np.mean([np.mean(r['stability']) for r in rows]):.2f}; splits with every member stable "
             f"{sum(all(s == 1 for s in r['stability']) for r in rows)}",
             f"  labels on D {sorted({tuple(r['y_range']) for r in rows})}; point's predictions on T within "
             f"[{min(r['pred_range_T'][0] for r in rows):.3f}, {max(r['pred_range_T'][1] for r in rows):.3f}]"]
    stable = [r for r in rows if all(s == 1 for s in r["stability"])]
    if stable:
        lines.append(f"  stable splits: held-out - own cross-fitted max |.| "
                     f"{max(abs(r['heldout'] - r['own_cv']) for r in stable):.2e} (0 checks the refits)")
    if "adv_share_T" in rows[0]:
        share = col("adv_share_T") - col("adv_share_D")
        e = est - tm
        lines.append(f"  adversarial share of rows, T - D: {f(share)}; correlation with estimate - T-MSE "
                     f"{np.corrcoef(share, e)[0, 1]:+.2f}")
        lines.append(f"  own cross-fitted - T-MSE by subset: Natural {f(col('own_cv_natural') - col('tmse_natural'))}, "
                     f"adversarial {f(col('own_cv_adv') - col('tmse_adv'))}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--splits", type=int, default=8)
    ap.add_argument("--panels", nargs="+", default=["llmbar"])
    ap.add_argument("--population", type=int, default=0)
    ap.add_argument("--cache", required=True)
    ap.add_argument("--out")
    ap.add_argument("--learning-curve", metavar="JUDGE",
                    help="instead: the learning curve of the k = 1 members' families on JUDGE (whole panel)")
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--fixed-splits", type=int, metavar="N",
                    help="with --learning-curve JUDGE: instead, (a2) of JUDGE's fixed models over N splits")
    args = ap.parse_args(argv)
    os.makedirs(args.cache, exist_ok=True)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    if args.learning_curve:
        for name in args.panels:
            if args.fixed_splits:
                print(fixed_offsets(name, args.learning_curve, args.fixed_splits), flush=True)
            else:
                print(learning_curve(name, args.learning_curve, args.reps), flush=True)
        return 0
    allrows = {}
    for name in args.panels:
        rows = []
        for i in range(args.splits):
            rows.append(decompose(name, BR.cached_split(name, 100 + i, args.population, args.cache, False),
                                  args.population))
            sys.stderr.write(f"{name} {i}: est-T {rows[-1]['estimate'] - rows[-1]['tmse']:+.4f} "
                             f"held-own {rows[-1]['heldout'] - rows[-1]['own_cv']:+.4f}\n")
        allrows[name] = rows
        print(report(name, rows), flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(allrows, fh, indent=1)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
