"""Cheaper menu fits with the same figures: path views keyed by one mixed-radix rank pass
(the ids a rank pass per digit gives), the joint families' M path view handed to the path's
own fits, and long prefixes' diagnostics counted on their raw ids when those are dense."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.data.encoding import encode_panel
from fcps_core.measures import judge_paths
from fcps_core.measures.judge_paths import dense_ids, extend_ids, mixed_radix_ranks
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection import menu
from fcps_core.selection.views import PatternCache, ViewCache


@pytest.mark.parametrize("levels", [[3], [2, 5, 3], [4] * 12, [7] * 9])
def test_mixed_radix_ranks_are_the_rank_per_digit_ids(levels, monkeypatch):
    rng = np.random.default_rng(len(levels))
    n = 3000
    digits = [rng.integers(0, a, n).astype(np.int8) for a in levels]
    want = dense_ids(np.column_stack(digits).astype(np.int64))
    chained = np.zeros(n, dtype=np.int64)
    for d in digits:
        chained = extend_ids(chained, d)
    assert np.array_equal(want, chained)
    assert np.array_equal(mixed_radix_ranks(zip(levels, digits)), want)
    # a narrow counting range: the key is ranked between digits, the ids are the same
    monkeypatch.setattr(judge_paths, "ranks_by_counting", lambda bound, k: bound <= 64)
    assert np.array_equal(mixed_radix_ranks(zip(levels, digits)), want)


def test_mixed_radix_ranks_empty_rows():
    assert len(mixed_radix_ranks([(3, np.zeros(0, dtype=np.int64))])) == 0


@pytest.fixture(scope="module")
def views():
    panel = make_regime("mixed", rows=600, judges=5, seed=3)
    rows_all = np.arange(panel.n_rows)
    enc = encode_panel(panel, rows_all[:300])
    rows = {"M": rows_all[:300], "V": rows_all[300:450], "T": rows_all[450:], "rest": rows_all[300:450]}
    return ViewCache(enc, rows, panel.labels, PatternCache(enc), compress=True)


def test_held_path_view_is_taken_once(views):
    path = (0, 2, 1)
    held = views.path_view(path, "M", hold=True)
    assert views.path_view(path, "M") is held          # the next reader takes it ...
    again = views.path_view(path, "M")                 # ... and the one after builds anew
    assert again is not held
    for a, b in ((held.X.scores, again.X.scores), (held.X.weight, again.X.weight), (held.y, again.y)):
        assert np.array_equal(a, b)
    views.path_view(path, "M", hold=True)
    views.release_held()
    assert not views._path_held


def test_long_prefix_diagnostics_skip_ranks_for_dense_ids(views, monkeypatch):
    """Ids whose nominal table is small next to the rows are counted as they are: the path's
    ranks are not made, and the diagnostics are those the ranks give."""
    path = (0, 2, 1, 3)
    patterns = views.pattern_cache.hold(path)
    alph = views.encoded.alphabet_sizes[list(path)]

    class Ranks(menu.PatternRanks):
        asked = 0

        def level(self, K):
            Ranks.asked += 1
            return super().level(K)

    ranks = Ranks(views.encoded.codes, path)
    got = menu._diagnostics(patterns, views, path, True, alph, False, ranks=ranks)
    assert Ranks.asked == 0
    monkeypatch.setattr(menu, "ids_dense", lambda top, n: False)
    want = menu._diagnostics(patterns, views, path, True, alph, False, ranks=ranks)
    assert Ranks.asked == 1
    assert got == want


def test_scalar_views_extend_the_held_score_ids(views):
    """Scalar views of a path's prefixes in ascending K extend the last prefix's score-level
    ids; each view equals the one built with nothing held."""
    fresh = ViewCache(views.encoded, views.rows, views.labels, views.pattern_cache, compress=True)
    path = (3, 0, 4, 1)
    for K in range(1, len(path) + 1):
        for block in ("M", "V", "T", "rest"):
            got = views.get(path[:K], block, "scalar")
            assert views._score_held[block][0] == path[:K]
            fresh._score_held.clear()
            want = fresh.get(path[:K], block, "scalar")
            assert np.array_equal(got.X.scores, want.X.scores)
            assert np.array_equal(got.X.weight, want.X.weight)
            assert (got.y is None and want.y is None) or np.array_equal(got.y, want.y)
            assert (got.inverse is None and want.inverse is None) or np.array_equal(got.inverse, want.inverse)
    views.release(("M",))
    assert "M" not in views._score_held
    views.release_held()
    assert not views._score_held


@pytest.mark.parametrize("block", ["M", "V", "T", "rest"])
def test_prefix_views_grouped_from_the_path_view_are_the_block_views(views, block):
    fresh = ViewCache(views.encoded, views.rows, views.labels, views.pattern_cache, compress=True)
    path = (2, 4, 0, 1, 3)
    path_view = views.path_view(path, block)
    for K in range(1, len(path) + 1):
        got = views._prefix_of_path(path_view, path[:K], block)
        want = fresh.get(path[:K], block, "scalar")
        assert got is not None
        assert np.array_equal(got.X.scores, want.X.scores) and got.X.scores.flags.c_contiguous
        assert np.array_equal(got.X.weight, want.X.weight) and got.X.weight.dtype == want.X.weight.dtype
        assert (got.y is None and want.y is None) or np.array_equal(got.y, want.y)
        assert (got.inverse is None) == (want.inverse is None)
        if got.inverse is not None:
            assert np.array_equal(got.inverse, want.inverse) and got.inverse.dtype == want.inverse.dtype
        assert got.compressed == want.compressed


def test_prefix_of_another_path_is_built_from_the_block(views):
    path_view = views.path_view((2, 4, 0), "M")
    assert views._prefix_of_path(path_view, (4, 2), "M") is None
    fresh = ViewCache(views.encoded, views.rows, views.labels, views.pattern_cache, compress=True)
    got, want = views.prefix_of_path(path_view, (4, 2), "M"), fresh.get((4, 2), "M", "scalar")
    assert np.array_equal(got.X.scores, want.X.scores) and np.array_equal(got.X.weight, want.X.weight)


def test_mixed_radix_ranks_count_over_a_range_near_the_rows(monkeypatch):
    """200 judges of 3 levels on 500 rows (a large pool's M block): the digits are ranked
    whenever the key's range would pass 4 times the rows, so no count pass runs over the
    millions of cells the counting limit's floor allows (a 2,000 x 200 split selection
    spent more in those passes than its whole menu saved); the ranks are those of one digit
    at a time."""
    from fcps_core.measures import judge_paths
    rng = np.random.default_rng(0)
    n, judges, levels = 500, 200, 3
    codes = rng.integers(0, levels, size=(n, judges))
    seen = []
    real = judge_paths.dense_ranks

    def recorded(key):
        seen.append(int(key.max()) + 1)
        return real(key)
    monkeypatch.setattr(judge_paths, "dense_ranks", recorded)
    got = judge_paths.mixed_radix_ranks((levels, codes[:, j]) for j in range(judges))
    monkeypatch.setattr(judge_paths, "dense_ranks", real)
    assert max(seen) <= 4 * n * levels, max(seen)
    want = np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1)
    assert np.array_equal(got, want)
