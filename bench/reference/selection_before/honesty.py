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

from fcps_core.measures.diagnostics import argmin_with_ties, losses, regime_quadrant, risk_tolerance, table_pressure
from fcps_core.families import REGISTRY
from .folds import grouped_folds
from fcps_core.families.base import one_blas_thread
from .choice import (WITHIN_TIE_RULES, GroupedLosses, line_ids, pick_members, preference_order,
                     risk_order, rounding_tolerance, rule_pool, tie_break_order)

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


@one_blas_thread
def assess(result, heldout) -> None:
    """Fill ``result.regime``, ``.tie``, ``.deployed_risk`` and ``.baselines``."""
    sel = result.selector
    grouped = heldout.grouped(sel.objective)
    result.regime = _regime(result, lambda cands: grouped.columns([c.index for c in cands]))
    result.tie = _tie(result, grouped)
    base_losses, on_distinct = _baseline_losses(result, heldout)
    if sel.estimate == "none":
        result.deployed_risk = None
        result.baselines = _unpaired_baselines(base_losses, heldout, on_distinct)
        return
    if grouped.n_groups < 2:
        # One validation group: no bootstrap draw leaves any group out of the bag.
        result.deployed_risk = None
        result.baselines = _unpaired_baselines(base_losses, heldout, on_distinct)
        result.choice_info["estimate_note"] = ("no bias-corrected estimate: the validation rows form "
                                               "one group (label more groups)")
        return
    result.deployed_risk, result.baselines = _bbc(result, heldout, grouped, base_losses, on_distinct)


def _raw_mean(v: np.ndarray, heldout, on_distinct: bool) -> float:
    return heldout.raw_mean(v) if on_distinct else float(v.mean())


def _unpaired_baselines(base_losses: dict, heldout, on_distinct: bool) -> list[dict]:
    """The baselines' held-out risks without a paired difference (no bootstrap)."""
    return [{"name": n, "label": BASELINE_LABELS[n.split(":")[0]], "risk": _raw_mean(v, heldout, on_distinct),
             "diff_vs_selected": None, "ci": None} for n, v in base_losses.items()]


def _baseline_losses(result, heldout) -> tuple[dict[str, np.ndarray], bool]:
    """Each baseline's held-out loss (mean over repeats) per distinct held-out row, or per
    raw row (second value False) when some baseline's predictions differ within a distinct
    row."""
    obj = result.selector.objective
    distinct = {name: heldout.distinct(p) for name, p in heldout.baselines.items()}
    on_distinct = all(p is not None for p in distinct.values())
    preds, y = (distinct, heldout.y_distinct) if on_distinct else (heldout.baselines, heldout.y)
    n = heldout.counts if on_distinct else np.ones(len(y))
    out = {}
    for name, p in preds.items():
        if name == "single_judges":
            continue
        out[name] = np.mean([losses(obj, y, p[r]) for r in range(p.shape[0])], axis=0)
    if "single_judges" in preds:
        sj = preds["single_judges"]
        per_judge = np.mean([losses(obj, y[:, None], sj[r]) for r in range(sj.shape[0])], axis=0)
        j = int(np.argmin((per_judge * n[:, None]).sum(axis=0)))
        out[f"best_single_judge:{result.panel.judge_names[j]}"] = per_judge[:, j]
    order = {n: i for i, n in enumerate(BASELINE_LABELS)}
    return dict(sorted(out.items(), key=lambda kv: order[kv[0].split(":")[0]])), on_distinct


#: bootstrap draws per block: a block's (groups, draws) weights stay near this many cells
BLOCK_CELLS = 1 << 21
#: slack on the bound that rules a candidate out of a draw's tie set before its SE is summed
PRUNE_SLACK = 1.01
#: the bootstrap's tie sets read the unit sums of every column some draw may tie, formed
#: once when they fit in this many cells (else per best column, with the looser bound only)
UNIT_SUM_CELLS = 1 << 23


