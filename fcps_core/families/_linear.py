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
from scipy.linalg.blas import dgemm

from .base import (IsotonicMap, label_ranks, log1p_exp, pairwise_columns, prefix_dots,
                   rowwise_dot)
from .estimator import Aggregator

NEWTON_MAX_ITER = 100
NEWTON_GTOL = 1e-9
#: the path's gradient tolerance: its steps converge linearly where Newton's converge
#: quadratically (Newton typically ends far below NEWTON_GTOL), so the path goes further to
#: land as close to the optimum as a fit from zero (its steps are cheap)
PATH_GTOL = 1e-11


def _normal_equations(F: np.ndarray, y: np.ndarray, alpha: float, w: np.ndarray | None):
    """(A, b, column means, y mean) of ridge with an unpenalised intercept: centre F and y
    at their weighted means, A = Fc' W Fc + alpha I, b = Fc' W (y - ybar).

    Unit weights: W Fc is Fc itself, so A is Fc' Fc by the BLAS general product on Fc
    twice. numpy's ``Fc.T @ Fc`` would see one array and take the symmetric product, whose
    rounding differs from the general product's; the weighted form's ``Fw.T @ Fc`` is this
    general product (the same values, bit for bit), without the rows-by-columns copy."""
    unit = w is None
    w = np.ones(len(y)) if w is None else w
    total = w.sum()
    f_mean = (w @ F) / total
    y_mean = float(w @ y) / total
    Fc = F - f_mean
    if unit and (Fc.flags.f_contiguous or Fc.flags.c_contiguous):
        # Fortran-ordered operands, so f2py passes them without a copy
        A = (dgemm(1.0, Fc, Fc, trans_a=1) if Fc.flags.f_contiguous
             else dgemm(1.0, Fc.T, Fc.T, trans_b=1))
        return _ridge_diag(A, alpha), Fc.T @ (y - y_mean), f_mean, y_mean
    Fw = Fc * w[:, None]
    A = Fw.T @ Fc
    return _ridge_diag(A, alpha), Fw.T @ (y - y_mean), f_mean, y_mean


def _ridge_diag(A: np.ndarray, alpha: float) -> np.ndarray:
    A[np.diag_indices_from(A)] += alpha
    return A


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


