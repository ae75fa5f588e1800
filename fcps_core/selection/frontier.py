"""The frontier: the best deployable predictor at every panel size and cost level.

For every panel size k = 1..J (J judges on the panel) the choice rule of the selection runs
on the candidates that call at most k judges (:mod:`.constraints`: an average counts the
union of its members' judges), and, with judge costs, for every cost level c of the
risk-cost Pareto front on the candidates that cost at most c per item. Each point reports
what ``select --max-judges k`` (``--budget c``) would deploy, from the same cross-fitted
held-out prediction matrix the selection chose on (no refit):

* ``risk`` and ``ci``: the point's held-out risk (mean over the deployable rows) with the
  group-clustered 95 % interval risk +- 1.96 SE;
* ``diff_vs_best``: the paired difference (this point's risk - the unconstrained choice's
  risk) with its group-clustered 95 % interval; >= 0 up to noise, since the unconstrained
  rule sees every candidate;
* ``deployed_risk``: the bias-corrected estimate of choosing *under that constraint*
  (BBC-CV, Tsamardinos et al. 2018): the constrained rule is replayed in every bootstrap
  draw of :mod:`.honesty` (the same draws, the same in-bag means, the same tie rule),
  and the constrained choice of each draw is scored on its out-of-bag groups. A smaller
  menu has a smaller winner's curse, so the estimate is the constrained rule's own. In the
  cross-fitted protocol it is then corrected for training size as the default's is
  (``training_size_correction``, r(n) = a + b/n from half-size refits of the point's own
  members, :meth:`.crossfit.CorrectionRefits.correction`): held-out models saw 4/5 of the
  deployable rows, the deployed one sees them all.

The default deploys the loosest point (the choice over all judges), not the smallest point
statistically tied with it. The rule is measured, not tuned (``bench/bench_frontier.py``,
figures in docs/performance.md): deploying the smallest panel whose paired 95 % interval of
the difference to the choice over all judges contains 0 raised the research-test MSE on the
shared and synthetic panels, so a smaller panel is offered, not imposed: the answer names the
smallest tied panel size (:func:`fcps_core.reports.explain.smallest_tied`) and ``--max-judges`` deploys
it.

Replays share their work: a draw's tie set depends only on its best admissible candidate
(the tie rule is relative to the best; the limit then masks it), so each (draw, best) pair
has its paired SEs summed once, over the admissible columns of the loosest limit it occurs
at, the selection's own tie sets reused where it ran unconstrained; the pairs of all limits
go to one :func:`.honesty.draw_tie_sets` call, which sums the pairs of one best column
together. Limits are replayed from the loosest down; a tie average's members are kept when
they are all still admissible and their union still fits (the greedy pick would make them
again), and only the draws that pick again read their tie sets. Every limit's members are
decided first (they read the previous limit's, never a risk); then the per-unit losses of
all new averages are formed a block of averages at a time, and the out-of-bag risks of all
limits a block of draws at a time (:meth:`_Replays._oob_member_risks`). The products are
thin, so the frontier runs on one BLAS thread.

With ``FCPSSelector(limit_rule_choice=True)`` (off by default) every binding level also
decides rule B (:func:`.constraints.linear_full_limit`: the ``info_first`` prefix that uses
the whole limit, ``ridge_iso`` / ``logistic`` and their tie average), replays it in the same
draws (a chain of its own: its levels' admissible sets are equal or disjoint) and corrects
it as any point; the point deploys B when B's deployed-risk estimate is below A's (the
limited choice above; A on ties and when B has no candidate) and deploying B keeps the
points' held-out risks monotone wherever A's were (:func:`_limit_rule_choice`), and reports
the deployed rule's estimate. That choice between two rules is not itself replayed: between
two, usually highly correlated, rules its winner's curse was expected to be small, but
measured it leans the points deploying B 0.0002 to 0.0034 more optimistic (docs/performance.md,
"Issue 24: a choice between two limited rules by their estimates"). At the user's own limit the selection then deploys B too
(:func:`.split_protocol.with_frontier`).

A *lazy* tie set (summed in risk order only until the average has its members) was measured
and not kept: on LLMBar a draw's tie set within a limit is mostly smaller than
``max_members``, so the walk must read all of it and the rounds of sums cost more than the
one pass (figures in docs/performance.md, "Issue 24, sixth round").
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from itertools import chain

import numpy as np

from ..defaults import TIE_AVERAGE
from ..families.base import one_blas_thread
from ..data.judge_costs import judges_cost, pareto_front
from .choice import (WITHIN_TIE_RULES, GroupedLosses, best_column, choose, line_ids, pick_in_order, plain_steps,
                     preference_order, risk_order_runs, rule_pool, tie_break_order)
from .constraints import JudgeBits, PanelConstraint, limit_rule_filter, selector_constraint
from .honesty import (BLOCK_CELLS, UNIT_SUM_CELLS, Z95, central_interval, distinct_mask, draw_tie_sets,
                      draw_unit_counts, nested_draw_best, own_set_shifted, training_size_corrected, unpacked_rows,
                      within_limit_choices)
from .limited_rule import (ESCAPE_KEY, LimitedRule, deploys_whole_choice, draws_escaped, heldout_escape,
                           replays_whole_choice)
from .members import deployed_weights, member_lookup


#: the cross-fitted protocol corrects every point's estimate for training size, as it does
#: the default's (:meth:`.crossfit.CorrectionRefits.correction`); a benchmark switches it
#: off to time what the correction adds
POINT_CORRECTIONS = True


def judge_levels(candidates, n_judges: int) -> list[int]:
    """Panel sizes k = 1..J at which some candidate calls at most k judges."""
    smallest = min(len(set(c.judge_idx)) for c in candidates)
    return list(range(max(1, smallest), n_judges + 1))


def cost_levels(candidates, risks: np.ndarray, costs) -> list[float]:
    """The cost levels of the risk-cost Pareto front (cheapest first): below the next
    level nothing cheaper has a lower held-out risk, so every budget between two levels
    admits the same best candidate."""
    cost = np.array([judges_cost(c.judges, costs)[0] for c in candidates])
    return sorted({float(cost[i]) for i in pareto_front(risks, cost)})


def distinct_cost_levels(levels, user: float | None = None) -> list[float]:
    """``levels`` sorted, each kept only when it exceeds the one before within the budget's
    rounding (:attr:`.constraints.PanelConstraint.cost_limit`): sums of decimal costs differ
    in the last digits by the order they are added in (0.1 + 0.2 against 0.3), and a budget
    of the smaller admits the larger, so both would be one point shown twice. ``user``: the
    user's own budget, a level itself, replacing the levels it admits that no smaller kept
    level does. A level is written with 12 significant digits (0.30000000000000004 as
    0.3: the decimal the costs were given in; the budget's rounding still admits the set)."""
    out: list[float] = []
    for c in sorted({float(f"{c:.12g}") for c in levels} | ({user} if user is not None else set())):
        if out and c <= PanelConstraint(budget=out[-1]).cost_limit:
            if c == user:
                out[-1] = user
            continue
        out.append(c)
    return out


class HeldoutChoice:
    """One deployable choice on the held-out rows (a candidate, or the average of
    ``members``): its per-distinct-row loss and its key (the sorted member indices)."""

    def __init__(self, heldout, grouped: GroupedLosses, objective: str, chosen: int, members):
        self.chosen, self.members = int(chosen), (list(members) if members else None)
        self.key = tuple(sorted(self.members)) if self.members else (self.chosen,)
        if self.members:
            self.loss = heldout.average_losses(objective, self.members)
        else:
            self.loss = np.asarray(grouped.losses[:, grouped.col[self.chosen]], dtype=float)


def grouped_columns(heldout, *loss_columns) -> GroupedLosses:
    """Per-distinct-row loss columns as group-clustered losses on the held-out rows (their
    means, SEs and paired SEs)."""
    u = heldout.units()
    L = np.column_stack(loss_columns)
    return GroupedLosses.from_units(L, u.matrix, u.groups, u.group_unit, np.arange(L.shape[1]))


class TieOrders:
    """Draws' tied columns in risk order (:func:`.choice.risk_order`), a level's draws
    sorted together, and each (draw, best) pair's order kept to be filtered at tighter
    limits.

    A pair's tie set at a tighter limit is its set at the looser one masked by the limit
    (:meth:`_Replays.chain`). A *plain* order (:func:`.choice.risk_order_runs`: consecutive
    risks equal or apart by more than the rounding tolerance) is the sort by (risk, tie
    rank), and so is every subset's, so a tighter order is the looser one filtered. A draw
    whose order is not plain (a run of risks equal up to rounding can split or merge once
    columns leave it), or whose tie set is not within the kept one, is sorted by
    :func:`.choice.risk_order_runs` itself."""

    def __init__(self, means: np.ndarray, tie_rank: np.ndarray):
        self.means, self.tie_rank = means, tie_rank      # (draws, candidates) in-bag means
        self._plain: dict[tuple[int, int], list[int]] = {}
        self._seen: set[tuple[int, int]] = set()

    def _keep(self, key: tuple[int, int], order: list[int], plain: bool) -> None:
        if key not in self._seen:
            self._seen.add(key)
            if plain:
                self._plain[key] = order

    def orders(self, draws: list[int], best: np.ndarray, tied: np.ndarray,
               cols: np.ndarray | None = None) -> dict[int, list[int]]:
        """``{b: draw b's tied columns in risk order}`` for the ``draws`` of one level (its
        best column per draw ``best``; ``tied[i]`` the tie set of ``draws[i]``, a row per
        draw asked for; ``cols``: the level's admissible columns, ascending, the only ones
        a tie set may hold; None: all)."""
        out, todo = self._filtered(draws, best, tied)
        if not todo:
            return out
        rows, r, c, not_plain, bounds = self._sorted(draws, tied, todo, cols)
        entries = c.tolist()
        for i, b in enumerate(rows.tolist()):
            if not_plain[i]:
                out[b] = self._own_order(b, int(best[b]), tied[todo[i]])
            else:
                out[b] = entries[bounds[i]:bounds[i + 1]]
                self._keep((b, int(best[b])), out[b], True)
        return out

    def picks(self, draws: list[int], best: np.ndarray, tied: np.ndarray, signatures: np.ndarray | None,
              max_members: int, cols: np.ndarray | None = None) -> dict[int, list[int]]:
        """``{b: the tie average's members of draw b}``: :func:`.choice.pick_in_order` of each
        draw's order (:meth:`orders`) where every average of the level's admissible
        candidates fits its limit (no member is ever refused for the limit). Plain orders are
        picked for all draws at once: a column joins unless its model (``signatures``, an int
        per column; None: every column its own) is in already, until there are ``max_members``; each
        draw's first columns of distinct models, in its order. Those orders are not kept for
        tighter levels (a fresh sort gives the same order, :func:`.choice.risk_order_runs`).
        ``cols``: as :meth:`orders` takes it."""
        out, todo = self._filtered(draws, best, tied)
        out = {b: pick_in_order(order, signatures, max_members) for b, order in out.items()}
        if not todo:
            return out
        rows, r, c, not_plain, bounds = self._sorted(draws, tied, todo, cols)
        for i in np.flatnonzero(not_plain).tolist():
            b = int(rows[i])
            out[b] = pick_in_order(self._own_order(b, int(best[b]), tied[todo[i]]), signatures, max_members)
        entry = ~not_plain[r]                         # the plain draws' (draw, column) entries
        r, c = r[entry], c[entry]
        if signatures is not None:
            # a draw's first column of each model (entries are in each draw's order)
            sig = np.asarray(signatures, dtype=np.int64)[c]
            code = r * (int(sig.max(initial=0)) + 1) + sig
            first = np.zeros(len(r), dtype=bool)
            first[np.unique(code, return_index=True)[1]] = True
            r, c = r[first], c[first]
        # at most max_members per draw: an entry's position within its draw's entries
        position = np.arange(len(r)) - np.searchsorted(r, r, side="left")
        r, c = r[position < max_members], c[position < max_members]
        bounds = np.searchsorted(r, np.arange(len(rows) + 1))
        members = c.tolist()
        for i in np.flatnonzero(~not_plain).tolist():
            out[int(rows[i])] = members[bounds[i]:bounds[i + 1]]
        return out

    def _own_order(self, b: int, beta: int, row: np.ndarray) -> list[int]:
        """Draw ``b``'s tied columns (``row``) sorted by :func:`.choice.risk_order_runs`
        itself (a draw whose sorted entries are not plain), the order kept for tighter levels
        when it is plain."""
        order, plain = risk_order_runs(np.flatnonzero(row), self.means[b], self.tie_rank)
        order = order.tolist()
        self._keep((b, beta), order, plain)
        return order

    def _filtered(self, draws: list[int], best: np.ndarray, tied: np.ndarray) -> tuple[dict, list[int]]:
        """(``{b: order}`` for the draws whose kept plain order at their (draw, best) pair
        holds their whole tie set, filtered to it; the other draws' positions in ``draws``)."""
        out, todo = {}, []
        for i, b in enumerate(draws):
            plain = self._plain.get((b, int(best[b])))
            if plain is not None:
                row = tied[i]
                kept = [c for c in plain if row[c]]
                if len(kept) == int(np.count_nonzero(row)):
                    out[b] = kept
                    continue
            todo.append(i)
        return out, todo

    def _sorted(self, draws: list[int], tied: np.ndarray, todo: list[int], cols: np.ndarray | None = None):
        """Every ``todo`` draw's tied columns sorted at once by (draw, risk, tie rank): (the
        draws, the sorted entries' draw positions and columns, which draws' orders are not
        plain, each draw's bounds in the entries). A draw's order is plain when each risk
        equals the one before or exceeds it by more than its rounding tolerance. ``cols``
        (ascending; None: all): the only columns read (a tight level's few)."""
        at = np.asarray(todo, dtype=np.int64)
        rows = np.asarray(draws, dtype=np.int64)[at]
        if cols is None:
            r, c = np.nonzero(tied[at])
        else:
            r, c = np.nonzero(tied[np.ix_(at, cols)])
            c = cols[c]
        m = self.means[rows[r], c]
        o = np.lexsort((self.tie_rank[c], m, r))
        r, c, m = r[o], c[o], m[o]
        close = (r[1:] == r[:-1]) & ~plain_steps(m[:-1], m[1:])
        not_plain = np.zeros(len(rows), dtype=bool)
        not_plain[r[1:][close]] = True
        bounds = np.searchsorted(r, np.arange(len(rows) + 1))
        return rows, r, c, not_plain, bounds


class _Replays:
    """The selection's bootstrap draws, replayed under nested constraints."""

    def __init__(self, result, heldout, grouped: GroupedLosses, rule: str, tie_rank, simple_rank, lines,
                 signatures, bits: JudgeBits):
        boot = self.boot = result.bootstrap
        self.result, self.heldout, self.grouped = result, heldout, grouped
        self.rule, self.tie_rank, self.simple_rank, self.lines = rule, tie_rank, simple_rank, lines
        self.signatures = signatures
        self.W, self.M, self.N = boot["W"], boot["M"], boot["N"]
        self.Mc = self.M[:, grouped.col]
        self.objective = result.selector.objective
        self.max_members = result.selector.max_members
        # (draws, units) each draw's count of out-of-bag groups per unit (groups of one unit
        # have the same loss sums): an out-of-bag sum is these counts times one group's sums
        # per unit, draws x units, never draws x groups or rows. Kept as the smallest
        # integers that hold them (a float copy would be the largest array of a panel whose
        # groups are mostly distinct units); :meth:`_oob_sums` reads a block at a time.
        self.OU = draw_unit_counts(grouped, self.W, np.arange(len(self.W)), out_of_bag=True, limit=None)
        self.ON = self._oob_sums(grouped.unit_rows.astype(float))
        self.keep = self.ON > 0
        self._safe_on = np.where(self.keep, self.ON, 1.0)
        self.unit_matrix = grouped.unit_matrix                    # (units, distinct rows)
        self._oob: dict = {}
        self._column_units: dict = {}
        self._units_of: dict = {}
        self._unit_sums = None
        self._stored_of: np.ndarray | None = None
        self.bits = bits
        self.first = heldout.columns()[1]
        self.orders = TieOrders(self.Mc, tie_rank)
        self.signature_list = signatures.tolist() if isinstance(signatures, np.ndarray) else signatures

    def _pair_ties(self, bests: list[np.ndarray], tols: list[np.ndarray], masks: list):
        """A function from one level's best per draw to the (draws, candidates) tie sets:
        the (draw, best) pairs of all levels summed in one :func:`.honesty.draw_tie_sets`
        pass (the selection's own tie sets reused where it ran unconstrained)."""
        if self.rule == "argmin":
            return lambda best: None
        col = self.grouped.col
        boot = self.boot
        known = boot.get("allowed") is None and boot.get("tied") is not None
        # every level's (draw, best) pairs as codes draw * candidates + best, level by level;
        # a pair is summed at its first level (its tolerance that level's), in that order
        n_cands = self.Mc.shape[1]
        best_all = np.stack([np.asarray(beta, dtype=np.int64) for beta in bests])         # (levels, draws)
        B = best_all.shape[1]
        codes = (np.arange(B, dtype=np.int64)[None, :] * n_cands + best_all).reshape(-1)
        open_pairs = np.ones(best_all.shape, dtype=bool) if not known else best_all != boot["best"][None, :]
        candidates_at = np.flatnonzero(open_pairs.reshape(-1))
        first = np.sort(candidates_at[np.unique(codes[candidates_at], return_index=True)[1]])
        pair_level, pair_draws = np.divmod(first, B)
        pair_codes = codes[first]
        pair_best = col[best_all.reshape(-1)[first]]
        pair_tol = np.stack([np.asarray(t, dtype=float) for t in tols]).reshape(-1)[first]
        sorter = np.argsort(pair_codes, kind="stable")
        sorted_codes = pair_codes[sorter]
        if self._unit_sums is None:               # every column's unit sums, once, when they fit
            g = self.grouped
            self._unit_sums = g.unit_sums() if len(g.unit_rows) * g.losses.shape[1] <= UNIT_SUM_CELLS else False
        # a pair first met at a level is only ever read within that level's admissible set
        # (limits tighten), so its sums skip every other column; pairs of one best column
        # met at several levels are summed together over the loosest of their sets (the
        # others' extra columns are masked by their own limit), all levels in one call
        allowed_of: dict[int, np.ndarray] = {}
        betas_d, at = np.unique(pair_best, return_index=True)      # each best column's first level
        for beta_d, level in zip(betas_d.tolist(), pair_level[at].tolist()):
            allowed_of[beta_d] = distinct_mask(self.grouped, masks[level])
        pair_tied = None
        if len(first):
            pair_tied = draw_tie_sets(self.grouped, self.W, self.M, self.N, pair_tol, pair_best, allowed_of,
                                      None if self._unit_sums is False else self._unit_sums,
                                      draws=pair_draws, draw_counts=self._in_bag,
                                      packed=True)   # per distinct column, eight to a byte

        def ties(best: np.ndarray, draws=None, cols: np.ndarray | None = None) -> np.ndarray:
            """(draws, candidates) the tie sets of ``draws`` (None: all) at the level whose
            best per draw is ``best``, within the admissible candidates ``cols`` (ascending
            indices; None: all; only those columns are read, the others are False)."""
            rows = np.arange(len(best)) if draws is None else np.asarray(draws, dtype=np.int64)
            beta = best[rows]
            reused = (beta == boot["best"][rows]) if known else np.zeros(len(rows), dtype=bool)
            out = np.empty((len(rows), self.Mc.shape[1]), dtype=bool) if cols is None else \
                np.zeros((len(rows), self.Mc.shape[1]), dtype=bool)

            def fill(at: np.ndarray, source: np.ndarray, source_rows: np.ndarray, source_cols=None) -> None:
                """Rows ``at`` of ``out`` from rows ``source_rows`` of ``source``, whose
                candidate c is its column ``source_cols[c]`` (None: c)."""
                if cols is None:
                    out[at] = source[source_rows] if source_cols is None else source[np.ix_(source_rows, source_cols)]
                else:
                    read = cols if source_cols is None else source_cols[cols]
                    out[np.ix_(at, cols)] = source[np.ix_(source_rows, read)]
            at = np.flatnonzero(reused)
            if len(at):
                fill(at, boot["tied"], rows[at])
            rest = np.flatnonzero(~reused)
            if len(rest):
                wanted = rows[rest] * n_cands + beta[rest]
                found = np.minimum(np.searchsorted(sorted_codes, wanted), max(len(sorted_codes) - 1, 0))
                if not len(sorted_codes) or not np.array_equal(sorted_codes[found], wanted):
                    raise RuntimeError("a level asked for a (draw, best) pair no level had")
                fill(rest, unpacked_rows(pair_tied, sorter[found], self.M.shape[1]), np.arange(len(rest)), col)
            return out
        return ties

    def _oob_sums(self, per_unit: np.ndarray, rows=None) -> np.ndarray:
        """Out-of-bag sums of a per-unit vector in draws ``rows`` (None: every draw): the
        integer counts :attr:`OU` times it, converted to floats :data:`.honesty.BLOCK_CELLS`
        cells at a time (exact: the counts are small integers)."""
        counts = self.OU if rows is None else self.OU[rows]
        step = max(1, BLOCK_CELLS // max(counts.shape[1], 1))
        if len(counts) <= step:
            return counts.astype(float) @ per_unit
        out = np.empty(len(counts))
        for a in range(0, len(counts), step):
            out[a:a + step] = counts[a:a + step].astype(float) @ per_unit
        return out

    def _column_unit_sums(self, c: int) -> np.ndarray:
        """Per-unit sums (one group's) of loss column ``c`` (cached)."""
        if c not in self._column_units:
            self._column_units[c] = np.asarray(self.unit_matrix @ self.grouped.losses[:, c]).reshape(-1)
        return self._column_units[c]

    def _oob_risk(self, c: int) -> np.ndarray:
        """Every draw's out-of-bag mean of loss column ``c`` (cached)."""
        if c not in self._oob:
            self._oob[c] = self._oob_sums(self._column_unit_sums(c)) / self._safe_on
        return self._oob[c]

    #: averages formed together: their members' stored columns read once per block
    AVERAGE_BLOCK = 256
    #: a level whose draws deploy at most this many predictors is scored by one product per
    #: predictor with its draws' counts, a level with more row by row (a speed setting:
    #: either way gives the same risks up to rounding)
    FEW_PREDICTORS = 16

    def _average_unit_sums(self, keys: list[tuple]) -> None:
        """Per-unit sums (one group's) of the loss of each members' average in ``keys`` not
        yet cached, a block of averages at a time: the block's member columns read once
        and averaged by one sparse product with a (averages, columns) matrix of weights
        1/members."""
        from scipy import sparse
        from .choice import row_losses
        new = [k for k in dict.fromkeys(keys) if k not in self._units_of]
        if self._stored_of is None:
            self._stored_of = np.asarray(self.first, dtype=np.int64)[self.grouped.col]   # candidate -> stored column
        column_cap = max(1, BLOCK_CELLS // max(self.heldout.n_distinct, 1))    # columns read per block, at most
        a = 0
        while a < len(new):
            block = new[a:a + self.AVERAGE_BLOCK]
            sizes = np.fromiter((len(k) for k in block), dtype=np.int64, count=len(block))
            # fewer averages when their columns would make too large a read (at least one)
            fits = int(np.searchsorted(np.cumsum(sizes), column_cap, side="right"))
            block, sizes = block[:max(1, fits)], sizes[:max(1, fits)]
            a += len(block)
            stored = self._stored_of[np.fromiter(chain.from_iterable(block), dtype=np.int64, count=int(sizes.sum()))]
            cols, position = np.unique(stored, return_inverse=True)
            weights = sparse.csr_matrix((np.repeat(1.0 / sizes, sizes), position.reshape(-1), np.r_[0, np.cumsum(sizes)]),
                                        shape=(len(block), len(cols)))
            P = self.heldout.stored(cols).transpose(0, 2, 1)            # (repeats, columns, rows)
            average = np.stack([weights @ P[r] for r in range(P.shape[0])])          # (repeats, averages, rows)
            loss = row_losses(self.objective, self.heldout.y_distinct, average.transpose(0, 2, 1))
            sums = np.asarray(self.unit_matrix @ loss)
            for i, key in enumerate(block):
                self._units_of[key] = np.ascontiguousarray(sums[:, i])

    def chain(self, constraints: list[PanelConstraint], masks: list[np.ndarray], within: list | None = None,
              z: float | None = None) -> list[np.ndarray]:
        """Per constraint (admissible sets nested, largest first) every draw's out-of-bag
        risk of the constrained choice. Under a full-limit rule a draw whose choice over all
        judges meets a level's limit deploys that choice there (:class:`.limited_rule.LimitedRule`):
        the chain then starts with the unconstrained level (:func:`.limited_rule.replays_whole_choice`),
        replayed and left out of the output. ``within`` (per level the mask of every
        candidate within its limit, None where the escape does not apply) and ``z``: the
        escape, draw by draw (:func:`.limited_rule.heldout_escape`): a draw's choice among
        those replaces its prefix choice where its in-bag mean loss is lower by more than
        ``z`` in-bag paired SEs."""
        if replays_whole_choice(constraints):
            return self.chain([PanelConstraint()] + list(constraints), [None] + list(masks),
                              None if within is None else [None] + list(within), z)[1:]
        members, met = self._level_members(constraints, masks)
        if within is not None and z is not None and any(w is not None for w in within):
            # each draw's best candidate within each limit (nested too) against its prefix
            # choice; an escaped draw deploys the choice rule among every candidate within it.
            # Every level's escaped draws are found first (a level's members never read
            # another level's escape), then all their choices are made in one pass
            bests = nested_draw_best(self.Mc, self.tie_rank, [m if w is None else w for m, w in zip(masks, within)])
            cands, names = self.result.candidates, self.result.panel.judge_names
            at, levels = [], []
            for i, w in enumerate(within):
                if w is None:
                    continue
                best_w, _, tol_w = bests[i]
                escaped = np.flatnonzero(self._escaped(members[i], [[int(c)] for c in best_w], ~met[i], z))
                loose = replace(constraints[i], full_limit=False)
                at.append(i)
                levels.append((best_w, tol_w, w, escaped, loose.members_test(cands, names, self.bits)))
            chosen = within_limit_choices(self.rule, self.grouped, self.W, self.M, self.N, self.Mc, levels,
                                          tie_rank=self.tie_rank, simple_rank=self.simple_rank, lines=self.lines,
                                          signatures=self.signature_list, max_members=self.max_members)
            for i, (_, _, _, escaped, _), level_chosen in zip(at, levels, chosen):
                for b, m in zip(escaped, level_chosen):
                    members[i][b] = m
            return self._oob_member_risks(members)
        if self.rule == "argmin" or self.rule in WITHIN_TIE_RULES:
            out = []
            for level in members:
                chosen = np.fromiter((m[0] for m in level), dtype=np.int64, count=len(level))
                proc = np.empty(len(chosen))
                for c in np.unique(self.grouped.col[chosen]):
                    rows = np.flatnonzero(self.grouped.col[chosen] == c)
                    proc[rows] = self._oob_risk(int(c))[rows]
                out.append(proc[self.keep])
            return out
        return self._oob_member_risks(members)

    def _level_members(self, constraints: list[PanelConstraint], masks: list) -> tuple[list, list]:
        """Per constraint (nested, largest first) each draw's deployed members (a list of one
        candidate under a single-candidate rule) and which draws deploy their choice over all
        judges there (the first level's, when it is unconstrained)."""
        cands = self.result.candidates
        B = len(self.Mc)
        # every level's best per draw first: a draw's tie set depends only on its best (the
        # limit then masks it), so each (draw, best) pair is summed once, in one pass
        levels = nested_draw_best(self.Mc, self.tie_rank, masks)
        ties = self._pair_ties([lv[0] for lv in levels], [lv[2] for lv in levels], masks)
        whole = None            # each draw's choice over all judges (the first level's, when it is one)
        met_levels = []
        if self.rule == "argmin" or self.rule in WITHIN_TIE_RULES:
            out = []
            for constraint, allowed, (best, _, _) in zip(constraints, masks, levels):
                chosen = best
                met = np.zeros(B, dtype=bool)
                if self.rule != "argmin":
                    tied = ties(best, None, None if allowed is None else np.flatnonzero(allowed))
                    pool = rule_pool(self.rule, tied, best, self.lines)
                    chosen = np.where(pool, self.simple_rank[None, :], len(cands) + 1).argmin(axis=1)
                if whole is None and not constraint.active:
                    whole = chosen
                elif whole is not None and deploys_whole_choice(constraint):
                    limited = LimitedRule(constraint, cands,
                                          constraint.members_test(cands, self.result.panel.judge_names, self.bits))
                    met = limited.draws_met([[int(c)] for c in whole])
                    chosen = limited.columns_deployed(whole, chosen)
                out.append([[int(c)] for c in chosen])
                met_levels.append(met)
            return out, met_levels
        # the tie average: every level's members per draw (they read the previous level's,
        # never a risk)
        chosen_members: list[list] = []
        prev_members: list | None = None
        for constraint, allowed, (best, _, _) in zip(constraints, masks, levels):
            members_fit = constraint.members_test(cands, self.result.panel.judge_names, self.bits)
            # a draw keeps its previous members when they are all still admissible and
            # their union still fits (the greedy pick would make them again)
            kept = {}
            met = np.zeros(B, dtype=bool)
            if whole is not None and deploys_whole_choice(constraint):
                # a draw whose choice over all judges meets this limit deploys it
                met = LimitedRule(constraint, cands, members_fit).draws_met(whole)
                kept = {int(b): whole[b] for b in np.flatnonzero(met)}
            if prev_members is not None:
                admissible = None if allowed is None else allowed.tolist()
                for b, beta in enumerate(best.tolist()):
                    old = prev_members[b]
                    if b not in kept and old[0] == beta and (admissible is None or all(admissible[m] for m in old)) \
                            and members_fit(old):
                        kept[b] = old
            todo = [b for b in range(B) if b not in kept]
            cols = None if allowed is None else np.flatnonzero(allowed)      # the level's admissible columns
            tied = ties(best, todo, cols)                # only the draws that pick again
            if self._fits_any_average(allowed, members_fit):
                picked = self.orders.picks(todo, best, tied, self.signatures, self.max_members, cols)
            else:
                orders = self.orders.orders(todo, best, tied, cols)
                picked = {b: pick_in_order(orders[b], self.signature_list, self.max_members, members_fit)
                          for b in todo}
            prev_members = [kept[b] if b in kept else picked[b] for b in range(B)]
            if whole is None and not constraint.active:
                whole = prev_members
            chosen_members.append(prev_members)
            met_levels.append(met)
        return chosen_members, met_levels

    def _fits_any_average(self, allowed: np.ndarray | None, members_fit) -> bool:
        """Whether every average of the ``allowed`` candidates respects the limit
        (``members_fit``, a :class:`.constraints.MembersTest`; None: no limit): the union of
        all their judges fits (a full-limit level admits one prefix's candidates)."""
        if members_fit is None:
            return True
        return allowed is not None and bool(members_fit(np.flatnonzero(allowed).tolist()))

    @cached_property
    def _in_bag(self) -> np.ndarray | None:
        """(draws, units) every draw's in-bag group counts per unit (the tie sets',
        :meth:`_pair_ties`, and the escape tests', :meth:`_escaped`, read a draw's row at a
        time), formed once; None when they would not fit in memory."""
        return draw_unit_counts(self.grouped, self.W, np.arange(len(self.W)))

    def _escaped(self, prefix: list, within: list, open_draws: np.ndarray, z: float) -> np.ndarray:
        """:func:`.limited_rule.draws_escaped` with the averages' unit sums formed together
        (:meth:`_average_unit_sums`) and kept with the replays'."""
        def unit_sums_of(keys: list[tuple]) -> np.ndarray:
            self._average_unit_sums([k for k in keys if len(k) > 1])
            return np.stack([self._units_of[k] if len(k) > 1 else self._column_unit_sums(int(self.grouped.col[k[0]]))
                             for k in keys])
        return draws_escaped(self.grouped, self.boot["W"], prefix, within, open_draws, z, unit_sums_of,
                             draw_counts=self._in_bag, cells=BLOCK_CELLS)

    def _oob_member_risks(self, chosen: list[list]) -> list[np.ndarray]:
        """Per level (``chosen``: each draw's members there) each kept draw's out-of-bag risk
        of its members' average (or its one column). Every new average's per-unit loss sums
        are formed together (:meth:`_average_unit_sums`). A level whose draws deploy few
        predictors (:attr:`FEW_PREDICTORS`) is scored by one product per predictor with its
        draws' out-of-bag counts; the other levels a block of draws at a time, the block's
        counts converted to floats once for all of them and each draw's row multiplied with
        the per-unit sums of what it deploys (one row-by-row product per level, not one
        product per predictor: many levels deploy a different average in most draws)."""
        keys = [[tuple(m) for m in members] for members in chosen]
        self._average_unit_sums([k for level in keys for k in level if len(k) > 1])

        def unit_sums_of(key: tuple) -> np.ndarray:
            return self._units_of[key] if len(key) > 1 else self._column_unit_sums(int(self.grouped.col[key[0]]))
        B = len(self.OU)
        sums = np.empty((len(keys), B))
        many = []
        for i, level in enumerate(keys):
            draws_of: dict[tuple, list[int]] = {}
            for b, key in enumerate(level):
                draws_of.setdefault(key, []).append(b)
            if len(draws_of) > self.FEW_PREDICTORS:
                many.append(i)
                continue
            # few predictors at this level: one product per predictor with its draws' counts
            for key, rows in draws_of.items():
                sums[i, rows] = self._oob_sums(unit_sums_of(key), rows)
        # many: a block of draws at a time, its counts converted to floats once for all
        # these levels, each draw's row times the per-unit sums of what it deploys there
        step = max(1, BLOCK_CELLS // max(self.OU.shape[1], 1))
        if many:        # one pair of buffers for every block (a block's rows are read before the next's)
            count_buffer, row_buffer = (np.empty((min(step, B), self.OU.shape[1])) for _ in range(2))
        for a in (range(0, B, step) if many else ()):
            counts = count_buffer[:len(self.OU[a:a + step])]
            np.copyto(counts, self.OU[a:a + step], casting="unsafe")
            for i in many:
                rows = row_buffer[:len(counts)]
                for j, k in enumerate(keys[i][a:a + step]):
                    rows[j] = unit_sums_of(k)
                sums[i, a:a + step] = np.einsum("ij,ij->i", counts, rows)
        return [(s / self._safe_on)[self.keep] for s in sums]


def _interval(v: np.ndarray) -> dict:
    return {"estimate": float(v.mean()), "ci": central_interval(v)}


class RuleReplay:
    """The selection's choice rule, ready to be replayed on its held-out matrix on any
    admissible subset of the candidates (no bootstrap, no refit): the rule (argmin when the
    one-SE guard decided), the grouped losses, the rankings and model ids the rule reads and
    the candidates' judge sets. The frontier's levels and the drop-one rows
    (:mod:`.drop_one`) are such replays."""

    def __init__(self, result, heldout):
        sel = self.selector = result.selector
        cands = result.candidates
        self.heldout = heldout
        self.rule = "argmin" if result.guard else sel.choice
        self.grouped = heldout.grouped(sel.objective)
        self.tie_rank = tie_break_order(cands)
        self.simple_rank = preference_order(self.rule, cands, sel.judge_costs)
        self.lines = line_ids(cands)
        # every candidate's model id once, as an array: the replays read it per draw and level
        self.signatures = member_lookup(heldout, cands).ids(range(len(cands)))
        self.bits = JudgeBits(cands, result.panel.judge_names)

    def decide(self, allowed: np.ndarray | None = None, members_fit=None) -> HeldoutChoice:
        """What the rule deploys among the ``allowed`` candidates (all when None), an
        average's members passing ``members_fit``."""
        sel = self.selector
        ch = choose(self.rule, self.grouped, tie_rank=self.tie_rank, simple_rank=self.simple_rank,
                    signatures=self.signatures, max_members=sel.max_members, lines=self.lines,
                    allowed=allowed, members_fit=members_fit)
        return HeldoutChoice(self.heldout, self.grouped, sel.objective, ch.chosen, ch.members)


class FrontierChoices(RuleReplay):
    """What the limited rule deploys at every level of the frontier, decided on the full
    held-out matrix (no bootstrap): ``chains`` (per chain of nested limits, loosest first,
    (constraint, predictor, admissible mask) per level), ``reference`` (the choice over all
    judges) and the shared rankings the replays read. Made before the assessment so the
    learning-curve refits of every point's members (:func:`.crossfit.start_training_size_correction`)
    can start with the default's."""

    def __init__(self, result, heldout):
        super().__init__(result, heldout)
        sel, cands, names, bits = self.selector, result.candidates, result.panel.judge_names, self.bits
        self.result_candidates, self.names = cands, names
        grouped = self.grouped
        costs = self.costs = sel.judge_costs

        z = getattr(sel, "limit_escape_z", None)

        def at_limit(constraint: PanelConstraint):
            # the limited rule: the choice over all judges where it meets the limit, else the
            # prefix's choice, or the best within the limit where that one escapes it
            limited = LimitedRule(constraint, cands)
            allowed = limited.admissible(bits)
            chosen, met = limited.deploy(lambda: self.reference,
                                         lambda: self.decide(allowed, constraint.members_test(cands, names, bits)),
                                         lambda h: h.members or [h.chosen])
            within = test = None
            if z is not None and limited.replays_whole(allowed):
                loose = limited.within()
                within = loose.admissible(bits)
                if not met:
                    test = heldout_escape(heldout, sel.objective, list(chosen.key),
                                          [best_column(self.grouped.means(), self.tie_rank, within)], z)
                    if test is not None and test["escaped"]:
                        chosen = self.decide(within, loose.constraint.members_test(cands, names, bits))
            # (constraint, predictor, admissible mask, the mask within the limit where the
            # escape applies, the escape's test where one was made) per level
            return chosen, allowed, within, test

        self.deployed = deployed = selector_constraint(sel)
        flags = dict(stable_only=deployed.stable_only, exclude_random=deployed.exclude_random,
                     info_first_only=deployed.info_first_only, full_limit=deployed.full_limit)
        chains = [[PanelConstraint(max_judges=k, **flags)
                   for k in judge_levels(cands, len(names))][::-1]]
        if costs:
            levels = cost_levels(cands, grouped.means(), costs)
            eligible = limit_rule_filter(deployed)
            if eligible is not None:
                # a binding budget chooses among the candidates its path-rule filter keeps (off
                # the random path, or on info_first): their own front's levels too (a level of
                # the whole front may be another path's prefix's)
                kept = [i for i, c in enumerate(cands) if eligible(c)]
                if kept and len(kept) < len(cands):
                    levels = sorted(set(levels) | set(cost_levels([cands[i] for i in kept],
                                                                  grouped.means()[kept], costs)))
            user = None
            if deployed.budget is not None and deployed.max_judges is None and \
                    float(deployed.budget) >= levels[0]:
                user = float(deployed.budget)        # the user's own budget is a point
            levels = distinct_cost_levels(levels, user)
            chains.append([PanelConstraint(budget=c, costs=costs, **flags) for c in levels][::-1])
        with grouped.unit_sums_held(UNIT_SUM_CELLS):        # one paired SE per distinct best
            self.reference = self.decide()
            self.chains = [[(c,) + at_limit(c) for c in chain] for chain in chains]
            #: per chain, per level: rule B's (constraint, predictor, mask), or None where the
            #: level does not bind or B has no candidate (``limit_rule_choice``; None when off)
            self.b_chains = ([[self.rule_b(c) for c in chain] for chain in chains]
                             if deployed.rule_choice else None)

    def rule_b(self, constraint: PanelConstraint):
        """Rule B at a level (:func:`.constraints.linear_full_limit` on the level's limit
        alone): (constraint, predictor, mask), or None when the limit excludes no candidate
        or B admits none."""
        cands, bits = self.result_candidates, self.bits
        b = PanelConstraint(max_judges=constraint.max_judges, budget=constraint.budget, costs=constraint.costs,
                            linear_full_limit=True)
        # all admitted: the limit excludes nothing (a binding one leaves out some candidate,
        # so rule B's mask, within it, is never all True)
        allowed = b.mask(cands, bits)
        if allowed is None or allowed.all() or not allowed.any():
            return None
        return b, self.decide(allowed, b.members_test(cands, self.names, bits)), allowed

    def member_sets(self) -> list[list[int]]:
        """Every level's deployed members (candidate indices), each distinct set once."""
        seen = {}
        for chain in self.chains + (self.b_chains or []):
            for level in chain:
                if level is not None:
                    seen.setdefault(level[1].key, list(level[1].key))
        return list(seen.values())


def _runs(decided, own_loosest: bool = True) -> list[int]:
    """The levels of one chain (loosest first) that are replayed: levels deploying the same
    predictor share one replay, the tightest of them (its menu is the smallest on which this
    predictor is chosen), except the loosest level, the choice over all judges, which has its
    own: its estimate is then the unconstrained choice's whichever point a run deploys (walk
    12: deploying 8 judges moved the 20-judge point from the default's 0.000195 to 0.000198,
    the replay of a limit of 10 it shares its predictor with). ``own_loosest`` False: not that
    one either (a run deploying it carries the selection's own estimate there)."""
    return [i for i in range(len(decided))
            if (i == 0 and own_loosest) or not (i + 1 < len(decided) and decided[i + 1][1].key == decided[i][1].key)]


@one_blas_thread
def frontier_replays(result, heldout, choices: FrontierChoices) -> list[dict] | None:
    """Every chain's bootstrap replays (per chain of ``choices``, ``{level: each kept draw's
    out-of-bag risk of the level's choice}`` for its replayed levels, :func:`_runs`); None
    when the selection has no bootstrap draws to replay (no BBC estimate). They read the
    assessment's draws, not the learning-curve correction, so the cross-fitted protocol
    computes them while the refits of that correction are still running
    (:func:`.crossfit.fit_crossfit`) and hands them to :func:`compute_frontier`."""
    if result.bootstrap is None or result.selector.estimate != "bbc":
        return None
    fc = choices
    replays = _Replays(result, heldout, fc.grouped, fc.rule, fc.tie_rank, fc.simple_rank, fc.lines,
                       fc.signatures, fc.bits)
    out = []
    with fc.grouped.unit_sums_held(UNIT_SUM_CELLS):
        for decided in fc.chains:
            # the loosest panel size of a run without a limit is the deployed point: the selection's own estimate
            run = _runs(decided, own_loosest=fc.deployed.active or decided[0][0].max_judges is None)
            z = getattr(result.selector, "limit_escape_z", None)
            out.append(dict(zip(run, replays.chain([decided[i][0] for i in run], [decided[i][2] for i in run],
                                                   [decided[i][3] for i in run], z))))
        for decided in (fc.b_chains or []):
            # rule B's levels (``limit_rule_choice``), keyed by their level in the chain: every
            # level with a B has its replay (levels deploying the same B share one)
            at = [i for i, level in enumerate(decided) if level is not None]
            kept = [decided[i] for i in at]
            run = _runs(kept, own_loosest=False)
            draws = dict(zip(run, replays.chain([kept[i][0] for i in run], [kept[i][2] for i in run])))
            shared, by_level = None, {}
            for j in range(len(kept) - 1, -1, -1):          # smallest level first, as the points
                shared = draws.get(j, shared)
                by_level[at[j]] = shared
            out.append(by_level)
    return out


@one_blas_thread
def compute_frontier(result, heldout, choices: FrontierChoices | None = None,
                     corrections=None, replays: list[dict] | None = None, *, levels=None) -> list[dict]:
    """The frontier points (see the module): one per panel size, then one per cost level
    when the selection has judge costs. ``choices``: the levels' decisions when the caller
    made them already (:class:`FrontierChoices`). ``corrections(members)``: the
    learning-curve correction of the predictor averaging ``members`` (candidate indices; a
    dict with ``delta``, :meth:`.crossfit.CorrectionRefits.correction`), subtracted from
    each point's replayed estimate as the default's is from its own; None: no correction.
    ``replays``: :func:`frontier_replays` of these choices when the caller computed them
    already (None: computed here). ``levels(members)``: the own-set level of the
    predictor averaging ``members`` (:meth:`.crossfit.OwnSetLevels.shift`, None for none),
    added to each point's corrected estimate (``FCPSSelector(own_set_level=True)``; the
    chosen point's is the result's own, already shifted). Its products are thin (a few
    draws' weights against one best column's sums), so they run on one BLAS thread as the
    bootstrap's do."""
    fc = FrontierChoices(result, heldout) if choices is None else choices
    reference, deployed, costs = fc.reference, fc.deployed, fc.costs
    if replays is None:
        replays = frontier_replays(result, heldout, fc)
    points = []
    risks: dict = {}            # per deployed member list its held-out risk and difference to the best
    predictions: dict = {}      # refitted members' predictions, read to name each distinct model once
    b_chains = getattr(fc, "b_chains", None)

    def adjusted(pred, shared):
        """The learning-curve correction and own-set level of ``pred``'s members (None
        without replayed draws)."""
        correction = level = None
        if shared is not None and corrections is not None:
            correction = corrections(list(pred.members or [pred.chosen]))
        if shared is not None and levels is not None:
            level = levels(list(pred.members or [pred.chosen]))
        return correction, level
    for c, decided in enumerate(fc.chains):
        chain = [level[0] for level in decided]
        boot = {} if replays is None else replays[c]
        b_boot = None if b_chains is None or replays is None else replays[len(fc.chains) + c]
        shared = None
        previous_risk = None                            # the next smaller point's held-out risk
        a_risk = (lambda j: _heldout_risks_cached(heldout, decided[j][1], reference, risks)[0]
                  if 0 <= j < len(chain) else None)     # rule A's held-out risk at level j
        for i in range(len(chain) - 1, -1, -1):      # smallest level first
            if i in boot or replays is None:
                shared = boot.get(i)
            constraint, pred = chain[i], decided[i][1]
            correction, level = adjusted(pred, shared)
            point = _point(result, heldout, constraint, pred, reference, shared, deployed, costs,
                           correction, risks, predictions, level)
            point["_draws"] = _estimate_draws(result, point, shared)
            if decided[i][4] is not None:
                point[ESCAPE_KEY] = dict(decided[i][4])
            if b_chains is not None and b_chains[c][i] is not None and b_boot is not None:
                point = _limit_rule_choice(result, heldout, point, b_chains[c][i], b_boot.get(i),
                                           (previous_risk, a_risk(i + 1), a_risk(i - 1)),
                                           adjusted, reference, deployed, costs, risks, predictions)
            previous_risk = point["risk"]
            points.append(point)
    judge_points = sorted((p for p in points if p["constraint"] == "max_judges"), key=lambda p: p["n_judges"])
    cost_points = sorted((p for p in points if p["constraint"] == "budget"), key=lambda p: p["cost"])
    _more_judges(heldout, judge_points)
    _more_judges(heldout, cost_points)
    _estimate_change(judge_points)
    _estimate_change(cost_points)
    for p in points:
        p.pop("_loss")
        p.pop("_draws")
    return judge_points + cost_points


def _limit_rule_choice(result, heldout, point: dict, rule_b, draws, neighbours, adjusted, reference,
                       deployed, costs, risks, predictions) -> dict:
    """``limit_rule_choice`` at one binding level: ``point`` (rule A, the limited choice) or
    rule B's point (``rule_b``: (constraint, predictor, mask); ``draws`` its replay), whichever
    has the lower deployed-risk estimate (A on ties, and whenever either has none).
    ``neighbours``: (the next smaller point's held-out risk as deployed, rule A's at the next
    smaller level, rule A's at the next larger level; None where there is none). B stands
    only where the points' held-out risks stay monotone wherever A's were: when A's risk here
    is at most A's at the next smaller level, B's must be at most the next smaller point's;
    when A's at the next larger level is at most A's here, it must be at most B's too (A
    itself always passes both, given the smaller point passed them). The point records both
    estimates and risks (``limit_rule``). The choice between the two is not replayed (see
    the module)."""
    b_constraint, pred, _ = rule_b
    a_dr = point["deployed_risk"]
    b = None
    if draws is not None:
        correction, level = adjusted(pred, draws)
        b = _point(result, heldout, b_constraint, pred, reference, draws, deployed, costs,
                   correction, risks, predictions, level, own_estimate=True)
        b["_draws"] = draws
    b_dr = None if b is None else b["deployed_risk"]
    record = {"deployed": "limited", "estimates": {"limited": None if a_dr is None else float(a_dr["estimate"]),
                                                   "full_limit_linear": None if b_dr is None else
                                                   float(b_dr["estimate"])},
              "risks": {"limited": float(point["risk"]), "full_limit_linear": None if b is None else float(b["risk"])}}
    previous_risk, previous_a, next_a = neighbours
    a = point["risk"]
    monotone = b is not None and \
        (previous_risk is None or a > previous_a or b["risk"] <= previous_risk) and \
        (next_a is None or next_a > a or next_a <= b["risk"])
    lower = a_dr is not None and b_dr is not None and b_dr["estimate"] < a_dr["estimate"]
    # B's estimate is lower but deploying it would make this point's risk non-monotone
    record["kept_monotone"] = bool(lower and not monotone)
    if lower and monotone:
        b["chosen"] = point["chosen"]
        point = b
        record["deployed"] = "full_limit_linear"
    point["limit_rule"] = record
    return point


def _estimate_draws(result, point: dict, shared):
    """The per-draw out-of-bag risks behind ``point``'s deployed-risk estimate (before its
    learning-curve correction): the selection's own bootstrap for the deployed point (its
    estimate is the selection's), else the level's replay (``shared``); None where the
    estimate is no bootstrap mean (a nested estimate)."""
    if not point["chosen"]:
        return shared
    boot, dr = result.bootstrap, result.deployed_risk or {}
    if boot is None or dr.get("method", "bbc") != "bbc" or boot.get("proc") is None:
        return None
    return np.asarray(boot["proc"])[boot["keep"]]


def _estimate_change(points: list[dict]) -> None:
    """Each point's ``more_judges_estimate``: the change of the deployed-risk estimate from
    this point to the lowest estimate with a looser limit (fewer judges first among equal
    estimates), d = that estimate - this one, with a paired bootstrap 95 % interval: both
    points' choices replayed in the same draws and scored on the same out-of-bag rows, so
    the interval is the 2.5 and 97.5 percentiles of the per-draw differences, less the
    difference of their learning-curve corrections (the estimates' own, so d is exactly the
    difference of the two estimates), widened to d where d lies outside them: when both
    points deploy the same model in more than 97.5 % of the draws both percentiles are 0,
    while d, a mean over the draws, is not. None for the loosest point, and where either
    point has no replayed draws (no bootstrap, or a nested estimate).

    And each point's ``fewer_judges_estimate``, the other way round: d = this estimate - the
    lowest estimate with a tighter limit that deploys other models (two limits deploying the
    same models differ only by each limit's replay), with the same paired interval; what
    the frontier's note reads before it says a looser limit does clearly worse (an interval
    above 0), not a rise of the printed estimates within their noise (walk 10). None for the
    tightest point and wherever no such tighter point or no replayed draws exist."""
    def delta(p: dict) -> float:
        # the learning-curve correction less the own-set shift (FCPSSelector(own_set_level=True))
        dr = p["deployed_risk"] or {}
        return float((dr.get("training_size_correction") or {}).get("delta", 0.0)) - \
            float((dr.get("own_set_level") or {}).get("shift", 0.0))

    def change(a: dict, b: dict, named: dict) -> dict | None:
        """a's estimate - b's with the paired interval of the two replays (``named``: the other
        point), or None where either has no draws or their draws differ in number."""
        if a["_draws"] is None or b["_draws"] is None or len(a["_draws"]) != len(b["_draws"]):
            return None
        d = float(a["deployed_risk"]["estimate"] - b["deployed_risk"]["estimate"])
        low, high = central_interval(a["_draws"] - b["_draws"] - (delta(a) - delta(b)))
        return {"n_judges": named["n_judges"], "cost": named["cost"], "estimate": d, "ci": [min(low, d), max(high, d)]}
    models = [_same_models(p) for p in points]
    for i, p in enumerate(points):
        p["more_judges_estimate"] = p["fewer_judges_estimate"] = None
        if p["deployed_risk"] is None:
            continue
        looser = [q for q in points[i + 1:] if q["deployed_risk"] is not None]
        if looser:
            q = min(looser, key=lambda x: (x["deployed_risk"]["estimate"], x["n_judges"]))
            p["more_judges_estimate"] = change(q, p, q)
        # the other way round: from the lowest estimate with a tighter limit that deploys other models
        tighter = [q for q, m in zip(points[:i], models) if q["deployed_risk"] is not None and m != models[i]]
        if tighter:
            q = min(tighter, key=lambda x: (x["deployed_risk"]["estimate"], x["n_judges"], x["cost"] or 0))
            p["fewer_judges_estimate"] = change(p, q, q)


def _same_models(p: dict) -> tuple:
    """What point ``p`` deploys, as the candidate indices of its distinct members: two limits
    deploying the same models compare equal (their estimates differ only by each limit's replay)."""
    return tuple(sorted(int(m["index"]) for m in p.get("members") or []))


def _more_judges(heldout, points: list[dict]) -> None:
    """Each point's ``more_judges``: the paired difference (this point's risk - the
    lowest-risk point with a looser limit) with its group-clustered 95 % interval, i.e.
    the most a larger panel (or budget) changes the risk; None for the loosest point."""
    for i, p in enumerate(points):
        later = points[i + 1:]
        if not later:
            p["more_judges"] = None
            continue
        q = min(later, key=lambda x: (x["risk"], x["n_judges"]))
        if q["risk"] >= p["risk"] or np.array_equal(q["_loss"], p["_loss"]):
            p["more_judges"] = {"n_judges": p["n_judges"], "cost": p["cost"], "estimate": 0.0, "ci": [0.0, 0.0]}
            continue
        g = grouped_columns(heldout, p["_loss"], q["_loss"])
        means = g.means()
        d = float(means[0] - means[1])
        se = float(g.paired_se(1, means=means)[0])
        p["more_judges"] = {"n_judges": q["n_judges"], "cost": q["cost"], "estimate": d,
                            "ci": [d - Z95 * se, d + Z95 * se]}


def _heldout_risks_cached(heldout, pred: HeldoutChoice, reference: HeldoutChoice, risks: dict) -> tuple:
    """:func:`_heldout_risks` of ``pred``, kept in ``risks`` per member order as the points
    keep it."""
    order = tuple(pred.members or [pred.chosen])
    if order not in risks:
        risks[order] = _heldout_risks(heldout, pred, reference)
    return risks[order]


def _heldout_risks(heldout, pred: HeldoutChoice, reference: HeldoutChoice) -> tuple[float, float, float, float]:
    """(held-out risk, its clustered SE, difference to the reference, its paired SE)."""
    g = grouped_columns(heldout, pred.loss, reference.loss)
    means = g.means()
    dse = float(g.paired_se(1, means=means)[0]) if not np.array_equal(pred.loss, reference.loss) else 0.0
    return float(means[0]), float(g.mean_se(means)[0]), float(means[0] - means[1]), dse


def _point(result, heldout, constraint: PanelConstraint, pred: HeldoutChoice, reference: HeldoutChoice, draws,
           deployed: PanelConstraint, costs, correction: dict | None = None, risks: dict | None = None,
           predictions: dict | None = None, level: dict | None = None, own_estimate: bool = False) -> dict:
    """One frontier point; ``risks`` (per deployed member list its :func:`_heldout_risks`)
    and ``predictions`` (the refitted members' predictions, :func:`.members.deployed_weights`)
    are shared by the levels. ``own_estimate``: the estimate from ``draws`` even at the
    deployed level (rule B of ``limit_rule_choice``, whose estimate the result does not hold)."""
    cands = result.candidates
    order = tuple(pred.members or [pred.chosen])        # an average's loss sums its members in this order
    # the distinct refitted models, each with its share of the tied members (the default's
    # are the result's own, so the chosen point names what the JSON's selected does); the
    # point's judges are the ones they call
    weighted = deployed_weights(result, list(order), predictions)
    members = [cands[i] for i, _ in weighted]
    judge_idx = sorted({j for c in members for j in c.judge_idx})
    names = result.panel.judge_names            # a list built per read: read once
    judges = [names[j] for j in judge_idx]
    risk, se, diff, dse = _heldout_risks_cached(heldout, pred, reference, {} if risks is None else risks)
    J = len(names)
    if deployed.max_judges is not None and deployed.max_judges >= J and deployed.budget is None:
        deployed = PanelConstraint()            # a limit above the panel's size limits nothing
    chosen = (constraint.max_judges == deployed.max_judges and constraint.budget == deployed.budget
              if deployed.active else constraint.max_judges == J and constraint.budget is None)
    if chosen and result.deployed_risk is not None and not own_estimate:
        # the deployed choice's own estimate (BBC with its learning-curve correction, or nested)
        dr = {"estimate": float(result.deployed_risk["estimate"]), "ci": list(result.deployed_risk["ci"])}
        if "bbc_estimate" in result.deployed_risk:
            dr["bbc_estimate"] = float(result.deployed_risk["bbc_estimate"])
            dr["training_size_correction"] = dict(result.deployed_risk["training_size_correction"])
        if "own_set_level" in result.deployed_risk:
            dr["own_set_level"] = dict(result.deployed_risk["own_set_level"])
    elif draws is None:
        dr = None
    else:
        dr = _interval(draws)
        if correction is not None:
            # the same learning-curve correction as the default's, for this point's members
            dr = training_size_corrected(dr, correction)
        if level is not None:
            dr = own_set_shifted(dr, level)
    family = TIE_AVERAGE if pred.members else members[0].family
    n_judges = constraint.max_judges if constraint.max_judges is not None else len(judges)
    cost = (judges_cost(judges, costs)[0] if costs else None) if constraint.budget is None else float(constraint.budget)
    return {"constraint": "max_judges" if constraint.max_judges is not None else "budget",
            "n_judges": int(n_judges), "cost": cost, "judges": judges, "family": family,
            "members": [{"index": c.index, "family": c.family, "K": c.K, "judges": c.judges,
                         "path": c.path_label or c.path_rule, "params": c.params, "weight": w}
                        for c, w in [(cands[i], w) for i, w in weighted]],
            "risk": risk, "ci": [risk - Z95 * se, risk + Z95 * se],
            "diff_vs_best": {"estimate": diff, "ci": [diff - Z95 * dse, diff + Z95 * dse]},
            "deployed_risk": dr, "chosen": bool(chosen), "_loss": pred.loss}
