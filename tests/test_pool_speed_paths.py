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


def test_judges_screened_in_batches(monkeypatch):
    """Large S blocks screen the judges a few at a time: the same path."""
    from fcps_core.measures import judge_paths as paths
    monkeypatch.setattr(paths, "_SPLIT_CELLS", 64)
    rng = np.random.default_rng(8)
    codes = panel(rng, 150, 20, 3, missing=True, copies=5)
    y = rng.integers(0, 5, 150) / 4
    assert complexity_penalized(codes, y, 300) == full_evaluation(codes, y, 300)


def test_split_changes_count_and_rank_branches_agree(monkeypatch):
    """The sub-cells are counted over the key range or over the keys' ranks (a wide code
    range): the same sums bit for bit, and the extended partitions' changes (by hand, from
    ``extend_ids``) within rounding; batches of judges give the same."""
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
    monkeypatch.setattr(paths, "_SPLIT_CELLS", 400)                 # two judges per batch
    batched = split_changes(ids, codes, judges, y)
    for a, b, c in zip(counted, ranked, batched):
        assert np.array_equal(a, b) and np.array_equal(a, c)
    p_now = np.bincount(ids) / 200
    for k, j in enumerate(judges):
        new = extend_ids(ids, codes[:, j])
        assert counted[2][k] == (new.max() > ids.max())
        assert counted[0][k] == pytest.approx(oracle_gain(new, y) - oracle_gain(ids, y), abs=1e-12)
        p_new = np.bincount(new) / 200
        assert counted[1][k] == pytest.approx(np.sum(p_new * np.log(p_new)) - np.sum(p_now * np.log(p_now)),
                                              abs=1e-12)
