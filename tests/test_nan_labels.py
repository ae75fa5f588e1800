"""A NaN label marks an unlabelled row in every family (issue 29, "NaN labels").

Supervised families fit on the labelled rows only (the same model as fitting those rows
alone) and refuse with one ValueError when no row is labelled; ``ds_jury`` (unsupervised
EM, labels only for orientation and calibration) adds NaN-labelled rows to its EM's
unlabelled traffic and fits with no label at all (``y=None``) as the plain Dawid-Skene
jury. No family turns a NaN label into a NaN prediction.
"""

import numpy as np
import pytest

from fcps_core.data.encoding import prefix_patterns
from fcps_core.families import FAMILIES, REGISTRY, PrefixFeatures
from fcps_core.families.ds_em import distinct_votes, em_fit

SUPERVISED = tuple(f for f in FAMILIES if REGISTRY[f].needs_labels)


def _data(n=120, K=4, seed=0, weighted=False):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 2, size=n)
    acc = np.linspace(0.9, 0.6, K)
    codes = np.where(rng.random((n, K)) < acc, truth[:, None], 1 - truth[:, None])
    scores = codes.astype(float)
    scores[rng.random((n, K)) < 0.1] = 0.5              # some abstentions
    codes = np.rint(2 * scores).astype(np.int64)         # 0, 1 (abstain), 2
    weight = rng.integers(1, 4, size=n).astype(float) if weighted else None
    X = PrefixFeatures(patterns=prefix_patterns(codes, np.full(K, 3)), scores=scores, weight=weight)
    y = truth.astype(float)
    y[rng.random(n) < 0.3] = 0.5 * rng.random()          # a few soft labels
    nan_y = y.copy()
    nan_y[rng.random(n) < 0.35] = np.nan
    return X, y, nan_y


def _split(X, nan_y):
    lab = np.flatnonzero(~np.isnan(nan_y))
    unl = np.flatnonzero(np.isnan(nan_y))
    return X.take(lab), nan_y[lab], X.take(unl)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_nan_labels_are_unlabelled_rows(family, weighted):
    cls = REGISTRY[family]
    X, _, nan_y = _data(weighted=weighted)
    assert np.isnan(nan_y).sum() > 20
    got = cls().fit(X, nan_y).predict(X)
    assert np.all(np.isfinite(got)) and np.all((got >= 0) & (got <= 1))
    X_lab, y_lab, X_unl = _split(X, nan_y)
    # supervised: the labelled rows alone; ds_jury: the NaN rows join the EM as traffic
    expected = cls().fit(X_lab, y_lab, X_unl if cls.uses_unlabelled else None).predict(X)
    np.testing.assert_array_equal(got, expected)


def test_ds_jury_em_uses_the_nan_labelled_rows():
    X, _, nan_y = _data(n=200, seed=3)
    X_lab, y_lab, _ = _split(X, nan_y)
    cls = REGISTRY["ds_jury"]
    with_rows = cls().fit(X, nan_y)
    without = cls().fit(X_lab, y_lab)
    assert not np.allclose(with_rows.w1_, without.w1_)


@pytest.mark.parametrize("family", FAMILIES)
def test_path_and_grid_fits_read_nan_labels_the_same_way(family):
    cls = REGISTRY[family]
    X, _, nan_y = _data(seed=1)
    X_lab, y_lab, X_unl = _split(X, nan_y)
    U = X_unl if cls.uses_unlabelled else None
    sizes = [1, 2, 4]
    got = cls.predict_path(cls.fit_path(X, nan_y, None, sizes), sizes, X)
    expected = cls.predict_path(cls.fit_path(X_lab, y_lab, U, sizes), sizes, X)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    settings = cls.grid()
    got = [m.predict(X) for m in cls.fit_grid(settings, X, nan_y)]
    expected = [m.predict(X) for m in cls.fit_grid(settings, X_lab, y_lab, U)]
    np.testing.assert_array_equal(np.array(got), np.array(expected))


@pytest.mark.parametrize("family", SUPERVISED)
def test_supervised_families_refuse_when_no_row_is_labelled(family):
    X, _, _ = _data(n=30)
    for y in (np.full(30, np.nan), None):
        with pytest.raises(ValueError, match="no labelled row"):
            REGISTRY[family]().fit(X, y)
    with pytest.raises(ValueError, match="no labelled row"):
        REGISTRY[family].fit_path(X, np.full(30, np.nan), None, [1, 2])


def test_only_ds_jury_fits_without_labels():
    assert [f for f in FAMILIES if not REGISTRY[f].needs_labels] == ["ds_jury"]


@pytest.mark.parametrize("weighted", [False, True])
def test_ds_jury_without_labels_is_the_em_posterior(weighted):
    X, _, _ = _data(n=150, seed=2, weighted=weighted)
    cls = REGISTRY["ds_jury"]
    model = cls().fit(X, None)
    votes, count = distinct_votes(X.scores, X.w)
    prior, w1, w0, post, n_iter = em_fit(votes, count, return_n_iter=True)
    assert model.iso_ is None and model.orientation_ == 1.0 and model.n_iter_ == n_iter >= 1
    np.testing.assert_array_equal(model.w1_, w1)
    assert model.ybar_ == pytest.approx(count @ post / count.sum())
    p = model.predict(X)
    lo = prior + np.where(X.scores > 0.5, w1, 0.0).sum(axis=1) + np.where(X.scores < 0.5, w0, 0.0).sum(axis=1)
    np.testing.assert_allclose(p, 1 / (1 + np.exp(-lo)), rtol=1e-12)
    truth_like = (X.scores[:, 0] > 0.5)          # the best judge: posterior follows it mostly
    assert np.mean((p > 0.5) == truth_like) > 0.8
    # all-NaN labels are the same fit; the state round-trips; the path scorer agrees
    np.testing.assert_array_equal(cls().fit(X, np.full(X.n_rows, np.nan)).predict(X), p)
    np.testing.assert_array_equal(cls.from_state(model.get_state()).predict(X), p)
    models = cls.fit_path(X, None, None, [2, 4])
    np.testing.assert_allclose(cls.predict_path(models, [2, 4], X)[:, 1], p, rtol=0, atol=1e-12)


def test_label_and_row_counts_must_match():
    X, y, _ = _data(n=30)
    with pytest.raises(ValueError, match="30 feature rows for 29 labels"):
        REGISTRY["table"]().fit(X, y[:-1])
