"""The cross-fitted protocol: every deployable label serves both fitting and validation.

Deployable rows D = S + M + V (every labelled row outside the research test block T). They
are split into ``folds`` grouped folds (a group never straddles two folds), ``repeats``
times with independent shuffles. For each fold the whole menu is built on the fold's
training groups only: continuous bins and encoders, judge paths (the path rules see the
training rows as their selection rows), and every candidate (path rule, K, family, grid
point) is fitted on them; the fold's held-out rows are only predicted. Label-free work that
is identical in every fold (raw output codes) is all that is shared. T's labels never
enter a fit or a choice; ds_jury's label-free EM sees the training rows plus the panel's
unlabelled rows, never held-out or T rows.

A candidate's cross-fitted risk is the mean over D of its held-out loss (averaged over the
repeats); its diagnostics (H_K, unseen rate, V_cell, V_proxy) are averaged over folds, with
N_z from the fold's training part and frequencies from its held-out part. The deployed
predictor is the chosen candidate refitted on all of D, with the judge set its path rule
gives on D; ``judge_set_stability`` is the mean Jaccard overlap between the judges a
candidate used in each fold and the deployed judge set.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from fcps_core.measures.diagnostics import PrefixDiagnostics
from fcps_core.errors import SplitError
from fcps_core.data.panel import Panel
from fcps_core.data.splits import Blocks
from fcps_core.selection.baselines import baseline_predictions
from .folds import (ExpandedPredictions, HeldOut, distinct_key, distinct_rows, grouped_folds, label_digits,
                    panel_output_digits)
from .choice import apply_choice_rule
from .honesty import assess, nested_estimate
from fcps_core.selection.choice import argmin_choice
from fcps_core.selection.result import SelectionResult, predict_on_rows


class MutableSelectionResult(SelectionResult):
    """The engine's result is frozen now (issue 27); this reference predates that and
    patches the fields of a result it built with placeholders, as the engine did then."""

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)

_DIAG_FIELDS = ("Q_K", "S_K", "H_K", "unseen_val", "V_cell", "V_proxy", "pressure_sum")


def candidate_key(c) -> tuple:
    return (c.path_label or c.path_rule, c.K, c.family, tuple(sorted(c.params.items())))


def _predict_candidates(menu, rows: np.ndarray, *, rows_are_V: bool = False) -> dict[tuple, np.ndarray]:
    """Each candidate's predictions on ``rows`` (those made while fitting when ``rows`` is
    the menu's V block)."""
    out, done = {}, {}
    for c in menu.candidates:
        model = menu.models[c.index]
        if id(model) not in done:
            stored = menu.predictions.get(c.index, {}).get("V") if rows_are_V else None
            if stored is not None:
                done[id(model)] = stored.raw()
                out[candidate_key(c)] = done[id(model)]
                continue
            done[id(model)] = predict_on_rows(model, c, menu.encoded, menu.pattern_cache, rows)
        out[candidate_key(c)] = done[id(model)]
    return out


def heldout_key(selector, panel: Panel, D: np.ndarray, fold_list: list) -> tuple | None:
    """Rows of D with the same judge outputs, label and fold in every repeat get the same
    held-out prediction from every candidate and baseline (each fold's models see a row
    only through its outputs), so :class:`.folds.HeldOut` keeps them once (None with
    ``compress=False``)."""
    if not selector.compress or not len(D):
        return None
    digits = panel_output_digits(panel, D) + [label_digits(panel.labels[D])]
    for r in range(selector.repeats):
        fold = np.zeros(len(D), dtype=np.int64)
        for k, (rr, _, va) in enumerate(f for f in fold_list if f[0] == r):
            fold[va] = k
        digits.append((fold, selector.folds))
    return distinct_key(digits, len(D))


#: panels smaller than this (deployable rows x judges) run their folds in one process: the
#: start-up of worker processes would cost more than it saves
PARALLEL_MIN_CELLS = 10_000


