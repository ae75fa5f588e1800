"""The numeric fast path of judge columns (issue 25) and the unweighted isotonic fit.

``build_judge_column`` reads a column whose every output is a finite number in one float
pass (:func:`fcps_core.data.panel.finite_numbers`); the reference here is the token-by-token
reading the panel module keeps for every other column (``detect_schema`` on the distinct
tokens, then ``_continuous_column`` / ``_discrete_column``), so both must give the same
schema, values, codes, vocabulary and scalar map, and columns that are not all finite
numbers must still take the token path with its errors.
"""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.errors import PanelError
from fcps_core.families.base import IsotonicMap, label_ranks
from fcps_core.data.panel import (_continuous_column, _discrete_column, build_judge_column, detect_schema,
                             finite_numbers)


def token_path(tokens, schema=None):
    """The token-by-token reading (the panel module's path for non-numeric columns)."""
    raw = np.asarray(tokens, dtype=object)
    schema = schema or detect_schema(np.unique(raw.astype(str)))
    if schema == "continuous":
        return _continuous_column("J", raw, 2)
    return _discrete_column("J", schema, raw, 2, None)


def same_column(a, b) -> None:
    assert a.schema == b.schema
    assert a.vocab == b.vocab and a.scalar_map == b.scalar_map and a.value_range == b.value_range
    for x, y in ((a.codes, b.codes), (a.values, b.values)):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
            if x.dtype.kind == "f":
                assert np.array_equal(np.signbit(x), np.signbit(y))


rng = np.random.default_rng(3)
CASES = {
    "metric scores": [f"{v:.4f}" for v in rng.normal(size=300)],
    "percent scores": [f"{v:.2f}" for v in 100 * rng.uniform(size=300)],
    "spaces, exponents, underscores, signs": [" 0.5", "1e-3 ", "+2.25", "-0.0", "1_000.5", "\t3.75\n", "7"],
    "integers beyond the rubric limit": [str(v) for v in range(30)],
    "rubric": [str(v) for v in rng.integers(1, 6, 200)],
    "rubric written with decimals": ["1.0", "2", "3.0", "3", "5"],
    "binary digits": [str(v) for v in rng.integers(0, 2, 100)],
    "binary with signed zero and decimals": ["0", "-0", "1.0", "0.0", "1"],
    "one value": ["0.25"] * 10,
}


@pytest.mark.parametrize("name", list(CASES))
def test_numeric_column_equals_token_path(name):
    tokens = CASES[name]
    assert finite_numbers(tokens) is not None
    same_column(build_judge_column("J", tokens), token_path(tokens))


@pytest.mark.parametrize("name", ["metric scores", "integers beyond the rubric limit", "binary digits"])
def test_declared_continuous_equals_token_path(name):
    tokens = CASES[name]
    same_column(build_judge_column("J", tokens, schema="continuous"), token_path(tokens, "continuous"))


def test_finite_numbers_values_are_float_of_each_token():
    tokens = CASES["spaces, exponents, underscores, signs"]
    got = finite_numbers(tokens)
    assert got.tolist() == [0.5, 1e-3, 2.25, -0.0, 1000.5, 3.75, 7.0]
    assert np.signbit(got[3])


@pytest.mark.parametrize("tokens", [
    ["0.5", ""], ["0.5", "NA"], ["0.5", "nan"], ["0.5", "inf"], ["0.5", "-Infinity"], ["0.5", "A"],
    ["0.5", "0,5"], [0.5, 0.25], ["0.5", None], [],
])
def test_other_columns_are_not_numeric(tokens):
    assert finite_numbers(tokens) is None


@pytest.mark.parametrize("tokens", [
    ["0.5", "", "0.75", "NA", "1.5"],            # missing outputs
    ["A", "B", "tie", "A"],                        # pairwise
    ["correct", "incorrect", "1", "0"],            # binary words
    ["good", "bad", "0.5"],                        # categorical
])
def test_token_path_columns_unchanged(tokens):
    same_column(build_judge_column("J", tokens), token_path(tokens))


def test_infinite_output_keeps_its_reading():
    tokens = ["0.5", "0.25", "inf", "0.75", "1.5"]
    same_column(build_judge_column("J", tokens), token_path(tokens))      # categorical, as before
    with pytest.raises(PanelError) as exc:
        build_judge_column("J", tokens, schema="continuous", first_line=2)
    assert exc.value.line == 4 and "not a finite number" in str(exc.value)


