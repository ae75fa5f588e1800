"""Grouped blocks and path rules."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.errors import MenuError, SplitError
from fcps_core.measures.judge_paths import (build_paths, cfps_paths, complexity_penalized, dense_ids,
                             effective_support, info_first, oracle_mse)
from fcps_core.data.splits import draw_blocks, make_blocks, parse_ratio, repeated_blocks
from fcps_core.paper.synthetic import make_regime


@pytest.fixture
def paired_panel():
    return make_regime("additive", rows=400, judges=4, seed=3, group_size=2)


def _groups_per_block(panel, blocks):
    return {b: set(panel.group_ids[getattr(blocks, b)]) for b in "SMVT"}


def test_groups_never_cross_blocks(paired_panel):
    for seed in range(5):
        blocks = draw_blocks(paired_panel, ratio=(1, 2, 1), test_share=0.25, seed=seed)
        g = _groups_per_block(paired_panel, blocks)
        for a in "SMVT":
            for b in "SMVT":
                if a < b:
                    assert not (g[a] & g[b])


def test_ratio_split_uses_all_labelled_rows_in_proportion(paired_panel):
    blocks = draw_blocks(paired_panel, ratio=(1, 2, 1), seed=0)
    sizes = blocks.sizes()
    assert sum(sizes.values()) == 400 and sizes["n_T"] == 0
    assert abs(sizes["n_S"] - 100) <= 2 and abs(sizes["n_M"] - 200) <= 2 and abs(sizes["n_V"] - 100) <= 2


def test_count_split_and_test_share(paired_panel):
    blocks = draw_blocks(paired_panel, counts={"n_S": 50, "n_M": 100, "n_V": 50, "n_T": 60}, seed=1)
    sizes = blocks.sizes()
    for key, want in (("n_S", 50), ("n_M", 100), ("n_V", 50), ("n_T", 60)):
        assert want <= sizes[key] <= want + 1     # at most one group (2 rows) of overshoot
    shared = draw_blocks(paired_panel, ratio=(1, 2, 1), test_share=0.5, seed=1)
    assert abs(shared.sizes()["n_T"] - 200) <= 2


def test_split_is_deterministic_and_seed_dependent(paired_panel):
    a = draw_blocks(paired_panel, seed=7)
    b = draw_blocks(paired_panel, seed=7)
    c = draw_blocks(paired_panel, seed=8)
    assert all(np.array_equal(getattr(a, k), getattr(b, k)) for k in "SMVT")
    assert not np.array_equal(a.M, c.M)
    reps = repeated_blocks(paired_panel, 4, seed=1)
    assert len({tuple(r.M[:5]) for r in reps}) == 4


def test_unlabelled_rows_stay_out_of_blocks():
    panel = make_regime("additive", rows=300, judges=3, seed=1, unlabelled_share=0.3)
    blocks = draw_blocks(panel, seed=0)
    used = np.concatenate([blocks.S, blocks.M, blocks.V, blocks.T])
    assert not np.isnan(panel.labels[used]).any()
    assert len(used) == panel.n_labelled


def test_block_column_is_used_exactly(paired_panel):
    # Rows 2i and 2i+1 share a group: give each group one block, cycling S, M, M, V, T.
    labels = np.array([["S", "M", "M", "V", "T"][(i // 2) % 5] for i in range(400)], dtype=object)
    paired_panel.blocks = labels
    blocks = make_blocks(paired_panel)
    assert blocks.source == "column"
    for b in "SMVT":
        assert np.array_equal(getattr(blocks, b), np.flatnonzero(labels == b))


def test_block_column_with_crossing_group_is_rejected(paired_panel):
    labels = np.array(["S", "M"] * 200, dtype=object)   # every group split across S and M
    paired_panel.blocks = labels
    with pytest.raises(SplitError, match="a group must stay in one block|no rows to block V"):
        make_blocks(paired_panel)


@pytest.mark.parametrize("text", ["1:2", "a:b:c", "1:0:1", "-1:2:1"])
def test_bad_ratio_text(text):
    with pytest.raises(SplitError):
        parse_ratio(text)


def test_too_few_rows_or_groups():
    panel = make_regime("additive", rows=10, judges=2, seed=0)
    with pytest.raises(SplitError, match="need 15 labelled rows"):
        draw_blocks(panel, counts={"n_S": 5, "n_M": 5, "n_V": 5})
    one_group = make_regime("additive", rows=10, judges=2, seed=0, group_size=10)
    with pytest.raises(SplitError, match="group"):
        draw_blocks(one_group)


# -- paths -----------------------------------------------------------------------------------
def test_oracle_and_support_by_hand():
    ids = np.array([0, 0, 1, 1])
    y = np.array([1.0, 0.0, 1.0, 1.0])
    # cell means 0.5 and 1 -> in-sample squared errors 0.25, 0.25, 0, 0
    assert oracle_mse(ids, y) == pytest.approx(0.125)
    assert effective_support(ids) == pytest.approx(2.0)


def test_info_first_orders_by_single_judge_oracle_risk():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300).astype(float)
    noise = lambda q: np.where(rng.random(300) < q, 1 - y, y)  # noqa: E731
    codes = np.column_stack([noise(0.4), noise(0.05), noise(0.25)]).astype(int)
    assert info_first(codes, y) == [1, 2, 0]


def test_complexity_penalized_without_penalty_is_greedy_oracle_gain():
    rng = np.random.default_rng(1)
    codes = rng.integers(0, 3, size=(200, 4))
    y = ((codes[:, 2] == 1) | (rng.random(200) < 0.1)).astype(float)
    order = complexity_penalized(codes, y, n_cal=100, penalty=0.0)
    assert order[0] == 2
    # A huge penalty prefers the judge that adds the least support after the first.
    heavy = complexity_penalized(codes, y, n_cal=1, penalty=1e6)
    assert sorted(heavy) == [0, 1, 2, 3]


def test_cfps_frontier_is_capped_and_pareto():
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 3, size=(150, 9))
    y = (codes[:, 0] + codes[:, 1] > 2).astype(float)
    subsets = cfps_paths(codes, y, n_cal=80, max_size=4, max_paths=5)
    assert 1 <= len(subsets) <= 5
    assert all(1 <= len(s) <= 4 and len(set(s)) == len(s) for s in subsets)


def test_build_paths_rules_and_errors():
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 2, size=(60, 5))
    y = rng.integers(0, 2, 60).astype(float)
    paths = build_paths(["info_first", "random", "complexity_penalized", "cfps"], codes, y, 50,
                        table_k_max=3, seed=0)
    rules = [p.rule for p in paths]
    assert rules[:3] == ["info_first", "random", "complexity_penalized"] and "cfps" in rules
    for p in paths[:3]:
        assert sorted(p.judges) == list(range(5)) and p.prefix_sizes == (1, 2, 3, 4, 5)
    same = build_paths(["random"], codes, y, 50, table_k_max=3, seed=0)
    assert same[0].judges == paths[1].judges
    with pytest.raises(MenuError):
        build_paths(["nope"], codes, y, 50, table_k_max=3, seed=0)


def test_dense_ids_match_joint_patterns():
    codes = np.array([[0, 1], [0, 1], [1, 0], [0, 0]])
    ids = dense_ids(codes)
    assert ids[0] == ids[1] and len(set(ids.tolist())) == 3


def _panel_with_constant_judge(rows: int = 200, seed: int = 0):
    """One informative binary judge (0), noisy ten-level judges (1-5) and a judge (6) whose
    output is the same on every row."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows).astype(float)
    informative = np.where(rng.random(rows) < 0.85, y, 1 - y).astype(int)
    noise = rng.integers(0, 10, size=(rows, 5))
    codes = np.column_stack([informative, noise, np.zeros(rows, dtype=int)])
    return codes, y


