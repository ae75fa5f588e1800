"""label-next: the batch rule (audit draw, greedy variance reduction), the evaluation-rows hook
that keeps risks honest after active labelling, the store's label merge and the command."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fcps_core.data.panel import Panel, build_judge_column
from fcps_core.planning.label_next import LabelNextError, audit_draw, audit_size, choose_batch
from fcps_core.selection import FCPSSelector
from fcps_core.data.splits import Blocks
from store_helpers import assert_one_line_error, csv_text, good_rows, run_cli, write

SMALL_MENU = dict(families=("table", "logistic", "one_coin_iso"), paths=("info_first",), k_max=5, n_jobs=1)


def skewed_panel(n: int, seed: int) -> Panel:
    """Five binary judges whose verdicts are 1 with probability 0.15, so patterns with two or
    more 1s are rare (about 16 % of rows); there the label is a coin flip (p = 1/2), elsewhere
    nearly determined (p = 0.05 + 0.9 x_1). A rule that favours rare, noisy patterns fills
    the labelled rows with high-loss items."""
    rng = np.random.default_rng(seed)
    x = (rng.random((n, 5)) < 0.15).astype(int)
    p = np.where(x.sum(axis=1) >= 2, 0.5, 0.05 + 0.9 * x[:, 0])
    y = (rng.random(n) < p).astype(float)
    judges = [build_judge_column(f"j{k}", x[:, k].astype(str), schema="binary") for k in range(5)]
    ids = np.array([f"it{i}" for i in range(n)], dtype=object)
    return Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=judges)


def fit(panel, labels, test, seed, eval_rows=None):
    D = np.flatnonzero(~np.isnan(labels))
    D = D[~np.isin(D, test)]
    blocks = Blocks(S=np.zeros(0, np.int64), M=D, V=np.zeros(0, np.int64), T=test)
    return FCPSSelector(seed=seed, eval_rows=eval_rows, **SMALL_MENU).fit(panel.with_labels(labels), blocks)


def deployed_test_mse(result) -> float:
    return (result.selected_test or {}).get("test_mse", result.selected.test_mse)


def test_the_estimate_after_active_labelling_is_unbiased_on_the_audit_rows():
    """Per seed: 8,000 test rows (T, only audited), a pool of 8,000; 1,000 random labels, then
    two active batches of 500 (half audit). The deployed-risk estimate read on the evaluation
    rows (the random start plus the audit rows, about 1,500) minus the deployed predictor's
    T-MSE, averaged over 8 seeds, must lie within +-0.005. Tolerance: a Brier loss of a 0/1
    label with predictions in [0, 1] has sd at most 1/2, so per seed the estimate's sd is at
    most 0.5 / sqrt(1,500) and T-MSE's 0.5 / sqrt(8,000); the mean difference over 8 seeds
    then has sd at most sqrt(0.5^2/1500 + 0.5^2/8000) / sqrt(8) = 0.005, so an unbiased
    estimate stays inside +-0.005 unless an unlucky draw exceeds one worst-case sd (the seeds
    are fixed, so the check is deterministic). The same estimate read naively on every
    labelled row must show the bias the audit removes (> 0.005), so the check has power.
    """
    honest, naive = [], []
    for seed in range(8):
        panel = skewed_panel(16_000, seed)
        y = panel.labels.copy()
        test, pool = np.arange(8_000), np.arange(8_000, 16_000)
        rng = np.random.default_rng(seed)
        labels = np.full(len(y), np.nan)
        labels[test] = y[test]
        first = rng.choice(pool, 1_000, replace=False)
        labels[first] = y[first]
        evaluated = np.zeros(len(y), dtype=bool)
        evaluated[first] = True
        for k in range(2):
            batch = choose_batch(fit(panel, labels, test, seed), 500, seed=seed * 10 + k, evaluated=evaluated,
                                 test_rows=test, audit_share=0.5)
            assert np.isnan(labels[batch.rows]).all() and len(np.unique(batch.rows)) == 500
            labels[batch.rows] = y[batch.rows]
            evaluated[batch.rows[batch.audit]] = True
            evaluated[batch.free_audit_rows] = True
        r_naive = fit(panel, labels, test, seed)
        r_honest = fit(panel, labels, test, seed, eval_rows=evaluated)
        assert r_honest.n_val == int(evaluated.sum())
        naive.append(r_naive.deployed_risk["estimate"] - deployed_test_mse(r_naive))
        honest.append(r_honest.deployed_risk["estimate"] - deployed_test_mse(r_honest))
    assert abs(np.mean(honest)) <= 0.005, honest
    assert np.mean(naive) > 0.005, naive


def test_eval_rows_covering_every_labelled_row_change_nothing():
    panel = skewed_panel(1_500, 1)
    labels = panel.labels.copy()
    labels[1_000:] = np.nan
    test = np.zeros(0, dtype=np.int64)
    a = fit(panel, labels, test, 0)
    b = fit(panel, labels, test, 0, eval_rows=~np.isnan(labels))
    assert a.deployed_risk["estimate"] == b.deployed_risk["estimate"]
    assert [c.val_risk for c in a.candidates] == [c.val_risk for c in b.candidates]


def test_eval_rows_are_checked():
    from fcps_core.errors import MenuError
    panel = skewed_panel(400, 2)
    with pytest.raises(MenuError, match="one entry per panel row"):
        fit(panel, panel.labels, np.zeros(0, np.int64), 0, eval_rows=np.ones(10, dtype=bool))


def test_audit_size_keeps_the_evaluation_rows_half_of_the_labels():
    """Hand-computed: the precision rule audits max(0, ceil((L + n) / 2 - |E|)) of a batch of n
    (at most n); a fixed share audits ceil(share * n)."""
    assert audit_size(50, 100, 100) == 0        # (150) / 2 - 100 < 0: the random start suffices
    assert audit_size(50, 150, 100) == 0        # 200 / 2 - 100 = 0
    assert audit_size(50, 200, 100) == 25       # 250 / 2 - 100 = 25
    assert audit_size(50, 250, 125) == 25       # 300 / 2 - 125 = 25
    assert audit_size(5, 10, 6) == 2            # 15 / 2 - 6 = 1.5 -> 2
    assert audit_size(50, 100, 20) == 50        # 75 - 20 = 55, capped at the batch
    assert audit_size(5, 100, 100, audit_share=0.5) == 3
    assert audit_size(5, 100, 100, audit_share=0.0) == 0


def test_the_precision_rule_splits_a_batch_as_stated():
    """On a panel whose labelled rows are 40 evaluation rows and 60 actively chosen rows, a
    batch of 20 audits ceil(120 / 2 - 40) = 20 items (the whole batch), a batch of 30
    ceil(130 / 2 - 40) = 25 items; with every labelled row in E a batch of 20 is wholly active."""
    panel = skewed_panel(400, 4)
    labels = np.full(400, np.nan)
    labels[:100] = panel.labels[:100]
    evaluated = np.zeros(400, dtype=bool)
    evaluated[:40] = True
    result = fit(panel, labels, np.zeros(0, np.int64), 0)
    b = choose_batch(result, 20, seed=1, evaluated=evaluated)
    assert b.info["n_audit"] == 20 and b.audit.all() and len(b.rows) == 20
    b = choose_batch(result, 30, seed=1, evaluated=evaluated)
    assert b.info["n_audit"] == 25 and b.audit.sum() == 25 and len(np.unique(b.rows)) == 30
    b = choose_batch(result, 20, seed=1)
    assert b.info["n_audit"] == 0 and not b.audit.any() and len(b.rows) == 20


def test_the_audit_walk_never_reads_labels_and_counts_met_rows_free():
    """The audit rows depend on which rows are labelled, never on the label values; labelled
    rows outside E that the walk meets are returned as free audit rows."""
    panel = skewed_panel(300, 3)
    labels = np.full(300, np.nan)
    labels[:100] = panel.labels[:100]
    p1 = panel.with_labels(labels)
    flipped = labels.copy()
    flipped[:100] = 1 - flipped[:100]
    p2 = panel.with_labels(flipped)
    pool = np.ones(300, dtype=bool)
    evaluated = np.zeros(300, dtype=bool)
    evaluated[:50] = True                     # rows 50..99: labelled but chosen actively
    a = audit_draw(p1, 20, pool, evaluated, np.random.default_rng(5))
    b = audit_draw(p2, 20, pool, evaluated, np.random.default_rng(5))
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert len(a[0]) == 20 and (a[0] >= 100).all()
    assert ((a[1] >= 50) & (a[1] < 100)).all()
    # the walk's length over the rows outside E is the inclusion probability
    assert a[2] == pytest.approx((len(a[0]) + len(a[1])) / 250)


def test_active_part_takes_the_heaviest_thinly_labelled_cell_first():
    """One binary judge (a table of two cells). Hand computation with alpha = 1/2 (the
    selector's default smoothing) and equal Bernoulli noise: gain_z = p_z / ((N_z + a)(N_z + a + 1)).
    Cell 1 holds 30 % of the traffic and 2 labels: 0.3 / (2.5 * 3.5) = 0.0343; cell 0 holds
    70 % and 40 labels: 0.7 / (40.5 * 41.5) = 0.00042. So every active pick goes to cell 1
    until its gain falls below cell 0's: 0.3 / ((N + .5)(N + 1.5)) < 0.00042 needs N >= 26."""
    n = 1_000
    x = np.zeros(n, dtype=int)
    x[700:] = 1
    y = np.full(n, np.nan)
    y[:40] = np.arange(40) % 2            # cell 0: 40 labels, mean 1/2
    y[700:702] = [0.0, 1.0]               # cell 1: 2 labels, mean 1/2
    judge = build_judge_column("j", x.astype(str), schema="binary")
    ids = np.array([f"i{i}" for i in range(n)], dtype=object)
    panel = Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=[judge])
    result = FCPSSelector(families=("table",), paths=("info_first",), n_jobs=1, seed=0, estimate="none",
                          with_baselines=False).fit(panel, Blocks(S=np.zeros(0, np.int64), M=np.flatnonzero(~np.isnan(y)),
                                                                  V=np.zeros(0, np.int64), T=np.zeros(0, np.int64)))
    batch = choose_batch(result, 20, seed=0, audit_share=0.0)
    assert (batch.rows >= 700).all()                       # every pick in the thin, heavy cell
    assert not batch.audit.any()
    assert batch.gain[0] == pytest.approx(0.25 * 0.3 / (2.5 * 3.5))
    assert "cell with 2 labels, 30.0% of traffic" in batch.reasons[0]


