"""Fixed recipes a practitioner would use without selection, fitted on the same folds.

Every baseline uses all judges of the panel (no path, no prefix), is fitted on a fold's
training rows with that fold's encoders, and predicts the fold's held-out rows, so its
held-out losses pair row by row with the selection's:

* ``best_single_judge`` -- each judge's score calibrated by isotonic regression; the judge
  with the lowest held-out risk over all folds is reported (named in ``detail``).
* ``mean_vote_iso`` -- the mean of the judges' scores, isotonic-calibrated (``mean_iso``).
* ``majority_vote`` -- no fitting: each judge votes 1 (score > 1/2), 0 (score < 1/2) or
  abstains (score = 1/2: ties, missing, parse errors); the prediction is 1 when 1-votes
  outnumber 0-votes, 0 when fewer, and 1/2 on a tie (including "every judge abstained").
* ``ridge_iso_all``, ``logistic_all`` -- the ridge + isotonic and L2-logistic stackers over
  every judge's score.
* ``ds_jury_all`` -- the Dawid-Skene jury over every judge (EM on the fold's training rows
  plus the panel's unlabelled rows, never held-out or test rows).
"""

from __future__ import annotations

import numpy as np

from ..families import REGISTRY, PrefixFeatures

BASELINES = ("best_single_judge", "mean_vote_iso", "majority_vote", "ridge_iso_all",
             "logistic_all", "ds_jury_all")
_STACKERS = {"mean_vote_iso": "mean_iso", "ridge_iso_all": "ridge_iso",
             "logistic_all": "logistic", "ds_jury_all": "ds_jury"}


def majority_vote(scores: np.ndarray) -> np.ndarray:
    ones = (scores > 0.5).sum(axis=1)
    zeros = (scores < 0.5).sum(axis=1)
    return np.where(ones > zeros, 1.0, np.where(zeros > ones, 0.0, 0.5))


def _features(scores: np.ndarray) -> PrefixFeatures:
    return PrefixFeatures(patterns=[None] * scores.shape[1], scores=scores)


def baseline_predictions(scores: np.ndarray, labels: np.ndarray, fit_rows: np.ndarray,
                         pred_rows: np.ndarray, unlabelled_rows: np.ndarray) -> dict[str, np.ndarray]:
    """Held-out predictions of every recipe; ``single_judges`` holds one column per judge
    (the best one is picked across folds by :func:`pick_best_single`)."""
    y = labels[fit_rows]
    X_fit, X_pred = _features(scores[fit_rows]), _features(scores[pred_rows])
    X_unl = _features(scores[unlabelled_rows])
    out = {"majority_vote": majority_vote(scores[pred_rows])}
    for name, family in _STACKERS.items():
        cls = REGISTRY[family]
        model = cls().fit(X_fit, y, X_unl if cls.uses_unlabelled else None)
        out[name] = model.predict(X_pred)
    single = REGISTRY["mean_iso"]
    out["single_judges"] = np.column_stack([
        single().fit(_features(scores[fit_rows][:, [j]]), y).predict(_features(scores[pred_rows][:, [j]]))
        for j in range(scores.shape[1])])
    return out
