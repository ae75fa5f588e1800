"""How sure the selection is: the deployed risk, the baselines, ties and the regime verdict.

* **Deployed risk** (``deployed_risk``): the bootstrap bias-corrected cross-validation of
  Tsamardinos, Greasidou and Borboudakis (2018, "BBC-CV"). The held-out prediction matrix
  (rows x candidates) is resampled by groups; the choice rule is applied to the in-bag
  rows and the chosen configuration is scored on the out-of-bag rows; no model is refitted.
  The estimate is the mean out-of-bag risk, the interval its 2.5-97.5 % percentiles. It
  corrects the optimism of reporting the winner's own held-out risk (the winner's curse of
  an argmin over |C| candidates). Under the split protocol the same bootstrap runs over
  the validation block. ``nested`` (crossfit only) runs the whole cross-fitted selection
  inside each outer grouped fold instead and scores the deployed predictor on the fold.
* **Baselines**: fixed recipes (:mod:`.baselines`) on the same rows; ``diff_vs_selected``
  = baseline risk - the procedure's risk, paired within each bootstrap draw (positive: the
  selection is better), with its 2.5-97.5 % bootstrap interval.
* **Tie**: the candidates whose held-out risk is within one paired, group-clustered SE of
  the selected one (:mod:`.choice`) are its statistical ties.
* **Regime**: the interaction gain (best scalar minus best table-like held-out risk) has a
  paired, clustered SE; the quadrant is asserted only when the gain's 95 % interval lies
  on one side of the gain threshold, otherwise it is ``undetermined`` and the number of
  held-out labels that would make the interval clear the threshold is estimated from
  SE ~ 1/sqrt(n).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..diagnostics import argmin_with_ties, losses, regime_quadrant, risk_tolerance, table_pressure
from ..families import REGISTRY
from .folds import grouped_folds
from .choice import WITHIN_TIE_RULES, GroupedLosses, pick_members, preference_order, tie_break_order

Z95 = 1.959963984540054
BASELINE_LABELS = {
    "best_single_judge": "best single judge (isotonic)",
    "mean_vote_iso": "mean vote + isotonic",
    "majority_vote": "majority vote (ties 1/2)",
    "ridge_iso_all": "ridge + isotonic over all judges",
    "logistic_all": "logistic over all judges",
    "ds_jury_all": "Dawid-Skene jury over all judges",
}


def assess_regime_only(result, rows: np.ndarray) -> None:
    """The regime verdict alone (sweeps under the paper's protocol): predicts only the two
    candidates it compares."""
    y = result.panel.labels[rows]
    groups = result.panel.group_ids[rows]
    obj = result.selector.objective

    def loss_of(cands):
        L = np.column_stack([losses(obj, y, result.predict_rows(c, rows)) for c in cands])
        return GroupedLosses(L, groups)
    result.regime = _regime(result, loss_of)
    result.tie = None


def assess(result, heldout) -> None:
    """Fill ``result.regime``, ``.tie``, ``.deployed_risk`` and ``.baselines``."""
    sel = result.selector
    y = heldout.y
    L = heldout.losses(sel.objective)
    grouped = heldout.grouped(sel.objective)
    result.regime = _regime(result, lambda cands: GroupedLosses(L[:, [c.index for c in cands]], heldout.groups))
    result.tie = _tie(result, grouped)
    base_losses = _baseline_losses(result, heldout, y)
    if sel.estimate == "none":
        result.deployed_risk = None
        result.baselines = _unpaired_baselines(base_losses)
        return
    if grouped.n_groups < 2:
        # One validation group: no bootstrap draw leaves any group out of the bag.
        result.deployed_risk = None
        result.baselines = _unpaired_baselines(base_losses)
        result.choice_info["estimate_note"] = ("no bias-corrected estimate: the validation rows form "
                                               "one group (label more groups)")
        return
    result.deployed_risk, result.baselines = _bbc(result, heldout, grouped, y, base_losses)


def _unpaired_baselines(base_losses: dict) -> list[dict]:
    """The baselines' held-out risks without a paired difference (no bootstrap)."""
    return [{"name": n, "label": BASELINE_LABELS[n.split(":")[0]], "risk": float(v.mean()),
             "diff_vs_selected": None, "ci": None} for n, v in base_losses.items()]


def _baseline_losses(result, heldout, y) -> dict[str, np.ndarray]:
    obj = result.selector.objective
    out = {}
    for name, p in heldout.baselines.items():
        if name == "single_judges":
            continue
        out[name] = np.mean([losses(obj, y, p[r]) for r in range(p.shape[0])], axis=0)
    if "single_judges" in heldout.baselines:
        sj = heldout.baselines["single_judges"]
        per_judge = np.mean([losses(obj, y[:, None], sj[r]) for r in range(sj.shape[0])], axis=0)
        j = int(np.argmin(per_judge.mean(axis=0)))
        out[f"best_single_judge:{result.panel.judge_names[j]}"] = per_judge[:, j]
    order = {n: i for i, n in enumerate(BASELINE_LABELS)}
    return dict(sorted(out.items(), key=lambda kv: order[kv[0].split(":")[0]]))


def _bbc(result, heldout, grouped: GroupedLosses, y, base_losses: dict):
    """All bootstrap draws at once: with W (draws x groups) the draw counts of each group,
    every in-bag mean, paired clustered SE and out-of-bag sum is a matrix product with the
    per-group loss sums (:class:`.choice.GroupedLosses`), so the rule is replayed exactly
    (same tie tolerance, same SE) without a loop over candidates."""
    sel = result.selector
    cands = result.candidates
    rule = sel.choice
    tie_rank, simple_rank = tie_break_order(cands), preference_order(rule, cands, sel.judge_costs)
    rng = np.random.default_rng(np.random.SeedSequence([sel.seed, 2018]))
    G = grouped.n_groups
    S, ng = grouped.sums, grouped.rows_per_group
    W = np.zeros((sel.n_boot, G))
    for b in range(sel.n_boot):
        W[b] = np.bincount(rng.integers(0, G, G), minlength=G)
    O = (W == 0).astype(float)
    keep = O @ ng > 0                                  # draws with out-of-bag rows
    W, O = W[keep], O[keep]
    N = W @ ng
    M = (W @ S) / N[:, None]
    lo = M.min(axis=1)
    tol = risk_tolerance(lo)
    big = len(cands) + 1
    best = np.where(M <= (lo + tol)[:, None], tie_rank[None, :], big).argmin(axis=1)
    chosen = best.copy()
    rows_b = np.arange(len(best))
    if rule != "argmin":
        drawn = W.sum(axis=1)
        Mb = M[rows_b, best]
        delta = M - Mb[:, None]
        Q = W @ (S ** 2)
        GN = W @ (S * ng[:, None])
        NN = W @ (ng ** 2)
        X = (W * S[:, best].T) @ S                     # sum_g w_g S_gc S_g,best
        Qb, GNb = Q[rows_b, best], GN[rows_b, best]
        ss = Q - 2 * X + Qb[:, None] + delta ** 2 * NN[:, None] - 2 * delta * (GN - GNb[:, None])
        se = np.sqrt(np.maximum(ss, 0.0) * (drawn / np.maximum(drawn - 1, 1))[:, None]) / N[:, None]
        tied = delta <= se + tol[:, None]
        if rule in WITHIN_TIE_RULES:
            chosen = np.where(tied, simple_rank[None, :], big).argmin(axis=1)
    OS, ON = O @ S, O @ ng
    proc = OS[rows_b, chosen] / ON
    if rule == "tie_average":
        signatures = heldout.signatures()
        row_group = grouped.group_of_row
        for b in range(len(best)):
            members = pick_members(np.flatnonzero(tied[b]), M[b], tie_rank, signatures, sel.max_members)
            if len(members) > 1:
                oob_rows = O[b][row_group] > 0
                avg = heldout.preds[:, :, members][:, oob_rows].mean(axis=2)   # (repeats, oob rows)
                proc[b] = float(np.mean([losses(sel.objective, y[oob_rows], a) for a in avg]))
    deployed = {"estimate": float(proc.mean()),
                "ci": [float(np.percentile(proc, 2.5)), float(np.percentile(proc, 97.5))],
                "method": "bbc", "n_boot": int(len(proc)), "objective": sel.objective,
                "rule": rule if not result.guard else "argmin (guard not replayed)",
                "optimistic": _deployed_heldout_risk(result)}
    baselines = []
    row_group = grouped.group_of_row
    for n, bl in base_losses.items():
        bsum = np.bincount(row_group, weights=bl, minlength=G)
        d = (O @ bsum) / ON - proc
        name, _, judge = n.partition(":")
        baselines.append({"name": name, "label": BASELINE_LABELS[name] + (f": {judge}" if judge else ""),
                          "risk": float(bl.mean()), "diff_vs_selected": float(d.mean()),
                          "ci": [float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))],
                          **({"judge": judge} if judge else {})})
    return deployed, baselines


