"""Large judge pools (issue 15): the screened ``complexity_penalized`` path rule gives the
path of the full evaluation (every remaining judge extended and scored at every step), bit
for bit: ties between judges that split the same cells (duplicates, codes swapped),
judges that split nothing, saturated partitions, missing outputs (code -1), penalties of
every sign and size, labels on other scales."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.measures.judge_paths import (complexity_penalized, effective_support, extend_ids, oracle_gain,
                             split_changes)


def full_evaluation(codes_S, y_S, n_cal, penalty=1.0):
    """The rule as first written: every remaining judge extended and scored at every step."""
    remaining = list(range(codes_S.shape[1]))
    order = []
    ids = np.zeros(codes_S.shape[0], dtype=np.int64)
    gain, support = oracle_gain(ids, y_S), effective_support(ids)
    n_cal = max(int(n_cal), 1)
    while remaining:
        best = None
        for j in remaining:
            new_ids = extend_ids(ids, codes_S[:, j])
            g, h = oracle_gain(new_ids, y_S), effective_support(new_ids)
            score = (g - gain) - penalty * (h - support) / n_cal
            key = (-score, j)
            if best is None or key < best[0]:
                best = (key, j, new_ids, g, h)
        _, j, ids, gain, support = best
        order.append(j)
        remaining.remove(j)
    return order


def panel(rng, n, J, levels, *, missing=False, copies=0):
    codes = rng.integers(-1 if missing else 0, levels, (n, J))
    for _ in range(copies):                    # duplicates and code-swapped duplicates
        s, t = rng.integers(0, J, 2)
        codes[:, t] = codes[:, s] if rng.random() < 0.5 else levels - 1 - codes[:, s]
    return codes


@pytest.mark.parametrize("seed", range(40))
def test_screened_path_is_the_full_evaluation(seed):
    rng = np.random.default_rng(seed)
    n, J, levels = int(rng.integers(2, 400)), int(rng.integers(1, 30)), int(rng.integers(1, 5))
    codes = panel(rng, n, J, levels, missing=seed % 3 == 0, copies=int(rng.integers(0, J // 2 + 1)))
    y = (rng.random(n) < 0.5).astype(float) if seed % 2 else rng.integers(0, 5, n) / 4
    if seed % 5 == 0:
        y = 3.0 + 40.0 * y                     # labels on another scale
    for penalty in (1.0, 0.0, 25.0, -1.0):
        n_cal = int(rng.integers(1, 3000))
        assert complexity_penalized(codes, y, n_cal, penalty) == full_evaluation(codes, y, n_cal, penalty)


@pytest.mark.parametrize("penalty", [np.inf, np.nan])
def test_non_finite_penalties_keep_the_full_evaluation(penalty):
    rng = np.random.default_rng(3)
    codes = panel(rng, 60, 8, 3, copies=3)
    y = (rng.random(60) < 0.5).astype(float)
    assert complexity_penalized(codes, y, 50, penalty) == full_evaluation(codes, y, 50, penalty)


def test_binary_pool_many_judges():
    """The large-pool shape: binary judges, every row soon its own cell, then judges that
    split the last shared cells the same way (exact ties broken by index)."""
    rng = np.random.default_rng(11)
    truth = rng.random(300) < 0.5
    acc = rng.uniform(0.5, 0.7, 80)
    codes = np.where(rng.random((300, 80)) < acc, truth[:, None], ~truth[:, None]).astype(np.int64)
    codes[:, 40:50] = 1 - codes[:, 30:40]
    y = truth.astype(float)
    assert complexity_penalized(codes, y, 600) == full_evaluation(codes, y, 600)


def test_split_changes_match_the_extended_partitions():
    rng = np.random.default_rng(4)
    codes = panel(rng, 120, 12, 3, missing=True, copies=4)
    y = rng.random(120)
    ids = extend_ids(extend_ids(np.zeros(120, dtype=np.int64), codes[:, 0]), codes[:, 1])
    judges = list(range(2, 12))
    d_gain, d_entropy, splits = split_changes(ids, codes, judges, y)
    p_now = np.bincount(ids) / 120
    for k, j in enumerate(judges):
        new = extend_ids(ids, codes[:, j])
        assert splits[k] == (new.max() > ids.max())
        assert d_gain[k] == pytest.approx(oracle_gain(new, y) - oracle_gain(ids, y), abs=1e-12)
        p_new = np.bincount(new) / 120
        want = np.sum(p_new * np.log(p_new)) - np.sum(p_now * np.log(p_now))
        assert d_entropy[k] == pytest.approx(want, abs=1e-12)


def one_count(ids, codes, judges, y):
    """The screen as one count over every judge's sub-cells at once (the layout before the
    screen counted one judge at a time): key (judge, cell, code), ``np.unique`` for the
    sub-cells in key order, each one's rows summed in row order."""
    n = len(ids)
    counts = np.bincount(ids)
    shared = counts >= 2
    rows = np.flatnonzero(shared[ids])
    sums = np.bincount(ids, weights=y)
    local = (np.cumsum(shared) - 1)[ids[rows]]
    n_shared = int(shared.sum())
    q = counts[shared] / n
    gain_now = float(np.sum(sums[shared] ** 2 / counts[shared]))
    entropy_now = float(np.sum(q * np.log(q)))
    A = int(codes[np.ix_(rows, judges)].max()) + 2
    key = (np.arange(len(judges))[None, :] * n_shared + local[:, None]) * A + codes[np.ix_(rows, judges)] + 1
    sub, inverse = np.unique(key.reshape(-1), return_inverse=True)
    sub_counts = np.bincount(inverse)
    sub_sums = np.bincount(inverse, weights=np.repeat(y[rows], len(judges)))
    owner = sub // (A * n_shared)
    p = sub_counts / n
    return ((np.bincount(owner, weights=sub_sums ** 2 / sub_counts, minlength=len(judges)) - gain_now) / n,
            np.bincount(owner, weights=p * np.log(p), minlength=len(judges)) - entropy_now,
            np.bincount(owner, minlength=len(judges)) > n_shared)


