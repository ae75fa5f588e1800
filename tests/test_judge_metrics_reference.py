"""The judges report's numpy metrics equal the scikit-learn and SciPy functions they replace,
to the bit (issue 25: a selection's processes no longer import scikit-learn or
``scipy.stats``). Each is compared with the library's own function on random inputs and on
the edge cases those functions handle: ties, predictions on bin edges and at 0 and 1, one
label class, merged quantile bins, NaN columns, Fortran-ordered matrices, errors."""

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn import calibration, config_context, metrics

from fcps_core.measures.judge_metrics import (average_ranks, binary_brier, brier, calibration_curve,
                                              column_mean_squared_errors, rank_correlation)


def _predictions(rng, n, kind):
    if kind == "continuous":
        return rng.random(n)
    if kind == "ties":          # few distinct values: bins merge, edges fall on data
        return rng.integers(0, 5, n) / 4.0
    if kind == "ends":          # mass at exactly 0, 1/2 and 1
        return rng.choice([0.0, 0.5, 1.0, 0.3], n, p=[0.4, 0.2, 0.3, 0.1])
    return np.round(rng.beta(0.3, 0.3, n), 3)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", ["continuous", "ties", "ends", "skewed"])
def test_brier_equals_scikit_learn(seed, kind):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 3000))
    p = _predictions(rng, n, kind)
    y01 = (rng.random(n) < p).astype(float)
    assert brier(y01, p) == metrics.brier_score_loss(y01.astype(int), p, pos_label=1, labels=[0, 1])
    ones = np.ones(n)            # one class only
    assert binary_brier(ones, p) == metrics.brier_score_loss(ones.astype(int), p, pos_label=1, labels=[0, 1])
    soft = np.round(rng.random(n), 2)
    assert brier(soft, p) == metrics.mean_squared_error(soft, p)


def test_brier_edges():
    assert brier(np.array([]), np.array([])) is None
    assert brier(np.array([0.0, 1.0]), np.array([0.2, np.nan])) is None
    assert brier(np.array([0.0, 1.0]), np.array([0.0, 1.0])) == 0.0
    # by hand: ((0.3)^2 + (0.4)^2) / 2
    assert brier(np.array([0.0, 1.0]), np.array([0.3, 0.6])) == pytest.approx(0.125, abs=1e-16)
    for y, p in (([0.0, 1.0], [0.5, 1.5]), ([0.0, 1.0], [-0.1, 0.5]), ([0.2, np.nan], [0.5, 0.5]),
                 ([0.0, 1.0], [0.5, np.inf])):
        with pytest.raises(ValueError):
            brier(np.array(y), np.array(p))


@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("seed", range(3))
def test_column_mean_squared_errors_equal_scikit_learn(order, seed):
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 5000)), int(rng.integers(1, 40))
    y = np.round(rng.random(n), 1)
    Y = np.repeat(y[:, None], K, axis=1)
    P = np.asarray(rng.random((n, K)), order=order)
    P[rng.random((n, K)) < 0.01] = np.nan          # a judge without a prediction: NaN, not an error
    with config_context(assume_finite=True, skip_parameter_validation=True):
        expected = metrics.mean_squared_error(Y, P, multioutput="raw_values")
    np.testing.assert_array_equal(column_mean_squared_errors(Y, P), expected)
    with pytest.raises(ValueError):
        column_mean_squared_errors(Y, P[:, :-1] if K > 1 else P[:-1])


@pytest.mark.parametrize("strategy", ["quantile", "uniform"])
@pytest.mark.parametrize("n_bins", [1, 3, 10, 25])
@pytest.mark.parametrize("kind", ["continuous", "ties", "ends", "skewed"])
def test_calibration_curve_equals_scikit_learn(strategy, n_bins, kind):
    rng = np.random.default_rng(n_bins)
    for n in (1, 2, 7, 500, 4000):
        p = _predictions(rng, n, kind)
        y = (rng.random(n) < p).astype(int)
        got = calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
        want = calibration.calibration_curve(y, p, n_bins=n_bins, strategy=strategy)
        for a, b in zip(got, want):
            np.testing.assert_array_equal(a, b)


def test_calibration_curve_by_hand_and_errors():
    # uniform 2 bins: [0, .5] gets 0.1, 0.5 (the edge joins the lower bin), (.5, 1] gets 0.9
    true, pred = calibration_curve(np.array([0, 1, 1]), np.array([0.1, 0.5, 0.9]), n_bins=2)
    np.testing.assert_array_equal(true, [0.5, 1.0])
    np.testing.assert_allclose(pred, [0.3, 0.9])
    with pytest.raises(ValueError):
        calibration_curve(np.array([0, 1]), np.array([0.5, 1.2]))
    with pytest.raises(ValueError):
        calibration_curve(np.array([0, 1, 2]), np.array([0.5, 0.2, 0.1]))
    with pytest.raises(ValueError):
        calibration_curve(np.array([0, 1]), np.array([0.5, 0.2]), strategy="kmeans")


@pytest.mark.parametrize("seed", range(4))
def test_average_ranks_equal_scipy(seed):
    rng = np.random.default_rng(seed)
    n, K = int(rng.integers(1, 3000)), int(rng.integers(1, 30))
    X = np.where(rng.random((n, K)) < 0.5, rng.integers(0, 4, (n, K)) / 3, rng.random((n, K)))
    X[:, 0] = 0.5                                       # one constant column
    if K > 2:
        X[rng.integers(0, n), 2] = np.nan               # a column with a NaN is all NaN
    want = rankdata(X, axis=0)
    got = average_ranks(X)
    np.testing.assert_array_equal(got, want)
    assert got.flags.f_contiguous == want.flags.f_contiguous and got.flags.c_contiguous == want.flags.c_contiguous
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(rank_correlation(X), _spearman_matrix(want))


def _spearman_matrix(ranks):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        R = np.atleast_2d(np.corrcoef(ranks, rowvar=False))
    np.fill_diagonal(R, 1.0)
    return R


def test_average_ranks_by_hand_and_empty():
    X = np.array([[3.0, 1.0], [1.0, 1.0], [3.0, 2.0], [2.0, 1.0]])
    np.testing.assert_array_equal(average_ranks(X), [[3.5, 2.0], [1.0, 2.0], [3.5, 4.0], [2.0, 2.0]])
    assert average_ranks(np.empty((0, 3))).shape == (0, 3)
    np.testing.assert_array_equal(average_ranks(np.array([[2], [1]])), [[2.0], [1.0]])   # integers
