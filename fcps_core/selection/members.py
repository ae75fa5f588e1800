"""One member per distinct model in an average of tied candidates.

The tie-average rule averages the statistically tied candidates; a model reached by several
routes must count once. Two candidates are the same member when

* they are the same model: the same judge *set*, family and hyperparameters (the path
  only orders the judges; the refit on all deployable labels is then the same model, even
  when the folds' path rules gave the routes different held-out columns), or
* their held-out prediction columns agree within :data:`PREDICTION_TOLERANCE` (times the
  predictions' scale) on every held-out row and repeat: refits that differ in the last
  digits (another feature order, another solver start) are one model, where comparing
  predictions rounded to 12 decimals let them through.

:class:`MemberLookup` gives each candidate the id of its class (the connected parts of
both tests together, the same whatever order candidates are asked about) and is shared by
the choice rule and the bootstrap that replays it (:mod:`.honesty`, :mod:`.frontier`); every
candidate's class is found at the first question.

Both tests read the candidates as the folds fitted them. Two candidates on the same judges
whose fold fits differ can still be refitted on all deployable labels into the same
function: isotonic maps over linear scores of a few categorical judges are step functions
on the joint cells, equal whenever the scores order the cells alike, which the fit on all
rows may do where a fold's did not. The tie average then counts that function twice.
:func:`deployed_weights` states the deployed average as the distinct refitted models, each
with the share of the members that compute it (the average itself, as a function, is the
same), so the answer, the JSON and the predictor file name each model once. It compares
members on other judge sets too (a refit can ignore a judge, such as one constant on the
panel) and keeps each class's model on the fewest judges, so the deployed judges are the
ones some distinct model needs.
"""

from __future__ import annotations

import bisect
import json

import numpy as np

#: held-out predictions within this much (relative to 1 + their largest magnitude) are one model
PREDICTION_TOLERANCE = 1e-6

#: columns read together by :meth:`MemberLookup.ids` (a (repeats, rows, block) temporary)
READ_BLOCK = 64
#: values kept per column to rule out most columns with a near mean without reading them
SKETCH = 32


def model_key(c) -> tuple:
    """What a candidate computes once refitted: family, parameters and its judge set."""
    return c.family, json.dumps(c.params, sort_keys=True, default=str), frozenset(c.judge_idx)


class MemberLookup:
    """``lookup[c]``: the id of candidate c's class of identical models (see the module).

    The classes are the smallest partition of the menu in which both tests hold: two
    candidates with the same :func:`model_key` are in one class, and so are two whose
    held-out columns agree within the tolerance; so the classes are the connected parts of
    those two relations together, whatever order the candidates are asked about. (Naming
    classes first come, first named let the order decide: a candidate whose model key an
    earlier candidate on another path had named took that one's id, though its own column
    equalled a third candidate's, so the same tie set kept two copies of one model when the
    frontier asked about every candidate first and one when the choice asked about the tied
    ones first.) Every candidate's class is found at the first question: each distinct column
    is read once (a block at a time, or taken into place from the cross-fitted protocol's
    per-repeat tables) and compared, in column order, with the earlier columns of a near mean
    and sketch; ids number the classes by their first candidate."""

    def __init__(self, heldout, candidates):
        self.heldout = heldout
        self.candidates = candidates
        self.col, self.first = heldout.columns()
        self._class: np.ndarray | None = None
        self._at = None                             # (column length, the sketch's positions)

    def _column(self, k: int) -> np.ndarray:
        return self.heldout.stored_column(self.first[k])

    def _summary(self, p: np.ndarray) -> tuple[float, float, np.ndarray]:
        """A column's mean, its tolerance and its values at :data:`SKETCH` evenly spaced
        positions (``p`` contiguous: the mean sums in memory order)."""
        flat = p.reshape(-1)
        if self._at is None or self._at[0] != len(flat):
            self._at = (len(flat), np.linspace(0, len(flat) - 1, min(SKETCH, len(flat))).astype(np.int64))
        at = self._at[1]
        return (float(p.mean()), PREDICTION_TOLERANCE * (1.0 + float(np.max(np.abs(p), initial=0.0))),
                flat[at].copy())

    def _summaries(self, ks: list[int]) -> dict[int, tuple]:
        """Distinct column -> its :meth:`_summary`, the columns read a block at a time."""
        out = {}
        if getattr(self.heldout, "tables", None) is not None:
            # per-repeat tables: a column is taken into place directly, a block saves nothing
            for k in ks:
                out[k] = self._summary(self._column(k))
            return out
        for a in range(0, len(ks), READ_BLOCK):
            part = ks[a:a + READ_BLOCK]
            block = self.heldout.stored([self.first[k] for k in part])
            for i, k in enumerate(part):
                # a contiguous copy of the column: the mean of what one read returns
                out[k] = self._summary(np.ascontiguousarray(block[:, :, i], dtype=float))
        return out

    def _classes(self) -> np.ndarray:
        if self._class is not None:
            return self._class
        cands = self.candidates
        n = len(cands)
        col = [int(self.col[c]) for c in range(n)]
        ks = sorted(set(col))
        stats = self._summaries(ks)
        parent = list(range(len(ks)))               # union-find: distinct columns, then model keys

        def find(a: int) -> int:
            while parent[a] != a:
                parent[a] = parent[parent[a]]
                a = parent[a]
            return a

        def union(a: int, b: int) -> None:
            a, b = find(a), find(b)
            if a != b:
                parent[max(a, b)] = min(a, b)

        node = {k: i for i, k in enumerate(ks)}
        means: list[float] = []                      # sorted means of the columns kept to compare with
        named: list[tuple[float, int]] = []          # (mean, distinct column), sorted
        for k in ks:
            m, tol, sketch = stats[k]
            lo = bisect.bisect_left(means, m - tol)
            hi = bisect.bisect_right(means, m + tol)
            p = None
            for _, other in named[lo:hi]:            # equal columns have means within tol
                if not np.all(np.abs(stats[other][2] - sketch) <= tol):
                    continue
                p = self._column(k) if p is None else p
                if np.max(np.abs(self._column(other) - p), initial=0.0) <= tol:
                    union(node[k], node[other])
                    break
            else:
                at = bisect.bisect(means, m)
                means.insert(at, m)
                named.insert(at, (m, k))
        keys: dict[tuple, int] = {}
        for c in range(n):
            key = model_key(cands[c])
            if key not in keys:
                keys[key] = len(parent)
                parent.append(len(parent))
            union(node[col[c]], keys[key])
        ids: dict[int, int] = {}
        self._class = np.array([ids.setdefault(find(node[col[c]]), len(ids)) for c in range(n)], dtype=np.int64)
        return self._class

    def __getitem__(self, c) -> int:
        return int(self._classes()[int(c)])

    def ids(self, cands) -> np.ndarray:
        """``[self[c] for c in cands]`` as an int64 array."""
        return self._classes()[np.fromiter((int(c) for c in cands), dtype=np.int64)]


