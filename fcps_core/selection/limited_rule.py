"""The limited rule: what a limit deploys (``--max-judges k``, ``--budget C``, every frontier
level below all judges, every drop-one row under the user's limit).

A limit offers the choice rule its admissible candidates (:meth:`.constraints.PanelConstraint.mask`:
the limit, then its filters; with ``full_limit_sets``, the default, the ``info_first`` prefix
that uses the whole limit, every family on it, or every admissible candidate when no such
prefix fits). Under a full-limit rule a limit the choice over all judges already meets
deploys that choice instead: a limit only narrows the menu when the best choice breaks it,
so no point "at most k" deploys something else than the choice over all judges when that
one calls k judges or fewer. :class:`LimitedRule` owns that composite rule; every place a
limit is read asks it, each with its own way of forming the two choices:

* the deployed choice (:func:`.choice.choose_deployed`, recording
  ``choice_info["limit_met_by_whole_choice"]``, :data:`WHOLE_CHOICE_KEY`);
* its bootstrap replay, draw by draw (:func:`.honesty._bbc`; the answer's tie set,
  :func:`.honesty._tie`, is the whole choice's when the record says so);
* the frontier's levels, on the held-out matrix (:class:`.frontier.FrontierChoices`) and
  draw by draw (:meth:`.frontier._Replays.chain`, whose chain then starts with the
  unconstrained level, :func:`replays_whole_choice`);
* the drop-one rows (:func:`.drop_one.drop_one_choices`: the choice over all judges
  without the judge).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, TypeVar

import numpy as np

from .constraints import PanelConstraint, selector_constraint

T = TypeVar("T")

#: the ``choice_info`` key a deployed choice records when the choice over all judges met the
#: limit and was deployed (the JSON contract's field)
WHOLE_CHOICE_KEY = "limit_met_by_whole_choice"


def deploys_whole_choice(constraint: PanelConstraint) -> bool:
    """Whether ``constraint`` deploys the choice over all judges where that choice meets it:
    a full-limit rule (``full_limit``) with a limit."""
    return constraint.full_limit and constraint.active


def replays_whole_choice(constraints) -> bool:
    """Whether a chain of nested ``constraints`` (loosest first, :meth:`.frontier._Replays.chain`)
    needs each draw's choice over all judges first: some level deploys it where it meets the
    limit (:func:`deploys_whole_choice`) and the loosest level is itself a limit."""
    return any(deploys_whole_choice(c) for c in constraints) and constraints[0].active


def unlimited(selector):
    """A copy of ``selector`` without its ``max_judges`` / ``budget``: the settings of the
    choice over all judges (:func:`.choice.choose_deployed`)."""
    return replace(selector, max_judges=None, budget=None)


def whole_choice_recorded(choice_info: dict | None) -> bool:
    """Whether a deployed choice's ``choice_info`` records that the choice over all judges met
    the limit and was deployed (:data:`WHOLE_CHOICE_KEY`)."""
    return bool((choice_info or {}).get(WHOLE_CHOICE_KEY))


class LimitedRule:
    """The limited rule of ``constraint`` on ``candidates``: which candidates are admissible
    (:meth:`admissible`), and whether the choice over all judges is deployed instead of the
    choice among them (:meth:`deploy` for one choice, :meth:`draws_met` and
    :meth:`columns_deployed` for every bootstrap draw at once). ``members_fit(members)``:
    whether an average of those candidates (indices) respects the limit (default
    :meth:`.constraints.PanelConstraint.members_fit`; a replay passes its
    :class:`.constraints.MembersTest`, the same answer from bit masks)."""

    def __init__(self, constraint: PanelConstraint, candidates, members_fit: Callable | None = None):
        self.constraint = constraint
        self.candidates = candidates
        self.members_fit = members_fit if members_fit is not None else \
            (lambda members: constraint.members_fit(candidates, members))

    @classmethod
    def of(cls, selector, candidates) -> "LimitedRule":
        """The limited rule a selector's settings ask for (:func:`.constraints.selector_constraint`)."""
        return cls(selector_constraint(selector), candidates)

    @property
    def whole_first(self) -> bool:
        """Whether the choice over all judges is deployed where it meets the limit
        (:func:`deploys_whole_choice`)."""
        return deploys_whole_choice(self.constraint)

    def admissible(self, bits=None, among: np.ndarray | None = None) -> np.ndarray | None:
        """The candidates the limit offers the choice rule (None: every candidate):
        :meth:`.constraints.PanelConstraint.mask` with ``bits`` and ``among``."""
        return self.constraint.mask(self.candidates, bits, among)

    def replays_whole(self, allowed: np.ndarray | None) -> bool:
        """Whether a replay must form each draw's choice over all judges: :attr:`whole_first`
        and the limit excludes some candidate (``allowed``, :meth:`admissible`; where it
        excludes none the choice among the admissible ones is that choice)."""
        return self.whole_first and allowed is not None and not allowed.all()

    def within(self) -> "LimitedRule":
        """The same limit with its filters but without the full-limit prefix: the candidates
        the escape chooses among (:func:`heldout_escape`)."""
        return LimitedRule(replace(self.constraint, full_limit=False), self.candidates)

    def met_by(self, members) -> bool:
        """Whether the choice over all judges, the average of ``members`` (candidate indices;
        one candidate: a list of one), is deployed: :attr:`whole_first` and it fits."""
        return self.whole_first and bool(self.members_fit(members))

    def deploy(self, whole: Callable[[], T], limited: Callable[[], T],
               members_of: Callable[[T], list]) -> tuple[T, bool]:
        """(the deployed choice, whether it is the choice over all judges): ``whole()`` (the
        choice over all judges, formed only under a full-limit rule) where it meets the limit
        (``members_of(choice)``: its candidate indices), ``limited()`` (the choice among the
        admissible candidates) otherwise."""
        if self.whole_first:
            chosen = whole()
            if self.members_fit(members_of(chosen)):
                return chosen, True
        return limited(), False

    def draws_met(self, whole_members) -> np.ndarray:
        """Per draw, whether its choice over all judges (``whole_members[b]``, the members of
        draw b's choice) meets the limit and is deployed there."""
        if not self.whole_first:
            return np.zeros(len(whole_members), dtype=bool)
        fits: dict[tuple, bool] = {}          # many draws share one choice: each tested once
        out = np.empty(len(whole_members), dtype=bool)
        for b, m in enumerate(whole_members):
            key = tuple(m)
            if key not in fits:
                fits[key] = bool(self.members_fit(m))
            out[b] = fits[key]
        return out

    def columns_deployed(self, whole: np.ndarray, limited: np.ndarray) -> np.ndarray:
        """Per draw, the deployed column of a single-candidate rule (argmin or a within-tie
        rule): ``whole[b]`` (the choice over all judges) where it meets the limit, else
        ``limited[b]`` (each distinct column tested once)."""
        fits = {int(c): self.met_by([int(c)]) for c in np.unique(whole)}
        return np.where([fits[int(c)] for c in whole], whole, limited)


