"""Shared linear stackers: ridge + isotonic and logistic, on a feature map of the scores.

Ridge: sklearn ``Ridge(alpha)`` on the features, then an isotonic map of its output.
Logistic: L2 ``LogisticRegression(C)`` with soft labels y in [0, 1] fitted by the standard
weighted duplication (each row once as class 1 with weight y, once as class 0 with weight
1 - y), which maximises the Bernoulli likelihood of fractional targets.
Degenerate calibration blocks (constant y) fall back to the constant ybar_cal.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge

from .base import Aggregator, IsotonicMap


class _Linear(Aggregator):
    features = staticmethod(lambda s: s)

    def _constant(self, y) -> bool:
        self.constant_ = bool(np.ptp(y) == 0)
        return self.constant_

    def _linear(self, X):
        return self.features(X.scores) @ self.coef_ + self.intercept_


class _RidgeIsotonic(_Linear):
    def __init__(self, ridge_alpha: float = 1.0):
        self.ridge_alpha = float(ridge_alpha)

    def get_params(self):
        return {"ridge_alpha": self.ridge_alpha}

    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), self.ybar_
            self.iso_ = None
            return
        model = Ridge(alpha=self.ridge_alpha).fit(F, y)
        self.coef_, self.intercept_ = np.asarray(model.coef_, float), float(model.intercept_)
        self.iso_ = IsotonicMap().fit(F @ self.coef_ + self.intercept_, y)

    def _predict(self, X):
        if self.iso_ is None:
            return np.full(X.n_rows, self.ybar_)
        return self.iso_.predict(self._linear(X))

    def _state(self):
        return {"coef": self.coef_.tolist(), "intercept": self.intercept_,
                "isotonic": None if self.iso_ is None else self.iso_.to_dict()}

    def _load(self, state):
        self.coef_ = np.asarray(state["coef"], float)
        self.intercept_ = float(state["intercept"])
        self.iso_ = None if state["isotonic"] is None else IsotonicMap.from_dict(state["isotonic"])


class _Logistic(_Linear):
    def __init__(self, C: float = 1.0):
        self.C = float(C)

    def get_params(self):
        return {"C": self.C}

    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), float(np.log((self.ybar_ + 1e-12) / (1 - self.ybar_ + 1e-12)))
            return
        soft = (y > 0) & (y < 1)
        if soft.any():
            # Weighted duplication: (x, 1) with weight y and (x, 0) with weight 1 - y.
            FF = np.vstack([F, F])
            target = np.r_[np.ones(len(y)), np.zeros(len(y))]
            weight = np.r_[y, 1 - y]
            keep = weight > 0
            FF, target, weight = FF[keep], target[keep], weight[keep]
        else:
            FF, target, weight = F, y, None
        model = LogisticRegression(C=self.C, max_iter=1000)
        model.fit(FF, target, sample_weight=weight)
        self.coef_, self.intercept_ = np.asarray(model.coef_[0], float), float(model.intercept_[0])

    def _predict(self, X):
        z = np.clip(self._linear(X), -35, 35)
        return 1.0 / (1.0 + np.exp(-z))

    def _state(self):
        return {"coef": self.coef_.tolist(), "intercept": self.intercept_}

    def _load(self, state):
        self.coef_ = np.asarray(state["coef"], float)
        self.intercept_ = float(state["intercept"])
