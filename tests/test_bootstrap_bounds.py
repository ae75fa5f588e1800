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

from fcps_core.measures.diagnostics import risk_tolerance
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
        # among some columns (the frontier's admissible ones, the best among them): the
        # same columns as the bound over all of them, restricted
        among = np.union1d(np.flatnonzero(np.arange(L.shape[1]) % 3 != 1), [beta])
        assert _tie_columns(spread, M[rb], beta, w_max[rb], N[rb], tol[rb], drawn[rb],
                            among=among).tolist() == np.intersect1d(cols, among).tolist()
    assert pruned_some                                        # the paired bound does prune


def _tied_by_definition(S, n, w, beta, tol):
    """Columns tied with ``beta`` in one draw of group weights ``w`` (S: group sums)."""
    N = w @ n
    M = (w @ S) / N
    drawn = w.sum()
    d = M - M[beta]
    R = (S - S[:, [beta]]) - d[None, :] * n[:, None]
    se = np.sqrt((w[:, None] * R * R).sum(axis=0) * drawn / max(drawn - 1, 1)) / N
    return np.flatnonzero(d <= se + tol), M, N, drawn


def test_the_paired_bound_is_tight_where_every_group_is_drawn_once():
    """A draw holding every group once has weight 1 everywhere: its paired SE is exactly the
    bound's (w_max = 1 times the sum over all groups), so columns placed just inside one SE
    of the best must survive, and so must one-row edits of 2e-9..5e-8 whose differences the
    bound's expanded sums cancel (small losses: the rounding tolerance is below them). A
    bound off by a factor (or without its rounding slack) drops some of them. Groups come
    in units of several identical groups, as :class:`.folds.HeldOut` builds them."""
    from scipy import sparse

    rng = np.random.default_rng(7)
    units, per_unit = 60, rng.integers(1, 4, 60)               # each unit: 1-3 identical groups
    rows_of_unit = rng.integers(1, 4, units)
    n_rows = int(rows_of_unit.sum())
    unit_of_row = np.repeat(np.arange(units), rows_of_unit)
    base = 0.01 * rng.random(n_rows)                            # small losses: a tight tolerance
    cols = [base]
    u = rng.normal(size=n_rows)
    u -= u.mean()
    U = np.bincount(unit_of_row, weights=u, minlength=units)
    G = int(per_unit.sum())
    group_unit = np.repeat(np.arange(units), per_unit)
    n_group = rows_of_unit[group_unit].astype(float)
    N = n_group.sum()
    se_u = np.sqrt((U[group_unit] ** 2).sum() * G / (G - 1)) / N   # the all-ones draw's SE of t*u + k
    for ratio in (0.9, 0.97, 0.995, 1.1):                      # mean shift k = ratio * SE
        cols.append(base + 1e-4 * (u + ratio * se_u))
    for e in np.geomspace(2e-9, 5e-8, 40):                      # one row raised by e
        c = base.copy()
        c[rng.integers(n_rows)] += e
        cols.append(c)
    L = np.column_stack(cols)
    unit_matrix = sparse.csr_matrix((np.ones(n_rows), (unit_of_row, np.arange(n_rows))), shape=(units, n_rows))
    g = GroupedLosses.from_units(L, unit_matrix, per_unit.astype(float), group_unit, np.arange(L.shape[1]))
    S = g.unit_sums()[group_unit]                               # (groups, columns)
    W = np.vstack([np.ones(G), bootstrap_counts(3, 40, G)]).astype(float)
    spread = g.spread()
    cross_all = g.unit_sums().T @ (g.unit_groups[:, None] * g.unit_sums())
    checked = 0
    for w in W:
        M_all = (w @ S) / (w @ n_group)
        beta = int(np.argmin(M_all))
        tol = risk_tolerance(np.array([M_all.min()]))
        tied, M, Nw, drawn = _tied_by_definition(S, n_group, w, beta, tol[0])
        cols_all = np.arange(L.shape[1])
        kept = _paired_tie_columns(spread, cross_all[:, beta], cols_all, M[None, :], beta,
                                   np.array([w.max()]), np.array([Nw]), tol, np.array([drawn]))
        assert set(tied) <= set(kept.tolist())
        checked += len(tied)
    assert checked > W.shape[0]                                 # ties beyond the best itself


