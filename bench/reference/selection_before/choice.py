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
  one paired SE of the best; identical prediction columns counted once; at most
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

from dataclasses import dataclass

import numpy as np

from fcps_core.measures.diagnostics import losses, risk_tolerance
from fcps_core.families import REGISTRY
from fcps_core.families.base import one_blas_thread


#: rules that pick one member of the tie set by a fixed preference order (:func:`preference_order`)
WITHIN_TIE_RULES = ("simplest_within_se", "cheapest_tied")


@dataclass
class Choice:
    best: int                 # the lowest-risk candidate (column)
    chosen: int               # the deployed candidate (tie_average: its best member)
    members: list[int] | None  # tie_average: the averaged columns
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

    def unit_sums_held(self, max_cells: int):
        """Added after the reference was taken, with no effect on what it computes: the
        current code's drop-one table (``to_dict``, which the row-scaling tests also run on
        this reference's results) asks a held-out matrix to hold every column's unit sums
        while it reads several paired SEs. The reference forms each SE afresh, as it always
        did, so this holds nothing."""
        import contextlib
        return contextlib.nullcontext()

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
        (None: all)."""
        L = self.losses if cols is None else self.losses[:, cols]
        return np.asarray(self.unit_matrix @ L)

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
                          keep_spread: bool = False) -> np.ndarray:
        """sum_k wk_k (S_kc [- S_k,ref] - rows_k * centre_c)^2 per distinct column, with the
        unit sums S formed a block of columns at a time (and :meth:`spread` on the way)."""
        C = self.losses.shape[1]
        out = np.empty(C)
        base = None if ref is None else self.unit_sums([ref])
        cnt, n = self.unit_groups, self.unit_rows
        keep_spread = keep_spread or "spread" not in self._cache
        if keep_spread:
            Q0, SN0 = np.empty(C), np.empty(C)
        for a in range(0, C, self.BLOCK):
            resid = self.unit_sums(slice(a, a + self.BLOCK))
            if keep_spread:
                SN0[a:a + self.BLOCK] = (cnt * n) @ resid
                Q0[a:a + self.BLOCK] = np.einsum("k,kc,kc->c", cnt, resid, resid)
            if base is not None:
                resid -= base
            for j in range(resid.shape[1]):
                resid[:, j] -= self.unit_rows * centre[a + j]
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
        ``among`` (not in the 78ada3b copy) is accepted and ignored, every column's SE
        returned as before: the engine's reporting code (drop-one, the frontier's levels)
        passes it to the losses a result hands it, and these SEs are the same on its columns."""
        plain = w is None and (means is None or np.array_equal(means, self.means()))
        if plain and ("paired_se", ref) in self._cache:
            return self._cache[("paired_se", ref)].copy()
        wk = self.unit_weights(w)
        means = self.means(w) if means is None else means
        n = float(wk @ self.unit_rows)
        drawn = float(self.n_groups if w is None else np.sum(w))
        if drawn <= 1 or n <= 0:
            return np.full(len(self.col), np.nan)
        m = np.asarray(means, dtype=float)[self.first]
        r = int(self.col[ref])
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
    from fcps_core.data.judge_costs import judges_cost
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


def best_column(means: np.ndarray, tie_rank: np.ndarray) -> int:
    """The lowest mean risk; candidates within the numerical tolerance go by ``tie_rank``."""
    lo = float(means.min())
    near = np.flatnonzero(means <= lo + risk_tolerance(lo))
    return int(near[np.argmin(tie_rank[near])])


def tie_set(grouped: GroupedLosses, tie_rank: np.ndarray, w: np.ndarray | None = None):
    """(best, tied columns, means, paired SEs against the best): the columns within one
    paired, group-clustered SE of the lowest (possibly bootstrap-weighted) mean risk."""
    means = grouped.means(w)
    best = best_column(means, tie_rank)
    se = grouped.paired_se(best, w, means)
    se = np.where(np.isfinite(se), se, 0.0)
    tied = np.flatnonzero(means - means[best] <= se + risk_tolerance(float(means.min())))
    return best, tied, means, se


