"""Grouped folds and the held-out prediction matrix they produce.

Distinct held-out rows. A candidate's held-out prediction is a function of the row's judge
outputs (and, under cross-fitting, of the fold that held it out), so rows that agree on
every judge's output and on the label agree on every prediction and every loss.
:class:`HeldOut` keeps the predictions once per such *distinct row* with its count, and
every statistic the choice rules, the verdicts and the bootstrap use is a count-weighted
sum over distinct rows or over *units* (classes of groups with identical contents, see
:class:`.choice.GroupedLosses`). Candidates whose prediction columns are identical share
one column. Rows are compressed only by exact keys (integer output codes, the exact float
value of a continuous judge's score, the label), never by rounding, so the statistics are
those of the raw rows up to the order of floating-point summation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..data.encoding import INT64_SAFE
from ..errors import SplitError
from .choice import GroupedLosses, row_losses

#: groups with at most this many distinct rows are merged into units by their contents
UNIT_MAX_WIDTH = 8


class ExpandedPredictions(np.lib.mixins.NDArrayOperatorsMixin):
    """A (repeats, raw rows, candidates) prediction matrix stored compactly: ``values``
    (repeats, distinct rows, stored columns), ``inverse`` (raw row -> distinct row; None =
    the rows are the raw rows) and ``col`` (candidate -> stored column; None = one each).
    It reads like the raw array (``shape``, ``np.asarray``, ``[:, :, candidates]`` without
    expanding the other columns)."""

    def __init__(self, values: np.ndarray, inverse: np.ndarray | None, col: np.ndarray | None = None):
        self.values = values
        self.inverse = inverse
        self.col = np.arange(values.shape[2]) if col is None else np.asarray(col, dtype=np.int64)

    @property
    def shape(self) -> tuple:
        R, U, _ = self.values.shape
        return (R, U if self.inverse is None else len(self.inverse), len(self.col))

    @property
    def ndim(self) -> int:
        return 3

    @property
    def dtype(self):
        return self.values.dtype

    def __len__(self) -> int:
        return self.values.shape[0]

    def _rows(self, part: np.ndarray) -> np.ndarray:
        return part if self.inverse is None else part[:, self.inverse]

    def _stored(self, cols: np.ndarray) -> np.ndarray:
        """(repeats, distinct rows, len(cols)) of stored columns ``cols``."""
        return self.values[:, :, cols]

    def __array__(self, dtype=None, copy=None):
        out = self._rows(self._stored(self.col))
        return out if dtype is None else out.astype(dtype)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        inputs = tuple(np.asarray(x) if isinstance(x, ExpandedPredictions) else x for x in inputs)
        return getattr(ufunc, method)(*inputs, **kwargs)

    def __getitem__(self, key):
        if (isinstance(key, tuple) and len(key) == 3 and all(isinstance(k, slice) and k == slice(None)
                                                             for k in key[:2])):
            return self._rows(self._stored(self.col[key[2]]))
        return np.asarray(self)[key]


def factorize_values(x: np.ndarray) -> tuple[np.ndarray, int]:
    """(dense index of each value, number of distinct values); exact float equality."""
    if len(x) == 0:
        return np.zeros(0, dtype=np.int64), 1
    head = x[:4096]
    cand = np.unique(head)
    if len(cand) <= 8:                       # a few values (discrete scores): comparisons
        idx = np.zeros(len(x), dtype=np.int64)
        for v in cand[:-1]:
            idx += x > v
    elif 2 * len(cand) <= len(head):         # repeated values: the head may hold them all
        idx = np.minimum(np.searchsorted(cand, x), len(cand) - 1)
    else:                                    # mostly distinct (continuous scores): sort them all
        idx = None
    if idx is not None and np.array_equal(cand[idx], x):
        return idx, len(cand)
    values, idx = np.unique(x, return_inverse=True)
    return idx.reshape(-1).astype(np.int64), len(values)


def distinct_key(digits, n: int) -> tuple[np.ndarray, int]:
    """Dense-ish integer key of rows from (digit array, radix) columns (mixed radix,
    densified when the radix product would overflow) and its bound.

    The key orders rows lexicographically by their digits. ``digits`` may be an iterator
    computing them as needed: when a densified key already differs on every row (continuous
    scores), the remaining digits can neither split nor reorder rows, so they are not read
    and the densified key (ranks 0 .. n-1) is returned: :func:`distinct_rows` gives the
    same representatives, counts and row order as with every digit."""
    key, bound = np.zeros(n, dtype=np.int64), 1
    for d, radix in digits:
        radix = max(int(radix), 1)
        if bound * radix >= INT64_SAFE:
            key = np.unique(key, return_inverse=True)[1].reshape(-1).astype(np.int64)
            bound = int(key.max()) + 1 if n else 1
            if bound == n:                   # every row already distinct
                return key, bound
        key = key * radix + d
        bound *= radix
    return key, bound


def distinct_rows(key: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(representative position, count) of each distinct key and each row's distinct row."""
    from .views import group_rows
    if len(key) == 0:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    return group_rows(key, bound)