def test_empty_column_still_refused():
    with pytest.raises(PanelError, match="empty in every row"):
        build_judge_column("J", ["", "NA", "nan"])


@pytest.mark.parametrize("seed", range(6))
def test_isotonic_without_weights_equals_unit_weights(seed):
    """fit(w=None) sums runs by their lengths; it must equal fit(w=ones) bit for bit."""
    r = np.random.default_rng(seed)
    n = 2_000
    kind = seed % 3
    x = (r.normal(size=n) if kind == 0 else np.round(r.normal(size=n), 1) if kind == 1
         else 1.0 + r.integers(0, 5, n) * 1e-17)       # ties, and sub-resolution chains
    y = np.round(r.uniform(size=n), 2)
    for y_rank in (None, label_ranks(y)):
        a = IsotonicMap().fit(x, y, None, y_rank=y_rank)
        b = IsotonicMap().fit(x, y, np.ones(n), y_rank=y_rank)
        assert np.array_equal(a.x_, b.x_) and np.array_equal(a.y_, b.y_)
        probe = np.linspace(x.min() - 1, x.max() + 1, 101)
        assert np.array_equal(a.predict(probe), b.predict(probe))


@pytest.mark.parametrize("n, n_x, n_y", [
    (500, 20, 5),            # (x rank, y rank) in 16 bits: one radix pass
    (30_000, 3_000, 100),    # each rank in 16 bits, the pair not: two radix passes
    (30_000, 60, 30_000),    # many labels
    (80_000, 8_000, 300_000),  # y ranks beyond 16 bits: the packed 64-bit key
    (5_000, 4_900, 50),      # few ties: lexsort on the tied runs
    (5_000, 5_000, 50),      # no ties
    (21_000, 20_000, 50),    # few ties, on the size of a fold's fits
    (21_000, 21_000, 3),     # no ties
])
def test_isotonic_sort_is_lexsort(n, n_x, n_y):
    """The isotonic fit's (x, y, position) order equals ``np.lexsort((y, x))`` in every
    branch of its sort (the order decides the pooled sums, so it must be exactly that)."""
    from fcps_core.families.base import _lexsort_xy
    r = np.random.default_rng(n + n_x + n_y)
    values = np.sort(r.normal(size=n_x))
    values[r.integers(0, n_x)] = -0.0 if n_x > 1 else values[0]
    x = values[r.integers(0, n_x, n)] if n_x < n else r.permutation(values)
    labels = r.uniform(size=n_y)
    y = labels[r.integers(0, n_y, n)]
    expected = np.lexsort((y, x))
    assert np.array_equal(_lexsort_xy(x, y, label_ranks(y)), expected)
    assert np.array_equal(_lexsort_xy(x, y, None), expected)
    x_nan = x.copy()
    x_nan[::97] = np.nan                        # NaN sorts last: left to lexsort
    assert np.array_equal(_lexsort_xy(x_nan, y, None), np.lexsort((y, x_nan)))


@pytest.mark.parametrize("n", [2, 3, 1_024, 1_025, 21_000])
def test_packed_sort_is_lexsort_in_each_case(n):
    """The one-sort order of (x key, position) (``_packed_order``), with the positions those
    of the rows in label order where the head shows ties, is ``np.lexsort((y, x))``: on
    continuous, tie-heavy, signed-zero and infinite values, at sizes on either side of a
    power of two (the positions' bit width). Values that differ only in the bits the
    positions take are not told apart by the sort: it declines (None) and the fit's order
    comes from the other branches, still lexsort's."""
    from fcps_core.families import base
    r = np.random.default_rng(n)
    y = r.integers(0, 40, n) / 40.0
    cases = {
        "continuous": r.normal(size=n),
        "tie-heavy": r.integers(-20, 20, n) / 8.0,
        "signed zeros": r.choice([-0.0, 0.0, -2.5, 1.0, np.inf, -np.inf], n),
        "one value": np.full(n, -3.25),
    }
    for name, x in cases.items():
        expected = np.lexsort((y, x))
        for ranks in (label_ranks(y), None):
            assert np.array_equal(base._lexsort_xy(x, y, ranks), expected), name
        packed = base._packed_order(x, None)
        assert packed is not None, name                     # these the packed sort orders
        assert np.array_equal(x[packed[0]], np.sort(x)), name
        assert np.array_equal(np.sort(packed[0]), np.arange(n)), name
    if n > 2:
        # values 1 + k ulp apart: within the positions' bits the sort cannot order them
        near = 1.0 + r.integers(0, 3, n) * np.spacing(1.0)
        near[:2] = 1.0 + 2 * np.spacing(1.0), 1.0
        assert base._packed_order(near, None) is None
        for ranks in (label_ranks(y), None):
            assert np.array_equal(base._lexsort_xy(near, y, ranks), np.lexsort((y, near)))
    with_nan = cases["tie-heavy"].copy()
    with_nan[::3] = np.nan
    assert base._packed_order(with_nan, None) is None
    assert np.array_equal(base._lexsort_xy(with_nan, y, label_ranks(y)), np.lexsort((y, with_nan)))