def _deployed_heldout_risk(result) -> float:
    """The deployed choice's own (optimistic) held-out risk."""
    if result.members and result.selected_val:
        return float(result.selected_val["val_" + result.selector.objective])
    return float(result.selected.val_risk)


def _tie(result, grouped: GroupedLosses, limit: int = 5) -> dict:
    ref = result.selected_index
    means = grouped.means()
    se = grouped.paired_se(ref, means=means)
    members = set(result.members or [ref])
    tied = [int(c) for c in np.argsort(means, kind="stable")
            if c not in members and means[c] - means[ref] <= (se[c] if np.isfinite(se[c]) else 0.0)]
    alternatives = []
    seen = set()
    for c in tied:
        cand = result.candidates[c]
        key = (cand.family, tuple(cand.judge_idx))
        if key in seen:
            continue
        seen.add(key)
        alternatives.append({"index": c, "family": cand.family, "K": cand.K,
                             "path": cand.path_label or cand.path_rule, "judges": cand.judges,
                             "risk": float(means[c]), "diff": float(means[c] - means[ref]),
                             "se": float(se[c])})
        if len(alternatives) >= limit:
            break
    return {"tied": bool(tied) or bool(result.members), "n_tied": len(tied),
            "alternatives": alternatives,
            "rule": "within one paired, group-clustered SE of the selected candidate"}


