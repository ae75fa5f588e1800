"""Bootstrap-frequency model averaging against the default's tie average (not a test; a
research lead for issue 24's "default within +0.002 of the best fixed recipe in hindsight").

The default deploys the average of the candidates statistically tied with the best
cross-fitted risk. On small binary panels (``shape:binqa_6x300_g3``) every tied candidate is
worse on fresh items than logistic over all judges, and 300 labels cannot tell them apart
(docs/performance.md). Bootstrap smoothing of the choice (Buckland, Burnham and Augustin
1997, "Model selection: an integral part of inference"; Efron 2014, "Estimation and
accuracy after model selection") deploys instead every candidate that wins a bootstrap
draw of the held-out losses, weighted by its share of the draws: the selection's own 200
group-bootstrap draws and in-bag argmins (``honesty._bbc``), the candidates' refits on all
deployable rows, no new fits. ``bagged_top``: the same cut to the tie average's number of
members (``max_members``), the most frequent winners with their shares renormalised.

The same smoothing of the default's own rule averages the draws' tie averages (each draw's
members, as the bootstrap replay deploys them, equally weighted within the draw).

Per split or draw it prints the T-MSE of the default, of the bagged argmin, of the bagged
tie average, of the argmin
(the lowest cross-fitted risk) and of logistic over the most judges the menu's logistic
candidates use; then each minus the default, mean and SE over the splits (paired).
Splits as ``bench_frontier.py`` makes them (``shape:NAME``: draw d of the latent shape, T
its 40,000 fresh items; a shared panel: seeded grouped splits, T 20 % of the groups); every
selection is seeded 0 (as the sweep's ``select --seed 0``; ``bench_frontier.py`` seeds a
shared panel's selection 100 + k), with no limit, so each draw's members are the
unconstrained tie average's, recorded once per draw in draw order.

    PYTHONPATH=. .venv/bin/python bench/bagged_choice.py PANEL N [POPULATION]

``POPULATION`` (synthetic regimes): that many fresh rows of the generator join T, as
``bench_frontier.py --population`` adds them.
"""

from __future__ import annotations

import json
import math
import sys
import time

import numpy as np


def captured_selection(panel, blocks):
    """The default selection of ``blocks`` and its bootstrap draws (the frontier's input,
    captured where :func:`~fcps_core.selection.frontier.compute_frontier` receives it)."""
    from fcps_core import select
    from fcps_core.selection import honesty

    from bench.capture import frontier_inputs
    members: list = []
    bbc, pick = honesty._bbc, honesty.pick_members
    inside = []

    def bbc_recording(*args, **kwargs):
        inside.append(True)
        try:
            return bbc(*args, **kwargs)
        finally:
            inside.pop()

    def pick_recording(*args, **kwargs):
        chosen = pick(*args, **kwargs)
        if inside:
            members.append(list(chosen))
        return chosen
    honesty._bbc, honesty.pick_members = bbc_recording, pick_recording
    try:
        with frontier_inputs() as captured:
            result = select(panel, blocks, seed=0)
    finally:
        honesty._bbc, honesty.pick_members = bbc, pick
    heldout = captured["heldout"]
    bootstrap = dict(captured["result"].bootstrap, members=members,
                     grouped=heldout.grouped(result.selector.objective), heldout=heldout)
    return result, bootstrap


def bagged_weights(result, bootstrap) -> np.ndarray:
    """Per candidate, its share of the draws (with out-of-bag rows) whose in-bag argmin it is."""
    best = np.asarray(bootstrap["best"])[np.asarray(bootstrap["keep"])]
    counts = np.bincount(best, minlength=len(result.candidates))
    return counts / counts.sum()


def bagged_tie_weights(result, bootstrap) -> np.ndarray | None:
    """Per candidate, its mean weight over the draws' tie averages (each draw's members
    equally weighted, as the replay scores them); None when the draws' members were not
    recorded (one per draw, in draw order: the unconstrained tie average)."""
    members = bootstrap["members"]
    keep = np.asarray(bootstrap["keep"])
    if len(members) != len(keep):
        return None
    w = np.zeros(len(result.candidates))
    for b in np.flatnonzero(keep):
        w[members[b]] += 1.0 / len(members[b])
    return w / w.sum()