def output_digits(encoded, rows: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Digits of what a candidate's prediction can read of a row: every judge's table code
    and, for continuous judges, the exact scalar score."""
    out = []
    codes = encoded.codes[rows]
    for j, enc in enumerate(encoded.encoders):
        out.append((codes[:, j] + 1, enc.alphabet_size + 1))           # -1 = never-seen output
        if enc.schema == "continuous" or (codes[:, j] < 0).any():      # the score is not the code's
            out.append(factorize_values(encoded.scores[rows, j]))
    return out


def panel_output_digits(panel, rows: np.ndarray) -> list[tuple[np.ndarray, int]]:
    """Digits of a row's raw judge outputs (codes; continuous values exactly, NaN as its
    own value): any encoder maps equal outputs to equal codes and scores."""
    out = []
    for col in panel.judges:
        if col.codes is not None:
            c = np.asarray(col.codes)[rows].astype(np.int64)
            out.append((c - c.min(initial=0), int(c.max(initial=0) - c.min(initial=0)) + 1))
        if col.values is not None:
            v = np.asarray(col.values, dtype=float)[rows]
            nan = np.isnan(v)
            idx, k = factorize_values(np.where(nan, 0.0, v))
            out.append((np.where(nan, k, idx), k + 1))
    return out


def label_digits(y: np.ndarray) -> tuple[np.ndarray, int]:
    return factorize_values(np.asarray(y, dtype=float))


def distinct_columns(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(col, first) over the last axis of ``values``: ``col[c]`` is column c's distinct
    column and ``first[k]`` the first column equal to distinct column k; columns are equal
    when every value is (bit for bit)."""
    C = values.shape[-1]
    flat = values.reshape(-1, C)
    if C == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    # An order-free exact hash of each column's bits (wrap-around integer arithmetic), then
    # an exact comparison inside each hash bucket.
    mult = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=len(flat), dtype=np.uint64) | np.uint64(1)
    h = np.zeros(C, dtype=np.uint64)
    step = max(1, (1 << 22) // C)
    for a in range(0, len(flat), step):
        bits = flat[a:a + step].view(np.uint64)
        h += (bits * mult[a:a + step, None]).sum(axis=0, dtype=np.uint64)
    col = np.empty(C, dtype=np.int64)
    first: list[int] = []
    buckets: dict[int, list[int]] = {}
    for c in range(C):
        for k in buckets.setdefault(int(h[c]), []):
            if np.array_equal(flat[:, first[k]], flat[:, c]):
                col[c] = k
                break
        else:
            col[c] = len(first)
            buckets[int(h[c])].append(len(first))
            first.append(c)
    return col, np.asarray(first, dtype=np.int64)


@dataclass
class Units:
    """Groups of held-out rows as units of identical contents (see
    :class:`.choice.GroupedLosses`): ``matrix`` (units, distinct rows) counts one group's
    rows of each distinct row, ``groups`` groups per unit, ``rows`` rows per group,
    ``group_unit`` each group's unit (groups in sorted-id order)."""

    matrix: object
    groups: np.ndarray
    rows: np.ndarray
    group_unit: np.ndarray


def group_units(groups: np.ndarray, inverse: np.ndarray, n_distinct: int) -> Units:
    """Units of groups with identical (distinct row, count) contents."""
    from scipy import sparse
    uniq, g = np.unique(groups, return_inverse=True)
    g = g.reshape(-1)
    G, n = len(uniq), len(g)
    # a group's distinct rows in increasing order, repeated ones counted (every row
    # distinct: the rows in row order, as np.add.at sums them)
    A = sparse.csr_matrix((np.ones(n), (g, inverse)), shape=(G, n_distinct))
    A.sum_duplicates()
    width = np.diff(A.indptr)
    if G == 0:
        return Units(A, np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64))
    small = width <= UNIT_MAX_WIDTH
    W = int(width[small].max(initial=0))
    unit = np.empty(G, dtype=np.int64)
    n_units = 0
    if small.any():
        # a padded (groups, 2 * width) table of (distinct row, count) per group
        table = np.full((G, 2 * max(W, 1)), -1, dtype=np.int64)
        slot = np.arange(A.nnz) - np.repeat(A.indptr[:-1], width)
        row = np.repeat(np.arange(G), width)
        ok = small[row]
        table[row[ok], 2 * slot[ok]] = A.indices[ok]
        table[row[ok], 2 * slot[ok] + 1] = A.data[ok].astype(np.int64)
        sub = np.flatnonzero(small)
        radix = [n_distinct + 1, int(A.data.max(initial=1)) + 2] * (table.shape[1] // 2)
        if math.prod(radix) < INT64_SAFE:              # one integer per group's contents
            key = np.zeros(len(sub), dtype=np.int64)
            for j, r in enumerate(radix):
                key = key * r + (table[sub, j] + 1)
            inv_small = np.unique(key, return_inverse=True)[1]
        else:
            inv_small = np.unique(table[sub], axis=0, return_inverse=True)[1]
        unit[sub] = inv_small.reshape(-1)
        n_units = int(inv_small.max()) + 1
    big = np.flatnonzero(~small)
    unit[big] = n_units + np.arange(len(big))
    n_units += len(big)
    groups_per_unit = np.bincount(unit, minlength=n_units).astype(float)
    rep = np.empty(n_units, dtype=np.int64)
    rep[unit[::-1]] = np.arange(G - 1, -1, -1)               # first group of each unit
    Au = A[rep]
    return Units(Au, groups_per_unit, np.asarray(Au.sum(axis=1)).reshape(-1), unit)


@dataclass
class RepeatTables:
    """Cross-fitted held-out predictions as one table per repeat.

    A candidate's held-out prediction reads a row's judge outputs through the model of the
    fold that held the row out, so in repeat r it is a function of (outputs, the row's
    fold in r): a *table row*. Distinct held-out rows (:class:`HeldOut`) also key on the
    label and on every repeat's fold, so there are many more of them than table rows (10
    two-valued judges: at most 1,024 x 5 table rows per repeat, against 1,024 x 2 x 25
    distinct held-out rows). ``values`` (repeats, stored columns, table rows; a column's
    rows together, repeats with fewer table rows padded) and ``index`` (repeats, distinct
    held-out rows: each one's table row in that repeat) give the (repeats, distinct rows,
    columns) matrix column by column (:meth:`gather`), never whole. ``first_repeat_only``
    (a bool per stored column, None: none) marks the columns of candidates the later
    repeats did not refit (:mod:`.screening`): every repeat reads their first repeat's
    predictions, so their mean loss over the repeats is the first repeat's."""

    values: np.ndarray
    index: np.ndarray
    first_repeat_only: np.ndarray | None = None

    @property
    def n_distinct(self) -> int:
        return self.index.shape[1]

    def gather(self, cols, later_of_single: bool = True) -> np.ndarray:
        """(repeats, distinct held-out rows, len(cols)) of stored columns ``cols`` (a view
        of a (repeats, columns, rows) array: each column's rows together).
        ``later_of_single=False``: the later repeats of first-repeat-only columns are left
        unset, for a reader that reads only their first repeat (:func:`.choice.row_losses`
        with its ``single`` flags)."""
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        R = self.values.shape[0]
        out = np.empty((R, len(cols), self.n_distinct))
        single = (np.flatnonzero(self.first_repeat_only[cols]) if self.first_repeat_only is not None and R > 1
                  else np.zeros(0, dtype=np.int64))
        np.take(self.values[0, cols], self.index[0], axis=1, out=out[0])
        if not len(single):
            for r in range(1, R):
                np.take(self.values[r, cols], self.index[r], axis=1, out=out[r])
            return out.transpose(0, 2, 1)
        many = np.flatnonzero(~self.first_repeat_only[cols])
        for r in range(1, R):
            if len(many):
                out[r, many] = np.take(self.values[r, cols[many]], self.index[r], axis=1)
        if later_of_single:
            out[1:, single] = out[0, single]
        return out.transpose(0, 2, 1)

    def column(self, k: int) -> np.ndarray:
        """Stored column ``k`` as a contiguous (repeats, distinct held-out rows) array: the
        values of ``gather([k])[:, :, 0]``, taken row by row into their place (no block
        of other columns, no transposed copy)."""
        R = self.values.shape[0]
        out = np.empty((R, self.n_distinct))
        single = self.first_repeat_only is not None and R > 1 and bool(self.first_repeat_only[k])
        for r in range(R):
            if r and single:
                out[r] = out[0]
            else:
                np.take(self.values[r, k], self.index[r], out=out[r])
        return out

    def column_mean(self, cols) -> np.ndarray:
        """(repeats, distinct held-out rows): the mean of stored columns ``cols`` per row,
        equal to the bit to ``numpy.mean`` over the last axis of the gathered (repeats,
        rows, columns) array (:func:`reduce_order_sum` adds in its order). A gather is
        elementwise, so in a repeat where every column reads the same table (the first
        repeat; a later one without first-repeat-only columns, or with only those) the
        columns are summed on the table rows and the sum gathered once, instead of every
        column gathered and summed."""
        cols = np.asarray(cols, dtype=np.int64).reshape(-1)
        R = self.values.shape[0]
        single = (self.first_repeat_only[cols] if self.first_repeat_only is not None and R > 1
                  else np.zeros(len(cols), dtype=bool))
        out = np.empty((R, self.n_distinct))
        for r in range(R):
            if r and single.all():
                out[r] = out[0]
            elif r == 0 or not single.any():
                table = self.values[r]
                total = reduce_order_sum([table[c] for c in cols])
                np.take(total, self.index[r], out=out[r])
            else:       # first-repeat-only columns read the first repeat's table, the others this one's
                out[r] = reduce_order_sum([self.values[0, c][self.index[0]] if s else self.values[r, c][self.index[r]]
                                           for c, s in zip(cols, single)])
        out /= len(cols)
        return out


def reduce_order_sum(terms: list) -> np.ndarray:
    """The elementwise sum of equal-shaped arrays ``terms`` in the order ``numpy.add.reduce``
    adds the items of a contiguous axis (NumPy's pairwise summation: in turn below eight
    items; eight running sums from eight on, combined as ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7))
    with the rest added in turn; halves of a multiple of eight above 128 items). So the
    result equals, to the bit, the sum over the last axis of those arrays stacked there."""
    n = len(terms)
    if n < 8:
        out = np.array(terms[0], dtype=float, copy=True)
        for t in terms[1:]:
            out += t
        return out
    if n <= 128:
        acc = [np.array(t, dtype=float, copy=True) for t in terms[:8]]
        full = n - n % 8
        for i in range(8, full, 8):
            for j in range(8):
                acc[j] += terms[i + j]
        out = (acc[0] + acc[1]) + (acc[2] + acc[3])
        out += (acc[4] + acc[5]) + (acc[6] + acc[7])
        for t in terms[full:]:
            out += t
        return out
    half = n // 2
    half -= half % 8
    out = reduce_order_sum(terms[:half])
    out += reduce_order_sum(terms[half:])
    return out


class TabledPredictions(ExpandedPredictions):
    """:class:`ExpandedPredictions` over :class:`RepeatTables`: reads like the raw
    (repeats, rows, candidates) array, gathering only the columns asked for."""

    def __init__(self, tables: RepeatTables, inverse: np.ndarray | None, col: np.ndarray):
        self.tables = tables
        self.inverse = inverse
        self.col = np.asarray(col, dtype=np.int64)

    @property
    def values(self) -> np.ndarray:
        """Every stored column on the distinct rows (gathered: small panels only)."""
        return self.tables.gather(np.arange(self.tables.values.shape[1]))

    @property
    def shape(self) -> tuple:
        R, U = self.tables.index.shape
        return (R, U if self.inverse is None else len(self.inverse), len(self.col))

    @property
    def dtype(self):
        return self.tables.values.dtype

    def __len__(self) -> int:
        return self.tables.values.shape[0]

    def _stored(self, cols: np.ndarray) -> np.ndarray:
        return self.tables.gather(cols)


@dataclass
class HeldOut:
    """Held-out predictions of every candidate and baseline on the same rows, with the
    matrices derived from them (row losses, per-unit sums, prediction signatures) computed
    once and shared by the choice rule, the verdicts and the bootstrap.

    The candidates' predictions are stored on distinct rows: ``values`` (repeats, distinct
    rows, stored columns), ``inverse`` (raw row -> distinct row) and ``vcol`` (candidate ->
    stored column); ``preds`` reads them as the raw (repeats, rows, candidates) matrix. The
    cross-fitted protocol stores them as ``tables`` (:class:`RepeatTables`, ``values``
    None) instead; every reader goes through :meth:`stored`."""

    rows: np.ndarray            # panel rows (D under crossfit, V under split)
    values: np.ndarray          # (repeats, distinct rows, stored columns)
    inverse: np.ndarray | None  # raw row -> distinct row (None: every row distinct)
    vcol: np.ndarray            # candidate -> stored column
    baselines: dict             # name -> (repeats, rows); single_judges -> (repeats, rows, judges)
    y: np.ndarray               # labels of ``rows``
    groups: np.ndarray          # group ids of ``rows`` (or their integer codes)
    tables: RepeatTables | None = None   # the cross-fitted protocol's per-repeat tables
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, panel, rows: np.ndarray, preds, baselines: dict,
           key: tuple[np.ndarray, int] | None = None, groups: np.ndarray | None = None,
           columns: tuple[np.ndarray, np.ndarray] | None = None) -> "HeldOut":
        """``preds``: an :class:`ExpandedPredictions` (already distinct) or a raw
        (repeats, rows, candidates) array, compressed by ``key`` = (per-row key, bound)
        when given (rows with equal keys must have equal predictions). ``groups``: the
        rows' groups as integer codes in sorted-id order (None: the panel's group ids);
        every per-group step orders groups alike either way. ``columns``: (candidate ->
        distinct column, the stored column of each distinct column) when the caller has
        them (:meth:`columns` otherwise compares every stored column)."""
        if isinstance(preds, ExpandedPredictions):
            values, inverse, vcol = preds.values, preds.inverse, preds.col
        else:
            preds = np.asarray(preds)
            vcol = np.arange(preds.shape[2])
            if key is not None and len(rows):
                rep, _, inverse = distinct_rows(*key)
                values = np.ascontiguousarray(preds[:, rep])
            else:
                values, inverse = preds, None
        out = cls(rows=rows, values=values, inverse=inverse, vcol=vcol, baselines=baselines,
                  y=panel.labels[rows], groups=panel.group_ids[rows] if groups is None else groups)
        if columns is not None:
            out._cache["columns"] = (np.asarray(columns[0], dtype=np.int64), np.asarray(columns[1], dtype=np.int64))
        return out

    # -- distinct rows -------------------------------------------------------------------
    @property
    def preds(self) -> ExpandedPredictions:
        """(repeats, rows, candidates) held-out predictions (read on demand)."""
        if self.tables is not None:
            return TabledPredictions(self.tables, self.inverse, self.vcol)
        return ExpandedPredictions(self.values, self.inverse, self.vcol)

    @property
    def n_distinct(self) -> int:
        return self.values.shape[1] if self.tables is None else self.tables.n_distinct

    def stored(self, cols, later_of_single: bool = True) -> np.ndarray:
        """(repeats, distinct rows, len(cols)) predictions of stored columns ``cols``
        (``later_of_single``: :meth:`RepeatTables.gather`'s)."""
        if self.tables is not None:
            return self.tables.gather(cols, later_of_single)
        # taken as (repeats, columns, rows) and handed over transposed: the split protocol
        # stores each column's rows together, and so the gather stays
        return self.values.transpose(0, 2, 1)[:, np.asarray(cols, dtype=np.int64)].transpose(0, 2, 1)

    def stored_column(self, k: int) -> np.ndarray:
        """Stored column ``k`` as a contiguous float (repeats, distinct rows) array, equal to
        ``stored([k])[:, :, 0]`` (:meth:`RepeatTables.column` where the tables hold it)."""
        if self.tables is not None:
            return self.tables.column(int(k))
        return np.ascontiguousarray(self.stored([k])[:, :, 0], dtype=float)

    def first_repeat_only(self, cols) -> np.ndarray | None:
        """Which stored columns ``cols`` read their first repeat in every repeat (None:
        none of the stored columns do)."""
        flags = None if self.tables is None else self.tables.first_repeat_only
        return None if flags is None else flags[np.asarray(cols, dtype=np.int64)]

    def _rowmap(self) -> tuple[np.ndarray, np.ndarray]:
        """(representative raw position, count) of each distinct row."""
        if "rowmap" not in self._cache:
            U = self.n_distinct
            if self.inverse is None:
                self._cache["rowmap"] = (np.arange(U), np.ones(U))
            else:
                rep = np.empty(U, dtype=np.int64)
                rep[self.inverse[::-1]] = np.arange(len(self.inverse) - 1, -1, -1)
                self._cache["rowmap"] = (rep, np.bincount(self.inverse, minlength=U).astype(float))
        return self._cache["rowmap"]

    @property
    def counts(self) -> np.ndarray:
        return self._rowmap()[1]

    @property
    def y_distinct(self) -> np.ndarray:
        return self.y[self._rowmap()[0]]

    def distinct(self, raw: np.ndarray) -> np.ndarray | None:
        """Per-distinct-row values of a raw per-row array (rows on axis 1 of 2-d and 3-d
        arrays: (repeats, rows[, k]); on axis 0 of 1-d ones), or None when rows of one
        distinct row disagree."""
        if self.inverse is None:
            return raw
        rep = self._rowmap()[0]
        d = raw[:, rep] if raw.ndim >= 2 else raw[rep]
        back = d[:, self.inverse] if raw.ndim >= 2 else d[self.inverse]
        return d if np.array_equal(back, raw) else None

    def raw_mean(self, v: np.ndarray) -> float:
        """Mean over the raw rows of per-distinct-row values."""
        return float(self.counts @ v / self.counts.sum())

    def columns(self) -> tuple[np.ndarray, np.ndarray]:
        """(candidate -> distinct column, the stored column of each distinct column)."""
        if "columns" not in self._cache:
            col_v, first_v = distinct_columns(self.values if self.tables is None else self.preds.values)
            self._cache["columns"] = (col_v[self.vcol], first_v)
        return self._cache["columns"]

    def units(self) -> Units:
        if "units" not in self._cache:
            inverse = np.arange(len(self.rows)) if self.inverse is None else self.inverse
            self._cache["units"] = group_units(self.groups, inverse, self.n_distinct)
        return self._cache["units"]

    # -- losses --------------------------------------------------------------------------
    def distinct_losses(self, objective: str) -> np.ndarray:
        """(distinct rows, distinct columns) held-out loss, averaged over the repeats."""
        key = ("dlosses", objective)
        if key not in self._cache:
            _, first = self.columns()
            yd = self.y_distinct
            out = np.empty((self.n_distinct, len(first)), order="F")     # columns are read whole
            for a in range(0, len(first), GroupedLosses.BLOCK):
                cols = first[a:a + GroupedLosses.BLOCK]
                out[:, a:a + GroupedLosses.BLOCK] = row_losses(objective, yd, self.stored(cols, False),
                                                               self.first_repeat_only(cols))
            self._cache[key] = out
        return self._cache[key]

    def column_risks(self, objective: str) -> tuple[np.ndarray, np.ndarray]:
        """(mean, clustered SE) of every candidate's held-out loss, from the cached
        (distinct rows, distinct columns) loss matrix (:meth:`grouped`, formed if needed)."""
        grouped = self.grouped(objective)
        means = grouped.means()
        return means, grouped.mean_se(means)

    def column_means(self, objective: str, with_se: bool = False):
        """Every candidate's mean held-out loss: :meth:`column_risks`' means, the same
        values, without its clustered SEs (a second objective's risks are reported as
        means only; the SEs' per-group sums are most of the work), or with them
        (``with_se``: (means, SEs), each block's SEs formed with its means). Unless that
        objective's loss matrix is cached, it is formed a block of columns at a time and
        not kept (an objective read once never holds a whole loss matrix)."""
        if ("grouped", objective) in self._cache:
            g = self.grouped(objective)
            means = g.means()
            return (means, g.mean_se(means)) if with_se else means
        u = self.units()
        col, first = self.columns()
        means_d, se_d = np.empty(len(first)), np.empty(len(first))
        yd = self.y_distinct
        for a in range(0, len(first), GroupedLosses.BLOCK):
            cols = first[a:a + GroupedLosses.BLOCK]
            L = np.asfortranarray(row_losses(objective, yd, self.stored(cols, False), self.first_repeat_only(cols)))
            g = GroupedLosses.from_units(L, u.matrix, u.groups, u.group_unit, np.arange(L.shape[1]))
            means_d[a:a + L.shape[1]] = m = g.means()
            if with_se:
                se_d[a:a + L.shape[1]] = g.mean_se(m)
        return (means_d[col], se_d[col]) if with_se else means_d[col]

    def losses(self, objective: str) -> np.ndarray:
        """(rows, candidates) held-out loss, averaged over the repeats."""
        col, _ = self.columns()
        L = self.distinct_losses(objective)[:, col]
        return L if self.inverse is None else L[self.inverse]

    def grouped(self, objective: str) -> GroupedLosses:
        key = ("grouped", objective)
        if key not in self._cache:
            u = self.units()
            col, _ = self.columns()
            self._cache[key] = GroupedLosses.from_units(self.distinct_losses(objective), u.matrix, u.groups,
                                                        u.group_unit, col)
        return self._cache[key]

    def average_losses(self, objective: str, members: list[int]) -> np.ndarray:
        """Per-distinct-row loss of the members' average prediction (mean over repeats)."""
        cols = self.vcol[list(members)]
        if self.tables is not None:
            p = self.tables.column_mean(cols)
        else:
            p = np.ascontiguousarray(self.stored(cols)).mean(axis=2)
        yd = self.y_distinct
        return row_losses(objective, yd, p[:, :, None])[:, 0]

    def signature_lookup(self) -> "SignatureLookup":
        """Candidate -> signature id (as :meth:`signatures`), rounding only the columns asked
        for (the choice rules ask for the tied candidates alone)."""
        if "signature_lookup" not in self._cache:
            self._cache["signature_lookup"] = SignatureLookup(self)
        return self._cache["signature_lookup"]

    def signatures(self) -> np.ndarray:
        """An id per candidate; candidates with identical held-out predictions (rounded to
        12 decimals) share it (as :func:`.choice.prediction_signatures` on the raw rows:
        raw columns are equal exactly when their distinct-row columns are)."""
        if "signatures" not in self._cache:
            lookup = SignatureLookup(self)
            self._cache["signatures"] = np.array([lookup[c] for c in range(len(lookup.col))], dtype=np.int64)
        return self._cache["signatures"]

    def rounded_bytes(self, k: int) -> bytes:
        """Stored column ``k``'s predictions rounded to 12 decimals, as bytes (the
        signature's identity)."""
        return np.round(self.stored([k])[:, :, 0], 12).tobytes()


