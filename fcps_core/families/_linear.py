"""Shared linear stackers: ridge + isotonic and logistic, on a feature map of the scores.

Ridge: the ``Ridge(alpha)`` estimate of scikit-learn (intercept unpenalised), solved in
closed form: centre F and y at their (weighted) means, solve
(Fc' W Fc + alpha I) w = Fc' W yc, intercept = ybar - Fbar' w; then an isotonic map of
its output.

Logistic: the L2 ``LogisticRegression(C)`` objective with soft labels y in [0, 1],

    sum_i w_i [log(1 + exp(z_i)) - y_i z_i] + |coef|^2 / (2 C),   z_i = coef'f_i + b,

(intercept unpenalised) -- the same objective scikit-learn minimises on the weighted
duplication (each row once as class 1 with weight y, once as class 0 with weight 1 - y).
It is strictly convex, so damped Newton steps from zero (sklearn's start) converge to the
unique minimiser to machine precision in a handful of iterations; sklearn's lbfgs stops
at a gradient tolerance of 1e-4 and lands within ~1e-6 of it (tests check both).

Degenerate calibration blocks (constant y) fall back to the constant ybar_cal.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import solve_triangular

from .base import IsotonicMap, prefix_dots, rowwise_dot
from .estimator import Aggregator

NEWTON_MAX_ITER = 100
NEWTON_GTOL = 1e-9


def _normal_equations(F: np.ndarray, y: np.ndarray, alpha: float, w: np.ndarray | None):
    """(A, b, column means, y mean) of ridge with an unpenalised intercept: centre F and y
    at their weighted means, A = Fc' W Fc + alpha I, b = Fc' W (y - ybar)."""
    w = np.ones(len(y)) if w is None else w
    total = w.sum()
    f_mean = (w @ F) / total
    y_mean = float(w @ y) / total
    Fc = F - f_mean
    Fw = Fc * w[:, None]
    A = Fw.T @ Fc
    A[np.diag_indices_from(A)] += alpha
    return A, Fw.T @ (y - y_mean), f_mean, y_mean


def ridge_fit(F: np.ndarray, y: np.ndarray, alpha: float,
              w: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """(coef, intercept) of ridge regression with an unpenalised intercept (normal equations)."""
    A, b, f_mean, y_mean = _normal_equations(F, y, alpha, w)
    coef = np.linalg.solve(A, b)
    return coef, float(y_mean - f_mean @ coef)


def ridge_path(F: np.ndarray, y: np.ndarray, alpha: float, w: np.ndarray | None,
               sizes: list[int]) -> tuple[list[np.ndarray], list[float]] | None:
    """:func:`ridge_fit` of every prefix ``F[:, :K]``, K in ``sizes``, from one Gram matrix.

    Centring is per column, so the prefix's normal matrix is the leading K x K block of the
    path's, and the Cholesky factor of a leading block is the leading block of the factor:
    one factorisation and one forward solve serve every prefix, each then needs a K x K
    back substitution. None when the matrix is not positive definite (alpha = 0 on collinear
    scores): the caller solves each prefix on its own.
    """
    A, b, f_mean, y_mean = _normal_equations(F, y, alpha, w)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return None
    u = solve_triangular(L, b, lower=True)
    coefs, intercepts = [], []
    for K in sizes:
        coef = solve_triangular(L[:K, :K], u[:K], lower=True, trans="T")
        coefs.append(coef)
        intercepts.append(float(y_mean - f_mean[:K] @ coef))
    return coefs, intercepts


def logistic_objective(F, y, w, coef, intercept, C) -> float:
    z = F @ coef + intercept
    return float(w @ (np.logaddexp(0.0, z) - y * z) + coef @ coef / (2.0 * C))


def logistic_fit(F: np.ndarray, y: np.ndarray, C: float, w: np.ndarray | None = None,
                 start: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """(coef, intercept) minimising the soft-label L2 logistic objective (damped Newton from
    zero, sklearn's start, or from ``start`` = (coef, intercept): the objective is strictly
    convex, so the start changes the number of steps, not the optimum)."""
    n, p = F.shape
    w = np.ones(n) if w is None else w
    F1 = np.hstack([F, np.ones((n, 1))])
    beta = np.zeros(p + 1) if start is None else np.array(start, dtype=float)
    ridge = np.r_[np.full(p, 1.0 / C), 0.0]
    scale = max(float(w.sum()), 1.0)
    obj = logistic_objective(F, y, w, beta[:p], beta[p], C)
    for _ in range(NEWTON_MAX_ITER):
        z = F1 @ beta
        prob = 0.5 * (1.0 + np.tanh(0.5 * z))          # sigmoid without overflow
        grad = F1.T @ (w * (prob - y)) + ridge * beta
        if np.max(np.abs(grad)) <= NEWTON_GTOL * scale:
            break
        H = (F1 * (w * prob * (1.0 - prob))[:, None]).T @ F1
        H[np.diag_indices_from(H)] += ridge
        step = np.linalg.solve(H, grad)
        decrement = float(grad @ step)                  # Newton decrement squared
        if decrement <= 1e-10 * scale:
            # Inside the quadratic-convergence region the full step is safe, and the
            # objective's rounding (~1e-16 * scale) could no longer confirm a decrease.
            beta = beta - step
            break
        t, accepted = 1.0, False
        for _ in range(40):                             # backtracking (Armijo) line search
            cand = beta - t * step
            new = logistic_objective(F, y, w, cand[:p], cand[p], C)
            if new <= obj - 1e-4 * t * decrement:
                accepted = True
                break
            t *= 0.5
        if not accepted:       # no decrease possible: at the optimum to rounding
            break
        beta, obj = cand, new
    return beta[:p].copy(), float(beta[p])


class LinearBase(Aggregator):
    """The linear stackers' fitting; their models (``fitted.RidgeIsoModel``,
    ``fitted.LogisticModel`` and the pairwise variants) come first in each estimator's
    bases and give the feature map, parameters, link and state."""

    def _constant(self, y) -> bool:
        self.constant_ = bool(np.ptp(y) == 0)
        return self.constant_

    @classmethod
    def predict_path(cls, models, sizes, X):
        """Every prefix model's linear score in one pass (:func:`prefix_dots`, bit for bit
        the per-model score), then each model's link."""
        if cls.pairwise:        # product features are not nested along the path
            return super().predict_path(models, sizes, X)
        Z = prefix_dots(X.scores, [m.coef_ for m in models], [m.intercept_ for m in models])
        return np.column_stack([np.clip(m._from_linear(Z[:, i], X.n_rows), 0.0, 1.0)
                                for i, m in enumerate(models)])