def fold_work(selector, panel: Panel, D: np.ndarray, tr: np.ndarray, va: np.ndarray,
              unlabelled: np.ndarray, progress=None) -> dict:
    """Everything one fold contributes, in small arrays: each candidate's held-out
    predictions, its judge set and diagnostics, and the baselines' held-out predictions."""
    empty = np.zeros(0, dtype=np.int64)
    rows = {"S": D[tr], "M": D[tr], "V": D[va], "T": empty, "rest": unlabelled}
    menu = selector.fit_menu(panel, rows, expand_grid=True, score_val=False, progress=progress)
    out = {"preds": _predict_candidates(menu, D[va], rows_are_V=True), "judges": {}, "diag": {}, "base": {}}
    for c in menu.candidates:
        key = candidate_key(c)
        out["judges"][key] = frozenset(c.judge_idx)
        if c.diagnostics is not None:
            out["diag"][key] = np.array([getattr(c.diagnostics, f) for f in _DIAG_FIELDS], dtype=float)
    if selector.with_baselines:
        out["base"] = baseline_predictions(menu.encoded.scores, panel.labels, D[tr], D[va], unlabelled)
    return out


def _run_folds(selector, panel, D, fold_list, unlabelled, report, n_units):
    """Yield (repeat, held-out positions, fold results) in fold order. Large panels run the
    folds on every core (joblib/loky processes); every fold's seed and data are fixed before
    it starts, so the results equal a sequential run."""
    folds = selector.folds
    jobs = selector.n_jobs
    if jobs is None:
        jobs = -1 if len(D) * len(panel.judges) >= PARALLEL_MIN_CELLS else 1
    if jobs != 1 and len(fold_list) > 1:
        from joblib import Parallel, delayed
        bare = replace(selector, progress=None)
        results = Parallel(n_jobs=jobs, return_as="generator")(
            delayed(fold_work)(bare, panel, D, tr, va, unlabelled) for _, tr, va in fold_list)
        for u, ((r, _, va), out) in enumerate(zip(fold_list, results)):
            report(0.92 * (u + 1) / n_units, f"fold {u % folds + 1}/{folds}, repeat {r + 1} done")
            yield r, va, out
        return
    for u, (r, tr, va) in enumerate(fold_list):
        label = f"fold {u % folds + 1}/{folds}, repeat {r + 1}/{selector.repeats}"
        yield r, va, fold_work(selector, panel, D, tr, va, unlabelled,
                               progress=lambda f, m, u=u, label=label: report(0.92 * (u + f) / n_units,
                                                                              f"{label}: {m}"))


