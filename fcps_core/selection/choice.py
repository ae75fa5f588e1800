"""Choice rules over a matrix of held-out losses, with paired, group-clustered errors.

The input is each candidate's held-out prediction for every row (out-of-fold rows under the
cross-fitted protocol, V rows under the split protocol). A rule turns it into the deployed
choice:

* ``argmin`` -- the lowest mean held-out risk (the paper's Eq. eq:general-selection);
  exact ties go to the smaller K, the simpler family, the earlier candidate.
* ``simplest_within_se`` -- among candidates whose risk is within one paired SE of the
  best, the simplest on the paper's complexity ladder (mean/vote < one-coin < ridge/logistic
  < pairwise stackers < table-like), then the smaller K.
* ``tie_average`` -- the average of the statistically tied candidates' predictions (within
  one paired SE of the best; one member per distinct model, :mod:`.members`; at most
  ``max_members``, lowest risk first), deployed as one predictor.
* ``cheapest_tied`` -- among the tied candidates on the best candidate's own line (the same
  path, family and parameters; only K varies), the cheapest to run (the sum of its judges'
  costs, then the lower latency, then the simpler family and smaller K); needs judge costs
  (:mod:`fcps_core.data.judge_costs`). The one-SE rule along one nested sequence, as in
  Breiman's pruning: the cheapest tied member of the *whole* menu (two thousand candidates
  on LLMBar) is the one whose risk was estimated most luckily, and its deployed risk pays
  the luck back (``bench/bench_costs.py``: T-MSE +0.0073 over argmin against +0.0022 on
  the line, 30 splits).

Paired SE. For candidates c and b the per-row loss differences d_i = l_ic - l_ib are summed
within each group g (rows of one group are dependent), D_g, and the SE of the mean
difference is sqrt(G/(G-1) * sum_g (D_g - dbar n_g)^2) / n with n rows in G groups (the
cluster-robust variance of a mean). Bootstrap weights w_g (how often group g was drawn)
enter every sum, so the same code serves the bias-corrected bootstrap of :mod:`.honesty`.
"""

from __future__ import annotations

import contextlib

import math
from dataclasses import dataclass, field, replace

import numpy as np

from ..measures.diagnostics import argmin_with_ties, losses, risk_tolerance
from ..families import REGISTRY
from ..families.base import one_blas_thread


#: rules that pick one member of the tie set by a fixed preference order (:func:`preference_order`)
WITHIN_TIE_RULES = ("simplest_within_se", "cheapest_tied")


@dataclass
class Choice:
    best: int                 # the lowest-risk candidate (column)
    chosen: int               # the deployed candidate (an average: its best member)
    members: list[int] | None  # an average: the averaged columns
    tied: np.ndarray          # columns within one paired SE of the best


def line_ids(candidates) -> np.ndarray:
    """An id per candidate; candidates on one line (the same path, family and parameters,
    differing only in K) share it."""
    import json
    seen: dict[tuple, int] = {}
    return np.array([seen.setdefault((c.path_label or c.path_rule, c.family,
                                      json.dumps(c.params, sort_keys=True, default=str)), len(seen))
                     for c in candidates], dtype=np.int64)


def rule_pool(rule: str, tied: np.ndarray, best, lines: np.ndarray | None) -> np.ndarray:
    """The tied candidates a within-tie rule picks from: ``cheapest_tied`` keeps those on
    the best's line (``lines``: :func:`line_ids`), the others the whole tie set. ``tied``
    is an index array (``best`` one column) or, for many draws at once, a (draws,
    candidates) mask (``best`` one column per draw)."""
    if rule != "cheapest_tied" or lines is None:
        return tied
    if tied.ndim == 2:
        return tied & (lines[None, :] == lines[np.asarray(best)][:, None])
    return tied[lines[tied] == lines[best]]