RECIPES = ("mean_iso", "one_coin_iso", "ridge_iso", "logistic", "ds_jury")


def recipe_candidates(result) -> dict[str, object]:
    """Per fixed-recipe family, the menu's candidate of that family over the most judges
    (the first such; every path's longest prefix holds the same judges)."""
    out = {}
    k_max = max(c.K for c in result.candidates)
    for c in result.candidates:
        if c.family in RECIPES and c.K == k_max and c.family not in out and result.models.get(c.index) is not None:
            out[c.family] = c
    return out


def out_of_bag_risks(bootstrap, cands) -> np.ndarray:
    """(draws kept, candidates) out-of-bag mean loss of fixed candidates ``cands`` in each
    bootstrap draw: no choice is replayed, so it is the candidate's own risk on the groups
    the draw left out."""
    grouped = bootstrap["grouped"]
    W = np.asarray(bootstrap["W"])[np.asarray(bootstrap["keep"])]
    out_g = (W == 0).astype(float)                                   # (draws, groups)
    sums = grouped.unit_sums(grouped.col[[c.index for c in cands]])[grouped.group_unit]   # (groups, cands)
    return (out_g @ sums) / (out_g @ grouped.rows_per_group)[:, None]


def bagged_out_of_bag(bootstrap) -> float:
    """The bagged argmin's out-of-bag estimate (Breiman 1996): each deployable row predicted
    by the average of the draws' winners over the draws that left its group out (their
    cross-fitted held-out predictions, per repeat), its squared error averaged over the
    repeats and the rows."""
    heldout = bootstrap["heldout"]
    keep = np.asarray(bootstrap["keep"])
    W = np.asarray(bootstrap["W"])[keep]
    best = np.asarray(bootstrap["best"])[keep]
    g = np.unique(heldout.groups, return_inverse=True)[1].reshape(-1)
    out = (W[:, g] == 0).astype(float)                          # (draws, rows)
    winners, which = np.unique(best, return_inverse=True)
    counts = np.zeros((len(winners), out.shape[1]))
    np.add.at(counts, which, out)                               # (winners, rows) out-of-bag draws won
    total = counts.sum(axis=0)
    ok = total > 0
    P = heldout.preds[:, :, winners]                            # (repeats, rows, winners)
    pred = np.einsum("rnw,wn->rn", P, counts) / np.where(ok, total, 1.0)
    loss = (heldout.y[None, :] - pred) ** 2
    return float(loss[:, ok].mean())


def family_first(result, bootstrap) -> tuple[str, np.ndarray]:
    """The family whose own choice replays best, and the bagged weights of its candidates.

    Per family, the rule "the lowest in-bag risk among this family's candidates" is
    replayed on every draw and scored out of bag (the bootstrap's honest estimate of
    choosing within the family: a family of many near-tied variants pays for their
    selection noise); the family with the lowest such estimate is kept, and its draws'
    winners are averaged by their share of the draws."""
    grouped = bootstrap["grouped"]
    keep = np.asarray(bootstrap["keep"])
    Mc = np.asarray(bootstrap["M"])[keep][:, grouped.col]                # (draws, candidates) in-bag
    out_g = (np.asarray(bootstrap["W"])[keep] == 0).astype(float)
    families = sorted({c.family for c in result.candidates})
    honest, winners = {}, {}
    for f in families:
        idx = np.array([c.index for c in result.candidates if c.family == f and result.models.get(c.index) is not None])
        if len(idx) == 0:
            continue
        best = idx[np.argmin(Mc[:, idx], axis=1)]
        used, which = np.unique(best, return_inverse=True)
        sums = grouped.unit_sums(grouped.col[used])[grouped.group_unit]        # (groups, winners)
        oob = (out_g @ sums) / (out_g @ grouped.rows_per_group)[:, None]      # (draws, winners)
        honest[f] = float(oob[np.arange(len(best)), which].mean())
        winners[f] = best
    f = min(honest, key=honest.get)
    counts = np.bincount(winners[f], minlength=len(result.candidates))
    return f, counts / counts.sum()