def member_lookup(heldout, candidates) -> MemberLookup:
    """The lookup of ``heldout`` (one per held-out matrix, shared by every reader)."""
    cache = heldout._cache
    lookup = cache.get("member_lookup")
    if lookup is None or lookup.candidates is not candidates:
        lookup = cache["member_lookup"] = MemberLookup(heldout, candidates)
    return lookup


def deployed_weights(result, members: list[int], predictions: dict | None = None) -> list[tuple[int, float]]:
    """The deployed average over candidates ``members`` (indices, in member order) as its
    distinct refitted models: ``[(candidate index, weight)]``, each member weighted 1/n and
    a member counted into an earlier one when their refitted models' predictions agree
    within :data:`PREDICTION_TOLERANCE` (times 1 + the predictions' largest magnitude) on
    every row the selection may read (all rows but the research test block T: its labels
    and outputs inform nothing deployed). The weighted sum of the kept models is the
    equal-weight average of all members on those rows.

    Judge sets are not compared: a model with a judge its refit ignores (one constant, or
    constant but for a few rows, whose Dawid-Skene or one-coin weight changes no
    prediction) and the same model without it compute one function on every row read, so
    they are one member. The class keeps the member on the fewest judges (the first of
    those in member order), so the deployed predictor calls, and the answer names, no judge
    none of its models needs.

    Members are compared on all those rows only when their predictions agree on
    :data:`SKETCH` evenly spaced ones (most pairs differ there: two families on the same
    judges as much as two judge sets). ``predictions``: a cache of candidate index
    -> those predictions (and of ``("sketch", index)`` -> the sketch), shared by callers
    that state several averages (the frontier's points)."""
    n = len(members)
    if n < 2:
        return [(int(m), 1.0) for m in members]
    # formed once per member list and refitted models: the result's memo is carried by
    # every dataclasses.replace of it (the audit, the assessment and the frontier ask
    # for the deployed members' weights in turn)
    memo = getattr(result, "weights_memo", None)
    key = tuple(int(m) for m in members)
    held = memo.get(key) if memo is not None else None
    if held is not None and held[0] is result.models:
        return list(held[1])
    weights = _distinct_weights(result, members, {} if predictions is None else predictions)
    if memo is not None:
        memo[key] = (result.models, weights)
    return list(weights)


def _distinct_weights(result, members: list[int], cache: dict) -> list[tuple[int, float]]:
    """:func:`deployed_weights`' comparisons, with ``cache`` its predictions."""
    n = len(members)
    cands = result.candidates
    rows = cache.get("rows")
    if rows is None:
        # every row but T, in order (a mask: np.setdiff1d would hash every row)
        keep = np.ones(result.panel.n_rows, dtype=bool)
        keep[np.asarray(result.blocks.T, dtype=np.int64)] = False
        rows = cache["rows"] = np.flatnonzero(keep)
    at = np.linspace(0, len(rows) - 1, min(SKETCH, len(rows))).astype(np.int64)    # positions in rows

    def predicted(m: int) -> np.ndarray:
        if m not in cache:
            cache[m] = np.asarray(result.predict_rows(cands[m], rows), dtype=float)
        return cache[m]

    def sketch(m: int) -> np.ndarray:
        if ("sketch", m) not in cache:
            cache[("sketch", m)] = (predicted(m)[at] if m in cache else
                                    np.asarray(result.predict_rows(cands[m], rows[at]), dtype=float))
        return cache[("sketch", m)]

    def same(a: int, b: int) -> bool:
        # the usual case (other judges, or another family on the same ones): the sketch
        # tells them apart (a tolerance on the sketch's own scale, at most the full one's)
        # before every row is predicted
        sa, sb = sketch(a), sketch(b)
        tol = PREDICTION_TOLERANCE * (1.0 + float(np.max(np.abs(sb), initial=0.0)))
        if np.max(np.abs(sa - sb), initial=0.0) > tol:
            return False
        p, q = predicted(a), predicted(b)
        tol = PREDICTION_TOLERANCE * (1.0 + float(np.max(np.abs(q), initial=0.0)))
        return bool(np.max(np.abs(p - q), initial=0.0) <= tol)
    kept: list[list] = []            # [index, count]
    for m in members:
        m = int(m)
        for entry in kept:
            if same(entry[0], m):
                entry[1] += 1
                if len(cands[m].judge_idx) < len(cands[entry[0]].judge_idx):
                    entry[0] = m      # the class's model on the fewest judges
                break
        else:
            kept.append([m, 1])
    return [(index, count / n) for index, count in kept]
