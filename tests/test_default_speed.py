"""The default protocol's cheaper fits (issue 25, the continuous-panel target) against
independent references, on continuous, correlated scores like a metric panel's:

* the logistic path (column-major features, Hessians as a symmetric rank-n update, each
  prefix starting from the last one's scores, the loss's log(1 + e^z) on exp and log1p)
  reaches the optimum a plain full-Newton loop written here reaches: predicted
  probabilities within 1e-9 relative;
* the best-single-judge baseline, now fitted on the fold's rows without a separate pass
  for distinct (score, label) rows, equals scikit-learn's isotonic regression on the
  expanded rows;
* the isotonic sort with the stable kind on tie-heavy scores is ``np.lexsort``'s order.
"""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression

from fcps_core.families._linear import logistic_path
from fcps_core.families.base import _TIE_SAMPLE, _lexsort_xy, label_ranks
from fcps_core.selection.baselines import baseline_predictions


def _metric_scores(n: int, K: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Correlated continuous scores in (0, 1) (one latent quality read with noise) and a
    soft label with many exact zeros (an error score)."""
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=n)
    S = 1.0 / (1.0 + np.exp(-(quality[:, None] + rng.uniform(0.2, 1.5, K) * rng.normal(size=(n, K)))))
    S = np.round(S, 3)
    y = np.minimum(rng.poisson(0.8 * np.exp(-1.2 * quality)), 25) / 25.0
    return S, y


def _newton_reference(F: np.ndarray, y: np.ndarray, C: float) -> np.ndarray:
    """Soft-label L2 logistic regression (intercept unpenalised) by full Newton steps with
    halving from zero, to a gradient of 1e-13 per row: the probabilities at the optimum."""
    n, p = F.shape
    X = np.hstack([F, np.ones((n, 1))])
    ridge = np.r_[np.full(p, 1.0 / C), 0.0]
    beta = np.zeros(p + 1)

    def objective(b):
        z = X @ b
        return np.sum(np.logaddexp(0.0, z) - y * z) + b[:p] @ b[:p] / (2.0 * C)

    for _ in range(200):
        prob = 1.0 / (1.0 + np.exp(-(X @ beta)))
        grad = X.T @ (prob - y) + ridge * beta
        if np.max(np.abs(grad)) <= 1e-13 * n:
            break
        H = (X * (prob * (1.0 - prob))[:, None]).T @ X + np.diag(ridge)
        step = np.linalg.solve(H, grad)
        t, base = 1.0, objective(beta)
        while objective(beta - t * step) > base and t > 1e-8:
            t *= 0.5
        beta = beta - t * step
    return 1.0 / (1.0 + np.exp(-(X @ beta)))


@pytest.mark.parametrize("C", [1.0, 0.05])
def test_logistic_path_reaches_the_newton_optimum_on_correlated_metrics(C):
    S, y = _metric_scores(2500, 10, seed=4)
    sizes = list(range(1, 11))
    coefs, intercepts = logistic_path(S, y, C, None, sizes)
    for K, coef, b in zip(sizes, coefs, intercepts):
        got = 1.0 / (1.0 + np.exp(-(S[:, :K] @ coef + b)))
        want = _newton_reference(S[:, :K], y, C)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=0)


def test_single_judge_baseline_equals_sklearn_isotonic_on_expanded_rows():
    S, y = _metric_scores(1200, 4, seed=7)
    S[::3, 1] = S[1::3, 1][: len(S[::3, 1])]          # one judge's scores repeat
    S[::7], y[::7] = S[1::7][: len(S[::7])], y[1::7][: len(S[::7])]   # whole rows repeat (counts)
    y[::5] = 0.0
    rng = np.random.default_rng(8)
    fit_rows = np.sort(rng.choice(len(y), size=900, replace=False))
    pred_rows = np.setdiff1d(np.arange(len(y)), fit_rows)
    out = baseline_predictions(S, y, fit_rows, pred_rows, np.zeros(0, dtype=np.int64))
    import warnings
    for j in range(S.shape[1]):
        # the direction a practitioner's fit takes (these metrics fall as the label rises)
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing="auto", out_of_bounds="clip")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            iso.fit(S[fit_rows, j], y[fit_rows])
        np.testing.assert_allclose(out["single_judges"][:, j], iso.predict(S[pred_rows, j]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("levels", [3, 40, 400])
@pytest.mark.parametrize("with_ranks", [False, True])
def test_tie_heavy_sort_is_lexsort_order(levels, with_ranks):
    rng = np.random.default_rng(levels)
    n = 8 * _TIE_SAMPLE
    x = rng.integers(0, levels, size=n) / levels - 0.3          # most values repeat
    y = rng.integers(0, 30, size=n) / 30.0
    order = _lexsort_xy(x, y, label_ranks(y) if with_ranks else None)
    np.testing.assert_array_equal(order, np.lexsort((y, x)))


@pytest.mark.parametrize("family", ["backoff", "residual"])
def test_grid_predictions_equal_each_models_own_bit_for_bit(family):
    """``predict_grid`` (the grid's shared tables and base models looked up once) gives
    every model's own ``predict``, bit for bit, on rows with unseen patterns too."""
    from fcps_core.families import REGISTRY, PrefixFeatures
    rng = np.random.default_rng(11)

    def features(n):
        codes = rng.integers(0, 3, size=(n, 4))
        patterns, cur = [], np.zeros(n, dtype=np.int64)
        for k in range(4):
            cur = cur * 3 + codes[:, k]
            patterns.append(cur.copy())
        return PrefixFeatures(patterns=patterns, scores=codes / 2.0)

    X, V = features(400), features(150)
    V.patterns[-1][:5] = -1                                   # outputs the fit never saw
    y = rng.random(400)
    cls = REGISTRY[family]
    models = cls.fit_grid(cls.grid(), X, y)
    for got, model in zip(cls.predict_grid(models, V), models):
        assert np.array_equal(got.view(np.int64), model.predict(V).view(np.int64))