def test_the_bootstrap_without_held_unit_sums_is_the_same():
    """``_bbc`` forms the unit sums of every column some tie set may hold once, when they fit
    in ``UNIT_SUM_CELLS``; past it, per best column (with the looser bound alone). Both
    give the same deployed risk and baselines."""
    import fcps_core.selection.honesty as honesty
    from fcps_core import make_blocks, select
    from fcps_core.paper.synthetic import make_regime

    panel = make_regime("mixed", rows=800, judges=6, tie_rate=0.1, group_size=2, seed=4)
    blocks = make_blocks(panel, split="1:2:1:1", seed=4)
    held = select(panel, blocks, protocol="split", choice="simplest_within_se")
    old = honesty.UNIT_SUM_CELLS
    try:
        honesty.UNIT_SUM_CELLS = 0
        per_best = select(panel, blocks, protocol="split", choice="simplest_within_se")
    finally:
        honesty.UNIT_SUM_CELLS = old
    assert held.deployed_risk == per_best.deployed_risk
    assert held.baselines == per_best.baselines


def test_draw_unit_counts_sum_each_units_groups_by_hand():
    """Five groups in three units (unit 0: groups 0 and 3; unit 1: group 1; unit 2: groups 2
    and 4), three draws of group counts: each unit's count is its groups' counts added, and
    out of bag the number of its groups not drawn. Written out by hand."""
    from scipy import sparse
    from fcps_core.selection.honesty import draw_unit_counts

    group_unit = np.array([0, 1, 2, 0, 2])
    unit_matrix = sparse.csr_matrix(np.eye(3))                 # one distinct row per unit
    g = GroupedLosses.from_units(np.ones((3, 1)), unit_matrix, np.array([2.0, 1.0, 2.0]), group_unit,
                                 np.array([0]))
    W = np.array([[1, 0, 2, 2, 0],
                  [0, 5, 0, 0, 0],
                  [1, 1, 1, 1, 1]], dtype=np.uint8)
    got = draw_unit_counts(g, W, np.arange(3))          # a draw's counts as a row
    assert got.T.tolist() == [[3, 0, 2],      # unit 0: groups 0 and 3
                              [0, 5, 1],      # unit 1: group 1
                              [2, 0, 2]]      # unit 2: groups 2 and 4
    assert np.issubdtype(got.dtype, np.unsignedinteger)
    assert draw_unit_counts(g, W, np.array([2, 0])).T.tolist() == [[2, 3], [1, 0], [2, 2]]
    assert draw_unit_counts(g, W, np.arange(3), out_of_bag=True).T.tolist() == [[0, 2, 0],
                                                                                [1, 0, 0],
                                                                                [1, 2, 0]]
    # 9 one-byte counts, sized against the limit at 2 bytes each (as when 16 bits were the
    # narrowest cells: which callers get the table is unchanged)
    assert got.dtype == np.uint8
    assert draw_unit_counts(g, W, np.arange(3), limit=17) is None
    assert draw_unit_counts(g, W, np.arange(3), limit=18) is not None


def test_draw_tie_sets_with_integer_counts_equal_float_weights_and_unheld_sums(monkeypatch):
    """draw_tie_sets on (draw, best) pairs reads integer draw counts per unit formed once per
    draw (:func:`draw_unit_counts`); the same counts as floats take the per-pair path
    (:meth:`GroupedLosses.unit_weights`); with every column's unit sums given the paired
    bound runs alone, and without room for the held unit sums its cross sums are formed a
    column at a time. All give the tie sets the definition gives (:func:`_exact_tied`'s
    per-draw sums)."""
    import fcps_core.selection.honesty as honesty

    L, groups = _losses(5)
    W = bootstrap_counts(5, 60, len(np.unique(groups)))
    g, M, best, tied = _exact_tied(L, groups, W)
    N = W.astype(float) @ g.rows_per_group
    tol = risk_tolerance(M.min(axis=1))
    # pairs: every draw with its own best, and some draws again with another best column
    draws = np.concatenate([np.arange(len(W)), np.arange(0, len(W), 3)])
    bd = np.concatenate([best, (best[::3] + 7) % L.shape[1]])
    tols = tol[draws]
    integer = honesty.draw_tie_sets(g, W, M, N, tols, bd, draws=draws)
    floats = honesty.draw_tie_sets(g, W.astype(float), M, N, tols, bd, draws=draws)
    np.testing.assert_array_equal(integer, floats)
    np.testing.assert_array_equal(integer[:len(W)], tied)
    S, n = g.sums, g.rows_per_group
    for i in range(len(W), len(draws)):
        expect, _, _, _ = _tied_by_definition(S, n, W[draws[i]].astype(float), bd[i], tols[i])
        assert np.flatnonzero(integer[i]).tolist() == expect.tolist(), f"pair {i}"
    given = honesty.draw_tie_sets(g, W, M, N, tols, bd, unit_sums=g.unit_sums(), draws=draws)   # no triangle bound
    np.testing.assert_array_equal(given, integer)
    # every draw's counts given by the caller (draw-major, as the frontier keeps them)
    held = honesty.draw_unit_counts(g, W, np.arange(len(W)))
    np.testing.assert_array_equal(honesty.draw_tie_sets(g, W, M, N, tols, bd, draws=draws, draw_counts=held), integer)
    monkeypatch.setattr(honesty, "UNIT_SUM_CELLS", 1)
    unheld = honesty.draw_tie_sets(g, W, M, N, tols, bd, draws=draws)
    np.testing.assert_array_equal(unheld, integer)
    assert integer[len(W):].sum() > 0