def _regime(result, grouped_pair) -> dict:
    s = result.selector
    cands = result.candidates
    table_like = [c for c in cands if REGISTRY[c.family].table_like and c.diagnostics]
    scalar = [c for c in cands if not REGISTRY[c.family].table_like]
    if not table_like or not scalar:
        out = regime_quadrant(None, None, gain_threshold=s.gain_threshold,
                              pressure_threshold=s.pressure_threshold)
        out["determined"] = False
        return out
    best_t = argmin_with_ties(table_like, lambda c: c.val_risk, lambda c: (c.K, c.index))
    best_s = argmin_with_ties(scalar, lambda c: c.val_risk, lambda c: (c.K, c.index))
    pressure = table_pressure(best_t.diagnostics.H_K, result.n_fit, best_t.diagnostics.unseen_val)
    gain = best_s.val_risk - best_t.val_risk
    se = float(grouped_pair([best_t, best_s]).paired_se(0)[1])
    out = regime_quadrant(gain, pressure, gain_threshold=s.gain_threshold,
                          pressure_threshold=s.pressure_threshold)
    lo, hi = gain - Z95 * se, gain + Z95 * se
    determined = bool(math.isfinite(se) and (lo > s.gain_threshold or hi <= s.gain_threshold))
    out.update({"interaction_gain_se": se, "interaction_gain_ci": [lo, hi],
                "best_table_like_index": best_t.index, "best_scalar_index": best_s.index,
                "determined": determined})
    if not determined:
        n = len(result.val_rows)
        margin = abs(gain - s.gain_threshold)
        more = (math.ceil(n * (Z95 * se / margin) ** 2) - n) if margin > 0 and math.isfinite(se) else None
        out.update({"point_quadrant": out["quadrant"], "quadrant": "undetermined",
                    "description": "the interaction gain's 95% interval contains its threshold",
                    "labels_to_resolve": more,
                    "advice": ("Undetermined: the interaction gain "
                               f"{gain:+.4f} (95% interval {lo:+.4f} to {hi:+.4f}) is not clearly "
                               f"{'above' if gain > s.gain_threshold else 'below'} the threshold "
                               f"{s.gain_threshold:g}. "
                               + (f"About {more} more held-out labels would resolve it "
                                  "(its SE shrinks as 1/sqrt(n))." if more is not None else
                                  "More labels would not resolve it: the gain sits on the threshold."))})
    return out


def nested_estimate(selector, panel, blocks, D: np.ndarray, report) -> dict:
    """Nested grouped cross-validation of the whole cross-fitted procedure: each outer fold
    is held out, the selection runs on the rest (its own inner folds), and the deployed
    predictor is scored on the outer fold."""
    from ..splits import Blocks
    inner = replace(selector, estimate="none", with_baselines=False, progress=None)
    empty = np.zeros(0, dtype=np.int64)
    row_loss = np.full(len(D), np.nan)
    outer = grouped_folds(panel.group_ids[D], selector.folds, 1, selector.seed + 1)
    for k, (_, tr, va) in enumerate(outer):
        report(0.96 + 0.03 * k / len(outer), f"nested estimate: outer fold {k + 1}/{len(outer)}")
        res = inner.fit(panel, Blocks(S=D[tr], M=empty, V=empty, T=D[va], seed=selector.seed,
                                      source="manual"))
        row_loss[va] = losses(selector.objective, panel.labels[D[va]], res.predict_deployed(D[va]))
    est = float(row_loss.mean())
    se = float(GroupedLosses(row_loss[:, None], panel.group_ids[D]).mean_se()[0])
    return {"estimate": est, "ci": [est - Z95 * se, est + Z95 * se], "method": "nested",
            "outer_folds": len(outer), "objective": selector.objective}
