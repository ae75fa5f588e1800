"""``_linear.logistic_path`` (issue 15: the 200-judge selection's logistic fits): every
prefix reaches the optimum :func:`logistic_fit` reaches from zero, on long paths, with row
weights, with skipped prefix sizes and with duplicated (collinear) judges."""

import numpy as np
import pytest

from fcps_core.families._linear import PATH_GTOL, logistic_fit, logistic_objective, logistic_path


def _panel(n, K, seed, duplicate=False):
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.5
    acc = rng.uniform(0.55, 0.85, size=K)
    F = np.where(rng.random((n, K)) < acc, truth[:, None], ~truth[:, None]).astype(float)
    F[rng.random((n, K)) < 0.1] = 0.5                      # ties
    if duplicate:
        F[:, 5] = F[:, 2]                                    # a judge repeated: a singular X'X
    y = truth.astype(float)
    return F, y


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("sizes", [list(range(1, 41)), [1, 2, 7, 8, 20, 40], [40]])
def test_every_prefix_reaches_the_fit_from_zero(weighted, sizes):
    F, y = _panel(400, 40, seed=1, duplicate=True)
    w = np.random.default_rng(2).integers(1, 4, size=len(y)).astype(float) if weighted else None
    coefs, intercepts = logistic_path(F, y, 1.0, w, sizes)
    ww = np.ones(len(y)) if w is None else w
    for K, coef, b in zip(sizes, coefs, intercepts):
        # Newton from zero stops within its gradient tolerance (up to ~3e-7 here); the path
        # goes to PATH_GTOL, so it may be the closer of the two to the optimum
        alone, b_alone = logistic_fit(F[:, :K], y, 1.0, w)
        np.testing.assert_allclose(coef, alone, atol=2e-6)
        assert abs(b - b_alone) < 2e-6
        z = F[:, :K] @ coef + b
        p = 1.0 / (1.0 + np.exp(-z))
        grad = np.r_[F[:, :K].T @ (ww * (p - y)) + coef, ww @ (p - y)]
        assert np.abs(grad).max() <= PATH_GTOL * ww.sum() * 10
        assert logistic_objective(F[:, :K], y, ww, coef, b, 1.0) <= \
            logistic_objective(F[:, :K], y, ww, alone, b_alone, 1.0) + 1e-9


def test_strong_regularisation_and_separable_labels():
    F, y = _panel(200, 12, seed=3)
    y = (F[:, 0] > 0.5).astype(float)                      # separable by the first judge
    ones = np.ones(len(y))
    for C in (0.01, 1.0, 100.0):
        coefs, intercepts = logistic_path(F, y, C, None, list(range(1, 13)))
        for K, coef, b in zip(range(1, 13), coefs, intercepts):
            alone, b_alone = logistic_fit(F[:, :K], y, C)
            # a flat objective (weak penalty, separable labels): the fit from zero stops
            # further from the optimum, so compare objectives and the path's gradient
            np.testing.assert_allclose(coef, alone, atol=1e-4)
            assert logistic_objective(F[:, :K], y, ones, coef, b, C) <= \
                logistic_objective(F[:, :K], y, ones, alone, b_alone, C) + 1e-9
            p = 1.0 / (1.0 + np.exp(-(F[:, :K] @ coef + b)))
            grad = np.r_[F[:, :K].T @ (p - y) + coef / C, (p - y).sum()]
            assert np.abs(grad).max() <= PATH_GTOL * len(y) * 10


def test_nested_pairwise_features_are_pairwise_features_bit_for_bit():
    from fcps_core.families.base import nested_pairwise_features, pairwise_columns, pairwise_features
    rng = np.random.default_rng(5)
    S = np.round(rng.random((80, 9)) * 4) / 4                 # repeated values, as judge scores are
    G = nested_pairwise_features(S)
    for K in range(1, 10):
        cols = pairwise_columns(K)
        assert sorted(cols) == list(range(K + K * (K - 1) // 2))          # prefix K: G's first columns
        want = pairwise_features(S[:, :K])
        got = np.ascontiguousarray(G[:, cols])
        assert np.array_equal(want.view(np.int64), got.view(np.int64))


@pytest.mark.parametrize("family", ["ridge_pairwise_iso", "logistic_pairwise"])
def test_pairwise_path_fits_equal_each_prefix_fitted_alone(family):
    """The pairwise stackers along a path (features built once, judge by judge) against
    every prefix fitted on its own: the same coefficients to the fits' precision and, for a
    given model, the path's predictions equal to its own predict bit for bit."""
    from fcps_core.families import REGISTRY, PrefixFeatures
    F, y = _panel(500, 9, seed=6)
    X = PrefixFeatures(patterns=[None] * 9, scores=F)
    probe = PrefixFeatures(patterns=[None] * 9, scores=_panel(200, 9, seed=7)[0])
    cls = REGISTRY[family]
    sizes = [1, 2, 3, 5, 8, 9]
    models = cls.fit_path(X, y, None, sizes)
    batch = cls.predict_path(models, sizes, probe)
    for i, K in enumerate(sizes):
        alone = cls().fit(X.first(K), y)
        np.testing.assert_allclose(models[i].coef_, alone.coef_, atol=1e-6)
        np.testing.assert_array_equal(batch[:, i], models[i].predict(probe.first(K)))
        np.testing.assert_allclose(batch[:, i], alone.predict(probe.first(K)), atol=1e-7)