def test_draw_unit_counts_are_sized_by_a_units_count_not_a_draws():
    """70,000 groups, each its own unit, drawn once each: a draw counts 70,000 groups (more
    than 16 bits hold), but no unit counts more than 1, so the table takes 8-bit cells,
    not 32 (the split protocol's 1M-row work unit has 99,921 units for 100,000 groups:
    sized by the draw, the table did not fit its limit and the replays took the slower
    per-pair path; its in-bag and out-of-bag tables are held through the frontier's replays,
    so each byte per cell is 20 MB there). A unit counting 300 takes 16 bits."""
    from scipy import sparse
    from fcps_core.selection.honesty import draw_unit_counts

    G = 70_000
    g = GroupedLosses.from_units(np.ones((G, 1)), sparse.identity(G, format="csr"), np.ones(G), np.arange(G),
                                 np.array([0]))
    W = np.ones((2, G), dtype=np.uint8)
    got = draw_unit_counts(g, W, np.arange(2))
    assert got.dtype == np.uint8 and got.shape == (2, G) and (got == 1).all()
    W[1, 7] = 3                                      # one group drawn three times
    assert draw_unit_counts(g, W, np.arange(2))[:, 7].tolist() == [1, 3]
    W = W.astype(np.uint16)
    W[0, 9] = 300
    wide = draw_unit_counts(g, W, np.arange(2))
    assert wide.dtype == np.uint16 and wide[:, 9].tolist() == [300, 1]


def test_draw_unit_counts_by_blocks_of_draws_equal_the_sums_by_hand(monkeypatch):
    """draw_unit_counts, a draw's counts per unit as a row: every unit's summed group counts
    (in-bag) and count of undrawn groups (out-of-bag), for all draws and for a subset in
    another order, whether the draws make one block or several (BLOCK_CELLS lowered to 3
    draws of 40 groups per block, the last block short)."""
    from scipy import sparse
    import fcps_core.selection.honesty as honesty
    rng = np.random.default_rng(5)
    G, U, B = 40, 9, 11
    group_unit = np.sort(np.r_[np.arange(U), rng.integers(0, U, G - U)])    # every unit has a group
    unit_groups = np.bincount(group_unit, minlength=U)
    g = GroupedLosses.from_units(np.ones((U, 1)), sparse.identity(U, format="csr"), unit_groups, group_unit,
                                 np.array([0]))
    W = rng.integers(0, 4, size=(B, G)).astype(np.int64)
    inbag = np.stack([np.bincount(group_unit, weights=W[b], minlength=U) for b in range(B)])
    oob = np.stack([np.bincount(group_unit, weights=(W[b] == 0), minlength=U) for b in range(B)])
    subset = np.array([7, 2, 9])
    for cells in (honesty.BLOCK_CELLS, 3 * G):
        monkeypatch.setattr(honesty, "BLOCK_CELLS", cells)
        for draws in (np.arange(B), subset):
            got = honesty.draw_unit_counts(g, W, draws)
            assert got.flags["C_CONTIGUOUS"] and got.shape == (len(draws), U)
            np.testing.assert_array_equal(got, inbag[draws])
            np.testing.assert_array_equal(honesty.draw_unit_counts(g, W, draws, out_of_bag=True), oob[draws])