def test_batch_errors_are_one_clear_line(tmp_path):
    rows = good_rows(80, seed=1)
    path = write(tmp_path / "all.csv", csv_text(rows))
    line = assert_one_line_error(run_cli("label-next", str(path), "--batch", "5", "--quiet"))
    assert "no unlabelled rows" in line
    for r in rows[41:]:
        r[2] = ""
    path = write(tmp_path / "some.csv", csv_text(rows))
    line = assert_one_line_error(run_cli("label-next", str(path), "--batch", "41", "--quiet"))
    assert "only 40 rows are unlabelled" in line and "--batch 40" in line
    line = assert_one_line_error(run_cli("label-next", str(path), "--batch", "0", "--quiet"))
    assert "at least 1" in line


def test_the_command_returns_n_new_unlabelled_items(tmp_path):
    rows = good_rows(120, seed=2)
    for r in rows[61:]:
        r[2] = ""
    path = write(tmp_path / "p.csv", csv_text(rows))
    unlabelled = {r[0] for r in rows[61:]}
    code, out, err = run_cli("label-next", str(path), "--batch", "15", "--seed", "3", "--json", "--quiet")
    assert code == 0, err
    d = json.loads(out)
    ids = [i["item_id"] for i in d["items"]]
    assert len(ids) == 15 and len(set(ids)) == 15 and set(ids) <= unlabelled
    assert d["n_audit"] + d["n_active"] == 15
    assert {i["chosen_by"] for i in d["items"]} <= {"audit", "active"}
    code, out, err = run_cli("label-next", str(path), "--batch", "15", "--seed", "3", "--quiet",
                             "--out", str(tmp_path / "b.csv"))
    assert code == 0, err
    import csv as _csv
    got = list(_csv.DictReader(open(tmp_path / "b.csv", encoding="utf-8")))
    assert [g["item_id"] for g in got] == ids            # same seed, same batch
    assert set(got[0]) >= {"item_id", "group_id", "label", "j1", "j2", "j3", "chosen_by", "reason"}
    assert all(g["label"] == "" for g in got)


