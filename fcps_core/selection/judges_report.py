"""The judges report: each judge alone, the judges together, and the deployed predictor.

**Rows.** Everything is measured on the deployable labelled rows D: every labelled row
outside the research test block T (S+M+V, under either protocol). T is never read.

**Labels.** Soft labels in [0, 1] (rubric panels) enter Brier scores as they are; accuracy,
Cohen's kappa and AUC binarise them at 1/2 (above 1/2 is class 1) and leave out the rows
labelled exactly 1/2 (``binary_rows`` counts the rest).

**Each judge** (``judges``):

* ``coverage``: share of rows with a parsed output (neither missing nor a parse error);
  ``missing_rate``, ``parse_error_rate`` (outputs parse_error / error / invalid) and
  ``abstain_rate`` (no decision: tie, neutral, missing or parse error) beside it.
* decision: pairwise, binary and rubric judges decide on their own scale (scalar score
  above 1/2 says 1, below says 0, exactly 1/2 abstains; ``decision`` = ``native``).
  Continuous and categorical judges have no scale of their own: they decide by their
  cross-fitted isotonic probability (below) above or below 1/2 (``decision`` = ``isotonic``).
* ``accuracy``: share of binarised rows where the decision matches the label, an abstention
  counting one half (the convention of the next-judge plan's curated rule).
* ``kappa``: Cohen's kappa of the decision against the binarised label, an abstention being
  a third category (it never agrees); None where it is undefined (label and decision constant
  on one category). :func:`label_kappas` computes every judge's at once from one bincount of
  (label, decision) pairs and gives ``sklearn.metrics.cohen_kappa_score``'s value, to the bit.
* ``auc``: ROC AUC of the judge's scalar score (the score the families see) against the
  binarised label; None without both classes. :func:`label_aucs` computes every judge's at
  once by the steps of ``sklearn.metrics.roc_auc_score`` (``roc_curve``'s thresholds with
  collinear points dropped, then the trapezoid rule), so it gives sklearn's value to the bit;
  that area is the Mann-Whitney U / (n_0 n_1) with ties counting one half.
* ``direction``: ``rises`` when the judge's score goes up with the label on the deployable
  rows (Spearman's rank correlation >= 0, :func:`.families.base.rises_with`), else ``falls``
  (a quality metric read against an error-score label; its AUC is then below 1/2);
  ``constant`` for a judge with one output on every row that has one
  (:func:`fcps_core.ingest.load.constant_judges`).
* ``brier_iso``: Brier score (squared error against the label, soft or not) of the judge's
  score after an isotonic map cross-fitted over grouped folds of D (each row is predicted by
  a map fitted on the other folds' groups: not in-sample), increasing or decreasing as the
  score goes with the label on those groups (:func:`.families.base.rises_with`). Categorical scores
  (a per-output label mean) are re-encoded on each fold's training rows first.

**Between judges**:

* ``agreement``: Cohen's kappa of every pair's decisions when every judge decides on its
  own scale, else Spearman's rank correlation of their scalar scores (continuous or
  categorical judges present).
* ``error_correlation``: Pearson correlation of every pair's errors given the label: on the
  binarised rows an error is 1 when the judge's decision misses the label, 0 when it hits
  it, 1/2 for an abstention, centred within each label class. Two judges that err
  independently given the label correlate 0 whatever their accuracy on each class; a judge
  whose decision never varies within a class (one that always says 1) has no error
  correlation (None) and is left out of K_eff (``effective_judges.excluded``). (Not
  probability residuals p - y: a weak judge's residual is mostly -y, so all weak judges'
  residuals would correlate, whatever they say.)
* ``effective_judges``: K_eff = (sum_i lambda_i)^2 / sum_i lambda_i^2 over the eigenvalues
  lambda of the error-correlation matrix R, which equals K^2 / ||R||_F^2 (trace R = K): K
  for uncorrelated errors, 1 for identical ones. Sampling noise alone puts about 1/n into
  each squared off-diagonal entry, so n rows of independent judges give about
  K / (1 + (K - 1) / n).
* ``redundancy``: the pairs whose agreement or error correlation reaches
  :data:`REDUNDANCY_THRESHOLD` (near-duplicate judges: one of them adds little).

**The deployed predictor** (a selection): ``contribution`` gives every judge any deployed
model calls a row: its signed ``weight`` where the family has weights (:data:`WEIGHT_MEANING`;
for an average of models the mean of the members' weights, 0 in a member without the
judge; each member's own weights are in ``models``), ``weight_share`` = the mean over the
members of |w_j| / sum_k |w_k|, ``shared_with`` (deployed near-duplicates of it, from
``redundancy``: their weights are shared), and its drop-one change
(:func:`.drop_one.drop_one_choices`): the held-out risk of what the same choice rule deploys
without the judge minus the deployed choice's, with its paired interval and words; no
refit, so every selection carries it. The next-judge plan's drop rows
(:func:`fcps_core.planning.next_judge.plan_next_judge`) refit the deployed family without
each judge instead; :func:`with_drop_one` puts such a plan's beside them. ``calibration``:
the deployed predictor's held-out predictions (out-of-fold under crossfit, every repeat pooled; V under split) in
:data:`ECE_BINS` equal-count bins (``sklearn.calibration.calibration_curve`` with the
quantile strategy: tied predictions never straddle bins, so bins can merge), the expected
calibration error ECE = sum_b (n_b / n) |mean prediction_b - mean label_b|, the Brier score
and the base rate's (each held-out row predicted by its training rows' mean label).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np

from ..defaults import TIE_AVERAGE
from ..data.encoding import JudgeEncoder, encode_panel
from ..measures.judge_metrics import (ABSTAIN, ECE_BINS, REDUNDANCY_THRESHOLD, rounded_matrix, json_number, brier,
                            column_mean_squared_errors, decisions, effective_number, error_correlation,
                            kappa_matrix, label_aucs, label_kappas, rank_correlation, redundant_pairs,
                            reliability_curve)
from ..families.base import columns_rise_with, one_blas_thread
from ..data.panel import ERROR_TOKENS, MISSING, Panel
from .baselines import single_judge_columns
from .folds import grouped_folds

#: schemas whose scalar score is a decision scale of its own (1/2 = no decision)
NATIVE_DECISION = ("pairwise", "binary", "rubric")
#: redundant pairs listed in the report (``redundancy.n_pairs`` counts them all)
MAX_PAIRS = 50

#: one sentence per metric: column help on the Judges page, legend of the CLI section
METRIC_HELP = {
    "coverage": "Share of deployable labelled rows where the judge gave a parsed output (not missing, "
                "not a parse error).",
    "parse_error_rate": "Share of rows whose output is a parse error (parse_error, error, invalid).",
    "abstain_rate": "Share of rows without a decision: tie, neutral, missing or parse error.",
    "accuracy": "Share of rows (labels binarised at 1/2) where the judge's decision matches the label; "
                "an abstention counts one half.",
    "kappa": "Cohen's kappa of the judge's decision with the binarised label: agreement beyond chance "
             "(0 = chance, 1 = perfect; an abstention never agrees).",
    "auc": "ROC AUC of the judge's score against the binarised label: the chance a random positive "
           "outranks a random negative (ties half); below 1/2 for a judge whose score falls as the label rises.",
    "direction": "rises: the judge's score goes up with the label on the deployable rows (Spearman's rank "
                 "correlation >= 0); falls: it goes down (a quality metric against an error-score label). "
                 "The isotonic calibration (brier_iso, the isotonic decision) runs the same way on each fold.",
    "brier_iso": "Squared error against the label of the judge's score after an isotonic calibration "
                 "fitted on other folds (lower is better; compare with the base rate's).",
    "decision": "native: the judge's own scale decides (score above or below 1/2); isotonic: its "
                "cross-fitted calibrated probability does (continuous or categorical judges).",
    "effective_judges": "(sum of eigenvalues)^2 / sum of squared eigenvalues of the judges' "
                        "error-correlation matrix: K when their errors are uncorrelated, 1 when identical.",
    "agreement": "Cohen's kappa of two judges' decisions (Spearman rank correlation of their scores "
                 "when some judge has no decision scale of its own).",
    "error_correlation": "Correlation of two judges' errors (1 = its decision misses the label, 0 = hits, "
                         "1/2 = abstains) on the binarised rows.",
    "weight": "The judge's signed weight in the deployed model (see its meaning for the family); for an "
              "average, the mean over its models (0 in a model without the judge).",
    "shared_with": "Deployed judges that are near-duplicates of this one: their weights are shared between "
                   "them, so neither weight alone says what the judge adds.",
    "weight_share": "|weight| / sum of |weights| in each deployed model, averaged over the models "
                    "(0 where a model does not use the judge).",
    "drop_risk_change": "Held-out risk of what the same choice rule deploys without the judge (the best "
                        "admissible candidates that do not call it, on the same held-out predictions, no "
                        "refit) minus the deployed choice's, paired on the same rows (above 0: dropping it "
                        "raises the risk, the judge helps).",
    "ece": "Expected calibration error: mean |mean prediction - mean label| over equal-count bins, "
           "weighted by bin size.",
}

#: what a family's per-judge weight means (None: the family has no per-judge weight)
WEIGHT_MEANING = {
    "mean_iso": "equal weight 1/K (mean of the scores, then isotonic)",
    "one_coin_iso": "log-odds weight log(acc / (1 - acc)) of the judge's vote",
    "ridge_iso": "ridge coefficient on the judge's score (before isotonic)",
    "logistic": "log-odds per unit of the judge's score (logistic coefficient)",
    "ridge_pairwise_iso": "main-effect ridge coefficient (the pairwise product terms are left out)",
    "logistic_pairwise": "main-effect logistic coefficient (the pairwise product terms are left out)",
    "ds_jury": "Dawid-Skene log-odds swing between the judge voting 1 and voting 0",
    "residual": "weight in its scalar base (the residual table has no per-judge weight)",
    "table": None, "backoff": None,
}


# -- rows and labels ------------------------------------------------------------------------
def deployable_rows(panel: Panel, blocks) -> np.ndarray:
    """Every labelled row outside the research test block T (S+M+V), sorted."""
    rows = np.unique(np.concatenate([blocks.S, blocks.M, blocks.V]).astype(np.int64))
    return rows[panel.labelled[rows]]


def _output_kinds(col, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(missing, parse error) masks of one judge's outputs on ``rows``."""
    if col.schema == "continuous":
        return np.isnan(col.values[rows]), np.zeros(len(rows), dtype=bool)
    if not col.vocab:
        return np.ones(len(rows), dtype=bool), np.zeros(len(rows), dtype=bool)
    miss = np.array([t == MISSING for t in col.vocab])
    err = np.array([str(t).strip().lower() in ERROR_TOKENS for t in col.vocab])
    codes = col.codes[rows]
    return miss[codes], err[codes]