def split_record(result, bootstrap, T: np.ndarray) -> dict:
    y = result.panel.labels[T]

    def mse(p) -> float:
        return float(np.mean((y - p) ** 2))
    w = bagged_weights(result, bootstrap)
    preds = {int(c): result.predict_rows(result.candidates[c], T) for c in np.flatnonzero(w)}
    bagged = sum(w[c] * p for c, p in preds.items())
    # at most max_members models, as the tie average: the most frequent winners, their
    # shares renormalised
    top = sorted(preds, key=lambda c: (-w[c], c))[:result.selector.max_members]
    bagged_top = sum(w[c] * preds[c] for c in top) / sum(w[c] for c in top)
    argmin = min(result.candidates, key=lambda c: c.val_risk)
    fitted = [c for c in result.candidates if c.family == "logistic" and result.models.get(c.index) is not None]
    k_max = max((c.K for c in fitted), default=None)
    logistic = next((c for c in fitted if c.K == k_max), None)
    wt = bagged_tie_weights(result, bootstrap)
    bagged_tie = (math.nan if wt is None else
                  mse(sum(wt[c] * result.predict_rows(result.candidates[c], T) for c in np.flatnonzero(wt))))
    # the procedure with the lowest replayed risk: the default (its out-of-bag replay, before
    # the learning-curve correction) or a fixed recipe over the most judges (no choice)
    recipes = recipe_candidates(result)
    replayed = {"default": float(np.asarray(bootstrap["proc"])[np.asarray(bootstrap["keep"])].mean())}
    if recipes:
        oob = out_of_bag_risks(bootstrap, list(recipes.values())).mean(axis=0)
        replayed.update({f: float(v) for f, v in zip(recipes, oob)})
    procedure = min(replayed, key=replayed.get)
    procedure_mse = (mse(result.predict_deployed(T)) if procedure == "default"
                     else mse(result.predict_rows(recipes[procedure], T)))
    fam, wf = family_first(result, bootstrap)
    family_first_mse = mse(sum(wf[c] * result.predict_rows(result.candidates[c], T) for c in np.flatnonzero(wf)))
    return {"family_first": family_first_mse, "family": fam, "default_estimate": result.deployed_risk["estimate"], "default": mse(result.predict_deployed(T)), "bagged": mse(bagged), "bagged_top": mse(bagged_top),
            "bagged_top_share": float(sum(w[c] for c in top)), "bagged_tie_average": bagged_tie,
            "procedure_choice": procedure_mse, "procedure": procedure,
            "bagged_oob_estimate": bagged_out_of_bag(bootstrap),
            "argmin": mse(result.predict_rows(argmin, T)),
            "logistic_most_judges": math.nan if logistic is None else mse(result.predict_rows(logistic, T)),
            "bagged_models": int(np.count_nonzero(w)), "largest_share": float(w.max())}


def main() -> None:
    sys.path.insert(0, ".")
    from bench.bench_frontier import load, split_k
    name, n = sys.argv[1], int(sys.argv[2])
    population = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    base = None if name.startswith("shape:") else load(name, population)
    records = []
    for k in range(n):
        t = time.perf_counter()
        panel, blocks, _ = split_k(name, base, k, population)
        result, bootstrap = captured_selection(panel, blocks)
        rec = split_record(result, bootstrap, np.asarray(blocks.T))
        rec.update(split=k, seconds=round(time.perf_counter() - t, 1))
        records.append(rec)
        print(json.dumps(rec), flush=True)
    default = np.array([r["default"] for r in records])
    for key in ("family_first", "bagged", "bagged_top", "bagged_tie_average", "procedure_choice", "argmin", "logistic_most_judges"):
        d = np.array([r[key] for r in records]) - default
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        print(f"{name}, {len(d)} splits: {key} - default {d.mean():+.4f} (SE {se:.4f})")
    for est, truth in (("bagged_oob_estimate", "bagged"), ("default_estimate", "default")):
        d = np.array([r[est] - r[truth] for r in records])
        se = d.std(ddof=1) / np.sqrt(len(d)) if len(d) > 1 else float("nan")
        print(f"{name}, {len(d)} splits: {est} - T-MSE {d.mean():+.4f} (SE {se:.4f})")


if __name__ == "__main__":
    main()