class SignatureLookup:
    """``lookup[c]``: candidate c's signature id: equal ids exactly when the candidates'
    held-out predictions rounded to 12 decimals are equal byte for byte (ids are numbered
    in the order asked).

    A column is known by a digest of its rounded bytes (a few bytes per distinct column,
    not a copy of the column: those copies held distinct rows x columns bytes); columns
    with equal digests are compared on their rounded bytes, recomputed, so equal ids still
    mean equal bytes."""

    def __init__(self, heldout: HeldOut):
        self.heldout = heldout
        self.col, self.first = heldout.columns()
        self.ids: dict[int, int] = {}
        self.n_ids = 0
        self.by_digest: dict[bytes, list[int]] = {}      # digest -> distinct columns with an id

    def __getitem__(self, c) -> int:
        import hashlib
        k = int(self.col[c])
        if k not in self.ids:
            key = self.heldout.rounded_bytes(self.first[k])
            same = self.by_digest.setdefault(hashlib.blake2b(key, digest_size=16).digest(), [])
            for other in same:
                if self.heldout.rounded_bytes(self.first[other]) == key:
                    self.ids[k] = self.ids[other]
                    break
            else:
                self.ids[k] = self.n_ids
                self.n_ids += 1
                same.append(k)
        return self.ids[k]


def check_fold_groups(n_groups: int, folds: int) -> None:
    """Refuse cross-fitting over ``n_groups`` labelled groups outside T when ``folds`` folds
    cannot each hold one (a SplitError naming both fixes)."""
    if n_groups < folds:
        raise SplitError(f"cross-fitting needs at least {folds} labelled groups outside T "
                         f"(found {n_groups}); lower --folds or label more groups")


def grouped_folds(groups: np.ndarray, folds: int, repeats: int, seed: int) -> list[tuple]:
    """``repeats`` x ``folds`` (repeat, train positions, held-out positions) into ``groups``;
    each repeat shuffles the groups with its own seed and deals them to folds in turn."""
    uniq, inv = np.unique(groups, return_inverse=True)
    check_fold_groups(len(uniq), folds)
    out = []
    for r, s in enumerate(np.random.SeedSequence(seed).generate_state(repeats)):
        order = np.random.default_rng(int(s)).permutation(len(uniq))
        fold_of_group = np.empty(len(uniq), dtype=np.int64)
        fold_of_group[order] = np.arange(len(uniq)) % folds
        fold = fold_of_group[inv]
        for f in range(folds):
            out.append((r, np.flatnonzero(fold != f), np.flatnonzero(fold == f)))
    return out