def choose(rule: str, grouped: GroupedLosses, *, tie_rank: np.ndarray, simple_rank: np.ndarray,
           signatures, max_members: int, w: np.ndarray | None = None,
           lines: np.ndarray | None = None) -> Choice:
    """Apply ``rule`` to (possibly bootstrap-weighted) grouped losses; ``simple_rank`` is
    the within-tie preference (:func:`preference_order`), ``lines`` the candidates' lines
    (:func:`line_ids`, for ``cheapest_tied``)."""
    if rule == "argmin":
        best = best_column(grouped.means(w), tie_rank)
        return Choice(best, best, None, np.array([best]))
    best, tied, means, _ = tie_set(grouped, tie_rank, w)
    if rule in WITHIN_TIE_RULES:
        pool = rule_pool(rule, tied, best, lines)
        chosen = int(pool[np.argmin(simple_rank[pool])])
        return Choice(best, chosen, None, tied)
    members = pick_members(tied, means, tie_rank, signatures, max_members)
    return Choice(best, members[0], members if len(members) > 1 else None, tied)


def rounding_tolerance(risk: float) -> float:
    """Risks this close are equal up to the rounding of their sums (the summation order of
    raw or distinct rows): an ordering must not depend on it (``risk``: a number or an
    array). Far below :func:`risk_tolerance`, which also absorbs a fit's convergence
    tolerance."""
    return 1e-15 + 1e-12 * abs(risk)


def risk_order(cols: np.ndarray, means: np.ndarray, tie_rank: np.ndarray) -> np.ndarray:
    """``cols`` by increasing risk; risks within :func:`rounding_tolerance` of the first of a
    run count as equal and go by ``tie_rank``."""
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
        return order
    out, i = [], 0
    while i < n:
        j = int(ends[i])
        run = order[i:j]
        out.extend(run[np.argsort(tie_rank[run], kind="stable")] if len(run) > 1 else run)
        i = j
    return np.asarray(out, dtype=np.int64)


def pick_members(tied: np.ndarray, means: np.ndarray, tie_rank: np.ndarray, signatures,
                 max_members: int) -> list[int]:
    """tie_average's members: the tied columns, lowest risk first (risks equal up to
    rounding go by ``tie_rank``), one column per distinct prediction vector
    (``signatures[c]``: an array or a :class:`.folds.SignatureLookup`), at most
    ``max_members``."""
    order = risk_order(tied, means, tie_rank)
    members, seen = [], set()
    for c in order:
        if signatures[c] not in seen:
            seen.add(signatures[c])
            members.append(int(c))
        if len(members) >= max_members:
            break
    return members


def row_losses(objective: str, y: np.ndarray, preds: np.ndarray) -> np.ndarray:
    """(rows, candidates) loss averaged over the repeats of (repeats, rows, candidates), laid
    out in memory as ``preds[0]`` is (a view with each candidate's rows together keeps them
    together: elementwise passes in memory order)."""
    out = losses(objective, y[:, None], preds[0])
    for r in range(1, preds.shape[0]):
        out += losses(objective, y[:, None], preds[r])
    out /= preds.shape[0]
    return out


@one_blas_thread
def apply_choice_rule(result, selector, heldout) -> Choice:
    """Choose on the held-out predictions of ``heldout`` (:class:`.folds.HeldOut`) and
    record the choice on ``result`` (selected index, members, risks)."""
    cands = result.candidates
    ch = choose(selector.choice, heldout.grouped(selector.objective), tie_rank=tie_break_order(cands),
                simple_rank=preference_order(selector.choice, cands, selector.judge_costs),
                signatures=heldout.signature_lookup(),
                max_members=selector.max_members, lines=line_ids(cands))
    result.selected_index = ch.chosen
    result.members = ch.members
    result.choice_info = {"rule": selector.choice, "best_index": ch.best,
                          "tied_count": int(len(ch.tied))}
    if ch.members:
        result.selected_val = {f"val_{obj}": heldout.raw_mean(heldout.average_losses(obj, ch.members))
                               for obj in ("mse", "nll")}
    return ch
