"""Distinct-row views of a selection's blocks and the validation records of fitted models.

Every family sees a block as its distinct (pattern, label) or (score vector, label) rows with
their counts (``PrefixFeatures.weight``); each family's weighted fit equals its fit on the
expanded rows, so the views change cost, not results.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from ..measures.diagnostics import losses
from ..data.encoding import INT64_SAFE, EncodedPanel, prefix_patterns
from ..families import PrefixFeatures
from ..families.base import PatternCodes
from ..measures.judge_paths import mixed_radix_ranks


# -- distinct-row views of the blocks ---------------------------------------------------------
@dataclass
class BlockView:
    """A block's rows for one prefix: distinct rows with counts (``X.weight``) when the
    prefix allows it, else the raw rows. ``ids``: the prefix's joint-pattern ids."""

    X: PrefixFeatures
    y: np.ndarray | None
    ids: np.ndarray | None
    inverse: np.ndarray | None = None     # raw row -> distinct row (None: raw rows)
    #: the rows are distinct rows but ``inverse`` was not kept (the block's values are
    #: only ever summarised with the counts, never mapped back to its raw rows)
    compressed: bool = False

    def expand(self, values: np.ndarray) -> np.ndarray:
        """Per-distinct-row values on the block's raw rows."""
        return _expand(self, values)


def _expand(view, values: np.ndarray) -> np.ndarray:
    if view.inverse is None:
        if view.compressed:
            raise ValueError("this view keeps no raw-row map: only blocks in ViewCache.EXPANDED "
                             "can be expanded to their raw rows")
        return values
    return values[view.inverse]


def view_kind(cls) -> str:
    """Families that read pattern ids get table views; the others see only the scores."""
    return "table" if cls.needs_patterns else "scalar"


#: key ranges up to this many times the rows are grouped by counting (no sort); a wider
#: range costs more to count (three passes over it) than the rows cost to sort
COUNTING_FACTOR = 8
#: ... and key ranges up to this size whatever the rows
COUNTING_FLOOR = 1 << 12


def group_rows(key: np.ndarray, bound: int, with_inverse: bool = True
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(a representative position, count) of each distinct value of ``key`` (ints in
    [0, bound)), in increasing key order, and each row's distinct value (its rank; None
    unless ``with_inverse``). Rows sharing a key are identical in everything the view
    keeps, so which row represents them does not matter."""
    if bound <= max(COUNTING_FLOOR, COUNTING_FACTOR * len(key)):
        counts = np.bincount(key, minlength=bound)
        present = np.flatnonzero(counts)
        rep = np.empty(bound, dtype=np.int64)
        rep[key] = np.arange(len(key))
        if not with_inverse:
            return rep[present], counts[present], None
        rank = row_index(np.cumsum(counts > 0) - 1, len(present))
        return rep[present], counts[present], rank[key]
    if not with_inverse:
        _, first, counts = np.unique(key, return_index=True, return_counts=True)
        return first, counts, None
    _, first, inverse, counts = np.unique(key, return_index=True, return_inverse=True, return_counts=True)
    return first, counts, row_index(inverse.reshape(-1), len(first))


def row_index(index: np.ndarray, n: int) -> np.ndarray:
    """A raw row -> distinct row map (values below ``n``) as int32 when n fits: such maps
    are kept per view, and half the bytes is half their memory."""
    return index.astype(np.int32) if n < np.iinfo(np.int32).max else index


def compact_index(values: np.ndarray, n_levels: int) -> np.ndarray:
    """``values`` (ints in [0, n_levels)) in the smallest signed integer type that still
    holds n_levels + 1 (key builders add one to a digit), so a per-row index of a judge's
    few score levels costs a byte or two per row instead of eight."""
    for dtype in (np.int8, np.int16, np.int32):
        if n_levels + 1 <= np.iinfo(dtype).max:
            return values.astype(dtype)
    return values.astype(np.int64)


class PatternCache:
    """Joint-pattern ids on every row of judge prefixes (:func:`prefix_patterns`),
    computed from the codes on demand: ``cache[judges]`` is the list of the prefix's
    levels, as a dict of them would give.

    Only the last path asked for is held (a prefix of it is a slice of its levels): a
    selection works through its paths one at a time, and each path's (rows x K) ids are
    as large as the codes, so holding every path's would grow memory with the number of
    paths. The distinct-row views keep what they need of the ids (:class:`ViewCache`);
    later readers (the audit of averaged members, the per-cell table, predictions on other
    rows) recompute the few prefixes they ask for."""

    def __init__(self, encoded: EncodedPanel):
        self.encoded = encoded
        self._held: tuple[tuple, list] | None = None

    def hold(self, judges: tuple) -> list:
        """The levels of ``judges`` (a whole path), computed unless held, and held."""
        judges = tuple(judges)
        if self._held is None or self._held[0] != judges:
            self._held = None           # freed before the next path's levels are made
            levels = prefix_patterns(self.encoded.codes, self.encoded.alphabet_sizes, list(judges))
            self._held = (judges, levels)
        return self._held[1]

    def _held_prefix(self, judges: tuple) -> list | None:
        if self._held is not None and self._held[0][:len(judges)] == judges:
            return self._held[1][:len(judges)]
        return None

    def __getitem__(self, judges: tuple) -> list:
        """The levels of ``judges`` on every row (a slice of the held path's when it starts
        with them; otherwise computed, not held)."""
        judges = tuple(judges)
        held = self._held_prefix(judges)
        if held is not None:
            return held
        return prefix_patterns(self.encoded.codes, self.encoded.alphabet_sizes, list(judges))

    def on_rows(self, judges: tuple, rows: np.ndarray) -> list:
        """The levels of ``judges`` on ``rows`` only: ids are computed row by row from the
        codes, so these equal the every-row levels at ``rows``."""
        judges = tuple(judges)
        held = self._held_prefix(judges)
        if held is not None:
            return [None if p is None else p[rows] for p in held]
        return prefix_patterns(self.encoded.codes[rows], self.encoded.alphabet_sizes, list(judges))

    def release(self) -> None:
        """Drop the held levels (the menu is fitted)."""
        self._held = None


@dataclass
class PathView:
    """A block's rows for a whole path (the scalar families): distinct (score vector[,
    label]) rows of the path's judges with counts, and each raw row's distinct row
    (``inverse``; None = the rows are the raw rows). A K-prefix reads the first K columns:
    rows that agree on the path agree on every prefix, so the counts stay exact."""

    X: PrefixFeatures
    y: np.ndarray | None
    inverse: np.ndarray | None
    compressed: bool = False        # distinct rows whose raw-row map was not kept
    #: each distinct row's first position among the block's rows (None: raw rows)
    first: np.ndarray | None = None
    #: per judge (and "y" for the label), the distinct rows' score-level (label) index,
    #: made when a prefix's view is grouped from this one (:meth:`ViewCache.prefix_of_path`)
    digits: dict = field(default_factory=dict)
    judges: tuple = ()              # the path's judges (the columns of ``X.scores``)

    def expand(self, values: np.ndarray) -> np.ndarray:
        """Per-distinct-row values (first axis) on the block's raw rows."""
        return _expand(self, values)


