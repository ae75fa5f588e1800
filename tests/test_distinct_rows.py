"""Distinct rows on continuous scores (issue 25): the factorisation of a column, the
mixed-radix row key that stops reading digits once every row differs, and the grouping of
keys by counting or by sorting, each against an independent numpy reference
(``np.unique`` of the values, or of the stacked rows, which orders them lexicographically)."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.selection import views
from fcps_core.selection.folds import distinct_key, distinct_rows, factorize_values

rng = np.random.default_rng(11)
N = 3_000
COLUMNS = {
    "continuous": rng.normal(size=N),
    "rounded": np.round(rng.normal(size=N), 1),
    "few values": rng.integers(0, 5, N).astype(float),
    "many repeats past the head": np.concatenate([np.zeros(4_096), rng.normal(size=N)]),
    "signed zeros": np.where(rng.uniform(size=N) < 0.5, -0.0, 0.0),
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_factorize_values_is_numpy_unique(name):
    x = COLUMNS[name]
    values, inverse = np.unique(x, return_inverse=True)
    idx, k = factorize_values(x)
    assert k == len(values) and np.array_equal(idx, inverse.reshape(-1))


def reference_rows(columns):
    """(representative row's values, count, each row's distinct row) from np.unique of the
    stacked rows."""
    stacked = np.column_stack(columns)
    uniq, inverse, counts = np.unique(stacked, axis=0, return_inverse=True, return_counts=True)
    return uniq, counts, inverse.reshape(-1)


@pytest.mark.parametrize("kinds", [
    ("continuous",) * 8 + ("rounded", "few values"),          # distinct from the first column on
    ("rounded", "few values", "rounded", "few values", "rounded", "continuous"),
    ("few values", "few values"),                                    # never all distinct
])
def test_distinct_rows_stops_reading_when_rows_differ(kinds):
    r = np.random.default_rng(len(kinds))
    columns = [COLUMNS[k][r.permutation(N)] if len(COLUMNS[k]) == N else COLUMNS[k][:N] for k in kinds]
    read = []

    def digits():
        for j, c in enumerate(columns):
            read.append(j)
            yield factorize_values(c)
    rep, counts, inverse = distinct_rows(*distinct_key(digits(), N))
    uniq, ref_counts, ref_inverse = reference_rows(columns)
    assert np.array_equal(np.column_stack(columns)[rep], uniq)       # lexicographic order
    assert np.array_equal(counts, ref_counts) and np.array_equal(inverse, ref_inverse)
    # the same as every digit read (a list)
    full = distinct_rows(*distinct_key([factorize_values(c) for c in columns], N))
    assert np.array_equal(full[1], counts) and np.array_equal(full[2], inverse)
    if kinds[0] == "continuous":                        # read up to the first densified key
        assert len(read) < len(columns)


@pytest.mark.parametrize("n, bound", [(500, 3_000), (2_000, 15_000), (2_000, 5_000_000), (50, 100)])
def test_group_rows_counting_and_sorting_agree(n, bound, monkeypatch):
    key = np.random.default_rng(bound).integers(0, bound, n)
    out = []
    for factor in (10 ** 9, 0):                          # counting, then sorting
        monkeypatch.setattr(views, "COUNTING_FACTOR", factor)
        monkeypatch.setattr(views, "COUNTING_FLOOR", 0)
        out.append(views.group_rows(key, bound))
    (rep_c, counts_c, inv_c), (rep_s, counts_s, inv_s) = out
    assert np.array_equal(key[rep_c], key[rep_s])        # representatives of the same keys, in key order
    assert np.array_equal(counts_c, counts_s) and np.array_equal(inv_c, inv_s)
    assert np.array_equal(key[rep_s], np.unique(key))
