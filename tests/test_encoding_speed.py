"""The continuous judges' encoder pieces against the numpy calls they replace, value for value
(issue 25: ``encode_panel`` runs once per fold, refit and correction refit)."""

import numpy as np
import pytest

from fcps_core.data.encoding import JudgeEncoder, bin_codes, quantiles_by_sorting
from fcps_core.data.panel import JudgeColumn

QS = [np.linspace(0, 1, k + 1)[1:-1] for k in (2, 3, 5, 7, 10)] + [np.array([0.0, 1.0, 0.999999, 1e-9])]


def _draws(rng):
    for n in (1, 2, 3, 4, 5, 7, 11, 100, 1001, 21000):
        yield rng.normal(size=n)
        yield np.round(rng.normal(size=n), 1)                 # many ties
        yield rng.integers(0, 3, size=n).astype(float)        # a handful of values
        yield np.full(n, 0.25)
        yield rng.normal(size=n) * 1e300
        yield np.where(rng.random(n) < 0.5, 0.0, -0.0) + rng.integers(0, 2, n)   # signed zeros


@pytest.mark.parametrize("seed", range(3))
def test_quantiles_by_sorting_are_numpys_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for values in _draws(rng):
        for q in QS:
            want = np.quantile(values, q)
            got = quantiles_by_sorting(values, q)
            assert got.dtype == want.dtype
            assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (values[:5], q)


def test_quantiles_by_sorting_leaves_its_input_alone():
    values = np.array([3.0, 1.0, 2.0])
    quantiles_by_sorting(values, np.array([0.5]))
    assert values.tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize("seed", range(3))
def test_bin_codes_are_searchsorted_right(seed):
    rng = np.random.default_rng(seed)
    for values in _draws(rng):
        for k in (0, 1, 2, 4, 9):
            edges = np.unique(np.quantile(values, np.linspace(0, 1, k + 2)[1:-1])) if k else np.array([])
            want = np.searchsorted(edges, values, side="right")
            assert np.array_equal(bin_codes(edges, values), want)
            # values exactly on an edge go right, as searchsorted's side="right"
            on = np.repeat(edges, 2)
            assert np.array_equal(bin_codes(edges, on), np.searchsorted(edges, on, side="right"))


def test_continuous_encoder_codes_and_missing():
    rng = np.random.default_rng(4)
    values = np.round(rng.normal(size=500), 2)
    values[[3, 17, 400]] = np.nan
    col = JudgeColumn(name="m", schema="continuous", codes=None, vocab=[], values=values)
    rows = np.arange(0, 500, 2)
    enc = JudgeEncoder.fit(col, rows, np.zeros(len(rows)))
    fit_vals = values[rows][~np.isnan(values[rows])]
    assert enc.bin_edges == np.unique(np.quantile(fit_vals, np.linspace(0, 1, 6)[1:-1])).tolist()
    codes = enc.codes_for(col)
    want = np.searchsorted(np.asarray(enc.bin_edges), values, side="right")
    want = np.where(np.isnan(values), enc.vocab.index("<missing>"), want)
    assert codes.dtype == np.int64 and np.array_equal(codes, want)
