"""Shared pieces of the aggregator families: the feature view, isotonic maps, the prefix
products, pattern tables, BLAS threads. Numpy only (SciPy is imported inside the isotonic
fit): the deployed predictors (``fitted``) read this module without scikit-learn.

The families' estimator base class is in ``estimator`` (:class:`Aggregator`), their
prediction halves in ``fitted``.

Row multiplicities. ``PrefixFeatures.weight`` (None = every row once) lets the selector
hand a family each *distinct* (pattern, label) row once with its count instead of the raw
rows. Every family's fit is defined so that a row of weight w is exactly w copies of that
row (weighted sums, weighted normal equations, weighted likelihood); tests check each
family against the same fit on the expanded rows and against scikit-learn.
"""

from __future__ import annotations

import contextlib
import functools
import threading

from dataclasses import dataclass, field
import numpy as np

from ..measures.diagnostics import search_sorted

#: scikit-learn merges isotonic inputs closer than this (``np.finfo(float).resolution``).
_X_EPS = float(np.finfo(np.float64).resolution)
#: :meth:`IsotonicMap.predict` sorts the points first from this many points against this many
#: thresholds on (below either the sort costs more than the shorter searches save)
_SORTED_PREDICT_POINTS = 4096
_SORTED_PREDICT_THRESHOLDS = 32


