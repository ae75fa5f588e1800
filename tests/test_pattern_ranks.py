"""The ranks of a path's joint patterns (menu.PatternRanks) give the long prefixes'
diagnostics of the raw mixed-radix ids to the bit, and stand aside for prefixes holding a
never-seen output (code -1)."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.data.encoding import nominal_cells, prefix_patterns
from fcps_core.measures.diagnostics import prefix_diagnostics
from fcps_core.selection.menu import PatternRanks


def _codes(rng, n, J, levels, negative_in=None):
    codes = rng.integers(0, levels, (n, J))
    codes[:, 1] = codes[:, 0]                      # a copy: no new cells at level 2
    if negative_in is not None:
        codes[rng.random(n) < 0.1, negative_in] = -1
    return codes


@pytest.mark.parametrize("negative_in", [None, 4])
@pytest.mark.parametrize("levels", [3, 7])
def test_ranks_give_the_raw_ids_diagnostics(levels, negative_in):
    rng = np.random.default_rng(levels)
    n, J = 400, 9
    codes = _codes(rng, n, J, levels, negative_in)
    alph = np.full(J, levels + (negative_in is not None))
    order = tuple(int(j) for j in rng.permutation(J))
    raw = prefix_patterns(codes, alph, list(order))
    rows = rng.permutation(n)
    M, V, T = rows[:250], rows[250:330], rows[330:]
    ranks = PatternRanks(codes, order)
    ranked_levels = 0
    for K in range(1, J + 1):
        r = ranks.level(K)
        has_negative = negative_in is not None and negative_in in order[:K]
        assert (r is None) == has_negative
        if r is None:
            continue
        ranked_levels += 1
        # the ranks order the rows' patterns as the raw ids do
        assert np.array_equal(np.unique(raw[K - 1], return_inverse=True)[1].reshape(-1), r)
        for ids_T in (None, T):
            want = prefix_diagnostics(raw[K - 1][M], raw[K - 1][V], None if ids_T is None else raw[K - 1][ids_T],
                                      nominal_cells(alph[list(order[:K])]))
            got = prefix_diagnostics(r[M], r[V], None if ids_T is None else r[ids_T],
                                     nominal_cells(alph[list(order[:K])]))
            assert got == want
    assert ranked_levels >= 1
    # asked again for shorter and longer prefixes (the held level is restarted or extended)
    again = PatternRanks(codes, order)
    for K in (5, 2, 9, 1):
        a, b = again.level(K), PatternRanks(codes, order).level(K)
        assert (a is None and b is None) or np.array_equal(a, b)
