"""Every aggregator family is a scikit-learn estimator.

The checks of ``sklearn.utils.estimator_checks`` that do not need data run on every family.
The data-driven checks (``check_estimator`` as a whole: fit on random 2-D arrays, pickling
fitted models, sample-order invariance on arrays, ...) cannot apply: a family's ``X`` is a
:class:`PrefixFeatures` (joint-pattern ids per prefix level plus scores), not an array, and
table families need pattern ids an array cannot carry. The behaviour those checks guard is
tested directly here and in ``test_families.py`` / ``test_vectorised.py`` (weights equal
repeated rows, row order, JSON round trips, agreement with scikit-learn's own estimators),
and ``fcps_core.sklearn`` (array in, the family inside) runs the whole suite in
``test_sklearn_api.py``.
"""

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils import estimator_checks as ec

from fcps_core.families import FAMILIES, REGISTRY, PrefixFeatures
from fcps_core.data.encoding import prefix_patterns

NO_DATA_CHECKS = ("check_parameters_default_constructible", "check_no_attributes_set_in_init",
                  "check_get_params_invariance", "check_set_params", "check_estimator_repr",
                  "check_estimator_cloneable", "check_do_not_raise_errors_in_init_or_set_params")


def _features(n=60, K=3, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 2, size=(n, K))
    y = (codes.sum(axis=1) >= 2).astype(float)
    X = PrefixFeatures(patterns=prefix_patterns(codes, np.full(K, 2)), scores=codes.astype(float))
    return X, y


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("check", NO_DATA_CHECKS)
def test_sklearn_checks_that_need_no_data(family, check):
    getattr(ec, check)(family, REGISTRY[family]())


@pytest.mark.parametrize("family", FAMILIES)
def test_clone_params_and_fitted_state(family):
    cls = REGISTRY[family]
    est = cls()
    params = est.get_params()
    assert params == cls().get_params()
    copy = clone(est)
    assert copy is not est and copy.get_params() == params
    with pytest.raises(NotFittedError):
        est.predict(_features()[0])
    X, y = _features()
    fitted = est.fit(X, y, X if cls.uses_unlabelled else None)
    p = fitted.predict(X)
    assert p.shape == (X.n_rows,) and np.all((0 <= p) & (p <= 1))
    # clone gives an unfitted estimator with the same parameters
    with pytest.raises(NotFittedError):
        clone(fitted).predict(X)
    state = fitted.get_state()
    again = cls.from_state(state)
    np.testing.assert_array_equal(again.predict(X), p)


@pytest.mark.parametrize("family, bad", [("table", {"alpha": -1}), ("table", {"fallback": "nope"}),
                                         ("backoff", {"shrinkage": 0}), ("residual", {"base": "nope"}),
                                         ("ridge_iso", {"ridge_alpha": -1}), ("logistic", {"C": 0}),
                                         ("ds_jury", {"max_iter": 0}), ("ds_jury", {"tol": -1.0})])
def test_parameters_are_validated_in_fit_not_in_init(family, bad):
    est = REGISTRY[family](**bad)          # storing a parameter never raises
    assert est.get_params()[next(iter(bad))] == next(iter(bad.values()))
    X, y = _features()
    with pytest.raises(ValueError):
        est.fit(X, y, X)


def test_ds_jury_exposes_its_em_limits():
    X, y = _features(n=200, K=4, seed=2)
    one = REGISTRY["ds_jury"](max_iter=1).fit(X, y, X)
    many = REGISTRY["ds_jury"]().fit(X, y, X)
    assert one.get_params()["max_iter"] == 1 and many.get_params()["tol"] == pytest.approx(1e-7)
    assert not np.allclose(one.w1_, many.w1_)       # one EM step stops early


# -- the golden toy panel (tests/conftest.py): the array-input estimators against hand values --
def test_the_array_estimators_on_the_toy_panel_by_hand(toy_panel):
    """``fcps_core.sklearn`` builds the features from a plain (items, judges) array itself;
    on the toy panel's 0/1 verdicts each distinct verdict is a cell and the verdict its score,
    so the fits are the hand-computed ones."""
    from fcps_core.sklearn import BackoffEstimator, TableEstimator
    X, y = toy_panel.verdicts.astype(float), toy_panel.labels
    # the joint table of the three judges, alpha 1/2 towards ybar = 1/2: a cell seen twice with
    # 2, 1 or 0 positives gives 2.25/2.5, 1.25/2.5, 0.25/2.5; seen once with 1 or 0, 1.25/1.5, 0.25/1.5
    table = {(1, 1, 1): 0.9, (1, 1, 0): 1.25 / 1.5, (1, 0, 1): 0.5, (1, 0, 0): 0.25 / 1.5,
             (0, 1, 1): 0.9, (0, 1, 0): 0.25 / 1.5, (0, 0, 1): 0.25 / 1.5, (0, 0, 0): 0.1}
    rows = [tuple(v) for v in toy_panel.verdicts.tolist()]
    assert TableEstimator(alpha=0.5).fit(X, y).predict(X).tolist() == pytest.approx([table[r] for r in rows])
    # back-off with shrinkage 2, level by level: judge 1 -> 5/8, 3/8; (judge 1, judge 2) -> 0.85,
    # 0.45, 0.55, 0.15 (tests/test_families.py); all three: (positives + 2 x parent) / (rows + 2)
    parent = {(1, 1): 0.85, (1, 0): 0.45, (0, 1): 0.55, (0, 0): 0.15}
    count = {(1, 1, 1): (2, 2), (1, 1, 0): (1, 1), (1, 0, 1): (1, 2), (1, 0, 0): (0, 1),
             (0, 1, 1): (2, 2), (0, 1, 0): (0, 1), (0, 0, 1): (0, 1), (0, 0, 0): (0, 2)}
    backoff = {z: (s + 2 * parent[z[:2]]) / (n + 2) for z, (s, n) in count.items()}
    assert backoff[(1, 1, 1)] == pytest.approx(0.925) and backoff[(0, 0, 0)] == pytest.approx(0.075)
    got = BackoffEstimator(shrinkage=2.0).fit(X, y).predict(X)
    assert got.tolist() == pytest.approx([backoff[r] for r in rows])
