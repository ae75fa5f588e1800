"""Memory-lean selection state (large-pools issue): pattern ids held one path at a time,
raw-row maps kept only where they are read, fit-time V state released once the held-out
matrix holds it. Each must leave every figure unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.data.encoding import encode_panel, prefix_patterns
from fcps_core.selection.views import PatternCache, ViewCache, group_rows
from fcps_core.paper.synthetic import make_regime


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=600, judges=5, seed=3)


def test_prefix_patterns_columns_match_submatrix():
    rng = np.random.default_rng(0)
    codes = rng.integers(0, 3, size=(200, 6))
    codes[rng.random((200, 6)) < 0.05] = -1          # never-seen outputs
    sizes = np.array([3, 3, 4, 3, 5, 3])
    cols = [4, 0, 2]
    expected = prefix_patterns(codes[:, cols], sizes[cols])
    got = prefix_patterns(codes, sizes, cols)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert a.dtype == np.int64 and np.array_equal(a, b)
    # no negative code anywhere: the same ids through the unmasked branch
    clean = np.abs(codes)
    for a, b in zip(prefix_patterns(clean, sizes, cols), prefix_patterns(clean[:, cols], sizes[cols])):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("cols", [[4], [4, 0], [4, 0, 2, 5, 1, 3], None])
def test_prefix_patterns_equal_the_mixed_radix_ids_by_hand(cols):
    """Every level's id is the mixed-radix number of the prefix's codes, -1 from the first
    level holding a never-seen output on: negatives in some columns only (a column
    without one is added as it is), prefixes reading few columns (each column's negatives
    looked up alone) and many (the whole matrix at once)."""
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, size=(150, 6))
    codes[rng.random(150) < 0.1, 0] = -1
    codes[rng.random(150) < 0.1, 5] = -1
    sizes = np.array([3, 3, 4, 3, 5, 3])
    order = list(range(6)) if cols is None else cols
    got = prefix_patterns(codes, sizes, cols)
    for k in range(len(order)):
        for r in range(150):
            z = [int(codes[r, j]) for j in order[:k + 1]]
            want = -1 if min(z) < 0 else 0
            if want == 0:
                for j, code in zip(order[:k + 1], z):
                    want = want * int(sizes[j]) + code
            assert got[k][r] == want


def test_pattern_cache_holds_one_path(panel):
    rows = np.arange(panel.n_rows)
    enc = encode_panel(panel, rows[:300])
    cache = PatternCache(enc)
    path = (3, 1, 4, 0)
    full = prefix_patterns(enc.codes[:, list(path)], enc.alphabet_sizes[list(path)])
    held = cache.hold(path)
    assert all(np.array_equal(a, b) for a, b in zip(held, full))
    assert all(np.array_equal(a, b) for a, b in zip(cache[path[:2]], full[:2]))
    some = rows[::7]
    assert all(np.array_equal(a, b[some]) for a, b in zip(cache.on_rows(path[:3], some), full[:3]))
    other = (2, 0)                                  # not a prefix of the held path: computed
    ref = prefix_patterns(enc.codes[:, list(other)], enc.alphabet_sizes[list(other)])
    assert all(np.array_equal(a, b) for a, b in zip(cache[other], ref))
    assert all(np.array_equal(a, b[some]) for a, b in zip(cache.on_rows(other, some), ref))
    assert cache._held[0] == path                   # reading another prefix does not replace it
    cache.hold(other)
    assert cache._held[0] == other                  # one path at a time
    cache.release()
    assert cache._held is None
    assert all(np.array_equal(a, b) for a, b in zip(cache[path], full))


def test_views_keep_raw_row_maps_only_for_expanded_blocks(panel):
    rows_all = np.arange(panel.n_rows)
    enc = encode_panel(panel, rows_all[:300])
    rows = {"M": rows_all[:300], "V": rows_all[300:450], "T": rows_all[450:], "rest": rows_all[300:450]}
    views = ViewCache(enc, rows, panel.labels, PatternCache(enc), compress=True)
    judges = (0, 2)
    for kind in ("table", "scalar"):
        vV = views.get(judges, "V", kind)
        assert vV.inverse is not None
        vals = np.arange(vV.X.n_rows, dtype=float)
        raw = vV.expand(vals)
        assert len(raw) == len(rows["V"]) and np.array_equal(np.bincount(vV.inverse), vV.X.weight)
        for block in ("M", "T", "rest"):
            v = views.get(judges, block, kind)
            assert v.inverse is None and v.compressed
            with pytest.raises(ValueError):
                v.expand(np.zeros(v.X.n_rows))
    pv = views.path_view((0, 2, 1), "V")
    assert pv.inverse is not None and len(pv.expand(np.zeros(pv.X.n_rows))) == len(rows["V"])
    pm = views.path_view((0, 2, 1), "M")
    assert pm.inverse is None and pm.compressed
    views.release(("M",))
    assert not any(k[1] == "M" for k in views._cache)


def test_group_rows_without_inverse_matches():
    key = np.random.default_rng(1).integers(0, 50, size=400)
    pos, counts, inverse = group_rows(key, 50)
    pos2, counts2, none = group_rows(key, 50, with_inverse=False)
    assert none is None and np.array_equal(counts, counts2) and np.array_equal(key[pos], key[pos2])
    assert np.array_equal(key[pos][inverse], key)


def test_released_validation_state_predicts_the_same(panel):
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    res = select(panel, blocks, protocol="split", n_boot=20)
    # the fit-time V predictions were released once the held-out matrix was built
    assert not any("V" in stored for stored in res.predictions.values())
    assert not any(k[1] in ("M", "V", "rest") for k in res.views._cache)
    again = res.val_prediction_matrix()             # predicted again from the models
    assert np.allclose(np.asarray(again), np.asarray(res.heldout.preds), rtol=0, atol=1e-12)
    # and the choice matches an uncompressed run (every row its own distinct row; the
    # logistic fits converge to within 1e-9 on either)
    raw = select(panel, blocks, protocol="split", n_boot=20, compress=False)
    assert raw.selected_index == res.selected_index
    assert [c.val_mse for c in raw.candidates] == pytest.approx([c.val_mse for c in res.candidates],
                                                                 abs=1e-9)


def test_split_protocol_hands_freed_memory_back_after_the_menu_and_at_its_end(panel, monkeypatch):
    """The split protocol releases what the menu's fits freed before the choice, the
    bootstrap and the frontier allocate, and what those freed once it is done (the command
    line's process keeps up to 256 MB of freed heap for reuse otherwise, and its JSON was
    built on top of it: 2,000 x 200 peaked at 461 MiB against 401 with the releases)."""
    from fcps_core.selection import split_protocol
    steps: list[str] = []
    for name in ("fit_menu", "choose_deployed", "with_frontier"):
        step = getattr(split_protocol, name)
        monkeypatch.setattr(split_protocol, name,
                            lambda *a, _step=step, _name=name, **k: (steps.append(_name), _step(*a, **k))[1])
    monkeypatch.setattr(split_protocol, "release_freed_memory", lambda: steps.append("release") or True)
    select(panel, make_blocks(panel, seed=0), protocol="split")
    assert steps == ["fit_menu", "release", "choose_deployed", "with_frontier", "release"]