def test_the_command_names_the_estimate_as_the_pages_do(tmp_path):
    # the Select and Label next pages say "MSE on new items"; the CLI said "deployed risk"
    rows = good_rows(120, seed=2)
    for r in rows[61:]:
        r[2] = ""
    path = write(tmp_path / "p.csv", csv_text(rows))
    code, out, err = run_cli("label-next", str(path), "--batch", "15", "--seed", "3",
                             "--out", str(tmp_path / "b.csv"))
    assert code == 0, err
    assert "15 items:" in err and "MSE on new items" in err and "95% interval" in err
    assert "deployed risk" not in err and "item(s)" not in err


def test_store_merge_is_checked_and_atomic(tmp_path):
    from fcps_core.errors import StoreError
    from fcps_core.ingest import load_panel
    from fcps_core.store import Store
    rows = good_rows(40, seed=4)
    for r in rows[21:]:
        r[2] = ""
    store = Store(tmp_path / "s.duckdb")
    store.add_panel(load_panel(str(write(tmp_path / "p.csv", csv_text(rows)))), name="p")
    before = store.load_panel("p")
    with pytest.raises(StoreError, match="'zz' is not in panel"):
        store.merge_labels("p", {"it30": 1.0, "zz": 0.0})
    with pytest.raises(StoreError, match="stored output"):
        store.merge_labels("p", {"it30": 1.0}, outputs={"it30": {"j1": "parse_error"}})
    with pytest.raises(StoreError, match="confirm"):
        store.merge_labels("p", {"it30": 1.0, "it0": 1.0 - float(rows[1][2])})
    np.testing.assert_array_equal(store.load_panel("p").labels, before.labels)
    out = store.merge_labels("p", {"it30": 1.0, "it31": 0.0, "it0": float(rows[1][2])})
    assert (out["new"], out["replaced"], out["unchanged"]) == (2, 0, 1)
    after = store.load_panel("p")
    assert after.n_labelled == before.n_labelled + 2
    assert store.panel_info("p")["n_labelled"] == after.n_labelled
    # the active record follows the panel's new version
    store.record_label_request("p", active=["it32", "it33"], audited=[])
    store.merge_labels("p", {"it32": 1.0})
    assert store.active_items("p") == {"it32", "it33"}
    store.record_label_request("p", active=[], audited=["it33"])
    assert store.active_items("p") == {"it32"}