def test_complexity_penalized_alone_puts_a_constant_judge_early():
    # why the constant judge must be moved: a judge that adds nothing scores 0, above the
    # noisy judges whose gain on 200 rows is below their support penalty at n_cal = 20
    codes, y = _panel_with_constant_judge()
    assert complexity_penalized(codes, y, n_cal=20).index(6) == 1


@pytest.mark.parametrize("seed", range(4))
def test_build_paths_put_judges_constant_on_s_last(seed):
    codes, y = _panel_with_constant_judge(seed=seed)
    costs = np.array([1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0])   # free: cost_aware would take it first
    paths = build_paths(["info_first", "random", "complexity_penalized", "cost_aware"], codes, y, 20,
                        table_k_max=3, seed=seed, costs=costs)
    for p in paths:
        assert p.judges[-1] == 6, (p.rule, p.judges)
        assert sorted(p.judges) == list(range(7)) and p.prefix_sizes == tuple(range(1, 8))
    # the other judges keep the rule's own order (the random path's permutation without 6)
    from fcps_core.measures.judge_paths import random_path
    assert paths[1].judges[:-1] == tuple(j for j in random_path(7, seed) if j != 6)
    # without a constant judge nothing moves
    plain = build_paths(["random", "complexity_penalized"], codes[:, :6], y, 20, table_k_max=3, seed=seed)
    assert plain[0].judges == tuple(random_path(6, seed))
    assert plain[1].judges == tuple(complexity_penalized(codes[:, :6], y, 20))