@pytest.mark.parametrize("every", [True, False])
def test_split_changes_per_judge_equal_one_count(every):
    """Counting one judge at a time, on row- or column-major codes, with every cell shared
    (the columns read whole) or not, gives the one count over all judges to the bit."""
    rng = np.random.default_rng(8)
    codes = panel(rng, 150, 20, 3, missing=True, copies=5)
    y = rng.integers(0, 5, 150) / 4
    ids = extend_ids(np.zeros(150, dtype=np.int64), codes[:, 0] if every else rng.integers(0, 90, 150))
    assert (np.bincount(ids)[ids] >= 2).all() == every
    judges = [1, 3, 4, 7, 8, 12, 13, 19]
    want = one_count(ids, codes, judges, y)
    for c in (codes, np.asfortranarray(codes)):
        for a, b in zip(split_changes(ids, c, judges, y), want):
            assert np.array_equal(a, b)
    assert all(len(a) == 0 for a in split_changes(ids, codes, [], y))


def test_split_changes_count_and_rank_branches_agree(monkeypatch):
    """The sub-cells are counted over the key range or over the keys' ranks (a wide code
    range): the same sums bit for bit, and the extended partitions' changes (by hand, from
    ``extend_ids``) within rounding."""
    from fcps_core.measures import judge_paths as paths
    rng = np.random.default_rng(12)
    codes = rng.integers(-1, 40, (200, 9))                  # 41 codes: a key range far above the entries
    codes[:, 5] = codes[:, 4]
    codes[:100, 6] = -1
    y = rng.random(200)
    ids = extend_ids(np.zeros(200, dtype=np.int64), rng.integers(0, 80, 200))     # many cells of 2-3 rows
    judges = list(range(9))
    counted = split_changes(ids, codes, judges, y)
    monkeypatch.setattr(paths, "_SUBCELL_COUNT_RANGE", -1)          # 4 keys per entry is the limit now
    ranked = split_changes(ids, codes, judges, y)
    for a, b, c in zip(counted, ranked, one_count(ids, codes, judges, y)):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    p_now = np.bincount(ids) / 200
    for k, j in enumerate(judges):
        new = extend_ids(ids, codes[:, j])
        assert counted[2][k] == (new.max() > ids.max())
        assert counted[0][k] == pytest.approx(oracle_gain(new, y) - oracle_gain(ids, y), abs=1e-12)
        p_new = np.bincount(new) / 200
        assert counted[1][k] == pytest.approx(np.sum(p_new * np.log(p_new)) - np.sum(p_now * np.log(p_now)),
                                              abs=1e-12)


@pytest.mark.parametrize("first", [0, 1, 2, 3, 5, 12])
def test_first_judges_order_the_same_prefixes(first):
    """``complexity_penalized(first=k)`` stops after k judges not constant on S: with the
    constant judges moved last (``constant_last``, as ``build_paths`` does), its prefixes
    up to k judges are those of the whole order, and ``build_paths``' ``prefix_max`` gives
    them too; constant judges the greedy picks early do not count."""
    from fcps_core.measures.judge_paths import build_paths, constant_last
    rng = np.random.default_rng(21)
    codes = panel(rng, 160, 14, 3, missing=True, copies=3)
    codes[:, [2, 9]] = 1                    # constant on S: scored 0, picked before judges that lose
    y = rng.random(160)
    for penalty in (1.0, 400.0):
        whole = complexity_penalized(codes, y, 50, penalty)
        cut = complexity_penalized(codes, y, 50, penalty, first=first)
        assert sorted(cut) == list(range(14))
        last = constant_last(codes)
        assert last(cut)[:first] == last(whole)[:first]
        if penalty == 400.0:
            assert whole.index(2) < 3           # the case the count must skip
        paths = build_paths(["complexity_penalized"], codes, y, 50, table_k_max=3, seed=0, penalty=penalty,
                            prefix_max=first)
        assert paths[0].judges[:first] == last(whole)[:first]
        assert paths[0].judges != last(whole) or first >= 11


def test_info_first_risks_from_codes_equal_the_dense_ids():
    """``info_first`` reads ``code + 1`` as the cells of a judge with small codes: the same
    risks to the bit as the dense ids, so the same order (ties included); codes spanning far
    more values than rows take the dense ids."""
    from fcps_core.measures.judge_paths import dense_ids, info_first, oracle_mse
    rng = np.random.default_rng(5)
    codes = panel(rng, 90, 10, 4, missing=True, copies=3)
    codes[:, 7] = rng.integers(0, 10 ** 6, 90)          # a wide code range
    codes[:, 8] = 2                                       # one cell
    y = rng.random(90)
    risks = [oracle_mse(dense_ids(codes[:, [j]]), y) for j in range(10)]
    assert info_first(codes, y) == sorted(range(10), key=lambda j: (risks[j], j))
    for j in (0, 3, 8):
        assert oracle_mse(codes[:, j] + 1, y) == risks[j]