def fit_crossfit(selector, panel: Panel, blocks: Blocks) -> SelectionResult:
    t0 = time.perf_counter()
    report = selector.progress or (lambda frac, msg: None)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V])).astype(np.int64)
    if len(D) == 0:
        raise SplitError("no labelled rows outside the test block: cross-fitting needs labels")
    panel = selector.checked_panel(panel, blocks, crossfit=True)
    T = np.asarray(blocks.T, dtype=np.int64)
    labelled_or_test = np.zeros(panel.n_rows, dtype=bool)
    labelled_or_test[D] = labelled_or_test[T] = True
    unlabelled = np.flatnonzero(~labelled_or_test)
    empty = np.zeros(0, dtype=np.int64)
    fold_list = grouped_folds(panel.group_ids[D], selector.folds, selector.repeats, selector.seed)
    R, n_units = selector.repeats, len(fold_list) + 1
    preds: dict[tuple, np.ndarray] = {}
    diag_sum: dict[tuple, np.ndarray] = {}
    diag_n: dict[tuple, int] = {}
    judge_sets: dict[tuple, list] = {}
    base: dict[str, np.ndarray] = {}
    for u, (r, va, out) in enumerate(_run_folds(selector, panel, D, fold_list, unlabelled, report, n_units)):
        for key, p in out["preds"].items():
            if key not in preds:
                preds[key] = np.full((R, len(D)), np.nan)
            preds[key][r, va] = p
        for key, judges in out["judges"].items():
            judge_sets.setdefault(key, []).append(judges)
        for key, vals in out["diag"].items():
            diag_sum[key] = diag_sum.get(key, 0.0) + vals
            diag_n[key] = diag_n.get(key, 0) + 1
        for name, p in out["base"].items():
            if name not in base:
                base[name] = np.full((R, len(D)) + p.shape[1:], np.nan)
            base[name][r, va] = p
    report(0.92 * (n_units - 1) / n_units, "refitting the menu on all deployable labels")
    rows = {"S": D, "M": D, "V": empty, "T": T, "rest": unlabelled}   # risks come from the folds
    final = selector.fit_menu(panel, rows, expand_grid=True, score_val=False,
                              progress=lambda f, m: report(0.92 * (n_units - 1 + f) / n_units,
                                                           f"final refit: {m}"))
    n_folds_total = len(fold_list)
    kept, models, columns, predictions = [], {}, [], {}
    for c in final.candidates:
        key = candidate_key(c)
        p = preds.get(key)
        if p is None or np.isnan(p).any():
            continue      # not offered in every fold (e.g. a cfps frontier of another size)
        old_index = c.index
        c.index = len(kept)
        models[c.index] = final.models[old_index]
        if old_index in final.predictions:
            predictions[c.index] = final.predictions[old_index]
        if key in diag_sum and diag_n[key] == n_folds_total:
            m = diag_sum[key] / diag_n[key]
            final_diag = c.diagnostics
            c.diagnostics = PrefixDiagnostics(
                Q_K=float(m[0]), S_K=float(m[1]), H_K=float(m[2]), unseen_val=float(m[3]),
                unseen_test=final_diag.unseen_test if final_diag is not None else None,
                V_cell=float(m[4]), V_proxy=float(m[5]), pressure_sum=float(m[6]))
        else:
            c.diagnostics = None
        deployed = set(c.judge_idx)
        c.stability = float(np.mean([len(s & deployed) / len(s | deployed) for s in judge_sets[key]]))
        kept.append(c)
        columns.append(key)
    if not kept:
        raise SplitError("no candidate was offered in every fold; use fixed path rules")
    # the held-out matrix (repeats, rows, candidates), kept once per distinct row
    key = heldout_key(selector, panel, D, fold_list)
    rep, inverse = (distinct_rows(*key)[::2] if key is not None else (np.arange(len(D)), None))
    P = np.empty((R, len(rep), len(columns)))
    for i, k in enumerate(columns):
        P[:, :, i] = preds.pop(k)[:, rep]
    del preds
    heldout = HeldOut.of(panel, D, ExpandedPredictions(P, inverse), base)
    P = heldout.preds
    for objective, field in (("mse", "val_mse"), ("nll", "val_nll")):
        grouped = heldout.grouped(objective)
        means = grouped.means()
        se = grouped.mean_se(means)
        for c in kept:
            setattr(c, field, float(means[c.index]))
            if objective == selector.objective:
                c.val_risk, c.val_se = float(means[c.index]), float(se[c.index])
    result = MutableSelectionResult(
        panel=panel, blocks=blocks, selector=selector, encoded=final.encoded, paths=final.paths,
        candidates=kept, models=models, menu_size=len(kept), selected_index=0, guard=None,
        feature_cache=final.pattern_cache, views=final.views, predictions=predictions,
        protocol_info={"protocol": "crossfit", "folds": selector.folds, "repeats": R,
                       "n_deployable": int(len(D)), "n_T": int(len(T))},
        fit_rows=D, val_rows=D, n_fit=float(np.mean([len(tr) for _, tr, _ in fold_list])),
        heldout=heldout)
    report(0.93, f"choosing ({selector.choice}) on the cross-fitted risks")
    if selector.choice == "argmin":
        argmin = argmin_choice(kept, selector, panel)     # the engine's argmin, as _choose was
        result.selected_index, result.guard = argmin.selected_index, argmin.guard
    else:
        apply_choice_rule(result, selector, heldout)
    result.selected_test = result.audit()
    report(0.95, "bias-corrected risk estimate (bootstrap over groups, no refits)")
    assess(result, heldout)
    if selector.estimate == "bbc" and result.deployed_risk is not None:
        report(0.97, "learning-curve correction (deployed configuration at half the training rows)")
        correction = training_size_correction(selector, panel, D, fold_list, result, P, unlabelled)
        dr = result.deployed_risk
        dr["bbc_estimate"] = dr["estimate"]
        dr["training_size_correction"] = correction
        delta = correction["delta"]
        dr["estimate"] -= delta
        dr["ci"] = [dr["ci"][0] - delta, dr["ci"][1] - delta]
    if selector.estimate == "nested":
        result.deployed_risk = nested_estimate(selector, panel, blocks, D, report)
    result.timings["select_seconds"] = time.perf_counter() - t0
    report(1.0, "done")
    return result