@pytest.mark.parametrize("n", [9_000, 40_000])
def test_radix_argsort_is_argsort_order(n):
    """The isotonic fit's radix sort of float bits (``_radix_argsort``) orders values as
    ``np.argsort`` does: negative and positive values, infinities, subnormals, values one
    ulp apart; without ties its permutation is the stable argsort's, with -0.0 and +0.0
    (equal values) their order among themselves is left to the tie handling."""
    from fcps_core.families.base import _radix_argsort
    r = np.random.default_rng(n)
    x = r.normal(scale=10.0, size=n)
    x[:6] = [np.inf, -np.inf, 5e-324, -5e-324, 1.0, np.nextafter(1.0, 2.0)]
    x = r.permutation(x)
    assert np.array_equal(_radix_argsort(x), np.argsort(x, kind="stable"))
    fracs = r.integers(0, 7, size=n) / 7.0       # equal low digits: skipped passes
    assert np.array_equal(_radix_argsort(fracs), np.argsort(fracs, kind="stable"))
    zeros = np.r_[x[: n - 4], [0.0, -0.0, 0.0, -0.0]]
    assert np.array_equal(zeros[_radix_argsort(zeros)], np.sort(zeros))


def _four_pass_order(x: np.ndarray) -> np.ndarray:
    """The previous radix sort, written out as the reference: ``np.lexsort`` of the four
    16-bit digits of the order-preserving key (most significant last), ties by position."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    key = bits ^ ((np.uint64(0) - (bits >> np.uint64(63))) | np.uint64(1 << 63))
    digits = [((key >> np.uint64(s)) & np.uint64(0xFFFF)).astype(np.int64) for s in (0, 16, 32, 48)]
    return np.lexsort([np.arange(len(x))] + digits)


@pytest.mark.parametrize("n", [3, 1_025, 16_800])
def test_packed_order_keeping_signed_zeros_is_the_radix_order(n):
    """``columns_rise_with`` orders each column by one sort of packed keys, keeping the bits'
    order of -0.0 and +0.0 (``zero_tie=False``): that permutation is the radix sort's (by
    the whole key, ties by position; the tied blocks' weight sums follow it) on continuous,
    rounded and signed-zero columns, and the directions are the radix sort's."""
    from fcps_core.families import base
    r = np.random.default_rng(n)
    columns = np.column_stack([r.normal(size=n), np.round(r.normal(size=n), 1),
                               r.choice([-0.0, 0.0, 0.5, -1.0], n), -np.round(r.uniform(size=n), 2)])
    for j in range(columns.shape[1]):
        x = columns[:, j].copy()
        packed = base._packed_order(x, None, zero_tie=False)
        assert packed is not None
        assert np.array_equal(packed[0], _four_pass_order(x))
        assert np.array_equal(packed[0], base._radix_argsort(x))
    y = r.uniform(size=n) + columns[:, 1]
    w = r.uniform(0.5, 3.0, size=n)
    centred_ranks = base._average_ranks(y, np.argsort(y, kind="stable"), w)
    centred = w * (centred_ranks - np.sum(w * centred_ranks) / np.sum(w))
    want = [not float(base._average_ranks(columns[:, j].copy(), base._radix_argsort(columns[:, j].copy()), w)
                      @ centred) < 0 for j in range(columns.shape[1])]
    assert base.columns_rise_with(columns, y, w).tolist() == want