#: the margin, in group-clustered paired SEs, by which the best candidate within a limit must
#: beat the full-limit prefix's choice on the held-out rows to be deployed instead
#: (:func:`escapes`): z = 3.29 (two-sided p < 0.001) also allows for that candidate being
#: the best of many (docs/performance.md, "where the full-limit rule loses clearly")
ESCAPE_Z = 3.29

#: the ``choice_info`` key of a limited choice's escape test (:func:`escape_record`)
ESCAPE_KEY = "limit_escape"


def paired_margins(diff_units: np.ndarray, unit_rows: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per draw, the paired difference of two predictors' mean losses and its group-clustered
    SE, from per-unit sums: ``diff_units`` (draws, units) one group's loss sum of the second
    predictor minus the first's in each unit (groups of one unit have the same sums; a draw's
    two predictors are its own), ``unit_rows`` (units,) one group's rows, ``weights`` (draws,
    units) each draw's count of groups per unit (the bootstrap's in-bag counts, or every
    group once). The same statistic as :meth:`.choice.GroupedLosses.paired_se` with those
    weights: d = sum w D / sum w n, SE^2 = sum w (D - d n)^2 g / (g - 1) / (sum w n)^2 with g
    the groups counted. Draws with at most one group get a NaN SE."""
    diff_units = np.atleast_2d(np.asarray(diff_units, dtype=float))
    weights = np.atleast_2d(np.asarray(weights, dtype=float))
    n = weights @ np.asarray(unit_rows, dtype=float)
    groups = weights.sum(axis=1)
    safe_n = np.where(n > 0, n, 1.0)
    d = np.einsum("bu,bu->b", weights, diff_units) / safe_n
    resid = diff_units - d[:, None] * np.asarray(unit_rows, dtype=float)[None, :]
    ss = np.einsum("bu,bu->b", weights, resid * resid)
    return d, _clustered_se(ss, groups, safe_n)


def _clustered_se(ss: np.ndarray, groups: np.ndarray, safe_n: np.ndarray) -> np.ndarray:
    """The group-clustered SE of :func:`paired_margins` from its weighted sum of squared
    residuals ``ss``, the groups counted and the rows counted (1 where none): NaN with at
    most one group. Nondecreasing in ``ss`` (every step is), which :func:`_screen_escapes`
    relies on to bound it from bounds of ``ss``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        var = np.where(groups > 1, ss * groups / (groups - 1) / safe_n ** 2, np.nan)
    return np.sqrt(np.maximum(var, 0.0))


