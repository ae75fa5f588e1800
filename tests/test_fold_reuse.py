"""Work shared across the fits of one fold (issue 25): the pattern factorisations the
table fits and diagnostics share, and the column-major prefix scores. Each is held to an
independent reference: hand values, a Python loop, the fit without sharing, ``rowwise_dot``."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.families import REGISTRY, PrefixFeatures
from fcps_core.families.base import PatternCodes, lookup, pattern_codes, pattern_table, prefix_dots, rowwise_dot


def _levels(rng, n, K, alphabet=4):
    codes = rng.integers(0, alphabet, size=(n, K))
    levels, current = [], np.zeros(n, dtype=np.int64)
    for k in range(K):
        current = current * alphabet + codes[:, k]
        levels.append(current.copy())
    levels[-1][:3] = -1                   # a never-seen output on a few rows
    return levels


def test_pattern_codes_by_hand():
    """Sorted distinct ids and each row's position among them (a never-seen -1 sorts first)."""
    ids = np.array([7, -1, 3, 7, 10 ** 15, 3, 3])
    uniq, inv = pattern_codes(ids)
    assert uniq.tolist() == [-1, 3, 7, 10 ** 15]
    assert inv.tolist() == [2, 0, 1, 2, 3, 1, 1]


def test_the_store_answers_per_array_object():
    store = PatternCodes()
    a = np.array([5, 1, 5, 2])
    b = np.array([9, 9, 0, 4])            # same length, other values
    ua, ia = store.of(a)
    assert store.of(a)[0] is ua           # the same object: computed once
    ub, ib = store.of(b)
    assert np.array_equal(ub, [0, 4, 9]) and np.array_equal(ib, [2, 2, 0, 1])
    assert np.array_equal(ua, [1, 2, 5]) and np.array_equal(ia, [2, 0, 2, 1])
    with pytest.raises(ValueError):       # shared by every fit that asks: read-only
        ua[0] = 7


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



def test_lookup_through_codes_is_the_row_by_row_search():
    """``lookup`` handed the ids' codes (each distinct id searched once) gives every row the
    position and mask of the search of the rows themselves: ids before, between and after
    the table's, the never-seen -1, an empty table, one id."""
    rng = np.random.default_rng(4)
    uniq = np.unique(rng.integers(0, 400, size=120) * 7)
    for ids in (rng.integers(-1, 3000, size=2000), np.array([-1, -1]), np.array([5]),
                np.concatenate([uniq, uniq[::-1] + 1, [-1, 10 ** 12]])):
        for table in (uniq, uniq[:1], uniq[:0]):
            want = lookup(table, ids)
            got = lookup(table, ids, pattern_codes(ids))
            assert got[0].dtype == want[0].dtype and got[1].dtype == want[1].dtype
            assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])


def test_search_sorted_is_searchsorted():
    """Many keys against a long table are searched in sorted order and put back: the same
    positions as ``np.searchsorted`` (keys equal to entries, between, before and after them,
    repeated keys), on either side of the sizes where the sorted search starts."""
    from fcps_core.measures.diagnostics import SORTED_SEARCH_KEYS, SORTED_SEARCH_TABLE, search_sorted
    rng = np.random.default_rng(12)
    for m in (SORTED_SEARCH_TABLE - 1, SORTED_SEARCH_TABLE, 5_000):
        table = np.unique(rng.integers(0, 20 * m, size=2 * m))[:m]
        for n in (SORTED_SEARCH_KEYS - 1, SORTED_SEARCH_KEYS, 30_000):
            keys = rng.integers(-5, 20 * m + 5, size=n)
            keys[:50] = rng.choice(table, 50)
            got = search_sorted(table, keys)
            assert got.dtype == np.intp
            assert np.array_equal(got, np.searchsorted(table, keys))

@pytest.mark.parametrize("weighted", [False, True])
def test_table_predictions_through_a_views_codes_equal_the_rows_search(weighted):
    """backoff, residual and table predict held-out rows whose view keeps its codes (the
    lookup reads them) as they predict the same rows without a store, bit for bit, with
    patterns the fit never saw among them."""
    rng = np.random.default_rng(9)
    K = 4
    levels, held = _levels(rng, 400, K), _levels(rng, 300, K, alphabet=5)
    y = rng.random(400)
    w = rng.integers(1, 4, size=400).astype(float) if weighted else None
    fit = PrefixFeatures(patterns=levels, scores=rng.random((400, K)), weight=w)
    scores = rng.random((300, K))
    plain = PrefixFeatures(patterns=held, scores=scores)
    shared = PrefixFeatures(patterns=held, scores=scores, codes=PatternCodes())
    for family in ("backoff", "residual", "table"):
        cls = REGISTRY[family]
        for k in range(1, K + 1):
            for model in cls.fit_grid(cls.grid(), fit.first(k), y):
                want = model.predict(plain.first(k))
                assert np.array_equal(model.predict(shared.first(k)).view(np.uint64), want.view(np.uint64))
                assert np.array_equal(model.predict(shared.first(k)).view(np.uint64), want.view(np.uint64))

def test_pattern_table_with_shared_codes_against_a_python_loop():
    """Per-id sums and counts (weighted: sums of w * value and of w) from codes handed in,
    against a Python loop adding in row order: unweighted the same additions in the same
    order (equal bits), weighted within rounding."""
    rng = np.random.default_rng(2)
    ids = rng.integers(-1, 50, size=300) * 1_000_003
    values, weight = rng.normal(size=300), rng.random(300)
    for wt in (None, weight):
        uniq, sums, counts = pattern_table(ids, values, wt, pattern_codes(ids))
        assert uniq.tolist() == sorted(set(ids.tolist()))
        for u, s, c in zip(uniq, sums, counts):
            total, mass = 0.0, 0.0
            for r in np.flatnonzero(ids == u):
                total += values[r] * (1.0 if wt is None else wt[r])
                mass += 1.0 if wt is None else wt[r]
            if wt is None:
                assert s == total and c == mass
            else:
                assert s == pytest.approx(total, rel=1e-12, abs=1e-12) and c == pytest.approx(mass, rel=1e-12)


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
