"""The bootstrap's tie-set pruning (``honesty._tie_columns``, ``honesty._paired_tie_columns``)
never drops a column that is tied with the draw's best column.

A column is tied in a draw when its in-bag mean exceeds the best one's by at most the
paired, group-clustered SE plus the rounding tolerance; here that SE is summed directly
over groups, draw by draw, in a plain loop (the definition, independent of the bounds).
The losses include columns that differ from others by 1e-12 in a few rows, or exceed them
by 1e-8..3e-7 in one row (tied by their SE, not by the rounding tolerance, and where the
paired bound's expanded sums cancel), and exact copies.
"""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.diagnostics import risk_tolerance
from fcps_core.selection.choice import GroupedLosses
from fcps_core.selection.honesty import _paired_tie_columns, _tie_columns, bootstrap_counts


def _losses(seed: int):
    rng = np.random.default_rng(seed)
    G = 150
    groups = np.repeat(np.arange(G), rng.integers(1, 5, G))
    n = len(groups)
    base = rng.random(n)
    cols = [base]
    for _ in range(12):                                   # near copies: tiny edits in a few rows
        c = base.copy()
        rows = rng.choice(n, 3, replace=False)
        c[rows] += rng.normal(0, 1e-12, 3)
        cols.append(c)
    for _ in range(30):                                   # one row raised by 1e-8..3e-7: a tie by SE
        c = base.copy()
        c[rng.integers(n)] += 10 ** rng.uniform(-8, -6.5)
        cols.append(c)
    for scale in (1e-3, 1e-2, 5e-2, 0.2):                 # correlated, then farther
        for _ in range(6):
            cols.append(np.clip(base + rng.normal(0, scale, n), 0, 1))
    cols += [rng.random(n) for _ in range(6)]             # independent
    cols.append(base.copy())                              # an exact copy
    return np.column_stack(cols), groups


def _exact_tied(L, groups, W):
    """(draws, columns) the tie sets by the definition, draw by draw."""
    g = GroupedLosses(L, groups)
    S = g.sums                                                # (groups, columns)
    n = g.rows_per_group
    tied = np.zeros((len(W), L.shape[1]), dtype=bool)
    best = np.empty(len(W), dtype=np.int64)
    M = np.empty((len(W), L.shape[1]))
    for b, w in enumerate(W.astype(float)):
        N = w @ n
        M[b] = (w @ S) / N
        lo = M[b].min()
        tol = risk_tolerance(np.array([lo]))[0]
        beta = int(np.flatnonzero(M[b] <= lo + tol)[0])
        best[b] = beta
        drawn = w.sum()
        for c in range(L.shape[1]):
            d = M[b, c] - M[b, beta]
            r = (S[:, c] - S[:, beta]) - d * n
            se = np.sqrt((w * r * r).sum() * drawn / max(drawn - 1, 1)) / N
            tied[b, c] = d <= se + tol
    return g, M, best, tied


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_tie_bounds_keep_every_tied_column(seed):
    L, groups = _losses(seed)
    W = bootstrap_counts(seed, 150, len(np.unique(groups)))
    g, M, best, tied = _exact_tied(L, groups, W)
    spread = g.spread()
    n = g.rows_per_group
    N = W.astype(float) @ n
    tol = risk_tolerance(M.min(axis=1))
    drawn = W.sum(axis=1).astype(float)
    w_max = W.max(axis=1).astype(float)
    S = g.unit_sums()                                         # every group its own unit here
    pruned_some = False
    for beta in np.unique(best):
        rb = np.flatnonzero(best == beta)
        cols = _tie_columns(spread, M[rb], beta, w_max[rb], N[rb], tol[rb], drawn[rb])
        cross = S[:, cols].T @ (g.unit_groups * S[:, beta])
        paired = _paired_tie_columns(spread, cross, cols, M[rb], beta, w_max[rb], N[rb], tol[rb], drawn[rb])
        truly = np.flatnonzero(tied[rb].any(axis=0))
        assert set(truly) <= set(cols.tolist())
        assert set(truly) <= set(paired.tolist())
        assert set(paired.tolist()) <= set(cols.tolist())
        pruned_some |= len(paired) < len(cols)
    assert pruned_some                                        # the paired bound does prune
