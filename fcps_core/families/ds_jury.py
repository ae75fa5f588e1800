"""``ds_jury``: unsupervised Dawid-Skene jury, oriented and isotonic-calibrated
(paper Table tab:jury-baseline).

Model: a latent binary truth T with prior pi; judge j votes 1 with probability
sensitivity_j when T = 1 and votes 0 with probability specificity_j when T = 0; votes are
conditionally independent given T. Votes are scalar scores binarised at 1/2 (1/2 =
abstain). The parameters are fitted by EM (Laplace-smoothed M-step, majority-vote
start) on the calibration rows plus **all unlabelled traffic the selector passes** (every
row outside M and the research test block T), without labels. The posterior log-odds is then oriented (its sign is flipped if it
correlates negatively with the calibration labels) and isotonic-calibrated on the
calibration block. Prediction on new rows uses the fitted parameters (no refit).
"""

from __future__ import annotations

import numpy as np

from .base import Aggregator, IsotonicMap

MAX_ITER = 200
TOL = 1e-7


def _binary_votes(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (scores > 0.5).astype(float), (scores < 0.5).astype(float)


def distinct_votes(scores: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of the (1-vote, 0-vote) indicators with their total weight.

    Rows with the same votes get the same posterior at every EM step, so EM on the distinct
    vote patterns with counts is EM on the rows.
    """
    ones, zeros = _binary_votes(scores)
    K = scores.shape[1]
    if K == 0 or K > 39:        # 3**K must fit in int64; no compression needed then
        return ones, zeros, np.asarray(weight, float)
    code = (ones + 2 * zeros) @ (3.0 ** np.arange(K))      # exact below 2**53
    uniq, first, inv = np.unique(code, return_index=True, return_inverse=True)
    return ones[first], zeros[first], np.bincount(inv, weights=weight, minlength=len(uniq))


def em_fit(ones: np.ndarray, zeros: np.ndarray, count: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
    """Dawid-Skene EM (one-coin-per-class, binary truth) on vote rows with multiplicities.

    Returns (prior log-odds, weight of a 1-vote, weight of a 0-vote) after at most
    ``MAX_ITER`` iterations, stopping when no row's posterior moves by ``TOL``.
    """
    K = ones.shape[1]
    observed = ones + zeros
    n_obs = observed.sum(axis=1)
    t = np.where(n_obs > 0, ones.sum(axis=1) / np.maximum(n_obs, 1), 0.5)
    total = count.sum()
    pos_stats = np.hstack([ones, observed])       # sum t*w over these: 1-votes, observed
    neg_stats = np.hstack([zeros, observed])
    votes = np.hstack([ones, zeros])
    for _ in range(MAX_ITER):
        tw = t * count
        a = tw @ pos_stats
        b = (count - tw) @ neg_stats
        pi = min(max(float(tw.sum()) / total, 1e-3), 1 - 1e-3)
        sens = (a[:K] + 1.0) / (a[K:] + 2.0)
        spec = (b[:K] + 1.0) / (b[K:] + 2.0)
        prior_logit = float(np.log(pi / (1 - pi)))
        w1 = np.log(sens) - np.log(1 - spec)      # weight of a 1-vote
        w0 = np.log(1 - sens) - np.log(spec)      # weight of a 0-vote
        new_t = 1.0 / (1.0 + np.exp(-np.clip(prior_logit + votes @ np.concatenate([w1, w0]), -35, 35)))
        done = np.max(np.abs(new_t - t)) < TOL
        t = new_t
        if done:
            break
    return prior_logit, w1, w0


def _weighted_corr(a: np.ndarray, b: np.ndarray, weight: np.ndarray | None) -> float:
    if weight is None:
        return float(np.corrcoef(a, b)[0, 1])
    w = weight / weight.sum()
    da, db = a - w @ a, b - w @ b
    return float((w * da) @ db / np.sqrt((w * da) @ da * ((w * db) @ db)))


class DawidSkeneJury(Aggregator):
    name = "ds_jury"
    complexity_rank = 7
    uses_unlabelled = True

    def _fit(self, X, y, unlabelled):
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        w = X.w if unlabelled is None else np.concatenate([X.w, unlabelled.w])
        ones, zeros, count = distinct_votes(S, w)
        self.prior_logit_, self.w1_, self.w0_ = em_fit(ones, zeros, count)
        raw = self._logodds(X.scores)
        self.orientation_ = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and _weighted_corr(raw, y, X.weight) < 0:
            self.orientation_ = -1.0
        self.iso_ = IsotonicMap().fit(self.orientation_ * raw, y, X.weight)

    def _logodds(self, scores):
        ones, zeros = _binary_votes(scores)
        return self.prior_logit_ + ones @ self.w1_ + zeros @ self.w0_

    def _predict(self, X):
        return self.iso_.predict(self.orientation_ * self._logodds(X.scores))

    def _state(self):
        return {"prior_logit": self.prior_logit_, "w1": self.w1_.tolist(), "w0": self.w0_.tolist(),
                "orientation": self.orientation_, "isotonic": self.iso_.to_dict()}

    def _load(self, state):
        self.prior_logit_ = float(state["prior_logit"])
        self.w1_ = np.asarray(state["w1"], float)
        self.w0_ = np.asarray(state["w0"], float)
        self.orientation_ = float(state["orientation"])
        self.iso_ = IsotonicMap.from_dict(state["isotonic"])