@pytest.mark.parametrize("n", [8_192, 30_000])
def test_radix_argsort_high_half_first_is_the_four_pass_order(n):
    """``_radix_argsort`` orders by the keys' high 32 bits and then re-sorts the rows whose
    high halves are equal: the permutation must be the full key's, ties by position, when
    values share a high half but differ in the low bits (a fifth of the rows, within 2^-40
    relative), when they tie exactly, on both signs and on the tie-heavy and narrow inputs
    that take the four passes."""
    from fcps_core.families.base import _radix_argsort, _radix_argsort_all
    r = np.random.default_rng(n)
    x = r.random(n)
    near = r.choice(n, n // 5, replace=False)
    x[near] = x[r.choice(n, n // 5)] * (1.0 + r.integers(-40, 40, n // 5) * 2.0 ** -45)
    x[r.choice(n, n // 20)] = x[r.choice(n, n // 20)]                   # exact ties
    bits = x.view(np.uint64)
    cases = {"near": x, "negative": -x, "mixed": x - 0.5,
             "specials": np.r_[x[: n - 6], [0.0, -0.0, np.inf, -np.inf, 5e-324, -5e-324]],
             "tie-heavy": r.integers(0, 30, n) / 7.0, "narrow": 0.5 + 1e-12 * r.random(n)}
    # tied values with a few near ones sharing their high halves (a run of equal high halves
    # holding two keys among runs of exact ties), and ties in runs of 1 to 3
    some_near = r.integers(0, 30, n) / 7.0
    moved = r.choice(n, n // 100, replace=False)
    some_near[moved] *= 1.0 + r.integers(1, 40, len(moved)) * 2.0 ** -45
    cases["tie-heavy, some near"] = some_near
    cases["short ties"] = np.repeat(r.random(n // 2), r.integers(1, 4, n // 2))[:n]
    assert len(np.unique(bits >> np.uint64(32))) < n - n // 10             # high halves do collide
    for name, v in cases.items():
        expected = _four_pass_order(v)
        assert np.array_equal(_radix_argsort(v), expected), name
        key = np.ascontiguousarray(v).view(np.uint64)
        key = key ^ ((np.uint64(0) - (key >> np.uint64(63))) | np.uint64(1 << 63))
        assert np.array_equal(_radix_argsort_all(key), expected), name


def test_nested_pairwise_features_kept_on_the_view_are_a_new_calls():
    """``PrefixFeatures.nested_pairwise`` keeps the path's products for the other pairwise
    stacker: every request (the same width, fewer judges after more, more after fewer)
    gives the bytes, shape and column-major layout of a new
    :func:`nested_pairwise_features` call, and a view with other scores builds its own."""
    from fcps_core.families.base import PrefixFeatures, nested_pairwise_features
    r = np.random.default_rng(3)
    scores = r.random((500, 9))
    X = PrefixFeatures(patterns=[None] * 9, scores=scores)
    for K in (9, 9, 4, 1, 7, 9):
        got, ref = X.nested_pairwise(K), nested_pairwise_features(scores[:, :K])
        assert got.shape == ref.shape and got.strides == ref.strides and got.flags.f_contiguous
        assert got.tobytes(order="A") == ref.tobytes(order="A")
    assert np.shares_memory(X.nested_pairwise(9), X.nested_pairwise(5))        # built once
    X2 = PrefixFeatures(patterns=[None] * 9, scores=r.random((500, 9)))
    assert not np.array_equal(X2.nested_pairwise(9), X.nested_pairwise(9))
    small = PrefixFeatures(patterns=[None] * 9, scores=scores)
    small.nested_pairwise(3)
    assert small.nested_pairwise(6).tobytes(order="A") == nested_pairwise_features(scores[:, :6]).tobytes(order="A")


def test_pool_adjacent_violators_is_scipys_isotonic_regression():
    """The isotonic fit's PAVA (SciPy's routine, loaded without the scipy.optimize package)
    returns ``scipy.optimize.isotonic_regression``'s fitted values bit for bit, weighted and
    with runs to pool; importing scipy.optimize afterwards still works."""
    import sys
    from fcps_core.families.base import pool_adjacent_violators
    r = np.random.default_rng(3)
    for n in (1, 2, 50, 5_000):
        y = r.uniform(size=n) + np.linspace(0, 0.5, n)
        w = r.integers(1, 5, size=n).astype(float)
        got = pool_adjacent_violators(y, w)
        assert "scipy.optimize._pava_pybind" in sys.modules
        from scipy.optimize import isotonic_regression
        assert np.array_equal(got, isotonic_regression(y, weights=w).x)
        assert np.array_equal(pool_adjacent_violators(y, np.ones(n)), isotonic_regression(y).x)
        # the fit's own scratch arrays, worked in: the same values
        assert np.array_equal(pool_adjacent_violators(y.copy(), w.copy(), overwrite=True), got)
        y_before = y.copy()
        pool_adjacent_violators(y, w)                       # without overwrite: inputs kept
        assert np.array_equal(y, y_before)


def test_labels_order_is_kept_for_the_same_read_only_ranks_only():
    """The two-pass tie-heavy sort reads the labels' order from :func:`_labels_order`, kept
    for the last read-only ``label_ranks`` array: prefixes sharing it get lexsort's order,
    and so do fits with other labels of the same length after it (another array, another
    order) and with writable ranks of their own."""
    from fcps_core.families import base
    r = np.random.default_rng(5)
    n = 30_000
    y1 = r.integers(0, 3_000, n) / 3_000.0
    y2 = r.integers(0, 3_000, n) / 2_999.0
    ranks1 = label_ranks(y1)
    assert not ranks1.flags.writeable
    for y, ranks in ((y1, ranks1), (y1, ranks1), (y2, label_ranks(y2)), (y1, ranks1),
                     (y2, np.array(label_ranks(y2)))):
        x = r.integers(0, 300, n) / 7.0                     # ranks of x and y each in 16 bits
        assert np.array_equal(base._lexsort_xy(x, y, ranks), np.lexsort((y, x)))
    assert base._LABELS_ORDER[0][0] is not None
    kept = base._labels_order(ranks1)
    assert np.array_equal(kept, np.argsort(ranks1.astype(np.uint16), kind="stable"))
    assert base._labels_order(ranks1) is kept and not kept.flags.writeable
    writable = np.array(ranks1)
    assert base._labels_order(writable) is not base._labels_order(writable)


@pytest.mark.parametrize("seed", range(6))
def test_isotonic_predict_in_sorted_order_is_interp_bit_for_bit(seed):
    """Many points against many thresholds are interpolated in sorted order and put back
    (``IsotonicMap.predict``): every value is ``np.interp``'s of the points as given, bit for
    bit, with points on the thresholds, signed zeros, NaN and infinities among them."""
    from fcps_core.families import base
    rng = np.random.default_rng(seed)
    n = 3000 + 2000 * seed
    x = rng.normal(size=n)
    if seed % 2:
        x = np.round(x, 2)
    y = np.clip(1 / (1 + np.exp(-3 * x)) + 0.05 * rng.normal(size=n), 0, 1)
    fitted = IsotonicMap().fit(x, y)
    assert len(fitted.x_) >= base._SORTED_PREDICT_THRESHOLDS
    m = base._SORTED_PREDICT_POINTS + 1000 * seed
    q = rng.normal(scale=1.5, size=m)
    q[:200] = rng.choice(fitted.x_, 200)
    q[200:260] = -0.0
    q[260:300] = 0.0
    q[300:310] = np.nan
    q[310:315], q[315:320] = np.inf, -np.inf
    rng.shuffle(q)
    want = np.interp(q, fitted.x_, fitted.y_)
    assert np.array_equal(fitted.predict(q).view(np.uint64), want.view(np.uint64))
    # points one ulp apart (their sort keys tie in the position bits), and a strided column
    near = np.nextafter(q, np.inf)
    near[::2] = q[::2]
    assert np.array_equal(fitted.predict(near).view(np.uint64),
                          np.interp(near, fitted.x_, fitted.y_).view(np.uint64))
    both = np.column_stack([q, near])
    assert np.array_equal(fitted.predict(both[:, 1]).view(np.uint64),
                          np.interp(near, fitted.x_, fitted.y_).view(np.uint64))
    # below the sizes the points are interpolated as given: the same values
    assert np.array_equal(fitted.predict(q[:100]).view(np.uint64), want[:100].view(np.uint64))