def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function without overflow."""
    return 0.5 * (1.0 + np.tanh(0.5 * z))


def penalised_loss(z: np.ndarray, y, w, coef, C) -> float:
    """The soft-label L2 logistic objective at linear scores ``z`` (``coef`` without the
    intercept, which is not penalised); log(1 + e^z) by :func:`.base.log1p_exp` (within two
    ulps of ``np.logaddexp(0, z)``, several times faster)."""
    terms = log1p_exp(z)
    terms -= y * z
    return float(w @ terms + coef @ coef / (2.0 * C))


def logistic_objective(F, y, w, coef, intercept, C) -> float:
    return penalised_loss(F @ coef + intercept, y, w, coef, C)


def logistic_fit(F: np.ndarray, y: np.ndarray, C: float, w: np.ndarray | None = None,
                 start: np.ndarray | None = None, return_n_iter: bool = False) -> tuple:
    """(coef, intercept) minimising the soft-label L2 logistic objective (damped Newton from
    zero, sklearn's start, or from ``start`` = (coef, intercept): the objective is strictly
    convex, so the start changes the number of steps, not the optimum). ``return_n_iter``:
    the number of Newton iterations (gradient evaluations) is appended."""
    n, p = F.shape
    w = np.ones(n) if w is None else w
    F1 = np.hstack([F, np.ones((n, 1))])
    beta = np.zeros(p + 1) if start is None else np.array(start, dtype=float)
    ridge = np.r_[np.full(p, 1.0 / C), 0.0]
    scale = max(float(w.sum()), 1.0)
    obj = logistic_objective(F, y, w, beta[:p], beta[p], C)
    n_iter = 0
    for n_iter in range(1, NEWTON_MAX_ITER + 1):
        z = F1 @ beta
        prob = sigmoid(z)
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
    if return_n_iter:
        return beta[:p].copy(), float(beta[p]), n_iter
    return beta[:p].copy(), float(beta[p])


def logistic_path(F: np.ndarray, y: np.ndarray, C: float, w: np.ndarray | None,
                  sizes: list[int]) -> tuple[list[np.ndarray], list[float]]:
    """:func:`logistic_fit` of every prefix ``F[:, :K]``, K in ``sizes`` (ascending): the
    same unique optimum of each prefix's strictly convex objective, to the same gradient
    tolerance, at a fraction of the Hessians.

    Newton spends its time on the Hessian X' D X (n K^2 per step, about three steps per
    prefix). Along a path the prefixes are nested, so the matrix is carried instead: with
    the intercept as the first column every prefix's matrix is the leading block of the
    next, and a new judge borders the Cholesky factor (n K for its column, K^2 for the
    factor). Steps solve with this factor (Newton-chord steps, each a descent direction
    under the Armijo search of :func:`logistic_fit`); the weights D it was built with go
    stale as the coefficients move, so it is rebuilt at the current point whenever a step
    fails to halve the gradient (the contraction a Newton step gives near the optimum).
    A prefix starts from the previous one's optimum with the new coefficient at 0."""
    from scipy.linalg.blas import dsyrk
    from scipy.linalg.lapack import dpotrs, dtrtrs
    n, P = F.shape[0], max(sizes)
    unit = w is None                    # unit weights: w * v is v, so the product is skipped
    w = np.ones(n) if w is None else w

    def curvature(prob):
        # the Hessian's weights w p (1 - p)
        return prob * (1.0 - prob) if unit else w * prob * (1.0 - prob)
    scale = max(float(w.sum()), 1.0)
    X = np.empty((n, P + 1), order="F")     # column-major: a prefix's columns are contiguous
    X[:, 0] = 1.0                       # intercept first: each prefix is a leading block
    X[:, 1:] = F[:, :P]
    ridge = np.full(P + 1, 1.0 / C)
    ridge[0] = 0.0
    beta = np.zeros(P + 1)
    L = np.zeros((P + 1, P + 1))        # lower Cholesky factor of X' D X + ridge, first m columns
    m, d = 0, None                      # d: the weights the factor was built with

    def rebuild(k, weights):
        # X' D X as one symmetric rank-n update of sqrt(D) X (half a general product's flops)
        H = dsyrk(1.0, X[:, :k] * np.sqrt(weights)[:, None], trans=1, lower=1)
        H.flat[::k + 1] += ridge[:k]
        L[:k, :k] = np.linalg.cholesky(H)

    coefs, intercepts = [], []
    z = prob = None
    for K in sizes:
        k = K + 1
        Xk = X[:, :k]
        if z is None:
            z = Xk @ beta[:k]
            prob = sigmoid(z)
        # else: the new judges' coefficients start at 0, so the last prefix's scores stand
        if d is None:
            d = curvature(prob)
            rebuild(k, d)
        elif k > m:                     # border the factor with the new judges' columns
            B = X[:, m:k]
            Bd = B * d[:, None]
            A12 = X[:, :m].T @ Bd
            A22 = B.T @ Bd
            A22.flat[::k - m + 1] += ridge[m:k]
            # solve_triangular(L[:m, :m], A12, lower=True)'s LAPACK call (a C-ordered factor
            # solved as its transpose), without its argument checks
            L21, info = dtrtrs(L[:m, :m].T, A12, lower=0, trans=1)
            if info != 0:
                raise np.linalg.LinAlgError(f"singular matrix: resolution failed at diagonal {info - 1}")
            L21 = L21.T
            try:
                L[m:k, m:k] = np.linalg.cholesky(A22 - L21 @ L21.T)
                L[m:k, :m] = L21
            except np.linalg.LinAlgError:     # rounding: rebuild at the current point
                d = curvature(prob)
                rebuild(k, d)
        m = k
        b = beta[:k].copy()
        obj = penalised_loss(z, y, w, b[1:k], C)
        fresh = False                   # whether the factor was built at the current point
        last = np.inf
        for _ in range(4 * NEWTON_MAX_ITER):
            grad = Xk.T @ ((prob - y) if unit else w * (prob - y)) + ridge[:k] * b
            size = float(np.abs(grad).max())
            if size <= PATH_GTOL * scale:
                break
            if size > 0.5 * last and not fresh:
                d = curvature(prob)
                rebuild(k, d)
                fresh = True
            last = size
            step = dpotrs(L[:k, :k], grad, lower=1)[0]
            decrement = float(grad @ step)
            if decrement <= 1e-10 * scale and fresh:
                # A Newton step inside the quadratic-convergence region: safe in full, and
                # the objective's rounding could no longer confirm a decrease.
                b = b - step
                z = Xk @ b
                prob = sigmoid(z)
                break
            t, accepted = 1.0, False
            for _ in range(40):
                cand = b - t * step
                cz = Xk @ cand
                new = penalised_loss(cz, y, w, cand[1:k], C)
                if new <= obj - 1e-4 * t * decrement:
                    accepted = True
                    break
                t *= 0.5
            if not accepted:
                if fresh:               # no decrease even along Newton's step: at the optimum
                    break
                d = curvature(prob)
                rebuild(k, d)
                fresh, last = True, np.inf
                continue
            b, obj, z = cand, new, cz
            prob = sigmoid(z)
            fresh = False
        beta[:k] = b
        coefs.append(b[1:].copy())
        intercepts.append(float(b[0]))
    return coefs, intercepts


