"""Fixed recipes a practitioner would use without selection, fitted on the same folds.

Every baseline uses all judges of the panel (no path, no prefix), is fitted on a fold's
training rows with that fold's encoders, and predicts the fold's held-out rows, so its
held-out losses pair row by row with the selection's:

* ``best_single_judge`` -- each judge's score calibrated by isotonic regression, increasing
  or decreasing as the score goes with the label on the fold's training rows
  (scikit-learn's ``increasing="auto"``, :func:`.families.base.rises_with`); the judge with
  the lowest held-out risk over all folds is reported (named in ``detail``).
* ``mean_vote_iso`` -- the mean of the judges' oriented scores, isotonic-calibrated
  (``mean_iso``).
* ``majority_vote`` -- no fitting but the orientation: each judge votes 1 (oriented score >
  1/2), 0 (< 1/2) or abstains (= 1/2: ties, missing, parse errors); the prediction is 1
  when 1-votes outnumber 0-votes, 0 when fewer, and 1/2 on a tie (including "every judge
  abstained").

The two votes read each judge the way its score goes with the label on the fold's training
rows (the single judges' direction, :func:`.families.base.columns_rise_with`): a judge whose
score falls as the label rises (an error count against a quality label, a metric against an
error-score label) counts with its score s read as 1 - s, as a practitioner who knows the
metric's direction would count it. On a panel whose judges all rise with the label (a
judge's score is its vote for the label) nothing changes.
* ``ridge_iso_all``, ``logistic_all`` -- the ridge + isotonic and L2-logistic stackers over
  every judge's score.
* ``ds_jury_all`` -- the Dawid-Skene jury over every judge (EM on the fold's training rows
  plus the panel's unlabelled rows, never held-out or test rows).
"""

from __future__ import annotations

import numpy as np

from ..families import REGISTRY, PrefixFeatures
from ..families.base import columns_rise_with, one_blas_thread

BASELINES = ("best_single_judge", "mean_vote_iso", "majority_vote", "ridge_iso_all",
             "logistic_all", "ds_jury_all")
_STACKERS = {"mean_vote_iso": "mean_iso", "ridge_iso_all": "ridge_iso",
             "logistic_all": "logistic", "ds_jury_all": "ds_jury"}


def majority_vote(scores: np.ndarray) -> np.ndarray:
    ones = (scores > 0.5).sum(axis=1)
    zeros = (scores < 0.5).sum(axis=1)
    return np.where(ones > zeros, 1.0, np.where(zeros > ones, 0.0, 0.5))


def _features(scores: np.ndarray, weight: np.ndarray | None = None) -> PrefixFeatures:
    return PrefixFeatures(patterns=[None] * scores.shape[1], scores=scores, weight=weight)


def distinct_score_rows(scores: np.ndarray, y: np.ndarray | None = None,
                        weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(representative position, total weight, each row's distinct row) of the distinct
    (score vector[, label]) rows; scores compared exactly (no rounding)."""
    from .folds import factorize_values, distinct_key, distinct_rows
    def digits():          # as distinct_key reads them (it stops once every row differs)
        for j in range(scores.shape[1]):
            # a contiguous copy of the column: factorize_values passes over it several times
            yield factorize_values(np.ascontiguousarray(scores[:, j]))
        if y is not None:
            yield factorize_values(np.asarray(y, dtype=float))
    rep, counts, inverse = distinct_rows(*distinct_key(digits(), scores.shape[0]))
    if weight is not None:
        counts = np.bincount(inverse, weights=weight, minlength=len(rep))
    return rep, np.asarray(counts, dtype=float), inverse


@one_blas_thread
def baseline_predictions(scores: np.ndarray, labels: np.ndarray, fit_rows: np.ndarray,
                         pred_rows: np.ndarray, unlabelled_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Held-out predictions of every recipe; ``single_judges`` holds one column per judge
    (the best one is picked across folds by :func:`pick_best_single`).

    The recipes read only the scores, so they are fitted on the distinct (score vector,
    label) rows of ``fit_rows`` with their counts (and the distinct score vectors of the
    unlabelled rows), and predict each distinct score vector of ``pred_rows`` once: every
    family's weighted fit is its fit on the expanded rows (``PrefixFeatures.weight``)."""
    y_all = labels[fit_rows]
    S_fit = scores[fit_rows]
    rep, w, _ = distinct_score_rows(S_fit, y_all)
    S_fit, y = S_fit[rep], y_all[rep]
    X_fit = _features(S_fit, w)
    X_unl = None
    S_pred = scores[pred_rows]
    rep_p, _, inv_p = distinct_score_rows(S_pred)
    S_pred = S_pred[rep_p]
    X_pred = _features(S_pred)
    rises = columns_rise_with(S_fit, y, w) if S_fit.shape[1] else np.ones(0, dtype=bool)
    out = {"majority_vote": majority_vote(oriented(S_pred, rises))[inv_p]}
    # the mean vote reads the oriented scores (the same features when every judge rises)
    X_fit_o, X_pred_o = (X_fit, X_pred) if rises.all() else \
        (_features(oriented(S_fit, rises), w), _features(oriented(S_pred, rises)))
    for name, family in _STACKERS.items():
        cls = REGISTRY[family]
        if cls.uses_unlabelled and X_unl is None:
            S_unl = scores[unlabelled_rows]
            rep_u, w_u, _ = distinct_score_rows(S_unl)
            X_unl = _features(S_unl[rep_u], w_u)
        fit_x, pred_x = (X_fit_o, X_pred_o) if name == "mean_vote_iso" else (X_fit, X_pred)
        model = cls().fit(fit_x, y, X_unl if cls.uses_unlabelled else None)
        out[name] = model.predict(pred_x)[inv_p]
    # the isotonic fit pools equal scores itself (weighted sums in sorted order), so the
    # distinct (score, label) rows of one judge need no separate pass
    out["single_judges"] = single_judge_columns(S_fit, y, S_pred, w, rises=rises)[inv_p]
    return out


def oriented(scores: np.ndarray, rises: np.ndarray) -> np.ndarray:
    """``scores`` with each judge that does not rise with the label read as 1 - score (a vote
    for the label's other end); the scores themselves when every judge rises."""
    if rises.all():
        return scores
    return np.where(rises[None, :], scores, 1.0 - scores)


def single_judge_columns(S_fit: np.ndarray, y: np.ndarray, S_pred: np.ndarray,
                         w: np.ndarray | None = None, rises: np.ndarray | None = None) -> np.ndarray:
    """A practitioner's single-judge recipe for every judge at once: an isotonic map of the
    judge's score fitted on the rows ``S_fit`` (labels ``y``, row weights ``w``), predicting the
    rows ``S_pred``; one column per judge. Each map runs the way the judge's score goes with
    the label on the fit rows (:func:`.families.base.rises_with`, scikit-learn's
    ``increasing="auto"``): a judge whose score falls as the label rises is read negated, not
    flattened to the base rate (``rises``: those directions, when the caller has them). The
    maps share the labels' ranks (``fit_each``)."""
    n_judges = S_fit.shape[1]
    if n_judges == 0:
        return np.zeros((len(S_pred), 0))
    sign = np.where(columns_rise_with(S_fit, y, w) if rises is None else rises, 1.0, -1.0)
    models = REGISTRY["mean_iso"].fit_each([_features(sign[j] * S_fit[:, [j]], w) for j in range(n_judges)], y)
    return np.column_stack([model.predict(_features(sign[j] * S_pred[:, [j]])) for j, model in enumerate(models)])