class ViewCache:
    """Per-(judges, block, kind) views, built once per selection, shared by every family.

    ``kind='table'``: distinct (joint pattern, label) rows, for families that read pattern
    ids (their scores are a function of the pattern). ``kind='scalar'``: distinct
    (score vector, label) rows, for families that read only the scores (tie and parse_error
    share a score, so this is coarser). Unlabelled traffic (block ``rest``) is grouped
    without labels. A prefix with a continuous judge keeps its raw rows.
    """

    #: blocks whose per-distinct-row values are mapped back to their raw rows (the
    #: held-out prediction matrix reads V's); the other blocks' views keep no raw-row map,
    #: which would cost 8 bytes per row and prefix
    EXPANDED = frozenset({"V"})

    def __init__(self, encoded: EncodedPanel, rows: dict[str, np.ndarray], labels: np.ndarray,
                 pattern_cache: "PatternCache", compress: bool):
        # rows: block name (M, V, T, rest = unlabelled traffic) -> row indices
        self.encoded, self.labels, self.pattern_cache = encoded, labels, pattern_cache
        self.rows = rows
        self.compress = compress
        self.continuous = np.array([e.schema == "continuous" for e in encoded.encoders])
        self._cache: dict[tuple, BlockView] = {}
        self._ycode: dict[str, tuple[int, np.ndarray]] = {}
        self._score_code: dict[int, tuple[int, np.ndarray]] = {}
        # raw-row views: (prefix judges, block) -> pattern level on the block's rows, and per
        # block the factorisations of those levels (see _levels_on_rows)
        self._levels: dict[tuple, np.ndarray] = {}
        self._codes: dict[str, PatternCodes] = {}
        self._path_held: dict[tuple, PathView] = {}     # path views held for their next reader
        #: per block, the last scalar view's prefix, its score-level ids and their bound
        self._score_held: dict[str, tuple[tuple, np.ndarray, int]] = {}

    def release(self, blocks) -> None:
        """Drop the cached views of ``blocks`` (rebuilt on demand if asked for again)."""
        for key in [k for k in self._cache if k[1] in blocks]:
            del self._cache[key]
        for key in [k for k in self._levels if k[1] in blocks]:
            del self._levels[key]
        for block in blocks:
            self._codes.pop(block, None)
            self._score_held.pop(block, None)

    def get(self, judges: tuple, block: str, kind: str = "table") -> BlockView:
        key = (judges, block, kind)
        if key not in self._cache:
            self._cache[key] = self._build(judges, block, kind)
        return self._cache[key]

    def _labels_code(self, block: str) -> tuple[int, np.ndarray]:
        if block not in self._ycode:
            levels, code = np.unique(self.labels[self.rows[block]], return_inverse=True)
            self._ycode[block] = (len(levels), code.astype(np.int64))
        return self._ycode[block]

    def _scores_code(self, j: int) -> tuple[int, np.ndarray] | None:
        """(number of distinct scores, per-row index of the row's score) for judge j; None
        when a row holds a code the encoder never saw (its score is the default)."""
        if j not in self._score_code:
            codes = self.encoded.codes[:, j]
            if len(codes) and codes.min() < 0:
                self._score_code[j] = None
            else:
                values, index = np.unique(self.encoded.encoders[j].code_scores(),
                                          return_inverse=True)
                self._score_code[j] = (len(values), compact_index(index, len(values))[codes])
        return self._score_code[j]

    def short_prefixes(self, judges: tuple, n_path_rows: int) -> list[int]:
        """Prefix sizes K whose M view has at most a quarter of ``n_path_rows`` distinct
        rows for sure (the product of the judges' score levels and the label levels)."""
        if not self.compress or not len(self.rows["M"]):
            return []
        bound = self._labels_code("M")[0]
        out = []
        for K, j in enumerate(judges, start=1):
            coded = None if self.continuous[j] else self._scores_code(j)
            if coded is None:
                break
            bound *= coded[0]
            if 4 * bound > n_path_rows:
                break
            out.append(K)
        return out

    def path_view(self, judges: tuple, block: str, hold: bool = False) -> PathView:
        """The block's distinct rows over all of ``judges`` (not cached: one per path).
        ``hold``: keep a view of distinct rows until the next call for it, which takes it
        (the joint families' fits and then the path's own fits read the same M view; a
        view of raw rows is as large as the block and is not held)."""
        key = (tuple(judges), block)
        if key in self._path_held:
            return self._path_held.pop(key)
        view = self._path_view(judges, block)
        if hold and view.X.weight is not None:
            self._path_held[key] = view
        return view

    def release_held(self) -> None:
        """Drop the held path views (:meth:`path_view` with ``hold``) nobody took and the
        held score-level ids (the menu is fitted)."""
        self._path_held.clear()
        self._score_held.clear()

    def _path_view(self, judges: tuple, block: str) -> PathView:
        rows = self.rows[block]
        cols = list(judges)
        labelled = block != "rest"
        key = None
        if self.compress and len(rows) and not self.continuous[cols].any():
            coded = [self._scores_code(j) for j in cols]
            if all(c is not None for c in coded):
                # dense ids of (score levels..., label) in lexicographic order: mixed-radix
                # keys ranked as they would overflow the count, so no overflow
                digits = ((n, index[rows]) for n, index in coded)
                key = mixed_radix_ranks(itertools.chain(digits, [self._labels_code(block)] if labelled else []))
        if key is None:
            X = PrefixFeatures(patterns=[None] * len(cols), scores=self.encoded.scores[np.ix_(rows, cols)])
            return PathView(X=X, y=self.labels[rows] if labelled else None, inverse=None)
        counts = np.bincount(key)
        first = np.empty(len(counts), dtype=np.int64)
        first[key[::-1]] = np.arange(len(key) - 1, -1, -1)   # first raw row of each distinct row
        sel = rows[first]
        X = PrefixFeatures(patterns=[None] * len(cols), scores=self.encoded.scores[np.ix_(sel, cols)],
                           weight=counts.astype(float))
        keep = block in self.EXPANDED
        return PathView(X=X, y=self.labels[sel] if labelled else None,
                        inverse=row_index(key, len(counts)) if keep else None, compressed=not keep,
                        first=first, judges=tuple(judges))

    def prefix_of_path(self, path_view: PathView, judges: tuple, block: str) -> BlockView:
        """The scalar view of ``judges`` on ``block`` (cached as :meth:`get` caches it), where
        ``path_view`` is the block's view of a path that starts with ``judges``: the path's
        distinct rows are grouped by the prefix's key, fewer rows than the block's. Rows
        that agree on the path agree on the prefix, so the groups, their order (the same
        keys), counts, representatives' values and raw-row map are those :meth:`get` makes."""
        key = (judges, block, "scalar")
        if key not in self._cache:
            view = self._prefix_of_path(path_view, judges, block)
            self._cache[key] = self._build(judges, block, "scalar") if view is None else view
        return self._cache[key]

    def _prefix_of_path(self, path_view: PathView, judges: tuple, block: str) -> BlockView | None:
        first = path_view.first
        rows = self.rows[block]
        keep = block in self.EXPANDED
        if (first is None or path_view.X.weight is None or (keep and path_view.inverse is None)
                or path_view.judges[:len(judges)] != tuple(judges)):
            return None
        digits = path_view.digits

        def levels_of(j, index):       # a judge's score levels on the path's distinct rows, kept
            if j not in digits:
                digits[j] = index[rows[first]]
            return digits[j]
        ids, bound = self._extend_score_ids(np.zeros(len(first), dtype=np.int64), 1, judges, levels_of)
        if ids is None:
            return None
        key = ids
        labelled = block != "rest"
        if labelled:
            n_levels, ycode = self._labels_code(block)
            if bound >= INT64_SAFE // max(n_levels, 1):
                return None
            if "y" not in digits:
                digits["y"] = ycode[first]
            key, bound = ids * n_levels + digits["y"], bound * n_levels
        pos, _, group = group_rows(key, bound, with_inverse=True)
        counts = np.bincount(group, weights=path_view.X.weight, minlength=len(pos))
        # each group's representative is a distinct row of the path: its scores and label
        # are the path view's (the path's judges start with the prefix's)
        X = PrefixFeatures(patterns=[None] * len(judges), weight=counts,
                           scores=np.ascontiguousarray(path_view.X.scores[pos, :len(judges)]))
        return BlockView(X=X, y=path_view.y[pos] if labelled else None, ids=None,
                         inverse=group[path_view.inverse] if keep else None, compressed=not keep)

    def _build(self, judges: tuple, block: str, kind: str) -> BlockView:
        rows = self.rows[block]
        cols = list(judges)
        table_kind = kind == "table"
        # scalar views read only the scores (their families never read pattern ids)
        patterns = self.pattern_cache[judges] if table_kind else [None] * len(judges)
        top = patterns[-1]
        labelled = block != "rest"
        if (self.compress and len(rows) and not self.continuous[cols].any()
                and (top is not None or not table_kind)):
            if table_kind:
                ids, bound = top[rows], None
            else:
                ids, bound = self._score_ids(judges, block)
            if ids is not None and ids.min() >= 0:
                if bound is None:
                    bound = int(ids.max()) + 1
                key = ids
                if labelled:
                    n_levels, ycode = self._labels_code(block)
                    if bound >= INT64_SAFE // max(n_levels, 1):
                        ids = np.unique(ids, return_inverse=True)[1]
                        bound = int(ids.max()) + 1
                    key, bound = ids * n_levels + ycode, bound * n_levels
                keep = block in self.EXPANDED
                pos, counts, inverse = group_rows(key, bound, with_inverse=keep)
                sel = rows[pos]
                pats = ([None if p is None else p[sel] for p in patterns] if table_kind
                        else [None] * len(cols))
                X = PrefixFeatures(patterns=pats, scores=self.encoded.scores[np.ix_(sel, cols)],
                                   weight=counts.astype(float))
                return BlockView(X=X, y=self.labels[sel] if labelled else None,
                                 ids=top[sel] if table_kind else None, inverse=inverse,
                                 compressed=not keep)
        levels = self._levels_on_rows(judges, block, patterns)
        X = PrefixFeatures(patterns=levels, scores=self.encoded.scores[np.ix_(rows, cols)],
                           codes=self._codes.setdefault(block, PatternCodes()) if table_kind else None)
        return BlockView(X=X, y=self.labels[rows] if labelled else None, ids=levels[-1] if levels else None)

    def _score_ids(self, judges: tuple, block: str) -> tuple[np.ndarray | None, int]:
        """Mixed-radix ids of the judges' score levels on the block's rows and their bound
        (None: a judge holds a never-seen code, or the ids would overflow). The ids of
        the last prefix asked for on a block are held, and a longer prefix of the same
        judges extends them (the short prefixes of a path are asked for in ascending K):
        the same arithmetic from the same start, so the same ids."""
        rows = self.rows[block]
        held = self._score_held.get(block)
        if held is not None and held[0] == judges[:len(held[0])]:
            done, ids, bound = held
        else:
            done, ids, bound = (), np.zeros(len(rows), dtype=np.int64), 1
        ids, bound = self._extend_score_ids(ids, bound, judges[len(done):], lambda j, index: index[rows])
        if ids is not None:
            self._score_held[block] = (tuple(judges), ids, bound)
        return ids, bound

    def _extend_score_ids(self, ids: np.ndarray, bound: int, judges, levels_of) -> tuple[np.ndarray | None, int]:
        """``ids`` (below ``bound``) extended by each judge's score level in turn, mixed
        radix: ``levels_of(j, index)`` gives judge j's levels on the rows ``ids`` stand for
        (``index``: its level per panel row). (None, bound) where a judge holds a
        never-seen code or the ids would overflow. :meth:`_score_ids` runs it on a block's
        rows, :meth:`_prefix_of_path` on a path's distinct rows: the same arithmetic."""
        for j in judges:
            coded = self._scores_code(j)
            if coded is None or bound * coded[0] >= INT64_SAFE:
                return None, bound
            ids = ids * coded[0] + levels_of(j, coded[1])
            bound *= coded[0]
        return ids, bound

    def _levels_on_rows(self, judges: tuple, block: str, patterns: list) -> list:
        """The prefix's pattern levels on the block's raw rows. Level k depends only on the
        first k+1 judges, so every prefix sharing them is handed the same array: their
        factorisations (:class:`PatternCodes`, one per block) are then made once."""
        rows = self.rows[block]
        out = []
        for k, p in enumerate(patterns):
            if p is None:
                out.append(None)
                continue
            key = (judges[:k + 1], block)
            if key not in self._levels:
                self._levels[key] = p[rows]
            out.append(self._levels[key])
        return out