class GroupedLosses:
    """Per-group sums of a (rows, candidates) loss matrix, for means and clustered SEs.

    The losses are kept once per *distinct row* (``losses``: distinct rows x distinct
    columns; ``col`` maps a candidate to its column, candidates with identical loss columns
    share one) and the groups as a sparse count matrix over distinct rows. Groups with
    identical contents have identical sums, so they form one *unit* (``unit_matrix``: one
    group's count of each distinct row per unit, ``unit_groups`` groups per unit,
    ``group_unit`` each group's unit). A group's loss sums are the unit matrix times the
    losses, formed a block of columns at a time (never a whole (groups, candidates)
    matrix). Built from raw rows (``GroupedLosses(row_losses, groups)``) every row is its
    own distinct row, every group its own unit and every column its own; the raw sums are
    then ``np.add.at``'s, bit for bit. :meth:`from_units` takes the compressed form
    (:class:`.folds.HeldOut`). ``sums`` and ``rows_per_group`` give the per-group view.
    """

    #: columns per block when a statistic needs a (units, columns) temporary
    BLOCK = 32

    def __init__(self, row_losses: np.ndarray, groups: np.ndarray):
        from scipy import sparse
        row_losses = np.asarray(row_losses, dtype=float)
        uniq, inv = np.unique(groups, return_inverse=True)
        inv = inv.reshape(-1)
        n, G = len(inv), len(uniq)
        # rows of a group in row order: the sums are np.add.at's, bit for bit
        A = sparse.csr_matrix((np.ones(n), (inv, np.arange(n))), shape=(G, n))
        self._setup(row_losses, A, np.ones(G), np.arange(G), np.arange(row_losses.shape[1]))
        self.group_of_row = inv

    @classmethod
    def from_units(cls, losses: np.ndarray, unit_matrix, unit_groups: np.ndarray, group_unit: np.ndarray,
                   col: np.ndarray) -> "GroupedLosses":
        """``losses`` (distinct rows, distinct columns); ``unit_matrix`` (units, distinct
        rows) sparse counts of one group of each unit; ``unit_groups`` groups per unit;
        ``group_unit`` each group's unit (groups in sorted-id order); ``col`` candidate ->
        column."""
        obj = cls.__new__(cls)
        obj._setup(losses, unit_matrix, unit_groups, group_unit, col)
        obj.group_of_row = None
        return obj

    def _setup(self, losses, unit_matrix, unit_groups, group_unit, col) -> None:
        self.losses = np.asarray(losses, dtype=float)
        self.unit_matrix = unit_matrix.tocsr()
        self.unit_groups = np.asarray(unit_groups, dtype=float)
        self.unit_rows = np.asarray(self.unit_matrix.sum(axis=1), dtype=float).reshape(-1)
        self.group_unit = np.asarray(group_unit, dtype=np.int64)
        self.col = np.asarray(col, dtype=np.int64)
        self.n_groups = len(self.group_unit)
        self.n_rows = float(self.unit_groups @ self.unit_rows)
        first = np.full(self.losses.shape[1], -1, dtype=np.int64)
        first[self.col[::-1]] = np.arange(len(self.col) - 1, -1, -1)
        self.first = first                   # a candidate of each distinct column
        self._cache: dict = {}

    # -- per-group views -----------------------------------------------------------------
    @property
    def rows_per_group(self) -> np.ndarray:
        return self.unit_rows[self.group_unit]

    def unit_sums(self, cols=None) -> np.ndarray:
        """(units, columns) one group's loss sums per unit, for distinct columns ``cols``
        (None: all; an index array or a slice). Formed a block of columns at a time: the
        sparse product takes its dense operand row-major, so the (column-major) losses of
        all the columns asked for would otherwise be copied whole, twice."""
        held = self._cache.get("held_unit_sums")
        if isinstance(cols, slice):
            return held[:, cols].copy() if held is not None else np.asarray(self.unit_matrix @ self.losses[:, cols])
        cols = np.arange(self.losses.shape[1]) if cols is None else np.asarray(cols, dtype=np.int64).reshape(-1)
        if held is not None:
            return held[:, cols]
        out = np.empty((len(self.unit_rows), len(cols)))
        for a in range(0, len(cols), self.BLOCK):
            out[:, a:a + self.BLOCK] = self.unit_matrix @ self.losses[:, cols[a:a + self.BLOCK]]
        return out

    @contextlib.contextmanager
    def unit_sums_held(self, max_cells: int):
        """Within the block, :meth:`unit_sums` reads every column's unit sums formed once
        (by the same sparse products, a block of columns at a time) instead of forming them
        per call: the paired SEs against many reference columns (the frontier's levels, one
        per distinct best) each read all of them. Only when units x columns is at most
        ``max_cells``; released at the end of the block."""
        if "held_unit_sums" in self._cache or len(self.unit_rows) * self.losses.shape[1] > max_cells:
            yield
            return
        self._cache["held_unit_sums"] = self.unit_sums()     # formed before it is kept: computed, not read
        try:
            yield
        finally:
            self._cache.pop("held_unit_sums", None)

    @property
    def sums(self) -> np.ndarray:
        """(groups, candidates) loss sums."""
        return self.unit_sums()[self.group_unit][:, self.col]

    @property
    def group_matrix(self):
        """(groups, distinct rows) sparse counts of every group's rows."""
        if "group_matrix" not in self._cache:
            self._cache["group_matrix"] = self.unit_matrix[self.group_unit]
        return self._cache["group_matrix"]

    def columns(self, idx) -> "GroupedLosses":
        """The same groups restricted to candidates ``idx`` (in that order)."""
        used, new_col = np.unique(self.col[np.asarray(idx, dtype=np.int64)], return_inverse=True)
        out = GroupedLosses.from_units(self.losses[:, used], self.unit_matrix, self.unit_groups,
                                       self.group_unit, new_col.reshape(-1))
        out.group_of_row = self.group_of_row
        return out

    # -- statistics ----------------------------------------------------------------------
    def unit_weights(self, w: np.ndarray | None) -> np.ndarray:
        """Per-unit total of per-group weights ``w`` (None: every group once); ``w`` may
        be a (groups, draws) matrix, one column per bootstrap draw."""
        if w is None:
            return self.unit_groups
        w = np.asarray(w, dtype=float)
        if w.ndim == 1:
            return np.bincount(self.group_unit, weights=w, minlength=len(self.unit_groups))
        if "units_of_groups" not in self._cache:        # (units, groups) 0/1
            from scipy import sparse
            G = self.n_groups
            self._cache["units_of_groups"] = sparse.csr_matrix(
                (np.ones(G), (self.group_unit, np.arange(G))), shape=(len(self.unit_rows), G))
        return self._cache["units_of_groups"] @ w

    def _means(self, wk: np.ndarray) -> np.ndarray:
        """Weighted means per distinct column."""
        row_weight = np.asarray(self.unit_matrix.T @ wk).reshape(-1)
        return (row_weight @ self.losses) / (wk @ self.unit_rows)

    def means(self, w: np.ndarray | None = None) -> np.ndarray:
        if w is None:
            if "means" not in self._cache:
                self._cache["means"] = self._means(self.unit_groups)[self.col]
            return self._cache["means"].copy()
        return self._means(self.unit_weights(w))[self.col]

    def spread(self) -> tuple[np.ndarray, np.ndarray, float]:
        """Over all groups, per distinct column: sum of S^2 and of S n (S: a group's loss
        sum, n: its rows), and the sum of n^2 (kept from the first SE's pass)."""
        if "spread" not in self._cache:
            self._weighted_squares(self.unit_groups, np.zeros(self.losses.shape[1]), keep_spread=True)
        return self._cache["spread"]

    def _weighted_squares(self, wk: np.ndarray, centre: np.ndarray, ref: int | None = None,
                          keep_spread: bool = False, cols: np.ndarray | None = None) -> np.ndarray:
        """sum_k wk_k (S_kc [- S_k,ref] - rows_k * centre_c)^2 per distinct column, with the
        unit sums S formed a block of columns at a time (and :meth:`spread` on the way).
        ``cols``: only the blocks holding those distinct columns (sorted), formed as the
        whole pass forms them, so each of their sums is the same to the bit; no spread kept;
        the other columns' entries are left unset."""
        base = None if ref is None else self.unit_sums([ref])
        C = self.losses.shape[1]
        out = np.empty(C)
        cnt, n = self.unit_groups, self.unit_rows
        keep_spread = cols is None and (keep_spread or "spread" not in self._cache)
        if keep_spread:
            Q0, SN0 = np.empty(C), np.empty(C)
        starts = range(0, C, self.BLOCK) if cols is None else np.unique(cols // self.BLOCK * self.BLOCK).tolist()
        for a in starts:
            resid = self.unit_sums(slice(a, a + self.BLOCK))
            if keep_spread:
                SN0[a:a + self.BLOCK] = (cnt * n) @ resid
                Q0[a:a + self.BLOCK] = np.einsum("k,kc,kc->c", cnt, resid, resid)
            if base is not None:
                resid -= base
            # rows_k * centre_c, each product as one column's scaling forms it
            resid -= self.unit_rows[:, None] * centre[a:a + resid.shape[1]][None, :]
            resid *= resid
            out[a:a + self.BLOCK] = wk @ resid
        if keep_spread:
            self._cache["spread"] = (Q0, SN0, float(cnt @ (n * n)))
        return out

    def mean_se(self, means: np.ndarray | None = None) -> np.ndarray:
        """Clustered SE of each column's mean (no bootstrap weights)."""
        means = self.means() if means is None else means
        G = self.n_groups
        if G <= 1:
            return np.full(len(self.col), np.nan)
        ss = self._weighted_squares(self.unit_groups, np.asarray(means, dtype=float)[self.first])
        return (np.sqrt(ss * G / (G - 1)) / self.n_rows)[self.col]

    def paired_se(self, ref: int, w: np.ndarray | None = None,
                  means: np.ndarray | None = None, among: np.ndarray | None = None) -> np.ndarray:
        """Clustered SE of mean(loss_c - loss_ref) for every column c (0 for c = ref).
        ``among`` (a candidate mask): only those candidates' SEs are computed, the others are
        NaN (a limit's tie set reads its admissible candidates only)."""
        plain = w is None and (means is None or np.array_equal(means, self.means()))
        if plain and ("paired_se", ref) in self._cache:
            return self._cache[("paired_se", ref)].copy()
        cols = None
        if among is not None:
            cols = np.unique(self.col[np.flatnonzero(among)])
            if 4 * len(cols) > self.losses.shape[1]:
                cols = None                   # most columns: every column's, and kept
        wk = self.unit_weights(w)
        means = self.means(w) if means is None else means
        n = float(wk @ self.unit_rows)
        drawn = float(self.n_groups if w is None else np.sum(w))
        if drawn <= 1 or n <= 0:
            return np.full(len(self.col), np.nan)
        m = np.asarray(means, dtype=float)[self.first]
        r = int(self.col[ref])
        if cols is not None:
            var = np.full(self.losses.shape[1], np.nan)
            var[cols] = self._weighted_squares(wk, m - m[r], ref=r, cols=cols)[cols] * (drawn / (drawn - 1)) / n ** 2
            return np.sqrt(np.maximum(var, 0.0))[self.col]
        var = self._weighted_squares(wk, m - m[r], ref=r) * (drawn / (drawn - 1)) / n ** 2
        out = np.sqrt(np.maximum(var, 0.0))[self.col]
        if plain:
            self._cache[("paired_se", ref)] = out.copy()
        return out


def complexity_order(candidates) -> np.ndarray:
    """Rank of each candidate on (ladder level, K, menu order): smaller is simpler."""
    keys = [(REGISTRY[c.family].ladder, c.K, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def cost_order(candidates, costs) -> np.ndarray:
    """Rank of each candidate on (cost, latency, ladder level, K, menu order)."""
    from ..data.judge_costs import judges_cost
    keys = [(*judges_cost(c.judges, costs), REGISTRY[c.family].ladder, c.K, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def preference_order(rule: str, candidates, costs=None) -> np.ndarray:
    """The order a within-tie rule prefers: simplest first, or cheapest first."""
    if rule == "cheapest_tied":
        return cost_order(candidates, costs)
    return complexity_order(candidates)


def tie_break_order(candidates) -> np.ndarray:
    """The argmin's tie rule (smaller K, simpler family, menu order) as a rank."""
    keys = [(c.K, REGISTRY[c.family].complexity_rank, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def prediction_signatures(preds: np.ndarray) -> np.ndarray:
    """An id per candidate column; columns with identical held-out predictions share it
    (the same model reached by two paths must not count twice in an average)."""
    flat = np.ascontiguousarray(np.round(preds.reshape(-1, preds.shape[-1]).T, 12))
    seen: dict[bytes, int] = {}
    return np.array([seen.setdefault(col.tobytes(), len(seen)) for col in flat], dtype=np.int64)


def best_column(means: np.ndarray, tie_rank: np.ndarray, allowed: np.ndarray | None = None) -> int:
    """The lowest mean risk (among the ``allowed`` columns; None: all); candidates within
    the numerical tolerance go by ``tie_rank``."""
    if allowed is not None:
        means = np.where(allowed, means, np.inf)
    lo = float(means.min())
    near = np.flatnonzero(means <= lo + risk_tolerance(lo))
    return int(near[np.argmin(tie_rank[near])])


def tie_set(grouped: GroupedLosses, tie_rank: np.ndarray, w: np.ndarray | None = None,
            allowed: np.ndarray | None = None, every_se: bool = True):
    """(best, tied columns, means, paired SEs against the best): the columns within one
    paired, group-clustered SE of the lowest (possibly bootstrap-weighted) mean risk; with
    ``allowed`` (a candidate mask) the best and the tie set are among those columns only
    (the SEs against one best are computed once and cached, so many constraints sharing a
    best cost one pass). ``every_se=False``: only the allowed candidates' SEs are computed
    (the others NaN) when they are under a quarter of the columns (a full-limit level's)."""
    means = grouped.means(w)
    best = best_column(means, tie_rank, allowed)
    se = grouped.paired_se(best, w, means, among=None if every_se else allowed)
    se = np.where(np.isfinite(se), se, 0.0)
    lo = float(means.min() if allowed is None else means[allowed].min())
    near = means - means[best] <= se + risk_tolerance(lo)
    tied = np.flatnonzero(near if allowed is None else near & allowed)
    return best, tied, means, se


def choose(rule: str, grouped: GroupedLosses, *, tie_rank: np.ndarray, simple_rank: np.ndarray,
           signatures, max_members: int, w: np.ndarray | None = None,
           lines: np.ndarray | None = None, allowed: np.ndarray | None = None,
           members_fit=None) -> Choice:
    """Apply ``rule`` to (possibly bootstrap-weighted) grouped losses; ``simple_rank`` is
    the within-tie preference (:func:`preference_order`), ``lines`` the candidates' lines
    (:func:`line_ids`, for ``cheapest_tied``). ``allowed`` (a boolean mask over candidates,
    :mod:`.constraints`) restricts the rule to those candidates: the best, the tie set and
    the pick are all among them; ``members_fit(members)`` says whether an average of those
    candidates respects the constraint (the tie average adds members only while it does)."""
    if allowed is not None and not allowed.any():
        raise ValueError("no candidate is allowed")
    if rule == "argmin":
        best = best_column(grouped.means(w), tie_rank, allowed)
        return Choice(best, best, None, np.array([best]))
    best, tied, means, _ = tie_set(grouped, tie_rank, w, allowed, every_se=False)
    if rule in WITHIN_TIE_RULES:
        pool = rule_pool(rule, tied, best, lines)
        chosen = int(pool[np.argmin(simple_rank[pool])])
        return Choice(best, chosen, None, tied)
    members = pick_members(tied, means, tie_rank, signatures, max_members, members_fit)
    return Choice(best, members[0], members if len(members) > 1 else None, tied)


def rounding_tolerance(risk: float) -> float:
    """Risks this close are equal up to the rounding of their sums (the summation order of
    raw or distinct rows): an ordering must not depend on it (``risk``: a number or an
    array). Far below :func:`risk_tolerance`, which also absorbs a fit's convergence
    tolerance."""
    return 1e-15 + 1e-12 * abs(risk)


def plain_steps(lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Per step from a risk ``lower`` to the next one ``upper`` of a sorted run, whether it
    is plain: the two are equal or differ by more than the rounding tolerance of the lower
    one (a step from or to NaN is not). The one test :func:`risk_order_runs` and the
    frontier's tie orders (:class:`.frontier.TieOrders`) both read."""
    with np.errstate(invalid="ignore"):
        return (upper == lower) | (upper > lower + rounding_tolerance(lower))


def risk_order(cols: np.ndarray, means: np.ndarray, tie_rank: np.ndarray) -> np.ndarray:
    """``cols`` by increasing risk; risks within :func:`rounding_tolerance` of the first of a
    run count as equal and go by ``tie_rank``."""
    return risk_order_runs(cols, means, tie_rank)[0]


def risk_order_runs(cols: np.ndarray, means: np.ndarray, tie_rank: np.ndarray) -> tuple[np.ndarray, bool]:
    """(:func:`risk_order` of ``cols``, whether it is *plain*). Plain: any two consecutive
    risks in it are equal or differ by more than the rounding tolerance of the lower one.
    Then its runs are runs of equal risks, so the order is the sort by (risk, ``tie_rank``),
    and so is every subset's (a subset's consecutive risks are equal or differ by at least
    as much): the frontier's replays filter one draw's order at each tighter limit instead
    of sorting it again."""
    cols = np.asarray(cols, dtype=np.int64)
    order = cols[np.lexsort((tie_rank[cols], means[cols]))]
    m = means[order]
    n = len(order)
    # where the run starting at each position ends (rounding_tolerance of its first risk);
    # with no two risks that close, every run is one column and the order stands
    with np.errstate(invalid="ignore"):
        ends = np.searchsorted(m, m + rounding_tolerance(m), side="right")
    ends = np.maximum(np.where(np.isfinite(m), ends, n), np.arange(1, n + 1))
    if np.array_equal(ends, np.arange(1, n + 1)):
        return order, True
    plain = bool(np.all(plain_steps(m[:-1], m[1:])))
    out, i = [], 0
    while i < n:
        j = int(ends[i])
        run = order[i:j]
        out.extend(run[np.argsort(tie_rank[run], kind="stable")] if len(run) > 1 else run)
        i = j
    return np.asarray(out, dtype=np.int64), plain


def pick_members(tied: np.ndarray, means: np.ndarray, tie_rank: np.ndarray, signatures,
                 max_members: int, members_fit=None) -> list[int]:
    """The tie average's members: the tied columns, lowest risk first (risks equal up to
    rounding go by ``tie_rank``), one column per distinct model (``signatures[c]``: an
    array, a :class:`.members.MemberLookup` or a :class:`.folds.SignatureLookup`), at most
    ``max_members``; with ``members_fit`` (a constraint on the average's judges) a column
    joins only while the members with it still fit."""
    return pick_in_order(risk_order(tied, means, tie_rank), signatures, max_members, members_fit)


def pick_in_order(order, signatures, max_members: int, members_fit=None) -> list[int]:
    """:func:`pick_members`' walk over tied columns already in risk order (an array or a
    list of ints): each column joins unless its model is in already or the members with it
    would not fit, until there are ``max_members``. A :class:`.constraints.MembersTest`
    is asked about the members' judge union, kept as they join (one OR per column)."""
    union_fits = getattr(members_fit, "union_fits", None)
    # a limit on the number of judges alone is a bit count, asked here without a call
    most = getattr(members_fit, "max_judges_only", None)
    members, seen, union = [], set(), 0
    for c in order:
        c = int(c)
        s = None if signatures is None else signatures[c]
        if signatures is not None and s in seen:
            continue
        if union_fits is not None:
            grown = union | members_fit.masks[c]
            if members and (grown.bit_count() > most if most is not None else not union_fits(grown)):
                continue
            union = grown
        elif members and members_fit is not None and not members_fit(members + [c]):
            continue
        if signatures is not None:
            seen.add(s)
        members.append(c)
        if len(members) >= max_members:
            break
    return members


def row_losses(objective: str, y: np.ndarray, preds: np.ndarray, single: np.ndarray | None = None) -> np.ndarray:
    """(rows, candidates) loss averaged over the repeats of (repeats, rows, candidates), laid
    out in memory as ``preds[0]`` is (a view with each candidate's rows together keeps them
    together: elementwise passes in memory order). ``single``: a bool per candidate whose
    repeats all hold the first repeat's predictions (:class:`.folds.RepeatTables`'
    ``first_repeat_only``): its loss is the first repeat's, which the average of equal
    terms is exactly, without forming the others."""
    out = losses(objective, y[:, None], preds[0])
    R = preds.shape[0]
    if R == 1:
        return out
    many = None if single is None or not np.any(single) else np.flatnonzero(~np.asarray(single, dtype=bool))
    if many is None:
        for r in range(1, R):
            out += losses(objective, y[:, None], preds[r])
        out /= R
    elif len(many):
        part = out[:, many]
        for r in range(1, R):
            part += losses(objective, y[:, None], preds[r][:, many])
        part /= R
        out[:, many] = part
    return out


@dataclass(frozen=True)
class ChoiceOutcome:
    """The deployed choice, as values the result is built from: the selected candidate, the
    guard's record (``guard='one_se'``), the tie average's members and their own held-out risks
    (``selected_val``), and what the rule did (``choice_info``: empty for the argmin)."""

    selected_index: int
    guard: dict | None = None
    members: list[int] | None = None
    choice_info: dict = field(default_factory=dict)
    selected_val: dict | None = None

    def fields(self) -> dict:
        """The :class:`.result.SelectionResult` fields this choice sets."""
        return {"selected_index": self.selected_index, "guard": self.guard, "members": self.members,
                "choice_info": dict(self.choice_info), "selected_val": self.selected_val}


def default_prior(panel) -> str:
    """The guard's task-type prior family: ``one_coin_iso`` for pairwise/binary panels,
    ``ridge_iso`` otherwise."""
    kinds = {j.schema for j in panel.judges}
    return "one_coin_iso" if kinds <= {"pairwise", "binary"} else "ridge_iso"


def argmin_choice(candidates, settings, panel) -> ChoiceOutcome:
    """Validation (or cross-fitted) argmin over the candidates' recorded risks (ties:
    smaller K, simpler family, menu order), among the candidates within ``settings``'
    ``max_judges`` / ``budget`` (:mod:`.constraints`). With ``guard='one_se'`` the prior
    family's best candidate is kept unless the argmin's upper one-SE risk is below the
    prior's lower one-SE risk (paper, Cold-Start Few-Label Diagnostic). Reads no T data."""
    from .constraints import no_admissible_candidate, selector_constraint

    def ties(c):
        return (c.K, REGISTRY[c.family].complexity_rank, c.index)

    def pick(pool):
        return argmin_with_ties(pool, lambda c: c.val_risk, ties)
    constraint = selector_constraint(settings)
    if constraint.active:
        # the admissible candidates as the rule and its bootstrap replay see them (the
        # limits, and what a binding limit leaves out: :meth:`.constraints.PanelConstraint.mask`)
        candidates = [c for c, ok in zip(candidates, constraint.mask(candidates)) if ok]
        if not candidates:
            raise no_admissible_candidate(constraint)
    best = pick(candidates)
    if settings.guard != "one_se":
        return ChoiceOutcome(best.index)
    prior = settings.prior_family or default_prior(panel)
    pool = [c for c in candidates if c.family == prior]
    if not pool:
        return ChoiceOutcome(best.index, {"mode": "one_se", "prior_family": prior, "adapted": True,
                                          "reason": "prior family not in the menu"})
    prior_best = pick(pool)
    if best.family == prior:
        return ChoiceOutcome(best.index, {"mode": "one_se", "prior_family": prior, "adapted": False,
                                          "reason": "the validation argmin is already the prior family"})
    upper = best.val_risk + (best.val_se if math.isfinite(best.val_se) else 0.0)
    lower = prior_best.val_risk - (prior_best.val_se if math.isfinite(prior_best.val_se) else 0.0)
    adapted = upper < lower
    return ChoiceOutcome(best.index if adapted else prior_best.index, {
        "mode": "one_se", "prior_family": prior, "adapted": bool(adapted),
        "argmin_index": best.index, "prior_index": prior_best.index,
        "argmin_upper": upper, "prior_lower": lower})


@one_blas_thread
def rule_choice(candidates, settings, heldout) -> ChoiceOutcome:
    """``settings.choice`` applied to the held-out predictions of ``heldout``
    (:class:`.folds.HeldOut`); ``max_judges`` / ``budget`` restrict the rule to the
    admissible candidates (:mod:`.constraints`)."""
    from .constraints import no_admissible_candidate, selector_constraint
    from .members import member_lookup
    cands = candidates
    constraint = selector_constraint(settings)
    allowed = constraint.mask(cands)
    if allowed is not None and not allowed.any():
        raise no_admissible_candidate(constraint)
    ch = choose(settings.choice, heldout.grouped(settings.objective), tie_rank=tie_break_order(cands),
                simple_rank=preference_order(settings.choice, cands, settings.judge_costs),
                signatures=member_lookup(heldout, cands),
                max_members=settings.max_members, lines=line_ids(cands), allowed=allowed,
                members_fit=None if allowed is None else (lambda m: constraint.members_fit(cands, m)))
    info = {"rule": settings.choice, "best_index": ch.best, "tied_count": int(len(ch.tied))}
    if constraint.active:
        info["constraint"] = constraint.to_dict()
    selected_val = None
    if ch.members:
        selected_val = {f"val_{obj}": heldout.raw_mean(heldout.average_losses(obj, ch.members))
                        for obj in ("mse", "nll")}
    return ChoiceOutcome(ch.chosen, None, ch.members, info, selected_val)


def choose_deployed(candidates, settings, panel, heldout) -> ChoiceOutcome:
    """The deployed choice under ``settings.choice``: the argmin (with the optional guard)
    on the candidates' recorded risks, any other rule on the held-out predictions, under the
    limited rule (:class:`.limited_rule.LimitedRule`): with a full-limit rule
    (``full_limit_sets``) a limit the choice over all judges already meets deploys that
    choice (``choice_info["limit_met_by_whole_choice"]``): a limit only narrows the menu
    when the best choice breaks it."""
    from .limited_rule import ESCAPE_KEY, WHOLE_CHOICE_KEY, LimitedRule, heldout_escape, unlimited
    rule = LimitedRule.of(settings, candidates)

    def members_of(ch):
        return ch.members or [ch.selected_index]
    chosen, met = rule.deploy(lambda: _choose_deployed(candidates, unlimited(settings), panel, heldout),
                              lambda: _choose_deployed(candidates, settings, panel, heldout), members_of)
    if met:
        info = dict(chosen.choice_info, constraint=rule.constraint.to_dict(), **{WHOLE_CHOICE_KEY: True})
        return replace(chosen, choice_info=info)
    z = getattr(settings, "limit_escape_z", None)
    if z is not None and rule.whole_first and heldout is not None:
        # the best candidate within the limit against the prefix's choice; where it escapes,
        # the choice rule among every candidate within the limit is deployed
        best = best_column(heldout.grouped(settings.objective).means(), tie_break_order(candidates),
                           rule.within().admissible())
        test = heldout_escape(heldout, settings.objective, members_of(chosen), [best], z)
        if test is not None:
            if test["escaped"]:
                chosen = _choose_deployed(candidates, replace(settings, full_limit_sets=False), panel, heldout)
            chosen = replace(chosen, choice_info=dict(chosen.choice_info, **{ESCAPE_KEY: test}))
    return chosen


def _choose_deployed(candidates, settings, panel, heldout) -> ChoiceOutcome:
    if settings.choice == "argmin":
        return argmin_choice(candidates, settings, panel)
    return rule_choice(candidates, settings, heldout)