_PAIRWISE_ORDERS: dict[int, np.ndarray] = {}


def _pairwise_order(K: int) -> np.ndarray:
    """:func:`.base.pairwise_columns` of K, made once per process (every pairwise path's
    fit and prediction asks for each of its prefixes' orders); read-only, as it is shared."""
    order = _PAIRWISE_ORDERS.get(K)
    if order is None:
        order = pairwise_columns(K)
        order.setflags(write=False)
        _PAIRWISE_ORDERS[K] = order
    return order


class LinearBase(Aggregator):
    """The linear stackers' fitting; their models (``fitted.RidgeIsoModel``,
    ``fitted.LogisticModel`` and the pairwise variants) come first in each estimator's
    bases and give the feature map, parameters, link and state."""

    def _constant(self, y) -> bool:
        self.constant_ = bool(np.ptp(y) == 0)
        return self.constant_

    @classmethod
    def path_features(cls, X, sizes) -> tuple[np.ndarray, list[int], list]:
        """(F, widths, orders): the path's features once, nested so that prefix K's are the
        first ``widths[i]`` columns, and per prefix the columns in the model's feature order
        (None: already in order). Pairwise products are built judge by judge
        (:func:`nested_pairwise_features`) instead of once per prefix, and once per view for
        both pairwise stackers (:meth:`PrefixFeatures.nested_pairwise`)."""
        K_max = max(sizes)
        if not cls.pairwise:
            return X.scores[:, :K_max], list(sizes), [None] * len(sizes)
        return (X.nested_pairwise(K_max), [K + K * (K - 1) // 2 for K in sizes],
                [_pairwise_order(K) for K in sizes])

    @staticmethod
    def reorder(coefs: list, orders: list) -> list:
        """Path coefficients (nested feature order) in each model's feature order."""
        return [c if order is None else c[order] for c, order in zip(coefs, orders)]

    @staticmethod
    def path_scores(F: np.ndarray, coefs: list, intercepts: list, orders: list) -> np.ndarray:
        """(rows, models) linear scores of the path features ``F`` (:meth:`path_features`),
        bit for bit each model's own: one pass (:func:`prefix_dots`) when the features are
        in the models' order, else each model's columns summed in its order: the products
        and sums of :func:`rowwise_dot`, through one scratch vector into a column-major
        result (as :func:`prefix_dots` makes), so no product is allocated per column."""
        if all(order is None for order in orders):
            return prefix_dots(F, coefs, intercepts)
        out = np.empty((F.shape[0], len(coefs)), order="F")
        product = np.empty(F.shape[0])
        for m, (c, b, order) in enumerate(zip(coefs, intercepts, orders)):
            column = out[:, m]
            column.fill(float(b))
            for j, col in enumerate(range(F.shape[1]) if order is None else order):
                np.multiply(F[:, col], c[j], out=product)
                column += product
        return out

    @classmethod
    def predict_path(cls, models, sizes, X):
        """Every prefix model's linear score, bit for bit the per-model score
        (:meth:`path_scores`; pairwise products built once for the path), then each model's
        link."""
        F, _, orders = cls.path_features(X, sizes)
        Z = cls.path_scores(F, [m.coef_ for m in models], [m.intercept_ for m in models], orders)
        return np.column_stack([np.clip(m._from_linear(Z[:, i], X.n_rows), 0.0, 1.0)
                                for i, m in enumerate(models)])


class RidgeIsotonicBase(LinearBase):
    #: one Cholesky factor of the longest prefix's Gram matrix serves every prefix
    path_prefixes_apart = False
    path_keeps_prefixes = True

    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), self.ybar_
            self.iso_ = None
            return
        self.coef_, self.intercept_ = ridge_fit(F, y, self.ridge_alpha, X.weight)
        self.iso_ = IsotonicMap().fit(rowwise_dot(F, self.coef_, self.intercept_), y, X.weight)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, keep=None, **params):
        """Every prefix from one Gram matrix and Cholesky factor (:func:`ridge_path`), their
        linear scores in one pass, then each prefix's isotonic map. ``keep`` (sizes; None:
        all): the factor is the whole path's as without it, but only the kept prefixes'
        scores and maps are made (each score column reads its own coefficients alone), the
        others' entries are None."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        proto = cls(**params)
        y = proto._start_fit(X, y)
        if np.ptp(y) == 0:
            return super().fit_path(X, y, unlabelled, sizes, keep=keep, **params)
        F, widths, orders = cls.path_features(X, sizes)
        solved = ridge_path(F, y, proto.ridge_alpha, X.weight, widths)
        if solved is None:
            return super().fit_path(X, y, unlabelled, sizes, keep=keep, **params)
        coefs, intercepts = solved
        coefs = cls.reorder(coefs, orders)
        made = [i for i, K in enumerate(sizes) if keep is None or K in keep]
        Z = cls.path_scores(F, [coefs[i] for i in made], [intercepts[i] for i in made], [orders[i] for i in made])
        y_rank = label_ranks(y)          # the prefixes' maps share the labels
        models = [None] * len(sizes)
        for col, i in enumerate(made):
            model = cls(**params)
            model._start_fit(X, y)
            model.constant_ = False
            model.coef_, model.intercept_ = coefs[i], intercepts[i]
            model.iso_ = IsotonicMap().fit(Z[:, col], y, X.weight, y_rank=y_rank)
            models[i] = model
        return models


class LogisticBase(LinearBase):
    """``n_iter_``: Newton iterations of a single fit (0 for constant labels; the path fits
    do not record it)."""

    def _fit(self, X, y, unlabelled):
        F = self.features(X.scores)
        if self._constant(y):
            # One label value: predict it exactly (a logit round trip would be off by ~1e-12).
            self.coef_, self.intercept_ = np.zeros(F.shape[1]), 0.0
            self.n_iter_ = 0
            return
        self.coef_, self.intercept_, self.n_iter_ = logistic_fit(F, y, self.C, X.weight,
                                                                 return_n_iter=True)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, **params):
        """Every prefix along the path (:func:`logistic_path`: each from the previous
        prefix's optimum, on a Hessian factor carried along the path): the same unique
        optimum as a fit from zero."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        proto = cls(**params)
        y = proto._start_fit(X, y)
        if np.ptp(y) == 0:
            return super().fit_path(X, y, unlabelled, sizes, **params)
        F, widths, orders = cls.path_features(X, sizes)
        coefs, intercepts = logistic_path(F, y, proto.C, X.weight, widths)
        coefs = cls.reorder(coefs, orders)
        models = []
        for coef, intercept in zip(coefs, intercepts):
            model = cls(**params)
            model._start_fit(X, y)
            model.constant_ = False
            model.coef_, model.intercept_ = coef, intercept
            models.append(model)
        return models