def escapes(diff: np.ndarray | float, se: np.ndarray | float, z: float | None = ESCAPE_Z) -> np.ndarray | bool:
    """Whether the best candidate within the limit is deployed instead of the full-limit
    prefix's choice: its mean loss is lower by more than ``z`` paired SEs (``diff``: its mean
    loss minus the prefix choice's; None ``z``: never). A NaN SE (one group) never escapes."""
    if z is None:
        return np.zeros(np.shape(diff), dtype=bool) if np.ndim(diff) else False
    out = np.asarray(diff) < -z * np.asarray(se)
    out &= np.isfinite(np.asarray(se)) & (np.asarray(se) > 0)
    return out if np.ndim(out) else bool(out)


def draws_escaped(grouped, W: np.ndarray, prefix: list, within: list, open_draws: np.ndarray, z: float,
                  unit_sums_of: Callable[[list], np.ndarray], block: int = 64,
                  draw_counts: np.ndarray | None = None, cells: int | None = None) -> np.ndarray:
    """Per bootstrap draw, whether its best candidate within the limit (``within[b]``, a list
    of one) escapes its prefix choice (``prefix[b]``, members): a lower in-bag mean loss by
    more than ``z`` in-bag paired SEs (:func:`paired_margins` over ``grouped``'s units, the
    draw's group counts ``W[b]``, ``block`` draws at a time). Only ``open_draws`` (not
    deploying their choice over all judges) where the two differ are tested.
    ``unit_sums_of(keys)``: (predictors, units) the one-group loss sums per unit of the
    predictors averaging each key's members (a tuple of candidate indices), as the caller
    keeps them (:func:`predictor_unit_sums`), asked once for every distinct predictor the
    tested draws deploy. ``draw_counts`` (draws, units): every draw's group counts per unit
    when the caller holds them (:func:`.honesty.draw_unit_counts`, exact integers, so the
    same weights as formed here from ``W``); with them, where a block's (draws, units)
    arrays would exceed ``cells`` (the caller's block size, :data:`.honesty.BLOCK_CELLS`;
    None: never) (the test's passes over them then
    leave the cache; on fewer units they cost less than the screen's product per predictor
    pair), the draws whose answer rounding cannot change are decided first
    (:func:`_screen_escapes`) and only the blocks holding another draw are summed."""
    out = np.zeros(len(prefix), dtype=bool)
    todo = [b for b in np.flatnonzero(open_draws) if sorted(prefix[b]) != sorted(within[b])]
    if not todo:
        return out
    index: dict[tuple, int] = {}            # each distinct predictor's row of ``sums``
    pairs = np.array([[index.setdefault(tuple(within[b]), len(index)), index.setdefault(tuple(prefix[b]), len(index))]
                      for b in todo], dtype=np.int64)
    sums = unit_sums_of(list(index))                                  # (predictors, units)
    todo = np.asarray(todo, dtype=np.int64)
    decided = np.zeros(len(todo), dtype=bool)
    if draw_counts is not None and cells is not None and z is not None and z >= 0 \
            and block * len(grouped.unit_rows) > cells:
        decided, sure = _screen_escapes(sums, pairs, grouped.unit_rows, draw_counts, todo, z, block, cells)
        out[todo[decided]] = sure[decided]
    for a in range(0, len(todo), block):
        if decided[a:a + block].all():
            continue
        rows = todo[a:a + block]
        if draw_counts is None:
            counts = np.asarray(grouped.unit_weights(np.asarray(W[rows], dtype=float).T)).T       # (draws, units)
        else:
            counts = draw_counts[rows].astype(float)
        diff = sums[pairs[a:a + block, 0]] - sums[pairs[a:a + block, 1]]
        d, se = paired_margins(diff, grouped.unit_rows, counts)
        out[rows] = escapes(d, se, z)
    return out


