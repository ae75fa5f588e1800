"""Screening after the first repeat: the later repeats refit only candidates that can matter.

The cross-fitted protocol repeats its grouped K-fold ``repeats`` times with independent
shuffles. Every repeat already gives each candidate an honest held-out risk on every
deployable row; the later repeats average out the fold partition's noise in the
*differences* between candidates, which the choice rule reads (a few tenths of the
differences' paired SE: docs/performance.md, "One repeat on large panels?").

The screen. After the first repeat, let r(c) be candidate c's mean held-out loss over the
evaluation rows in that repeat and u(c) its group-clustered SE (the norm of its per-group
residual sums, sum over groups of (s_g - n_g r)^2 times G / (G - 1), over n^2, as
:class:`.choice.GroupedLosses` forms it). Candidate c is *screened* when, for every
reference b this module compares it with, it is behind b by more than the bound

    r(c) - r(b) > z * (u(c) + U) + tol(r(b)),

with U the largest u among the candidates compared that are no worse than b, and tol the
choice rules' rounding tolerance (:func:`.diagnostics.risk_tolerance`). The references, each
among the candidates every fold offers whatever its rows (path rules that order every
judge; families without joint patterns, or tables whose ids fit any fold), so a later fold
cannot lose one:

* for the judge-count limits (the frontier's panel sizes, ``max_judges``): the best
  candidate with no more judges than c; with judge costs, the best one calling a subset of
  c's judges instead (its cost is no higher, whatever the costs: sums of non-negative costs
  over a subset, in the same order, are no larger), which also covers every budget;
* with ``full_limit_sets`` (the default), where a binding limit admits only the
  ``info_first`` prefix that uses the whole limit, every family on it: for a candidate on
  that path, the best one on the same path calling exactly its judges (the candidates a
  limit compares it with);
* for the drop-one replays of the judges report (the choice rule without judge j, under the
  user's limits): for every judge j that c does not call, the best candidate within the
  user's limits (before the full-limit filter, to which the replay falls back when every
  ``info_first`` prefix within them calls j) that does not call j (when c is within them);
* the best candidate of c's side of the regime verdict (table-like or scalar families: the
  verdict reads each side's best, :func:`.honesty.assess`); and with the one-SE guard every
  candidate of the guard's prior family is kept (the guard reads that family's best under
  the limits).

Under every limit c satisfies, the reference for it satisfies the limit too, so the best t
under it has r(t) <= r(b) and c is behind t by at least r(c) - r(b). The other, off-by-default
filters of a limit (``stable_judge_sets``, ``random_under_limits=False``,
``info_first_under_limits``, ``limit_rule_choice``) admit candidates these references do not
bound, so with one of them there is no screen (every candidate is refitted in every repeat:
:attr:`.constraints.PanelConstraint.screenable`).

Why the bound suffices. The choice's tie band is one paired SE (plus tol), and a paired SE
is the norm of the difference of two residual vectors, so SE(c - t) <= u(c) + u(t) (the
triangle inequality: no pairing can make it larger). With z = 2 the gap is twice the
largest tie band c could have with any reference: the later repeats would have to move the
difference by a further u(c) + U, where the fold partition moves a difference by a few
tenths of its paired SE. ``z`` is not tuned to any panel: it is the tie band plus an equal
margin.

A screened candidate is not refitted in the later repeats: its held-out predictions there
are its first repeat's (:class:`.folds.RepeatTables` ``first_repeat_only``), so its
cross-fitted risk is the first repeat's, its diagnostics and judge-set stability the first
repeat's folds'. Every other candidate is fitted exactly as without the screen (the later
folds fit the full menu's families that have a candidate left, restricted to those
candidates with :func:`.menu.fit_menu`'s ``only``), so its predictions are the same bit for
bit; a screened candidate that a later fold's full menu would not offer is left out, as it
is without the screen. What reads every candidate with its risk reads a screened one with
its first repeat's: the bootstrap draws of the deployed-risk estimate and of the frontier's
replays (where it can enter a draw's tie set), and the drop-one rows whose best predictor
without the judge is a screened one. The judge sets are the final refit's (the deployed
ones, which the limits read).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..families import REGISTRY
from ..measures.diagnostics import risk_tolerance
from .menu import key_family

#: the screen's threshold in sums of clustered SEs (module docstring: the tie band, one,
#: plus an equal margin)
SCREEN_SE = 2.0
#: candidates whose subset tests are formed at once (a (candidates, block, judges) temporary)
_BLOCK = 256


@dataclass(frozen=True)
class Screen:
    """The screen's outcome: ``screened`` candidate keys (first repeat only), ``kept`` the
    keys refitted in every repeat, ``z`` the threshold (module docstring)."""

    screened: frozenset
    kept: frozenset
    z: float
    #: whether info_first candidates were also compared with the best on their own judge set
    full_limit: bool = False

    def info(self) -> dict:
        """What the result reports of the screen."""
        same = "on the info_first path the best one calling the same judges, " if self.full_limit else ""
        return {"z": self.z, "n_screened": len(self.screened), "n_kept": len(self.kept),
                "rule": (f"after the first repeat, a candidate behind, by more than {self.z:g} times the sum of "
                         "its clustered SE and the largest among the candidates ahead, the best one with no more "
                         f"judges (with judge costs: calling a subset of its judges), {same}the best one without "
                         "each judge it does not call, and the best of its side of the regime verdict keeps that "
                         "repeat's held-out predictions; the later repeats refit the others")}


def first_repeat_risks(heldout, objective: str) -> tuple[np.ndarray, np.ndarray]:
    """(mean, clustered SE) of every candidate's held-out loss in a one-repeat held-out
    matrix (:class:`.folds.HeldOut` over the first repeat's tables): the per-group sums of
    the distinct rows' losses, as the final risks are, a block of columns at a time."""
    return heldout.column_means(objective, with_se=True)


def _best_first(means: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The indices of ``members`` (a bool mask) by mean, best first (ties: the lower index)."""
    idx = np.flatnonzero(members)
    return idx[np.lexsort((idx, means[idx]))]


def best_subset_references(means: np.ndarray, calls: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """For each candidate, the eligible candidate of lowest mean whose judge set is a subset
    of its own (itself when it is eligible and no such candidate is better; ties: the lower
    index); -1 when no eligible candidate qualifies. ``calls``: (candidates, judges) bool."""
    m = len(means)
    out = np.full(m, -1, dtype=np.int64)
    ref = _best_first(means, eligible)
    if not len(ref):
        return out
    for a in range(0, m, _BLOCK):
        c = np.arange(a, min(a + _BLOCK, m))
        # subset[i, k]: ref[i] calls no judge that c[k] does not
        subset = ~(calls[ref][:, None, :] & ~calls[c][None, :, :]).any(axis=2)
        has = subset.any(axis=0)
        out[c[has]] = ref[subset[:, has].argmax(axis=0)]
    return out


def best_count_references(means: np.ndarray, counts: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """For each candidate, the eligible candidate of lowest mean with no more judges
    (``counts``) than its own (ties: the lower index); -1 when none qualifies."""
    m = len(means)
    out = np.full(m, -1, dtype=np.int64)
    ref = np.flatnonzero(eligible)
    if not len(ref):
        return out
    ref = ref[np.lexsort((ref, means[ref], counts[ref]))]      # by count, then best first
    levels, first = np.unique(counts[ref], return_index=True)
    best, best_at = -1, np.empty(len(levels), dtype=np.int64)
    for i, start in enumerate(first):          # the best over every count <= this level
        c = ref[start]
        if best < 0 or means[c] < means[best] or (means[c] == means[best] and c < best):
            best = c
        best_at[i] = best
    level = np.searchsorted(levels, counts, side="right") - 1
    has = level >= 0
    out[has] = best_at[level[has]]
    return out


def best_without_each_judge(means: np.ndarray, calls: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """(judges,) the eligible candidate of lowest mean that does not call each judge (ties:
    the lower index); -1 when none qualifies. ``calls``: (candidates, judges) bool."""
    order = _best_first(means, eligible)
    out = np.full(calls.shape[1], -1, dtype=np.int64)
    if len(order):
        without = ~calls[order]                    # (eligible best first, judges)
        has = without.any(axis=0)
        out[has] = order[without[:, has].argmax(axis=0)]
    return out


def _behind(means: np.ndarray, se: np.ndarray, ref: np.ndarray, z: float, ahead=None) -> np.ndarray:
    """Whether each candidate is behind its reference ``ref`` (-1: none) by more than the
    bound, U the largest SE among the candidates no worse than the reference (``ahead``:
    :func:`_ahead` of these means and SEs, when the caller keeps it)."""
    order, running = _ahead(means, se) if ahead is None else ahead
    m = len(means)
    has = ref >= 0
    out = np.zeros(m, dtype=bool)
    r = ref[has]
    U = running[np.searchsorted(means[order], means[r], side="right") - 1]
    gap = means[has] - means[r]
    out[has] = ((r != np.flatnonzero(has)) & np.isfinite(se[has]) & np.isfinite(U)
                & (gap > z * (se[has] + U) + risk_tolerance(means[r])))
    return out


def _ahead(means: np.ndarray, se: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(candidates by mean, the running largest SE along that order; inf for a missing SE)."""
    order = np.argsort(means, kind="stable")
    return order, np.maximum.accumulate(np.where(np.isfinite(se[order]), se[order], np.inf))


def _side_best(means: np.ndarray, members: np.ndarray) -> np.ndarray:
    """Each member's reference: the best member (lowest mean, ties by index); -1 elsewhere."""
    out = np.full(len(means), -1, dtype=np.int64)
    order = _best_first(means, members)
    if len(order):
        out[members] = order[0]
    return out


def same_set_references(means: np.ndarray, judge_sets: list, members: np.ndarray,
                        eligible: np.ndarray) -> np.ndarray:
    """For each of ``members`` (a bool mask), the ``eligible`` member of lowest mean calling
    exactly its judge set (ties: the lower index); -1 elsewhere and where none qualifies."""
    out = np.full(len(means), -1, dtype=np.int64)
    best: dict = {}
    for c in _best_first(means, members & eligible):
        best.setdefault(frozenset(judge_sets[c]), int(c))
    for c in np.flatnonzero(members):
        out[c] = best.get(frozenset(judge_sets[c]), -1)
    return out


def screen_candidates(means: np.ndarray, se: np.ndarray, keys: list, judge_sets: list, n_judges: int,
                      *, steady: np.ndarray | None = None, admissible: np.ndarray | None = None,
                      with_costs: bool = False, guard_family: str | None = None,
                      full_limit: np.ndarray | None = None, z: float = SCREEN_SE) -> Screen:
    """The screen (module docstring) over candidates ``keys`` (:func:`.menu.menu_key`) from
    their first-repeat mean losses ``means`` and clustered SEs ``se``
    (:func:`first_repeat_risks`); ``judge_sets`` their judge index sets among ``n_judges``;
    ``steady`` which of them every fold offers whatever its rows (those serve as references;
    None: all); ``admissible`` which are within the user's limits, before any filter by path
    rule (None: all); ``with_costs`` whether judge costs are set (the limit reference is
    then the best subset); ``guard_family`` the one-SE guard's prior family (its candidates
    are kept); ``full_limit`` (the selector's ``full_limit_sets``) which candidates are on the
    ``info_first`` path: a binding limit then compares such a candidate with the other
    families on its own judge set only, so each is also compared with the best of those."""
    m = len(keys)
    if m == 0:
        return Screen(frozenset(), frozenset(), z, full_limit is not None)
    means, se = np.asarray(means, dtype=float), np.asarray(se, dtype=float)
    steady = np.ones(m, dtype=bool) if steady is None else np.asarray(steady, dtype=bool)
    admissible = np.ones(m, dtype=bool) if admissible is None else np.asarray(admissible, dtype=bool)
    family = [key_family(k) for k in keys]
    table_like = np.array([REGISTRY[f].table_like for f in family], dtype=bool)
    calls = np.zeros((m, n_judges), dtype=bool)
    for i, judges in enumerate(judge_sets):
        calls[i, list(judges)] = True
    # the judge-count (and cost) limits
    if with_costs:
        limit_ref = best_subset_references(means, calls, steady)
    else:
        limit_ref = best_count_references(means, calls.sum(axis=1), steady)
    ahead = _ahead(means, se)
    screened = _behind(means, se, limit_ref, z, ahead)
    if full_limit is not None:
        on_path = np.asarray(full_limit, dtype=bool)
        screened &= ~on_path | _behind(means, se, same_set_references(means, judge_sets, on_path, steady), z, ahead)
    # the drop-one replays: without judge j, under the user's limits
    without = best_without_each_judge(means, calls, steady & admissible)
    for j in range(n_judges):
        concerned = admissible & ~calls[:, j]
        if concerned.any() and screened.any():
            screened &= ~concerned | _behind(means, se, np.full(m, without[j]), z, ahead)
    # the regime verdict's two sides, and the guard's family
    for side in (table_like, ~table_like):
        screened &= ~side | _behind(means, se, _side_best(means, side), z, ahead)
    if guard_family is not None:
        screened &= np.array([f != guard_family for f in family], dtype=bool)
    out = frozenset(keys[int(c)] for c in np.flatnonzero(screened))
    return Screen(out, frozenset(k for k in keys if k not in out), z, full_limit is not None)