def bootstrap_counts(seed: int, n_boot: int, G: int) -> np.ndarray:
    """(draws, groups) how often each group is drawn: ``n_boot`` resamples of G groups with
    replacement from ``SeedSequence([seed, 2018])``, stored in the smallest integer type."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 2018]))
    W = np.zeros((n_boot, G), dtype=np.uint8, order="F")          # a block of draws is read per group
    for b in range(n_boot):
        counts = np.bincount(rng.integers(0, G, G), minlength=G)
        if counts.max(initial=0) > np.iinfo(W.dtype).max:
            W = W.astype(np.int64, order="F")
        W[b] = counts
    return W


def _tie_columns(spread, M, beta, w_max, N, tol, drawn):
    """Columns that may be tied with the best column ``beta`` in some of these draws.

    With r_c = S_c - M_c n (a group's residual) the paired residual is r_c - r_beta, so
    its draw-weighted norm is at most ||r_c||_w + ||r_beta||_w (triangle inequality), and
    ||r_c||_w^2 <= w_max * sum over all groups of r_c^2 (every draw weight is at most
    w_max): a bound from per-column sums over the groups
    (:meth:`.choice.GroupedLosses.spread`), no draw weights. A slack of 1e-10 * sum S^2
    covers the rounding of those sums."""
    Q0, SN0, NN0 = spread
    sq = np.maximum(Q0 - 2 * M * SN0 + M ** 2 * NN0, 0.0) + 1e-10 * Q0
    norm = np.sqrt(w_max[:, None] * sq)                          # >= ||r_c||_w
    se_up = (norm + norm[:, [beta]]) * np.sqrt(drawn / np.maximum(drawn - 1, 1))[:, None] / N[:, None]
    delta = M - M[:, [beta]]
    return np.flatnonzero((delta <= PRUNE_SLACK * (se_up + tol[:, None])).any(axis=0))


def _paired_tie_columns(spread, cross, cols, M, beta, w_max, N, tol, drawn):
    """Of ``cols``, the columns that may be tied with the best column ``beta`` in some of
    these draws, by a paired bound (tighter than :func:`_tie_columns`' triangle inequality).

    The paired residual of group g is D_g - delta n_g with D = S_c - S_beta, and its
    draw-weighted square sum is at most w_max times its sum over all groups,
    A - 2 delta Bn + delta^2 NN with A = sum D^2 = Q_c - 2 cross_c + Q_beta (``cross``:
    sum_g S_gc S_g,beta) and Bn = sum D n = SN_c - SN_beta from per-column sums
    (:meth:`.choice.GroupedLosses.spread`). That expansion cancels where D is small, so a
    slack of 1e-10 times the sum of its terms' magnitudes covers its rounding: a column it
    drops is out of the tie set of every one of these draws."""
    Q0, SN0, NN0 = spread
    A = Q0[cols] - 2 * cross + Q0[beta]
    Bn = SN0[cols] - SN0[beta]
    delta = M[:, cols] - M[:, [beta]]
    ss = A - 2 * delta * Bn + delta ** 2 * NN0
    magnitude = (Q0[cols] + 2 * np.abs(cross) + Q0[beta]) + 2 * np.abs(delta * Bn) + delta ** 2 * NN0
    ss = np.maximum(ss, 0.0) + 1e-10 * magnitude
    f = drawn / np.maximum(drawn - 1, 1)
    se_up = np.sqrt(w_max[:, None] * ss * f[:, None]) / N[:, None]
    return cols[(delta <= PRUNE_SLACK * (se_up + tol[:, None])).any(axis=0)]


def _bbc(result, heldout, grouped: GroupedLosses, base_losses: dict, on_distinct: bool):
    """All bootstrap draws at once: with W (draws x groups) the draw counts of each group,
    every in-bag mean and out-of-bag sum is a matrix product, so the rule is replayed
    exactly (same tie tolerance, same SE) without a loop over candidates.

    Rows enter as distinct rows: a draw's weight on a distinct row is the count of its
    rows in the drawn groups (a sparse product), so in-bag and out-of-bag sums are
    products with the distinct rows' losses (candidates with identical loss columns share
    one column). Draws are processed in blocks, so no (draws, groups) float matrix is held
    whole. The paired SE against a draw's best column is summed directly over groups,
    sum_g w_g (D_g - delta n_g)^2 with D = S_c - S_best (no cancellation), once per best
    column for all its draws, for the candidates a bound cannot rule out of the tie set
    (:func:`_tie_columns`). Groups of one unit share D and n, so the sum runs over units
    with the draw's total weight on each unit, and the unit sums of every column in some
    tie set are formed once (when they fit in :data:`UNIT_SUM_CELLS`)."""
    sel = result.selector
    cands = result.candidates
    rule = sel.choice
    tie_rank, simple_rank = tie_break_order(cands), preference_order(rule, cands, sel.judge_costs)
    G = grouped.n_groups
    L, col = grouped.losses, grouped.col
    ng = grouped.rows_per_group
    W = bootstrap_counts(sel.seed, sel.n_boot, G)
    B = len(W)
    rows_of_groups = grouped.group_matrix.T.tocsr()            # (distinct rows, groups)
    step = max(1, BLOCK_CELLS // max(G, 1))
    blocks = [slice(a, min(a + step, B)) for a in range(0, B, step)]

    buffer = np.empty((G, step))            # reused: fresh pages are slow to fault in

    def group_weights(rows, out_of_bag: bool = False) -> np.ndarray:
        """(groups, draws) float counts (or out-of-bag indicators) of draws ``rows``; the
        array is overwritten by the next call."""
        Wr = W[rows].T
        out = buffer if Wr.shape[1] == step else np.empty(Wr.shape)
        if out_of_bag:
            np.equal(Wr, 0, out=out, casting="unsafe")
        else:
            np.copyto(out, Wr, casting="unsafe")
        return out

    # pass 1: in-bag means and the best column of every draw
    M = np.empty((B, L.shape[1]))
    N, ON = np.empty(B), np.empty(B)
    for blk in blocks:
        Wt = group_weights(blk)
        N[blk] = ng @ Wt
        M[blk] = (np.asarray(rows_of_groups @ Wt).T @ L) / N[blk, None]
        del Wt
    Mc = M[:, col]
    lo = Mc.min(axis=1)
    tol = risk_tolerance(lo)
    big = len(cands) + 1
    best = np.where(Mc <= (lo + tol)[:, None], tie_rank[None, :], big).argmin(axis=1)
    chosen = best.copy()
    tied = None
    # pass 2: the tie sets, per best column over all of its draws
    if rule != "argmin":
        bd = col[best]
        drawn = W.sum(axis=1, dtype=np.int64).astype(float)
        w_max = W.max(axis=1).astype(float)
        spread = grouped.spread()
        tied_d = np.zeros(M.shape, dtype=bool)
        betas = np.unique(bd)
        draws_of = [np.flatnonzero(bd == beta) for beta in betas]
        cols_of = [_tie_columns(spread, M[rb], beta, w_max[rb], N[rb], tol[rb], drawn[rb])
                   for beta, rb in zip(betas, draws_of)]
        held = np.unique(np.concatenate([*cols_of, betas]))
        n_unit = grouped.unit_rows
        if len(n_unit) * len(held) <= UNIT_SUM_CELLS:
            # every column some tie set may hold, summed once; their paired bound is tighter
            ST = np.ascontiguousarray(grouped.unit_sums(held).T)

            def unit_sums_t(c):
                """(columns, units): the unit sums of distinct columns ``c``, a row per column."""
                return ST[np.searchsorted(held, c)]
            cross = ST @ (grouped.unit_groups[:, None] * unit_sums_t(betas).T)       # sum_g S_gc S_g,beta
            cols_of = [_paired_tie_columns(spread, cross[np.searchsorted(held, cols), i], cols, M[rb], beta,
                                           w_max[rb], N[rb], tol[rb], drawn[rb])
                       for i, (beta, rb, cols) in enumerate(zip(betas, draws_of, cols_of))]
        else:
            def unit_sums_t(c):
                return grouped.unit_sums(c).T
        for beta, rb, cols in zip(betas, draws_of, cols_of):
            # per unit (one group of it): D n and D^2, D = S_c - S_beta summed directly
            DN_D2 = np.empty((2 * len(cols), len(n_unit)))
            D, D2 = DN_D2[:len(cols)], DN_D2[len(cols):]
            np.subtract(unit_sums_t(cols), unit_sums_t([beta]), out=D2)
            np.multiply(D2, n_unit, out=D)
            D2 *= D2
            del D, D2
            for s0 in range(0, len(rb), step):
                part = rb[s0:s0 + step]
                Wt = group_weights(part)
                DN, D2 = np.vsplit(DN_D2 @ grouped.unit_weights(Wt), 2)   # the draws' weights per unit
                DN, D2 = DN.T, D2.T
                NN = (ng * ng) @ Wt
                d = M[part][:, cols] - M[part, beta][:, None]
                ss = D2 - 2 * d * DN + d ** 2 * NN[:, None]
                f = drawn[part] / np.maximum(drawn[part] - 1, 1)
                se = np.sqrt(np.maximum(ss, 0.0) * f[:, None]) / N[part, None]
                tied_d[np.ix_(part, cols)] = d <= se + tol[part, None]
        tied = tied_d[:, col]
        if rule in WITHIN_TIE_RULES:
            pool = rule_pool(rule, tied, best, line_ids(cands))
            chosen = np.where(pool, simple_rank[None, :], big).argmin(axis=1)
    # pass 3: out-of-bag risks of the procedure and of the baselines
    names = list(base_losses)
    if names and on_distinct:
        base_rows = np.column_stack([base_losses[n] for n in names])                # (distinct rows, baselines)
    elif names:
        g = np.unique(heldout.groups, return_inverse=True)[1].reshape(-1)
        base_groups = np.column_stack([np.bincount(g, weights=base_losses[n], minlength=G) for n in names])
    signatures = heldout.signature_lookup() if rule == "tie_average" else None
    proc = np.empty(B)
    OB = np.zeros((B, len(names)))
    avg_cache: dict[tuple, np.ndarray] = {}
    for blk in blocks:
        Ot = group_weights(blk, True)
        ON[blk] = on = ng @ Ot
        safe = np.where(on > 0, on, 1.0)
        OU = np.asarray(rows_of_groups @ Ot).T                  # (draws, distinct rows) out-of-bag counts
        idx = np.arange(B)[blk]
        cb = col[chosen[blk]]
        for c in np.unique(cb):
            rc = np.flatnonzero(cb == c)
            proc[idx[rc]] = (OU[rc] @ L[:, c]) / safe[rc]
        if rule == "tie_average":
            for i, b in enumerate(idx):
                members = pick_members(np.flatnonzero(tied[b]), Mc[b], tie_rank, signatures, sel.max_members)
                if len(members) > 1:
                    key = tuple(members)
                    if key not in avg_cache:
                        avg_cache[key] = heldout.average_losses(sel.objective, members)
                    proc[b] = float(OU[i] @ avg_cache[key]) / safe[i]
        if names:
            OB[blk] = OU @ base_rows if on_distinct else Ot.T @ base_groups
        del Ot, OU
    keep = ON > 0                                      # draws with out-of-bag rows
    ON, proc, OB = ON[keep], proc[keep], OB[keep]
    deployed = {"estimate": float(proc.mean()),
                "ci": [float(np.percentile(proc, 2.5)), float(np.percentile(proc, 97.5))],
                "method": "bbc", "n_boot": int(len(proc)), "objective": sel.objective,
                "rule": rule if not result.guard else "argmin (guard not replayed)",
                "optimistic": _deployed_heldout_risk(result)}
    baselines = []
    for i, n in enumerate(names):
        bl = base_losses[n]
        d = OB[:, i] / ON - proc
        name, _, judge = n.partition(":")
        baselines.append({"name": name, "label": BASELINE_LABELS[name] + (f": {judge}" if judge else ""),
                          "risk": _raw_mean(bl, heldout, on_distinct), "diff_vs_selected": float(d.mean()),
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
    tol = rounding_tolerance(float(means[ref]))
    order = risk_order(np.arange(len(means)), means, np.arange(len(means)))   # equal risks: menu order
    tied = [int(c) for c in order
            if c not in members and means[c] - means[ref] <= (se[c] if np.isfinite(se[c]) else 0.0) + tol]
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
    from fcps_core.data.splits import Blocks
    inner = replace(selector, estimate="none", with_baselines=False, progress=None)
    empty = np.zeros(0, dtype=np.int64)
    row_loss = np.full(len(D), np.nan)
    outer = grouped_folds(panel.group_ids[D], selector.folds, 1, selector.seed + 1)
    for k, (_, tr, va) in enumerate(outer):
        report(0.96 + 0.03 * k / len(outer), f"nested estimate: outer fold {k + 1}/{len(outer)}")
        res = inner.fit(panel, Blocks(S=D[tr], M=empty, V=empty, T=D[va], seed=selector.seed,
                                      source="manual"))
        row_loss[va] = losses(selector.objective, panel.labels[D[va]], np.mean([res.predict_rows(res.candidates[i], D[va]) for i in (res.members or [res.selected_index])], axis=0))
    est = float(row_loss.mean())
    se = float(GroupedLosses(row_loss[:, None], panel.group_ids[D]).mean_se()[0])
    return {"estimate": est, "ci": [est - Z95 * se, est + Z95 * se], "method": "nested",
            "outer_folds": len(outer), "objective": selector.objective}