def _screen_escapes(sums: np.ndarray, pairs: np.ndarray, unit_rows: np.ndarray, draw_counts: np.ndarray,
                    draws: np.ndarray, z: float, block: int, cells: int) -> tuple[np.ndarray, np.ndarray]:
    """(decided, escaped) per draw of ``draws``: which draws' escape test (:func:`paired_margins`
    and :func:`escapes` as :func:`draws_escaped` runs them) has an answer no rounding of its
    sums can change, and that answer. Draw i compares the predictors ``pairs[i]`` (rows of
    ``sums``) under its group counts ``draw_counts[draws[i]]`` (exact integers).

    The test's sums are formed here by one product per predictor pair (its draws' counts,
    ``block`` draws at a time, against the pair's per-unit terms D, |D|, D^2, D n, |D| n,
    n^2, n and 1, formed for a block of pairs at once; ``cells``: the most cells one block
    of pairs' terms takes), in another order than the test's,
    with SS expanded as sum w D^2 - 2 d sum w D n + d^2 sum w n^2. The counted rows and
    groups are exact (integer sums). Any sum of U products is within (U + 1) eps of its
    value times the sum of the products' magnitudes, in whatever order it is added (Higham,
    Accuracy and Stability of Numerical Algorithms, 3.1), and so is the test's: so its d
    lies in [d_lo, d_hi], and its SS, within rounding of its residuals (D - d n with d
    anywhere in that interval), in [Q - err, Q + err] (err: four times that bound, which
    also covers the few roundings of these bounds' own arithmetic, times the largest
    magnitude sum, plus the change of Q over d's interval). The test's d is nondecreasing
    in its sum, and its SE and escape threshold (-z SE, z >= 0) are monotone in SS, so the
    test's answer is known where both ends of those intervals give it; elsewhere the draw
    is left to the test itself."""
    u = np.asarray(unit_rows, dtype=float)
    rho = 4.0 * (len(u) + 16) * np.finfo(float).eps
    # the draws sorted by pair, each pair's draws a run; a block of pairs' terms formed at once
    codes = pairs[:, 0] * len(sums) + pairs[:, 1]
    order = np.argsort(codes, kind="stable")
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]])
    bounds = np.r_[starts, len(order)]
    first = pairs[order[starts]]                    # each pair's (within, prefix) rows of ``sums``
    sums_of = np.empty((len(draws), 8))             # per draw (in ``order``) its eight sums
    per_block = max(1, cells // (8 * max(len(u), 1)))
    with np.errstate(invalid="ignore", over="ignore"):
        for p0 in range(0, len(first), per_block):
            at = first[p0:p0 + per_block]
            terms = np.empty((len(at), 8, len(u)))
            D, aD = terms[:, 0], terms[:, 1]
            np.subtract(sums[at[:, 0]], sums[at[:, 1]], out=D)
            np.abs(D, out=aD)
            np.multiply(D, D, out=terms[:, 2])
            np.multiply(D, u, out=terms[:, 3])
            np.multiply(aD, u, out=terms[:, 4])
            terms[:, 5], terms[:, 6], terms[:, 7] = u * u, u, 1.0
            for q in range(len(at)):
                for r0 in range(bounds[p0 + q], bounds[p0 + q + 1], block):
                    rows = order[r0:min(r0 + block, bounds[p0 + q + 1])]
                    sums_of[r0:r0 + len(rows)] = draw_counts[draws[rows]].astype(float) @ terms[q].T
        s1, sa, A, B, E, C, n, g = sums_of[np.argsort(order)].T
        safe_n = np.where(n > 0, n, 1.0)
        d0 = s1 / safe_n
        d_lo, d_hi = (s1 - rho * sa) / safe_n, (s1 + rho * sa) / safe_n
        dd = (d_hi - d_lo) * (1 + rho)                 # the test's d is within dd of d0
        dm = np.abs(d0) + dd
        Q = A - 2 * d0 * B + d0 * d0 * C
        err = rho * (A + 2 * dm * E + dm * dm * C) + (1 + rho) * (2 * dd * (E + np.abs(d0) * C) + dd * dd * C)
        se_lo, se_hi = _clustered_se(Q - err, g, safe_n), _clustered_se(Q + err, g, safe_n)
        never = (g <= 1) | (se_hi == 0) | (d_lo >= -z * se_lo)
        escaped = (g > 1) & (se_lo > 0) & np.isfinite(se_hi) & (d_hi < -z * se_hi)
    decided = never | escaped
    return decided, escaped


def predictor_unit_sums(grouped, heldout, objective: str, members) -> np.ndarray:
    """One group's loss sums per unit (:class:`.choice.GroupedLosses`' units) of the predictor
    averaging ``members`` (candidate indices): a single candidate's loss column as the
    choice and the replay read it, an average's losses as :meth:`.folds.HeldOut.average_losses`
    forms them (as the tie average is scored)."""
    members = list(members)
    if len(members) == 1:
        return grouped.unit_sums([int(grouped.col[members[0]])])[:, 0]
    return np.asarray(grouped.unit_matrix @ heldout.average_losses(objective, members)).reshape(-1)


def heldout_escape(heldout, objective: str, prefix_members, within_members,
                   z: float | None = ESCAPE_Z) -> dict | None:
    """The escape test on the held-out rows (every group once): the best-within-limit
    choice's mean loss (``within_members``, candidate indices) minus the full-limit prefix
    choice's (``prefix_members``), its group-clustered paired SE, and whether it escapes
    (:func:`escapes`). The record ``choice_info[ESCAPE_KEY]`` keeps. None when the two are the
    same predictor (no test is made)."""
    if sorted(prefix_members) == sorted(within_members):
        return None
    g = heldout.grouped(objective)
    diff = predictor_unit_sums(g, heldout, objective, within_members) - \
        predictor_unit_sums(g, heldout, objective, prefix_members)
    d, se = paired_margins(diff.reshape(1, -1), g.unit_rows, np.asarray(g.unit_groups, dtype=float).reshape(1, -1))
    return {"diff": float(d[0]), "se": float(se[0]), "z": z, "escaped": bool(escapes(d[0], se[0], z))}