def test_default_selection_does_not_deploy_a_constant_judge(tmp_path):
    # a rubric panel with a judge that writes 5 on every item: the default's tie average
    # called it (through the complexity-penalised and random paths) before the judge went last
    import fcps_core
    rng = np.random.default_rng(8)
    n, J = 300, 12
    z = rng.normal(size=n)
    label = 1 / (1 + np.exp(-(1.2 * z + 0.4 * rng.normal(size=n))))
    cols = {}
    for j in range(J):
        v = z + rng.uniform(0.4, 2.5) * rng.normal(size=n)
        cuts = np.quantile(v, np.sort(rng.uniform(0.02, 0.98, 9)))
        cols[f"r{j + 1}"] = 1 + np.searchsorted(cuts, v)
    cols["r5"] = np.full(n, 5)
    import pandas as pd
    df = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "label": label, **cols})
    result = fcps_core.select(df, seed=0, n_boot=20)
    d = result.to_dict()
    deployed = set(d["selected"].get("judges") or [])
    for m in d["selected"].get("members") or []:
        deployed |= set(m["judges"])
    assert "r5" not in deployed


@pytest.mark.parametrize("n_groups", [3, 5, 6])
def test_few_large_groups_still_give_every_block_a_group(n_groups):
    # 300 rows in n_groups equal groups, ratio 1:2:1: filling S then M to their row targets
    # overshot with large groups and left V empty ("too few labelled groups to give block V
    # any rows" for 5 groups), which also refused the cross-fitted default on 5 groups
    panel = make_regime("additive", rows=300, judges=3, seed=0, group_size=300 // n_groups)
    assert len(set(panel.group_ids)) == n_groups
    for seed in range(6):
        blocks = draw_blocks(panel, ratio=(1, 2, 1), seed=seed)
        g = _groups_per_block(panel, blocks)
        assert all(g[b] for b in "SMV"), (seed, {b: len(g[b]) for b in "SMV"})
        assert sum(len(g[b]) for b in "SMV") == n_groups
    with pytest.raises(SplitError):
        draw_blocks(make_regime("additive", rows=300, judges=3, seed=0, group_size=150), ratio=(1, 2, 1))


def test_many_groups_draw_as_before():
    # the pass-on only acts where the walk would have left a block empty: with many groups
    # the blocks are the plain walk's (hand-written reference of the old rule)
    panel = make_regime("additive", rows=400, judges=3, seed=1, group_size=4)
    for seed in range(3):
        labelled = np.flatnonzero(panel.labelled)
        uniq, inverse = np.unique(panel.group_ids[labelled], return_inverse=True)
        sizes = np.bincount(inverse)
        want = [100, 200, 100, 0]
        assign, filled, b = np.full(len(uniq), -1), [0, 0, 0, 0], 0
        for g in np.random.default_rng(seed).permutation(len(uniq)):
            while b < 4 and (want[b] == 0 or filled[b] >= want[b]):
                b += 1
            if b == 4:
                break
            assign[g] = b
            filled[b] += sizes[g]
        assign[assign < 0] = 1
        blocks = draw_blocks(panel, ratio=(1, 2, 1), seed=seed)
        for k, name in enumerate("SMV"):
            assert np.array_equal(getattr(blocks, name), labelled[assign[inverse] == k])
