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


class DawidSkeneJury(Aggregator):
    name = "ds_jury"
    complexity_rank = 7
    uses_unlabelled = True

    def _fit(self, X, y, unlabelled):
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        ones, zeros = _binary_votes(S)
        observed = ones + zeros
        n_obs = observed.sum(axis=1)
        t = np.where(n_obs > 0, ones.sum(axis=1) / np.maximum(n_obs, 1), 0.5)
        for _ in range(MAX_ITER):
            pi = np.clip(t.mean(), 1e-3, 1 - 1e-3)
            sens = (t @ ones + 1.0) / (t @ observed + 2.0)
            spec = ((1 - t) @ zeros + 1.0) / ((1 - t) @ observed + 2.0)
            self.prior_logit_ = float(np.log(pi / (1 - pi)))
            self.w1_ = np.log(sens) - np.log(1 - spec)      # weight of a 1-vote
            self.w0_ = np.log(1 - sens) - np.log(spec)      # weight of a 0-vote
            new_t = 1.0 / (1.0 + np.exp(-np.clip(self._logodds(S), -35, 35)))
            done = np.max(np.abs(new_t - t)) < TOL
            t = new_t
            if done:
                break
        raw = self._logodds(X.scores)
        self.orientation_ = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and np.corrcoef(raw, y)[0, 1] < 0:
            self.orientation_ = -1.0
        self.iso_ = IsotonicMap().fit(self.orientation_ * raw, y)

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