def _crossfit(panel: Panel, rows: np.ndarray, scores: np.ndarray, folds: list) -> tuple[np.ndarray, np.ndarray]:
    """(scores with categorical judges re-encoded per fold, isotonic probabilities), both
    cross-fitted over ``folds`` of positions into ``rows`` (NaN without folds)."""
    y = panel.labels[rows]
    S, P = scores.copy(), np.full(scores.shape, np.nan)
    cat = [j for j, c in enumerate(panel.judges) if c.schema == "categorical"]
    for tr, va in folds:
        for j in cat:
            col = panel.judges[j]
            S[va, j] = JudgeEncoder.fit(col, rows[tr], y[tr]).scores_for(col)[rows[va]]
    for tr, va in folds:      # each judge's isotonic map the way its score goes with the label
        P[va] = single_judge_columns(S[tr], y[tr], S[va])
    return S, P


def crossfit_folds(groups: np.ndarray, folds: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """One repeat of the selection's grouped folds (fewer when there are fewer groups;
    none below two groups)."""
    k = min(int(folds), len(np.unique(groups)))
    return [] if k < 2 else [(tr, va) for _, tr, va in grouped_folds(groups, k, 1, seed)]


# -- the report -----------------------------------------------------------------------------
def panel_judges_report(panel: Panel, rows: np.ndarray, *, folds: int = 5, seed: int = 0, n_bins: int = 5,
                        threshold: float = REDUNDANCY_THRESHOLD) -> dict:
    """The per-judge table and the between-judge matrices on ``rows`` (labelled, never T:
    :func:`deployable_rows`); no selection needed. ``panel`` carries the labels on the
    deployable scale (``deployable_label_scale``)."""
    rows = np.asarray(rows, dtype=np.int64)
    names = panel.judge_names
    y = panel.labels[rows]
    if np.isnan(y).any():
        raise ValueError("the judges report reads labelled rows only")
    enc = encode_panel(panel, rows, n_bins=n_bins)
    fold_list = crossfit_folds(panel.group_ids[rows], folds, seed)
    S, P = _crossfit(panel, rows, enc.scores[rows], fold_list)
    native = np.array([c.schema in NATIVE_DECISION for c in panel.judges], dtype=bool)
    D = np.where(native[None, :], decisions(S), decisions(np.nan_to_num(P, nan=0.5)))
    keep = y != 0.5
    yb = (y[keep] > 0.5).astype(int)
    both = len(np.unique(yb)) == 2
    if fold_list:   # Brier = squared error against the label: one call for every judge
        briers = column_mean_squared_errors(np.repeat(y[:, None], S.shape[1], axis=1), P)
    Dk = D[keep]
    if len(yb):     # every judge at once; the accuracy's sums of halves are exact in any order
        accuracy = ((Dk == yb[:, None]) + 0.5 * (Dk == ABSTAIN)).mean(axis=0)
        kappa = label_kappas(yb, Dk)
    auc = label_aucs(yb, S[keep]) if both else None
    rising = columns_rise_with(S, y)
    # a judge with one output on every row neither rises nor falls with the label (the sign
    # test reads its ties as rising); the import's test, so the warning and the table agree
    from ..ingest.load import constant_judges
    constant = {name for name, _ in constant_judges(panel)}
    judges = []
    for j, col in enumerate(panel.judges):
        miss, err = _output_kinds(col, rows)
        judges.append({
            "judge": names[j], "schema": col.schema, "decision": "native" if native[j] else "isotonic",
            "coverage": float(1.0 - np.mean(miss | err)), "missing_rate": float(miss.mean()),
            "parse_error_rate": float(err.mean()), "abstain_rate": float(np.mean(D[:, j] == ABSTAIN)),
            "accuracy": json_number(accuracy[j]) if len(yb) else None,
            "kappa": json_number(kappa[j]) if len(yb) else None,
            "auc": json_number(auc[j]) if both else None,
            "direction": "constant" if names[j] in constant else "rises" if rising[j] else "falls",
            "brier_iso": json_number(briers[j]) if fold_list else None})
    if native.all():
        agreement, kind = kappa_matrix(D), "kappa"
    else:
        agreement, kind = rank_correlation(S), "spearman"
    np.fill_diagonal(agreement, 1.0)
    errors, varies = error_correlation(D[keep], yb)
    pairs = redundant_pairs(names, agreement, errors, threshold)
    soft = not np.isin(y, (0.0, 1.0)).all()
    return {
        "rows": int(len(rows)), "binary_rows": int(keep.sum()), "base_rate": float(y.mean()),
        "rows_note": "every labelled row outside the research test block T (S+M+V); T is never read",
        "label_note": ("labels binarised at 1/2 for accuracy, kappa and AUC (rows labelled exactly 1/2 left "
                       "out of them); Brier scores use the labels as they are") if soft else None,
        "folds": {"folds": len(fold_list), "seed": int(seed),
                  "note": "grouped folds of the deployable rows: isotonic maps (and categorical encodings) "
                          "are fitted on the other folds' groups"},
        "judges": judges, "names": names,
        "agreement": {"kind": kind, "matrix": rounded_matrix(agreement)},
        "error_correlation": {"matrix": rounded_matrix(errors),
                              "error": "1 when the decision misses the binarised label, 0 when it hits it, "
                                       "1/2 for an abstention"},
        "effective_judges": {"value": effective_number(errors[np.ix_(varies, varies)]) if varies.any() else None,
                             "K": int(varies.sum()), "excluded": [n for n, v in zip(names, varies) if not v],
                             "formula": "(sum of eigenvalues)^2 / sum of squared eigenvalues of the "
                                        "error-correlation matrix R = K^2 / ||R||_F^2"},
        "redundancy": {"threshold": threshold, "n_pairs": len(pairs), "pairs": pairs[:MAX_PAIRS],
                       "rule": f"agreement or error correlation >= {threshold}"},
    }


def _weights(family: str, model, K: int) -> np.ndarray | None:
    """A fitted model's per-judge weights in prefix order (None: the family has none)."""
    if family == "mean_iso":
        return np.full(K, 1.0 / K)
    if family == "one_coin_iso":
        return np.asarray(model.weights_, float)[:K]
    if family in ("ridge_iso", "logistic", "ridge_pairwise_iso", "logistic_pairwise"):
        return np.asarray(model.coef_, float)[:K]
    if family == "ds_jury":
        return model.orientation_ * (np.asarray(model.w1_, float) - np.asarray(model.w0_, float))
    if family == "residual":
        return _weights(model.base, model.base_, K)
    return None


def contributions(result) -> dict:
    """Each deployed judge's weight in the deployed model(s) and its drop-one change (see
    the module doc): every judge any deployed model calls gets a row."""
    from .drop_one import drop_one_choices
    from ..reports.explain import drop_verdict_words
    shares = result.deployed_weights()
    members = [result.candidates[i] for i, _ in shares]
    models, order = [], []
    for c in members:
        w = _weights(c.family, result.models[c.index], c.K)
        models.append({"index": c.index, "family": c.family, "K": c.K, "meaning": WEIGHT_MEANING.get(c.family),
                       "weights": None if w is None else {n: float(v) for n, v in zip(c.judges, w)}})
        order += [n for n in c.judges if n not in order]
    # each model with weights counts by its share of the average (a model several tied
    # members compute counts as often as they do)
    weighted, model_share = [], []
    for m, (_, share_of_average) in zip(models, shares):
        if m["weights"] and sum(map(abs, m["weights"].values())) > 0:
            weighted.append(m["weights"])
            model_share.append(share_of_average)
    drop = drop_one_choices(result)
    by_judge = {r["judge"]: r for r in (drop or {}).get("judges") or []}
    judges = []
    for n in order:
        share = [abs(w.get(n, 0.0)) / sum(map(abs, w.values())) for w in weighted]
        # signed: the mean over the weighted models by their shares (0 in a model without the judge)
        weight = float(np.average([w.get(n, 0.0) for w in weighted], weights=model_share)) if weighted else None
        d = by_judge.get(n) or {}
        judges.append({"judge": n, "members": sum(n in c.judges for c in members), "weight": weight,
                       "weight_share": float(np.average(share, weights=model_share)) if share else None,
                       "drop_risk_change": d.get("change"), "drop_ci": d.get("ci"),
                       "drop_verdict": drop_verdict_words(d["verdict"]) if d.get("verdict") else None,
                       "drop_choice": None if not d or d.get("change") is None else
                       {"family": d["family"], "members": d["members"], "K": d["K"], "risk": d["risk"]},
                       "drop_note": d.get("note")})
    note = None
    if result.protocol == "split" and getattr(result.selector, "refit", "frozen") == "refit":
        note = "weights of the models fitted on M; the deployed predictor refits them on S+M+V"
    weight_note = None if len(models) <= 1 else \
        "an average's weight is the mean of its models' signed weights, each by its share (0 in a model without the judge)"
    return {"family": TIE_AVERAGE if result.members else result.selected.family, "models": models,
            "judges": judges, "note": note, "weight_note": weight_note,
            "drop_one": None if drop is None else {k: drop[k] for k in ("risk", "objective", "rule", "method")},
            "drop_one_note": None if drop is not None else
            "no held-out predictions to replay the choice on; the Next judge plan refits without each judge"}


def with_drop_one(contribution: dict, plan: dict) -> dict:
    """``contribution`` with the next-judge plan's (``NextJudgePlan.to_dict()``) refitted
    drop-one changes beside the no-refit ones: ``refit_drop_change``, ``refit_drop_ci`` and
    ``refit_drop_verdict`` for the judges the plan drops (the deployed family refitted
    without each judge of its best member; None for the others), and ``refit_drop_one`` (the
    plan's deployed family, K, risk and settings). The no-refit columns are kept: every
    deployed judge has one, and the two are different measurements."""
    from ..reports.explain import drop_verdict_words
    drop = {e["judge"]: e for e in plan.get("drop") or []}
    judges = []
    for row in contribution["judges"]:
        e = drop.get(row["judge"])
        judges.append({**row, "refit_drop_change": e["risk_change"] if e else None,
                       "refit_drop_ci": e["ci"] if e else None,
                       "refit_drop_verdict": drop_verdict_words(e["verdict"]) if e else None})
    dep, s = plan["deployed"], plan["settings"]
    return {**contribution, "judges": judges,
            "refit_drop_one": {"family": dep["family"], "K": dep["K"], "risk": dep["risk"],
                               "objective": s["objective"], "protocol": s["protocol"], "interval": s["interval"],
                               "note": dep.get("note") or None}}


def _base_rate_predictions(result, heldout) -> np.ndarray:
    """(repeats, rows) of each held-out row predicted by its training rows' mean label."""
    y = result.panel.labels
    if result.protocol != "crossfit":
        return np.full((1, len(heldout.rows)), float(np.mean(y[result.fit_rows])))
    sel, D = result.selector, heldout.rows
    out = np.full(heldout.preds.shape[:2], np.nan)
    for r, tr, va in grouped_folds(result.panel.group_ids[D], sel.folds, sel.repeats, sel.seed):
        out[r, va] = y[D[tr]].mean()
    return out


def deployed_calibration(result, n_bins: int = ECE_BINS) -> dict:
    """Reliability curve, ECE and Brier of the deployed predictor's held-out predictions, with
    the base rate's Brier on the same rows."""
    h = result.heldout
    if h is not None:
        P = h.preds[:, :, result.tied_members].mean(axis=2)
        rows, base = h.rows, _base_rate_predictions(result, h)
        how = ("out-of-fold predictions on every deployable row (each repeat's, pooled)"
               if result.protocol == "crossfit" else "predictions on V of the candidates fitted on M")
    else:
        rows = np.asarray(result.val_rows)
        P = result.predict_deployed(rows)[None, :]
        base = np.full(P.shape, float(np.mean(result.panel.labels[result.fit_rows])))
        how = "predictions on V of the candidates fitted on M"
    y = np.broadcast_to(result.panel.labels[rows], P.shape).ravel()
    p, b = P.ravel(), base.ravel()
    curve = reliability_curve(y, p, n_bins)
    return {"rows": int(len(rows)), "points": int(len(p)), "predictions": how, "n_bins": n_bins,
            "binning": "equal-count (quantile) bins of the predictions; tied predictions share a bin, so "
                       "bins can merge", "ece": curve.pop("ece"), "brier": brier(y, p),
            "brier_base_rate": brier(y, b), "base_rate": float(np.mean(result.panel.labels[rows])),
            "curve": curve}


def selection_panel_report(panel: Panel, blocks, selector, *, threshold: float = REDUNDANCY_THRESHOLD) -> dict:
    """:func:`panel_judges_report` on a selection's deployable rows (:func:`deployable_rows`
    of ``blocks``) with its folds, seed and bins: the part of :func:`judges_report` that
    needs no fitted candidate."""
    return panel_judges_report(panel, deployable_rows(panel, blocks), folds=selector.folds, seed=selector.seed,
                               n_bins=selector.n_bins, threshold=threshold)


@dataclass(frozen=True, eq=False)
class PanelReport:
    """:func:`selection_panel_report` computed ahead of :func:`judges_report`, with what it
    read. The cross-fitted protocol computes it in a fold worker while the other worker
    finishes the last folds, so ``to_dict`` does not compute it after the folds on one
    core. :func:`judges_report` uses it only for the very panel and blocks objects and the
    same folds, seed, bins and threshold; otherwise it computes the report itself."""

    panel: Panel
    blocks: object
    folds: int
    seed: int
    n_bins: int
    threshold: float
    report: dict

    @classmethod
    def of(cls, panel: Panel, blocks, selector, report: dict,
           threshold: float = REDUNDANCY_THRESHOLD) -> "PanelReport":
        """The record of ``report``, the value of ``selection_panel_report(panel, blocks,
        selector, threshold=threshold)``."""
        return cls(panel=panel, blocks=blocks, folds=selector.folds, seed=selector.seed,
                   n_bins=selector.n_bins, threshold=threshold, report=report)

    def serves(self, result, threshold: float) -> bool:
        """Whether it is :func:`selection_panel_report` of ``result`` at ``threshold``."""
        sel = result.selector
        return (self.panel is result.panel and self.blocks is result.blocks and self.folds == sel.folds
                and self.seed == sel.seed and self.n_bins == sel.n_bins and self.threshold == threshold)


@one_blas_thread      # the drop-one replays' paired SEs are vector products: one BLAS thread, as in the choice
def judges_report(result, *, threshold: float = REDUNDANCY_THRESHOLD, n_bins: int = ECE_BINS) -> dict:
    """The ``judges_report`` entry of ``SelectionResult.to_dict``: :func:`panel_judges_report`
    on the selection's deployable rows and folds (:func:`selection_panel_report`, or the
    result's :class:`PanelReport` of it when it has one), the deployed judges' weights and
    no-refit drop-one changes (:func:`contributions`; refitted ones from a plan:
    :func:`with_drop_one`) and the deployed predictor's calibration
    (:func:`deployed_calibration`)."""
    computed = getattr(result, "panel_report", None)
    if computed is not None and computed.serves(result, threshold):
        out = copy.deepcopy(computed.report)    # a caller may edit what to_dict returns
    else:
        out = selection_panel_report(result.panel, result.blocks, result.selector, threshold=threshold)
    contribution = contributions(result)
    deployed = {j["judge"] for j in contribution["judges"]}
    shared: dict[str, list[str]] = {}
    for p in out["redundancy"]["pairs"]:
        a, b = p["judges"][:2]
        if a in deployed and b in deployed:
            shared.setdefault(a, []).append(b)
            shared.setdefault(b, []).append(a)
    for j in contribution["judges"]:
        j["shared_with"] = shared.get(j["judge"], [])
    out["contribution"] = contribution
    out["calibration"] = deployed_calibration(result, n_bins)
    return out