class RidgeIsotonicBase(LinearBase):
    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), self.ybar_
            self.iso_ = None
            return
        self.coef_, self.intercept_ = ridge_fit(F, y, self.ridge_alpha, X.weight)
        self.iso_ = IsotonicMap().fit(rowwise_dot(F, self.coef_, self.intercept_), y, X.weight)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, **params):
        """Every prefix from one Gram matrix and Cholesky factor (:func:`ridge_path`), their
        linear scores in one pass, then each prefix's isotonic map."""
        proto = cls(**params)
        y = proto._start_fit(X, y)
        F = X.scores[:, :max(sizes)]
        solved = None if cls.pairwise or np.ptp(y) == 0 else ridge_path(F, y, proto.ridge_alpha, X.weight, sizes)
        if solved is None:
            return super().fit_path(X, y, unlabelled, sizes, **params)
        coefs, intercepts = solved
        Z = prefix_dots(F, coefs, intercepts)
        models = []
        for i, K in enumerate(sizes):
            model = cls(**params)
            model._start_fit(X, y)
            model.constant_ = False
            model.coef_, model.intercept_ = coefs[i], intercepts[i]
            model.iso_ = IsotonicMap().fit(Z[:, i], y, X.weight)
            models.append(model)
        return models


class LogisticBase(LinearBase):
    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            # One label value: predict it exactly (a logit round trip would be off by ~1e-12).
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), 0.0
            return
        self.coef_, self.intercept_ = logistic_fit(F, y, self.C, X.weight)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, **params):
        """Newton for prefix K starts from prefix K-1's optimum (the new judge's coefficient
        at 0): the same unique optimum as a fit from zero, in fewer steps."""
        proto = cls(**params)
        y = proto._start_fit(X, y)
        if cls.pairwise or np.ptp(y) == 0:
            return super().fit_path(X, y, unlabelled, sizes, **params)
        models, prev = [], None
        for K in sizes:
            start = None
            if prev is not None:
                start = np.zeros(K + 1)
                start[:len(prev.coef_)] = prev.coef_
                start[K] = prev.intercept_
            model = cls(**params)
            model._start_fit(X, y)
            model.constant_ = False
            model.coef_, model.intercept_ = logistic_fit(X.scores[:, :K], y, model.C, X.weight, start)
            models.append(model)
            prev = model
        return models
