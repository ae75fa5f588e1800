"""Screening after the first repeat: the later repeats refit only candidates that can matter.

The cross-fitted protocol repeats its grouped K-fold ``repeats`` times with independent
shuffles. Every repeat already gives each candidate an honest held-out risk on every
deployable row; the later repeats average out the fold partition's noise in the
*differences* between candidates, which the choice rule reads (measured on seven panels at
0.06 to 0.37 of the differences' paired SE, docs/performance.md, "One repeat on large
panels?").

The screen. After the first repeat, let r(c) be candidate c's mean held-out loss over the
evaluation rows in that repeat and u(c) its group-clustered SE (the norm of its per-group
residual sums, sum over groups of (s_g - n_g r)^2 times G / (G - 1), over n^2, as
:class:`.choice.GroupedLosses` forms it). Let b(c) be the best candidate (lowest r) with no
more judges than c (and, with judge costs, no higher cost per item), and U(c) the largest u
among the candidates no worse than b(c). Candidate c is *screened* when

    r(c) - r(b(c)) > z * (u(c) + U(c)).

Why this cannot drop a candidate that matters. Under any judge-count or cost limit that c
satisfies, b(c) satisfies it too, so the best t under that limit has r(t) <= r(b(c)) and
c is behind it by at least r(c) - r(b(c)). The choice's tie band is one paired SE, and a
paired SE is the norm of a difference of residual vectors, so SE(c - t) <= u(c) + u(t)
<= u(c) + U(c) (the triangle inequality: no pairing can make it larger). With z = 2 the gap
is twice the largest tie band c could have with any such t: the later repeats would have
to move the difference by a further u(c) + U(c), where the fold partition moves a
difference by a few tenths of its paired SE (measured on seven panels at 0.06 to 0.37,
docs/performance.md, "One repeat on large panels?"). ``z`` is not tuned to any panel: it
is the tie band plus an equal margin.

A screened candidate is not refitted in the later repeats: its held-out predictions there
are its first repeat's (:class:`.folds.RepeatTables` ``first_repeat_only``), so its
cross-fitted risk is the first repeat's, its diagnostics and judge-set stability the first
repeat's folds'. Every other candidate is fitted exactly as without the screen (the later
folds fit the full menu's families that have a candidate left, restricted to those
candidates with :func:`.menu.fit_menu`'s ``only``), so its predictions are the same bit for
bit. The candidates compared are the final refit's (their judge sets and costs are the
deployed ones, which the frontier's limits read).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..measures.diagnostics import losses
from .choice import GroupedLosses

#: the screen's threshold in sums of clustered SEs (module docstring: the tie band, one,
#: plus an equal margin)
SCREEN_SE = 2.0


@dataclass(frozen=True)
class Screen:
    """The screen's outcome: ``screened`` candidate keys (first repeat only), ``kept`` the
    keys refitted in every repeat, ``z`` the threshold (module docstring)."""

    screened: frozenset
    kept: frozenset
    z: float

    def info(self) -> dict:
        """What the result reports of the screen."""
        return {"z": self.z, "n_screened": len(self.screened), "n_kept": len(self.kept),
                "rule": (f"after the first repeat, a candidate behind the best one with no more judges "
                         f"(and no higher cost) by more than {self.z:g} times the sum of its clustered SE "
                         "and the largest among the candidates ahead, keeps that repeat's held-out "
                         "predictions; the later repeats refit the others")}


def first_repeat_risks(heldout, objective: str) -> tuple[np.ndarray, np.ndarray]:
    """(mean, clustered SE) of every candidate's held-out loss in a one-repeat held-out
    matrix (:class:`.folds.HeldOut` over the first repeat's tables), formed a block of
    columns at a time and not kept (:meth:`.folds.HeldOut.column_means`' loop, with each
    block's SEs): the per-group sums of the distinct rows' losses, as the final risks are."""
    u = heldout.units()
    col, first = heldout.columns()
    means_d, se_d = np.empty(len(first)), np.empty(len(first))
    yd = heldout.y_distinct
    for a in range(0, len(first), GroupedLosses.BLOCK):
        cols = first[a:a + GroupedLosses.BLOCK]
        L = np.asfortranarray(losses(objective, yd[:, None], heldout.stored(cols)[0]))
        g = GroupedLosses.from_units(L, u.matrix, u.groups, u.group_unit, np.arange(L.shape[1]))
        means_d[a:a + L.shape[1]] = m = g.means()
        se_d[a:a + L.shape[1]] = g.mean_se(m)
    return means_d[col], se_d[col]


def best_dominators(means: np.ndarray, n_judges: np.ndarray, cost: np.ndarray | None) -> np.ndarray:
    """For each candidate, the candidate with the lowest mean among those with no more
    judges (and no higher cost), itself included (ties: the lower index)."""
    m = len(means)
    out = np.empty(m, dtype=np.int64)
    if cost is None:
        # candidates in order of judge count; the running argmin over every count <= k
        order = np.lexsort((np.arange(m), n_judges))
        best, i = -1, 0
        while i < m:
            k = n_judges[order[i]]
            j = i
            while j < m and n_judges[order[j]] == k:
                c = order[j]
                if best < 0 or means[c] < means[best] or (means[c] == means[best] and c < best):
                    best = c
                j += 1
            out[order[i:j]] = best
            i = j
        return out
    for c in range(m):
        eligible = np.flatnonzero((n_judges <= n_judges[c]) & (cost <= cost[c]))
        out[c] = eligible[np.argmin(means[eligible])]       # argmin: the lowest index of ties
    return out


def screen_candidates(means: np.ndarray, se: np.ndarray, keys: list, n_judges: np.ndarray,
                      cost: np.ndarray | None, z: float = SCREEN_SE) -> Screen:
    """The screen (module docstring) over candidates ``keys`` from their first-repeat mean
    losses ``means`` and clustered SEs ``se`` (:func:`first_repeat_risks`); ``n_judges``
    and ``cost`` (None without judge costs) per key."""
    m = len(keys)
    if m == 0:
        return Screen(frozenset(), frozenset(), z)
    means, se = np.asarray(means, dtype=float), np.asarray(se, dtype=float)
    dom = best_dominators(means, np.asarray(n_judges), None if cost is None else np.asarray(cost, dtype=float))
    # U(c): the largest SE among the candidates no worse than b(c)
    order = np.argsort(means, kind="stable")
    running = np.maximum.accumulate(se[order])
    reach = np.searchsorted(means[order], means[dom], side="right") - 1
    U = running[reach]
    gap = means - means[dom]
    bad = (dom != np.arange(m)) & np.isfinite(se) & np.isfinite(U) & (gap > z * (se + U))
    screened = frozenset(keys[int(c)] for c in np.flatnonzero(bad))
    return Screen(screened, frozenset(k for k in keys if k not in screened), z)
