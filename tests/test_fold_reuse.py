"""Work shared across the fits of one fold (issue 25): the pattern factorisations the
table fits and diagnostics share, and the column-major prefix scores. Each is held to an
independent reference: ``np.unique``, the fit without sharing, ``rowwise_dot``."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.families import REGISTRY, PrefixFeatures
from fcps_core.families.base import PatternCodes, pattern_codes, pattern_table, prefix_dots, rowwise_dot


def _levels(rng, n, K, alphabet=4):
    codes = rng.integers(0, alphabet, size=(n, K))
    levels, current = [], np.zeros(n, dtype=np.int64)
    for k in range(K):
        current = current * alphabet + codes[:, k]
        levels.append(current.copy())
    levels[-1][:3] = -1                   # a never-seen output on a few rows
    return levels


def test_pattern_codes_are_numpy_unique():
    ids = np.array([7, -1, 3, 7, 10 ** 15, 3, 3])
    uniq, inv = pattern_codes(ids)
    want_u, want_inv = np.unique(ids, return_inverse=True)
    assert np.array_equal(uniq, want_u) and np.array_equal(inv, want_inv)
    assert np.array_equal(uniq[inv], ids)


def test_the_store_answers_per_array_object():
    store = PatternCodes()
    a = np.array([5, 1, 5, 2])
    b = np.array([9, 9, 0, 4])            # same length, other values
    ua, ia = store.of(a)
    assert store.of(a)[0] is ua           # the same object: computed once
    ub, ib = store.of(b)
    assert np.array_equal(ub, [0, 4, 9]) and np.array_equal(ib, [2, 2, 0, 1])
    assert np.array_equal(ua, [1, 2, 5]) and np.array_equal(ia, [2, 0, 2, 1])


@pytest.mark.parametrize("weighted", [False, True])
def test_table_fits_with_shared_codes_equal_fits_without(weighted):
    """backoff, residual and table fitted on features whose levels go through one shared
    store equal the same fits without a store, bit for bit (sums, counts, predictions)."""
    rng = np.random.default_rng(5)
    n, K = 400, 4
    levels = _levels(rng, n, K)
    scores = rng.random((n, K))
    y = rng.random(n)
    w = rng.integers(1, 4, size=n).astype(float) if weighted else None
    plain = PrefixFeatures(patterns=levels, scores=scores, weight=w)
    shared = PrefixFeatures(patterns=levels, scores=scores, weight=w, codes=PatternCodes())
    for family in ("backoff", "residual", "table"):
        cls = REGISTRY[family]
        grid = cls.grid()
        for k in range(1, K + 1):      # the prefixes of one path share the store
            a = cls.fit_grid(grid, plain.first(k), y)
            b = cls.fit_grid(grid, shared.first(k), y)
            for ma, mb in zip(a, b):
                assert ma.get_state() == mb.get_state()
                assert np.array_equal(ma.predict(plain.first(k)), mb.predict(plain.first(k)))


def test_pattern_table_with_codes_equals_without():
    rng = np.random.default_rng(2)
    ids = rng.integers(-1, 50, size=300) * 1_000_003
    values, weight = rng.normal(size=300), rng.random(300)
    for wt in (None, weight):
        got = pattern_table(ids, values, wt, pattern_codes(ids))
        want = pattern_table(ids, values, wt)
        assert all(np.array_equal(g, h) for g, h in zip(got, want))
    # an independent reference: per-id sums by a Python loop (same order of addition)
    uniq, sums, counts = pattern_table(ids, values, None, pattern_codes(ids))
    for u, s, c in zip(uniq, sums, counts):
        rows = np.flatnonzero(ids == u)
        total = 0.0
        for r in rows:
            total += values[r]
        assert s == total and c == len(rows)


def test_prefix_dots_any_lengths_column_major_bit_for_bit():
    rng = np.random.default_rng(8)
    A = rng.normal(size=(301, 12))
    sizes = [2, 12, 5, 1]                 # not ordered by length
    coefs = [rng.normal(size=k) for k in sizes]
    starts = rng.normal(size=len(sizes))
    Z = prefix_dots(A, coefs, starts)
    assert Z.shape == (301, 4) and Z.flags["F_CONTIGUOUS"]
    for m, k in enumerate(sizes):
        assert np.array_equal(Z[:, m], rowwise_dot(A[:, :k], coefs[m], starts[m]))
    assert prefix_dots(A, [], []).shape == (301, 0)


def test_isotonic_fit_on_distinct_scores_equals_the_pooled_sums():
    """Distinct scores (every input its own run) skip the runs' sums: the map equals the
    fit with explicit unit weights (the weighted branch's sums) and scikit-learn's."""
    from sklearn.isotonic import IsotonicRegression

    from fcps_core.families.base import IsotonicMap
    rng = np.random.default_rng(12)
    x = rng.normal(size=500)
    y = np.clip(0.5 + 0.3 * x + rng.normal(scale=0.3, size=500), 0, 1)
    fast = IsotonicMap().fit(x, y)
    weighted = IsotonicMap().fit(x, y, np.ones(500))
    assert np.array_equal(fast.x_, weighted.x_) and np.array_equal(fast.y_, weighted.y_)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x, y)
    assert np.allclose(fast.predict(x), ref.predict(x), rtol=0, atol=1e-12)
    ties = np.round(x, 1)                 # runs of equal scores take the pooled branch
    assert np.array_equal(IsotonicMap().fit(ties, y).y_, IsotonicMap().fit(ties, y, np.ones(500)).y_)