def test_label_next_json_keys_are_documented(tmp_path):
    from test_json_contract import documented_keys
    rows = good_rows(80, seed=5)
    for r in rows[41:]:
        r[2] = ""
    path = write(tmp_path / "p.csv", csv_text(rows))
    code, out, err = run_cli("label-next", str(path), "--batch", "4", "--json", "--quiet")
    assert code == 0, err
    assert list(json.loads(out)) == documented_keys("`label-next --json`")


def test_linear_design_updates_match_a_direct_recomputation():
    """The rank-one updates of a = x'A^-1 x and b = x'A^-1 Sigma A^-1 x equal the quantities
    recomputed from A = ridge I + sum_labelled w x x' by a matrix inverse."""
    from fcps_core.planning.label_next import DESIGN_RIDGE, _LinearDesign
    rng = np.random.default_rng(0)
    n, d = 200, 4
    scores = rng.random((n, d))
    w = rng.uniform(0.05, 0.25, n)
    labelled = np.zeros(n, dtype=bool)
    labelled[:30] = True
    pool = np.ones(n, dtype=bool)
    design = _LinearDesign(scores, labelled, pool, w)
    rows = np.arange(30, n)
    design.prepare(rows)
    for r in (40, 41, 90):
        design.add(r)
        labelled[r] = True
    X = np.column_stack([np.ones(n), scores])
    A = (X[labelled] * w[labelled, None]).T @ X[labelled] + DESIGN_RIDGE * np.eye(d + 1)
    Ainv = np.linalg.inv(A)
    Sigma = (X * (w ** 2)[:, None]).T @ X / n
    a = np.einsum("ij,jk,ik->i", X[rows], Ainv, X[rows])
    b = np.einsum("ij,jk,ik->i", X[rows], Ainv @ Sigma @ Ainv, X[rows])
    np.testing.assert_allclose(design.gains(rows), w[rows] * b / (1 + w[rows] * a), rtol=1e-9)


def test_uploaded_labels_are_read_on_the_panels_scale_and_bad_cells_name_their_line():
    from fcps_core.errors import PanelError
    from fcps_core.service.label_next import read_labelled_batch
    data = "item_id,group_id,label,j1\n'=a,g,4,A\nb,g,,B\nc,g,A,A\n"
    labels, outputs = read_labelled_batch(data, judges=["j1"], label_range=(1.0, 5.0))
    assert labels == {"=a": 0.75, "c": 1.0}          # (4 - 1) / (5 - 1); A -> 1; b left blank
    assert outputs["b"] == {"j1": "B"}
    with pytest.raises(PanelError, match="line 3.*outside the declared range"):
        read_labelled_batch("item_id,label\na,1\nb,7\n", label_range=(1.0, 5.0))
    with pytest.raises(PanelError, match="no 'item_id' column"):
        read_labelled_batch("id,label\na,1\n")


def test_whole_groups_bring_a_chosen_items_group_mates_along():
    panel = skewed_panel(600, 6)
    groups = np.array([f"g{i // 2}" for i in range(600)], dtype=object)
    panel = Panel(item_ids=panel.item_ids, group_ids=groups, labels=panel.labels, judges=panel.judges)
    labels = np.full(600, np.nan)
    labels[:200] = panel.labels[:200]
    panel = panel.with_labels(labels)
    result = FCPSSelector(seed=0, **SMALL_MENU).fit(panel, Blocks(S=np.zeros(0, np.int64), M=np.arange(200),
                                                                  V=np.zeros(0, np.int64), T=np.zeros(0, np.int64)))
    batch = choose_batch(result, 10, seed=1, audit_share=0.0, whole_groups=True)
    chosen = [str(g) for g in groups[batch.rows]]
    assert len(batch) == 10 and len(set(batch.rows)) == 10
    assert all(chosen.count(g) == 2 for g in chosen)          # every group whole
    assert sum("same group as the item above" in r for r in batch.reasons) == 5