def weighted_mean_loss(values: np.ndarray, weight: np.ndarray | None) -> float:
    return float(np.mean(values)) if weight is None else float(weight @ values / weight.sum())


def weighted_se(values: np.ndarray, weight: np.ndarray | None) -> float:
    """Standard error of the mean of the expanded rows (std with ddof=1 / sqrt(n))."""
    n = len(values) if weight is None else float(weight.sum())
    if n <= 1:
        return math.nan
    m = weighted_mean_loss(values, weight)
    dev = (values - m) ** 2
    ss = float(dev.sum()) if weight is None else float(weight @ dev)
    return math.sqrt(ss / (n - 1)) / math.sqrt(n)


@dataclass
class BlockPrediction:
    """A model's predictions on a view's distinct rows; ``raw()`` maps them to the block's
    raw rows."""

    values: np.ndarray
    view: "BlockView | PathView"

    def raw(self) -> np.ndarray:
        return self.view.expand(self.values)


def prediction_record(model, vV, pV: np.ndarray | None, score_val: bool = True, vT=None,
                      pT: np.ndarray | None = None) -> dict:
    """A fitted model's record: its validation risks (both objectives; NaN unless
    ``score_val`` and V has rows) from its predictions ``pV`` on the view ``vV``, and those
    predictions (and ``pT`` on ``vT``) kept under ``pred`` for the choice rules, the
    held-out matrix and the audit; ``record_se`` adds the SEs."""
    if score_val and pV is not None and len(pV):
        w = vV.X.weight
        l_mse, l_nll = losses("mse", vV.y, pV), losses("nll", vV.y, pV)
        rec = {"model": model, "mse": weighted_mean_loss(l_mse, w), "nll": weighted_mean_loss(l_nll, w),
               "losses": (l_mse, l_nll), "weight": w}
    else:
        empty = np.zeros(0)
        rec = {"model": model, "mse": math.nan, "nll": math.nan, "losses": (empty, empty), "weight": None}
    rec["pred"] = {}
    if pV is not None:
        rec["pred"]["V"] = BlockPrediction(pV, vV)
    if pT is not None:
        rec["pred"]["T"] = BlockPrediction(pT, vT)
    return rec


def unscored_record(model, vV: BlockView | None = None) -> dict:
    """A fitted model whose validation risks are not computed (NaN); its V predictions are
    kept (the cross-fitted protocol's held-out rows)."""
    has_rows = vV is not None and vV.X.n_rows
    return prediction_record(model, vV, model.predict(vV.X) if has_rows else None, score_val=False)


def validation_record(model, vV: BlockView) -> dict:
    """A fitted model with its validation risks (both objectives) and V predictions."""
    return prediction_record(model, vV, model.predict(vV.X))


def record_se(rec: dict, objective: str) -> float:
    """SE of a record's mean validation loss (computed for the grid's chosen entry only)."""
    key = "se_" + objective
    if key not in rec:
        rec[key] = weighted_se(rec["losses"][0 if objective == "mse" else 1], rec["weight"])
    return rec[key]