@dataclass
class PrefixFeatures:
    """What a family sees for some rows of a K-judge prefix.

    ``patterns[k]`` is the joint-pattern id of the first k+1 judges (-1 = holds an output
    never seen by the encoders; ``None`` = table too large to index). ``scores`` is the
    (rows, K) matrix of scalar scores in [0, 1]. ``weight`` (optional) is each row's
    multiplicity: the view stands for every row repeated ``weight`` times.
    """

    patterns: list
    scores: np.ndarray
    weight: np.ndarray | None = None
    #: where :meth:`pattern_codes` keeps the codes of each pattern array it has seen
    #: (:class:`PatternCodes`; views holding the same level arrays share one), or None
    codes: "PatternCodes | None" = None
    #: :meth:`nested_pairwise` keeps its last result here: (the scores it read, judges, features)
    _pairwise: tuple | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n_rows(self) -> int:
        return self.scores.shape[0]

    @property
    def K(self) -> int:
        return self.scores.shape[1]

    @property
    def w(self) -> np.ndarray:
        """Row multiplicities (ones when the view is unweighted)."""
        return np.ones(self.n_rows) if self.weight is None else self.weight

    def first(self, K: int) -> "PrefixFeatures":
        """The features of the path's first K judges (a view: no copy of the scores)."""
        if K == self.K:
            return self
        return PrefixFeatures(patterns=self.patterns[:K], scores=self.scores[:, :K], weight=self.weight,
                              codes=self.codes)

    def pattern_codes(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """:func:`pattern_codes` of ``patterns[level]``, kept in ``codes`` when there is one."""
        ids = self.patterns[level]
        return pattern_codes(ids) if self.codes is None else self.codes.of(ids)

    def nested_pairwise(self, K: int) -> np.ndarray:
        """:func:`nested_pairwise_features` of the first ``K`` judges' scores, kept for the
        next caller: the pairwise stackers (``ridge_pairwise_iso``, ``logistic_pairwise``)
        fit and score the same path views, and each built the same products. A request for
        fewer judges than kept is the kept array's leading columns (the features are nested,
        each column a product of two scores whatever the width, and the leading columns of
        a column-major array are one with the same layout), so the values are bit for bit
        the ones a new call gives. Kept while ``scores`` is the same array."""
        kept = self._pairwise
        if kept is not None and kept[0] is self.scores and kept[1] >= K:
            return kept[2][:, :K + K * (K - 1) // 2]
        out = nested_pairwise_features(self.scores[:, :K])
        self._pairwise = (self.scores, K, out)
        return out

    def take(self, rows: np.ndarray) -> "PrefixFeatures":
        return PrefixFeatures(patterns=[None if p is None else p[rows] for p in self.patterns],
                              scores=self.scores[rows],
                              weight=None if self.weight is None else self.weight[rows])


def weighted_mean(values: np.ndarray, weight: np.ndarray | None) -> float:
    return float(np.mean(values)) if weight is None else float(weight @ values / weight.sum())


class IsotonicMap:
    """Monotone increasing calibration map to [0, 1].

    The fit is scikit-learn's ``IsotonicRegression(y_min=0, y_max=1, increasing=True,
    out_of_bounds='clip')`` step for step, without its per-call input validation: sort by
    (x, y), pool inputs closer than ``np.finfo(float).resolution`` into their weighted mean
    (sklearn's ``_make_unique``), pool adjacent violators (scipy's PAVA, the routine sklearn
    calls), clip to [0, 1], drop interior points equal to both neighbours. Tests check the
    thresholds against sklearn. Prediction interpolates linearly between the thresholds and
    clips outside them; storing the thresholds keeps predictions identical after a JSON
    round trip.
    """

    def fit(self, x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None,
            y_rank: np.ndarray | None = None) -> "IsotonicMap":
        """``y_rank`` (optional): :func:`label_ranks` of ``y``, for callers fitting many maps
        on the same labels (the prefixes of a path); it only speeds up the sort."""
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if w is not None:
            w = np.asarray(w, dtype=float)
            keep = w > 0
            if not keep.all():
                x, y, w = x[keep], y[keep], w[keep]
                y_rank = None if y_rank is None else y_rank[keep]
        order = _lexsort_xy(x, y, y_rank)
        x, y = x[order], y[order]
        if w is None and len(x) and np.all(np.diff(x) >= _X_EPS):
            # every input its own run (distinct scores, each at least eps above the one
            # before: what :func:`_pool_starts` finds then): the runs' means are the labels
            # themselves and their weights 1, what the sums below give exactly
            w_u, y_u, x_u = np.ones(len(x)), y, x
        else:
            starts = _pool_starts(x)
            if w is None:
                # unit weights: a run's weight is its length and y * 1 is y (the same sums, exactly)
                w_u = np.diff(np.append(starts, len(x))).astype(float)
                y_u = np.add.reduceat(y, starts) / w_u
            else:
                w = w[order]
                w_u = np.add.reduceat(w, starts)
                y_u = np.add.reduceat(y * w, starts) / w_u
            x_u = x[starts]
        # y_u and w_u are this fit's own arrays (gathered or summed above): PAVA works in them
        fitted = np.clip(pool_adjacent_violators(y_u, w_u, overwrite=True), 0.0, 1.0)
        keep = np.ones(len(fitted), dtype=bool)
        keep[1:-1] = (fitted[1:-1] != fitted[:-2]) | (fitted[1:-1] != fitted[2:])
        self.x_, self.y_ = x_u[keep], fitted[keep]
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        """``np.interp(x, x_, y_)``. Many points against many thresholds are interpolated in
        sorted order and put back: ``np.interp`` finds each point's interval by a binary
        search that starts from the previous point's interval, which is where a sorted
        point lies, so the searches are short (the points are put in order by one sort of
        packed integer keys, :func:`_key_positions`); each point's value depends only on the
        point and the thresholds (their interval is the one with x_[j] <= point <
        x_[j + 1], whatever the search starts from), so the values are the same bit for
        bit (docs/performance.md, issue 25's sixteenth round)."""
        x = np.asarray(x, dtype=float)
        if len(self.x_) == 1:
            return np.full(len(x), self.y_[0])
        if x.ndim == 1 and len(x) >= _SORTED_PREDICT_POINTS and len(self.x_) >= _SORTED_PREDICT_THRESHOLDS:
            # any order serves (each value is the point's own): the points by their keys'
            # high bits, from one sort of integers, are in order but for the rare values
            # that differ only in the position bits
            order = _key_positions(np.ascontiguousarray(x))
            out = np.empty(len(x))
            out[order] = np.interp(x[order], self.x_, self.y_)
            return out
        return np.interp(x, self.x_, self.y_)

    def to_dict(self) -> dict:
        return {"x": self.x_.tolist(), "y": self.y_.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "IsotonicMap":
        obj = cls()
        obj.x_ = np.asarray(d["x"], dtype=float)
        obj.y_ = np.asarray(d["y"], dtype=float)
        return obj


def rises_with(x: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> bool:
    """Whether ``y`` rises with ``x`` on these rows: Spearman's rank correlation is >= 0
    (average ranks over ties; rows weighted by ``w``, e.g. the counts of distinct rows, as if
    each row were repeated that many times). This is the direction scikit-learn's
    ``IsotonicRegression(increasing="auto")`` fits (``spearmanr(x, y)[0] >= 0``), the choice a
    practitioner's isotonic map of one judge makes: a metric that falls as the label rises (a
    quality score against an error-count label) is mapped by a decreasing map rather than
    flattened to a constant by an increasing one. Rows with NaN in ``x`` or ``y`` are left out;
    a constant ``x`` or ``y`` counts as rising (any map of it is then constant)."""
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    w = np.ones(len(x)) if w is None else np.asarray(w, dtype=float)
    ok = ~(np.isnan(x) | np.isnan(y)) & (w > 0)
    if not ok.all():
        x, y, w = x[ok], y[ok], w[ok]
    return bool(columns_rise_with(x[:, None], y, w)[0])


def columns_rise_with(X: np.ndarray, y: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """:func:`rises_with` of every column of ``X`` (no NaN) against ``y`` (no NaN) on the same
    rows, the label's ranks formed once: with c = w (rank(y) - its weighted mean), the
    weighted covariance of the ranks is sum_i rank(x)_i c_i, and each column costs one sort
    and linear passes: the order of the column's bits and positions (:func:`_radix_argsort`'s
    permutation, which the tied blocks' weight sums follow), from one sort of packed keys
    (:func:`_packed_order`) or, where that declines, the radix sort itself."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    n = len(y)
    w = np.ones(n) if w is None else np.asarray(w, dtype=float)
    if n == 0:
        return np.ones(X.shape[1], dtype=bool)
    ranks_y = _average_ranks(y, np.argsort(y, kind="stable"), w)
    centred = w * (ranks_y - np.sum(w * ranks_y) / np.sum(w))
    out = np.empty(X.shape[1], dtype=bool)
    for j in range(X.shape[1]):
        x = np.ascontiguousarray(X[:, j])
        packed = _packed_order(x, None, zero_tie=False) if n > 1 else None
        order = _radix_argsort(x) if packed is None else packed[0]
        out[j] = not float(_average_ranks(x, order, w) @ centred) < 0
    return out


def _average_ranks(v: np.ndarray, order: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Each row's rank among ``v`` (1-based, rows weighted by ``w`` as repeated rows), tied
    values sharing their block's mean rank; ``order`` sorts ``v`` ascending."""
    sorted_v = v[order]
    new = np.empty(len(v), dtype=bool)
    new[0] = True
    np.not_equal(sorted_v[1:], sorted_v[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    weight = np.add.reduceat(w[order], starts)
    mean_rank = np.cumsum(weight) - (weight - 1.0) / 2.0
    out = np.empty(len(v))
    out[order] = mean_rank[np.cumsum(new) - 1]
    return out


def pool_adjacent_violators(y: np.ndarray, w: np.ndarray, overwrite: bool = False) -> np.ndarray:
    """``scipy.optimize.isotonic_regression(y, weights=w).x`` (increasing; ``w`` positive):
    the fitted values by SciPy's own PAVA routine (its ``_pava_pybind`` extension, the
    routine ``isotonic_regression`` calls, with the same copies of its inputs).
    ``overwrite``: ``y`` and ``w`` are the caller's scratch arrays, which the routine may
    work in (and return ``y`` as the fitted values) instead of copies, when they are
    C-contiguous float64 already.

    The extension is loaded on its own (:func:`_pava_routine`): importing the
    ``scipy.optimize`` package for this one routine loads most of SciPy's optimisers, a
    cost every worker process of the cross-fitted folds paid before its first fit. Where
    the extension is not found (another SciPy layout), ``isotonic_regression`` itself."""
    pava = _pava_routine()
    if pava is None:
        from scipy.optimize import isotonic_regression      # here: scoring never imports SciPy
        return isotonic_regression(y, weights=w).x
    copy = None if overwrite else True
    x = np.array(y, order="C", dtype=np.float64, copy=copy)
    wx = np.array(w, order="C", dtype=np.float64, copy=copy)
    return pava(x, wx, np.full(len(x) + 1, -1, dtype=np.intp))[0]


_PAVA: list = []        # SciPy's PAVA routine (or None), found on first use


def _pava_routine():
    """``scipy.optimize._pava_pybind.pava``, loaded from its extension file without the
    ``scipy.optimize`` package (the module is registered under its own name, so a later
    ``import scipy.optimize`` uses it); None when it cannot be loaded."""
    if not _PAVA:
        import sys
        name = "scipy.optimize._pava_pybind"
        module = sys.modules.get(name)
        if module is None:
            try:
                import importlib.machinery
                import importlib.util
                import os
                import scipy
                folder = os.path.join(os.path.dirname(scipy.__file__), "optimize")
                for suffix in importlib.machinery.EXTENSION_SUFFIXES:
                    path = os.path.join(folder, "_pava_pybind" + suffix)
                    if os.path.exists(path):
                        loader = importlib.machinery.ExtensionFileLoader(name, path)
                        spec = importlib.util.spec_from_file_location(name, path, loader=loader)
                        module = importlib.util.module_from_spec(spec)
                        loader.exec_module(module)
                        sys.modules[name] = module
                        break
            except Exception:       # any other layout: the package import below
                module = None
        _PAVA.append(getattr(module, "pava", None))
    return _PAVA[0]


_BLAS_CONTROLLER: list = []     # threadpoolctl's controller, made on first use


def blas_on_one_thread():
    """A context running BLAS on one thread (threadpoolctl; the loaded libraries are scanned
    once per process, not on every call). The path fits' products are small and many: on a
    shared machine a second BLAS thread mostly waits for a busy core."""
    if not _BLAS_CONTROLLER:
        from threadpoolctl import ThreadpoolController
        _BLAS_CONTROLLER.append(ThreadpoolController())
    return _BLAS_CONTROLLER[0].limit(limits=1, user_api="blas")


def one_blas_thread(fn):
    """Decorator: run ``fn`` under :func:`blas_on_one_thread`. Used by the path fits and by
    the held-out choice, bootstrap and baselines, whose products are small or thin: a second
    OpenBLAS thread there waits on a shared core more than it computes (the measurements are
    in docs/performance.md, "Figures that used to live in docstrings")."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with blas_on_one_thread():
            return fn(*args, **kwargs)
    return wrapper


def _hugepage_switch():
    """numpy's switch for its transparent-huge-page advice (private, present since numpy
    1.20), or None."""
    for module in ("numpy._core.multiarray", "numpy.core.multiarray"):
        try:
            return getattr(__import__(module, fromlist=["_set_madvise_hugepage"]), "_set_madvise_hugepage")
        except (ImportError, AttributeError):
            continue
    return None


_PAGES_LOCK = threading.Lock()
_PAGES_STATE = {"depth": 0, "previous": None}     # blocks open in this process, numpy's setting before


@contextlib.contextmanager
def small_pages():
    """Large numpy arrays without the transparent-huge-page advice inside the block (also a
    decorator); numpy's setting is restored when the last open block exits (the setting is
    process-wide: a counter keeps overlapping blocks on threads from restoring it early).

    numpy advises the kernel to back every large allocation with 2 MiB pages. Where the
    kernel's THP defrag setting is ``madvise`` (a common default), a
    first touch of such a page compacts memory synchronously when free memory is
    fragmented (``compact_stall`` in /proc/vmstat), and a selection allocates hundreds of
    fresh 10-100 MB temporaries that it streams once or twice, where large pages gain
    little; the split selection of a million rows is faster without the advice and smaller
    panels are unaffected (measured: docs/performance.md)."""
    switch = _hugepage_switch()
    if switch is None:
        yield
        return
    with _PAGES_LOCK:
        if _PAGES_STATE["depth"] == 0:
            _PAGES_STATE["previous"] = switch(False)
        _PAGES_STATE["depth"] += 1
    try:
        yield
    finally:
        with _PAGES_LOCK:
            _PAGES_STATE["depth"] -= 1
            if _PAGES_STATE["depth"] == 0:
                switch(_PAGES_STATE["previous"])


def log1p_exp(x: np.ndarray) -> np.ndarray:
    """log(1 + e^x) = ``np.logaddexp(0, x)`` by the same formula, max(x, 0) + log1p(e^-|x|),
    on numpy's vectorised exp and log1p (several times faster than logaddexp's scalar loop;
    equal to it within two ulps)."""
    out = np.abs(x)
    np.negative(out, out=out)
    np.exp(out, out=out)
    np.log1p(out, out=out)
    out += np.maximum(x, 0.0)
    return out


def rowwise_dot(A: np.ndarray, w: np.ndarray, start: float = 0.0, columns=None) -> np.ndarray:
    """start + A @ w, accumulated column by column in a fixed order (``columns``: the
    columns of ``A`` that ``w`` weighs, in order; default all).

    Each row's value depends only on that row, never on its position in ``A`` (a BLAS
    matrix-vector product may sum rows in different orders and give identical rows values an
    ulp apart). Scores that feed an isotonic map must keep ties as ties: identical inputs,
    identical calibrated outputs, whether a block is passed as raw or as distinct rows.
    """
    out = np.full(A.shape[0], float(start))
    for j, c in enumerate(range(A.shape[1]) if columns is None else columns):
        out += A[:, c] * w[j]
    return out


def prefix_dots(A: np.ndarray, coefs: list[np.ndarray], starts: np.ndarray) -> np.ndarray:
    """Column m is ``rowwise_dot(A[:, :len(coefs[m])], coefs[m], starts[m])``, bit for bit,
    for every prefix model m at once: the same products added in the same order.

    The result is column-major and built column by column from a column-major copy of the
    columns of ``A`` the models read, through one scratch vector, so every pass streams
    contiguous memory and no (rows x models) temporary is made (the isotonic fits then
    read each model's column contiguously too)."""
    n, M = A.shape[0], len(coefs)
    out = np.empty((n, M), order="F")
    width = max((len(c) for c in coefs), default=0)
    cols = np.asfortranarray(A[:, :width])
    product = np.empty(n)
    for m, c in enumerate(coefs):
        column = out[:, m]
        column.fill(float(starts[m]))
        for j in range(len(c)):
            np.multiply(cols[:, j], c[j], out=product)
            column += product
    return out


def label_ranks(y: np.ndarray) -> np.ndarray | None:
    """Dense ranks of the labels ``y`` (equal labels share a rank, ranks ascend with y), for
    :meth:`IsotonicMap.fit`'s ``y_rank``; None when y holds NaN (the fit then sorts on y)."""
    y = np.asarray(y, dtype=float)
    if np.isnan(y).any():
        return None
    ranks = np.unique(y, return_inverse=True)[1].astype(np.int64, copy=False)
    ranks.flags.writeable = False       # shared by many fits (and :func:`_labels_order`)
    return ranks


#: the last read-only ``y_rank`` :func:`_labels_order` sorted, with its order
_LABELS_ORDER: list = [None]


def _labels_order(y_rank: np.ndarray) -> np.ndarray:
    """``np.argsort(y_rank, kind="stable")``: the rows by label rank, ties by position (a
    16-bit radix sort where the ranks fit in 16 bits). The fits of a path's prefixes (and the single-judge maps of a fold) share one
    read-only :func:`label_ranks` array, so its order is kept for the next fit that passes the
    same array object (a read-only array cannot change under the kept order; a writable one is
    sorted every time). The order is handed out read-only."""
    kept = _LABELS_ORDER[0]
    if kept is not None and kept[0] is y_rank:
        return kept[1]
    if len(y_rank) and int(y_rank.max()) >= 2 ** 16:
        order = np.argsort(y_rank, kind="stable")
    else:
        order = np.argsort(y_rank.astype(np.uint16), kind="stable")
    if not y_rank.flags.writeable:
        order.flags.writeable = False
        _LABELS_ORDER[0] = (y_rank, order)
    return order


def _lexsort_xy(x: np.ndarray, y: np.ndarray, y_rank: np.ndarray | None = None) -> np.ndarray:
    """``np.lexsort((y, x))``, the same permutation: by x, ties by y, then by position.

    The order decides the summation order of each pooled run (``np.add.reduceat``), so it
    must be lexsort's exactly. ``lexsort`` compares key tuples in a merge sort; one sort of
    plain integers costs less: :func:`_packed_order` sorts each row's x key with its
    position in the low bits, numpy's vectorised sort of 64-bit integers (faster than its
    argsort of the floats, which moves an index beside each value). Where x has ties (a head
    sample of :data:`_TIE_SAMPLE` rows shows one: vote sums, posteriors of vote patterns,
    rounded metrics) and the labels' dense ranks ``y_rank`` are given
    (:func:`label_ranks`), the positions packed are those of the rows in label order
    (:func:`_labels_order`, kept across the fits sharing the ranks), so the one sort orders
    the rows by (x, y rank, position), lexsort's order. Where the packed sort cannot tell
    two values apart (they differ only in the bits the position takes, or x holds NaN) the
    order comes as before: numpy's default ``argsort`` of x (faster than its stable sort or
    a radix sort of the bits, :func:`_radix_argsort`: docs/performance.md, issue 25's
    thirteenth round), whose tie order is not the stable one, and none is needed: tied runs
    are re-ordered or ranked below. Where x has few ties (the scores of the linear
    stackers) only the tied runs need lexsort's tie order, which is restored on those
    positions alone. Where it has many and ``y_rank`` is given, each row's key is (rank of
    x, rank of y, position) packed in one integer, which a single sort orders as lexsort
    does: a stable radix sort of (x rank, y rank) when that fits in 16 bits, two stable
    radix passes (y rank, then x rank) when each fits, else a sort of the unique packed
    key. Otherwise, or with NaN in x: ``lexsort``."""
    n = len(x)
    if n < 2:
        return np.lexsort((y, x))
    ranked = y_rank is not None and len(y_rank) == n
    if ranked and _head_has_ties(x):
        by_y = _labels_order(y_rank)
        packed = _packed_order(x, by_y)
        if packed is not None:
            return by_y[packed[0]]
        packed = None
    else:
        packed = _packed_order(x, None)
    if packed is not None:
        order, xs = packed      # by x, ties by position (-0.0 read as +0.0, a tie as in lexsort)
    else:
        # Any order of x serves below (tied runs are re-ordered or ranked)
        order = np.argsort(x)
        xs = x[order]
        if xs[-1] != xs[-1]:                    # NaN sorts last: leave it to lexsort
            return np.lexsort((y, x))
    tied = xs[1:] == xs[:-1]
    n_tied = int(np.count_nonzero(tied))
    if n_tied == 0:
        return order
    if 4 * n_tied > n:
        n_y = 0 if y_rank is None else int(y_rank.max()) + 1
        n_x = n - n_tied
        if not ranked or float(n_x) * n_y * n >= 2.0 ** 62:
            return np.lexsort((y, x))
        rank_sorted = np.empty(n, dtype=np.int64)
        rank_sorted[0] = 0
        np.cumsum(~tied, out=rank_sorted[1:])
        key = np.empty(n, dtype=np.int64)
        key[order] = rank_sorted                # each row's rank of x
        if n_x <= 2 ** 16 and n_y <= 2 ** 16 and n_x * n_y > 2 ** 16:
            # two stable 16-bit radix passes, least significant key first: by y rank (ties
            # by position), then by x rank (ties keep that order)
            by_y = _labels_order(y_rank)
            return by_y[np.argsort(key[by_y].astype(np.uint16), kind="stable")]
        key *= n_y
        key += y_rank
        if n_x * n_y <= 2 ** 16:
            return np.argsort(key.astype(np.uint16), kind="stable")
        key *= n
        key += np.arange(n, dtype=np.int64)
        return np.argsort(key)
    pos = _in_tied_runs(tied)                   # positions in tied runs (runs stay in place)
    sub = order[pos]
    order[pos] = sub[np.lexsort((sub, y[sub], xs[pos]))]
    return order


def _head_has_ties(x: np.ndarray) -> bool:
    """Whether the first :data:`_TIE_SAMPLE` values of ``x`` hold two equal ones."""
    head = np.sort(x[:_TIE_SAMPLE])
    return bool(np.any(head[1:] == head[:-1]))


def _packed_order(x: np.ndarray, perm: np.ndarray | None,
                  zero_tie: bool = True) -> tuple[np.ndarray, np.ndarray] | None:
    """(order, sorted values): the positions of ``v = x[perm]`` (``x`` itself when ``perm`` is
    None) by value, ties by position, and ``v`` in that order, from one sort of 64-bit
    integers; None when the sort cannot give it (``v`` holds NaN, or two values it orders
    wrongly).

    Each value's bits map to an unsigned integer in the order of the values (a negative
    value's bits flipped, a positive one's sign bit set), whose low bits are replaced by the
    value's position: the sorted keys give the positions ordered by (the key's high bits,
    position). Values equal in the high bits but not equal are then ordered by position,
    not value; where the sorted values are nondecreasing no such pair is out of order, so
    the permutation orders the values with ties by position (every key differs, so the sort
    has one answer). Otherwise, or with NaN (never nondecreasing), None. ``zero_tie``: -0.0
    is read as +0.0 first (the two are equal to a comparison: lexsort ties them, and so
    does this order); False keeps the bits' order, -0.0 before +0.0 (their high bits differ,
    so the order is then :func:`_radix_argsort`'s, by the whole key and position)."""
    v = np.array(x, dtype=np.float64) if perm is None else x[perm].astype(np.float64, copy=False)
    if zero_tie:
        v += 0.0                                # -0.0 + 0.0 is +0.0
    order = _key_positions(v)
    values = v[order]
    if not np.all(values[1:] >= values[:-1]):
        return None
    return order, values


def _key_positions(v: np.ndarray) -> np.ndarray:
    """The positions of the contiguous float64 ``v`` by (the high bits of each value's
    order-preserving key, position): one sort of the keys with the positions in their low
    bits (as many bits as the largest position needs). :func:`_packed_order` checks what it
    hands out; a caller that only needs the values nearly in order takes it as it is."""
    n = len(v)
    low = np.uint64((1 << max(n - 1, 0).bit_length()) - 1)
    key = (v.view(np.int64) >> 63).view(np.uint64)      # all ones where negative, else 0
    key |= _SIGN_BIT
    key ^= v.view(np.uint64)
    key &= ~low
    key |= np.arange(n, dtype=np.uint64)
    key.sort()
    key &= low
    return key.view(np.int64).astype(np.intp, copy=False)


def _in_tied_runs(tied: np.ndarray) -> np.ndarray:
    """The positions of a sorted array that lie in a run of equal values, from ``tied``
    (``tied[i]``: positions i and i + 1 are equal)."""
    at = np.zeros(len(tied) + 1, dtype=bool)
    at[1:] = tied
    at[:-1] |= tied
    return np.flatnonzero(at)


#: head rows whose distinct values tell :func:`_radix_argsort` which passes to run
_TIE_SAMPLE = 512
_SIGN_BIT = np.uint64(1 << 63)


def _radix_argsort_all(key: np.ndarray) -> np.ndarray:
    """The stable argsort of the uint64 ``key``: four least-significant-digit passes of
    numpy's stable 16-bit radix argsort (a pass whose digit is the same on every row is
    skipped)."""
    order = _lsd_order(key, (0, 16, 32, 48))
    return np.arange(len(key)) if order is None else order


def _lsd_order(words: np.ndarray, shifts: tuple) -> np.ndarray | None:
    """The stable order of the unsigned integers ``words`` by their 16-bit digits at
    ``shifts`` (least significant first), one stable radix argsort per digit; a digit that is
    the same on every row is skipped. None when every digit was skipped."""
    order = None
    for shift in shifts:
        digit = (words >> words.dtype.type(shift)).astype(np.uint16)
        if digit.min() == digit.max():
            continue
        if order is None:
            order = np.argsort(digit, kind="stable")
        else:
            order = order[np.argsort(digit[order], kind="stable")]
    return order


def _radix_argsort(x: np.ndarray) -> np.ndarray:
    """A permutation sorting float64 ``x`` (no NaN) ascending: a radix sort of the IEEE
    bits, whose permutation is the stable argsort's of the bits (ties by position).

    The bits map to unsigned integers in the order of the values (a negative value's bits
    flipped, a positive one's sign bit set; -0.0 sorts just before +0.0, which
    :func:`_lexsort_xy` treats as a tie like any other). Where x has no ties the permutation
    is the only one there is, so it is ``np.argsort``'s; tied runs are ordered by
    :func:`_lexsort_xy` itself, whatever order they come in. numpy's comparison sorts cost
    n log n compares per call; radix passes are linear, and the isotonic fits of a path
    sort tens of thousands of rows per prefix.

    Two stable 16-bit passes order the rows by the key's high 32 bits (sign, exponent and
    20 bits of mantissa). Rows with equal high halves are then in position order; where
    their whole keys are equal too (tied values: the rounded scores of a metric, the
    posteriors of vote patterns) that is already the order by (key, position). Only the
    runs of equal high halves that hold different keys (values within about 1e-6 relative
    of each other, few where scores are continuous) are put in order by the whole key, a
    stable sort of those runs' rows alone (in high-half order with their positions
    ascending, so the stable sort keeps equal keys by position). The result is the
    four-pass sort's (:func:`_radix_argsort_all`) exactly: ordered by (key, position).
    Where many rows share a high half but not their key (a head sample shows it, or a
    quarter of the rows do), the four passes run instead."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    key = bits ^ ((np.uint64(0) - (bits >> np.uint64(63))) | _SIGN_BIT)
    n = len(key)
    high = (key >> np.uint64(32)).astype(np.uint32)
    n_head = len(np.unique(high[:_TIE_SAMPLE]))
    if 8 * n_head < 7 * min(n, _TIE_SAMPLE) and \
            8 * (len(np.unique(key[:_TIE_SAMPLE])) - n_head) > min(n, _TIE_SAMPLE):
        return _radix_argsort_all(key)     # narrow: the high halves do not tell keys apart
    order = _lsd_order(high, (0, 16))
    if order is None:
        return _radix_argsort_all(key)
    sorted_high = high[order]
    same = sorted_high[1:] == sorted_high[:-1]
    n_same = int(np.count_nonzero(same))
    if n_same == 0:
        return order
    if 64 * n_same > n:             # many equal high halves: are they ties of the whole key?
        sorted_key = key[order]
        split = same & (sorted_key[1:] != sorted_key[:-1])
        if not split.any():         # equal high halves hold equal keys: ties, by position
            return order
        run = np.empty(n, dtype=np.intp)    # each sorted position's run of equal high halves
        run[0] = 0
        np.cumsum(~same, out=run[1:])
        mixed = np.zeros(int(run[-1]) + 1, dtype=bool)
        mixed[run[1:][split]] = True        # the runs holding more than one key
        pos = np.flatnonzero(mixed[run])    # their rows (runs stay in place)
    else:
        pos = _in_tied_runs(same)   # the runs of equal high halves, each in place
    if 4 * len(pos) > n:
        return _radix_argsort_all(key)
    sub = order[pos]
    order[pos] = sub[np.argsort(key[sub], kind="stable")]
    return order


def _pool_starts(x: np.ndarray) -> np.ndarray:
    """Start index of each pooled run of sorted ``x`` under sklearn's ``_make_unique`` rule:
    a new run starts where x exceeds the run's *first* value by at least ``_X_EPS``."""
    n = len(x)
    starts = np.flatnonzero(np.diff(x) >= _X_EPS) + 1
    starts = np.concatenate([[0], starts])
    if len(starts) == n:            # every run a single value: none can span eps
        return starts
    ends = np.append(starts[1:], n)
    if np.all(x[ends - 1] - x[starts] < _X_EPS):
        return starts
    # Rare: a chain of sub-eps steps spans more than eps; replay the sequential rule.
    out = [0]
    current = x[0]
    for j in range(1, n):
        if x[j] - current >= _X_EPS:
            out.append(j)
            current = x[j]
    return np.asarray(out, dtype=np.intp)


def pairwise_features(scores: np.ndarray) -> np.ndarray:
    """Scores plus all products s_i * s_j (i < j): the second-order stacking features."""
    K = scores.shape[1]
    iu, ju = np.triu_indices(K, k=1)
    return np.hstack([scores, scores[:, iu] * scores[:, ju]])


def nested_pairwise_features(scores: np.ndarray) -> np.ndarray:
    """The same features for a whole path, judge by judge: judge k's score, then its
    products with the judges before it (s_i s_k, i < k). Every prefix's features are then
    the first K + K(K-1)/2 columns (nested, as the path fits need), and
    :func:`pairwise_columns` lists them in :func:`pairwise_features`' order, with the same
    values bit for bit (a product is commutative). Column-major: each feature contiguous."""
    n, P = scores.shape
    out = np.empty((n, P + P * (P - 1) // 2), order="F")
    c = 0
    for k in range(P):
        out[:, c] = scores[:, k]
        np.multiply(scores[:, :k], scores[:, k:k + 1], out=out[:, c + 1:c + 1 + k])
        c += 1 + k
    return out


def pairwise_columns(K: int) -> np.ndarray:
    """The columns of :func:`nested_pairwise_features` holding a K-prefix's
    :func:`pairwise_features`, in that function's order (scores, then products i < j)."""
    start = np.array([k + k * (k - 1) // 2 for k in range(K)], dtype=np.int64)
    iu, ju = np.triu_indices(K, k=1)
    return np.concatenate([start, start[ju] + 1 + iu])


def pattern_codes(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct pattern ids, each row's position among them): ``np.unique``'s."""
    uniq, inv = np.unique(ids, return_inverse=True)
    return uniq, inv.reshape(-1)


class PatternCodes:
    """:func:`pattern_codes` of pattern arrays, computed once per array *object*.

    The table families and the diagnostics of a prefix all factorise its pattern ids:
    the backoff every level, the residual table once per base family, the joint table
    and the diagnostics the top level; and a prefix's levels are the first levels of the
    longer prefixes of its path. Where the views hand these fits the same level arrays
    (:class:`~fcps_core.selection.views.ViewCache`), one sort serves them all. An entry
    holds its array, so an id is never reused while its entry lives, and the array is
    compared by identity: the codes are those of exactly that array (views never modify
    their arrays). The codes it hands out are read-only, since every fit that asks for them
    gets the same two arrays: a fit writing into them would raise rather than change another
    fit's table."""

    def __init__(self):
        self._by_id: dict[int, tuple] = {}

    def of(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        hit = self._by_id.get(id(ids))
        if hit is None or hit[0] is not ids:
            uniq, inv = pattern_codes(ids)
            uniq.flags.writeable = inv.flags.writeable = False
            hit = (ids, uniq, inv)
            self._by_id[id(ids)] = hit
        return hit[1], hit[2]


def pattern_table(ids: np.ndarray, values: np.ndarray, weight: np.ndarray | None = None,
                  codes: tuple[np.ndarray, np.ndarray] | None = None):
    """Sorted distinct pattern ids with their (weighted) value sums and counts; ``codes``:
    :func:`pattern_codes` of ``ids`` when the caller has them."""
    uniq, inv = pattern_codes(ids) if codes is None else codes
    if weight is None:
        return uniq, np.bincount(inv, weights=values), np.bincount(inv).astype(float)
    return (uniq, np.bincount(inv, weights=values * weight, minlength=len(uniq)),
            np.bincount(inv, weights=weight, minlength=len(uniq)))


def lookup(uniq: np.ndarray, ids: np.ndarray,
           codes: tuple[np.ndarray, np.ndarray] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``ids`` in sorted ``uniq`` and a mask of ids that are present (-1 never is).

    ``codes`` (optional): :func:`pattern_codes` of ``ids`` (their sorted distinct values and
    each row's position among them), e.g. kept by the view's :class:`PatternCodes`. Each
    distinct id is then searched once, in ascending order, and the rows read their id's
    answer: every row's position and mask are a function of its id alone, so they are the
    ones the row-by-row search gives. The held-out views' pattern levels are looked up by
    every table model of a fold (each level of a backoff, the residual tables), and a search
    of unsorted ids costs a mispredicted branch per step."""
    if len(uniq) == 0:
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
    if codes is not None:
        distinct, inverse = codes
        pos, found = lookup(uniq, distinct)
        return pos[inverse], found[inverse]
    pos = search_sorted(uniq, ids)
    pos = np.minimum(pos, len(uniq) - 1)
    found = (uniq[pos] == ids) & (ids >= 0)
    return pos, found


def ids_to_json(ids: np.ndarray) -> list[str]:
    # Pattern ids can exceed 2**53: strings keep them exact in any JSON reader.
    return [str(int(v)) for v in ids]


def ids_from_json(items: list) -> np.ndarray:
    return np.array([int(v) for v in items], dtype=np.int64)