def training_size_correction(selector, panel: Panel, D: np.ndarray, fold_list: list, result,
                             P, unlabelled: np.ndarray) -> dict:
    """How much better the deployed configuration gets between the folds' training size and
    all deployable labels.

    Held-out risks come from models fitted on (folds-1)/folds of D, but the deployed
    predictor is fitted on all of D, so the bootstrap estimate leans pessimistic where the
    learning curve is still steep. The estimation term of the risk scales as 1/n (the cell
    pressure sum_z p_z/N_z of Eq. eq:cell-pressure, and the parametric rate of the
    stackers), so r(n) = a + b/n. The first repeat's folds are refitted for the deployed
    configuration only (its path rules and families, paths rebuilt) on half of each fold's
    training groups; the paired held-out risks at n_half and n_train give b, and the
    correction is max(b, 0) * (1/n_train - 1/n_D). No T row is read.
    """
    # every tied member (the result class's deployed_members now names distinct models)
    members = [result.candidates[i] for i in (result.members or [result.selected_index])]
    keys = [candidate_key(c) for c in members]
    sub = replace(selector, families=tuple(dict.fromkeys(c.family for c in members)),
                  paths=tuple(dict.fromkeys(c.path_rule for c in members)), progress=None)
    y = panel.labels[D]
    groups = panel.group_ids[D]
    rng = np.random.default_rng(np.random.SeedSequence([selector.seed, 1, 2]))
    small = np.full(len(D), np.nan)
    n_half, n_train = [], []
    empty = np.zeros(0, dtype=np.int64)
    for r, tr, va in fold_list:
        if r != 0:
            continue
        g = np.unique(groups[tr])
        keep = rng.permutation(g)[: max(1, len(g) // 2)]
        half = tr[np.isin(groups[tr], keep)]
        rows = {"S": D[half], "M": D[half], "V": empty, "T": empty, "rest": unlabelled}
        try:
            menu = sub.fit_menu(panel, rows, expand_grid=True, score_val=False)
        except ValueError as exc:       # too few rows for a path rule or a fit: no correction
            return {"delta": 0.0, "note": f"not computed: {exc}"}
        preds = _predict_candidates(menu, D[va])
        if any(k not in preds for k in keys):
            return {"delta": 0.0, "note": "the deployed configuration is not offered at half size"}
        small[va] = np.mean([preds[k] for k in keys], axis=0)
        n_half.append(len(half))
        n_train.append(len(tr))
    full = P[:, :, [c.index for c in members]][0].mean(axis=1)
    obj = selector.objective
    from fcps_core.measures.diagnostics import losses
    r_small = float(np.mean(losses(obj, y, small)))
    r_full = float(np.mean(losses(obj, y, full)))
    nh, nt, nd = float(np.mean(n_half)), float(np.mean(n_train)), float(len(D))
    slope = (r_small - r_full) / (1.0 / nh - 1.0 / nt)
    delta = max(slope, 0.0) * (1.0 / nt - 1.0 / nd)
    return {"delta": float(delta), "risk_half": r_small, "risk_train": r_full, "n_half": nh,
            "n_train": nt, "n_deployable": nd, "model": "a + b/n"}
