"""Per-candidate sweep records and the paper analyses built on them (fcps_core.paper.analyses),
checked against direct computations: numpy least squares, scikit-learn's roc_auc_score and
the per-split candidate records themselves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from fcps_core.paper import analyses as pa
from fcps_core.paper.experiments import CANDIDATE_COLUMNS, calibration_growth
from fcps_core.paper.synthetic import make_regime


@pytest.fixture(scope="module")
def sweep():
    panel = make_regime("mixed", rows=1500, judges=6, seed=2)
    return calibration_growth(panel, [60, 240], n_select=150, n_val=150, n_test=300, splits=4, seed=1)


def test_every_candidate_of_every_split_is_kept(sweep):
    df = sweep.candidate_frame()
    assert list(df.columns) == list(CANDIDATE_COLUMNS)
    per = df.groupby(["split", "n_M"]).size()
    assert len(per) == 4 * 2 and per.nunique() == 1            # the same menu in every selection
    # each menu's recorded choice is exactly one candidate row, with the same figures
    for rec in sweep.records:
        rows = df[(df["split"] == rec["split"]) & (df["n_M"] == rec["n_M"])]
        for menu, m in rec["menus"].items():
            chosen = rows[rows["selected_by"].str.split("|").apply(lambda names: menu in names)]
            assert len(chosen) == 1
            c = chosen.iloc[0]
            assert (c["family"], c["K"], c["path"]) == (m["family"], m["K"], m["path_rule"])
            assert c["test_mse"] == pytest.approx(m["test_mse"], abs=1e-12)


def test_records_can_be_dropped(sweep):
    panel = make_regime("mixed", rows=600, judges=4, seed=0)
    r = calibration_growth(panel, [50], n_select=80, n_val=80, n_test=120, splits=2, keep_candidates=False)
    assert r.candidates is None and r.candidate_frame().empty


def test_marginal_deltas_are_consecutive_prefix_differences(sweep):
    df = sweep.candidate_frame()
    d = pa.marginal_deltas(df)
    t = df[df["family"] == "table"]
    row = d.iloc[len(d) // 2]
    key = (t["split"] == row["split"]) & (t["n_M"] == row["n_M"]) & (t["path"] == row["path"])
    a = t[key & (t["K"] == row["K"])].iloc[0]
    b = t[key & (t["K"] == row["K"] + 1)].iloc[0]
    assert row["d_risk"] == pytest.approx(b["test_mse"] - a["test_mse"], abs=1e-12)
    assert row["d_complexity"] == pytest.approx((b["H_K"] - a["H_K"]) / row["n_M"], abs=1e-12)
    # one delta per consecutive pair of every (split, budget, path)
    pairs = t.groupby(["split", "n_M", "path"])["K"].agg(lambda k: len(k) - 1).sum()
    assert len(d) == pairs
    bins = pa.marginal_bins(d, bins=4)
    assert sum(b["n"] for b in bins) == len(d)
    assert all(b["d_risk_p10"] <= b["d_risk_median"] <= b["d_risk_p90"] for b in bins)


def test_controlled_complexity_matches_numpy_least_squares(sweep):
    df = sweep.candidate_frame()
    out = {r["diagnostic"]: r for r in pa.controlled_complexity(df)}
    t = df[(df["family"] == "table") & df["H_K"].notna() & df["unseen_test"].notna()].copy()
    t["x"] = t["H_K"] / t["n_M"]
    g = t.groupby(["n_M", "path"])
    x = (t["x"] - g["x"].transform("mean")).to_numpy()
    y = (t["test_mse"] - g["test_mse"].transform("mean")).to_numpy()
    X = (x / x.std(ddof=1))[:, None]
    Y = y / y.std(ddof=1)
    coef, res, *_ = np.linalg.lstsq(X, Y, rcond=None)
    se = np.sqrt(res[0] / (len(Y) - 2) / (X[:, 0] @ X[:, 0]))
    r = out["H_K/n_M -> test risk"]
    assert r["estimate"] == pytest.approx(coef[0], rel=1e-9)
    assert r["se"] == pytest.approx(se, rel=1e-9)
    assert r["units"] == len(t)


def test_within_group_correlation_counts_groups(sweep):
    (row,) = pa.within_group_correlation(sweep.candidate_frame())
    assert row["groups"] == 2 * 3          # budgets x path rules
    assert -1 <= row["mean_within_group_corr"] <= 1


def test_proxy_auc_matches_sklearn_and_tests_are_reported():
    rng = np.random.default_rng(0)
    units = pd.DataFrame({"panel": np.repeat(["a", "b"], 60), "n_M": np.tile(np.repeat([50, 200], 30), 2),
                          "split": np.tile(np.arange(30), 4)})
    units["proxy"] = rng.normal(size=len(units))
    units["scalar_wins"] = (units["proxy"] + rng.normal(size=len(units)) > 0).astype(float)
    rows = {r["diagnostic"]: r for r in pa.theory_proxy_winner(units, n_boot=300, n_perm=300, seed=0)}
    auc = rows["split-level proxy AUC for scalar winner"]
    assert auc["estimate"] == pytest.approx(roc_auc_score(units["scalar_wins"], units["proxy"]))
    assert auc["ci"][0] < auc["estimate"] < auc["ci"][1]
    assert rows["within-cluster permutation test for AUC"]["p_value"] < 0.05     # a real signal
    gap = units.loc[units.scalar_wins == 1, "proxy"].mean() - units.loc[units.scalar_wins == 0, "proxy"].mean()
    assert rows["scalar-minus-table proxy-score gap"]["estimate"] == pytest.approx(gap)
    # no signal: the permutation test does not reject
    units["proxy"] = rng.normal(size=len(units))
    rows = {r["diagnostic"]: r for r in pa.theory_proxy_winner(units, n_boot=100, n_perm=300, seed=1)}
    assert rows["within-cluster permutation test for AUC"]["p_value"] > 0.01


def test_proxy_units_and_interaction_diagnostic_from_a_sweep(sweep):
    df = sweep.candidate_frame()
    units = pa.proxy_units(df, sweep.records)
    assert len(units) == len(sweep.records)
    for rec in sweep.records[:3]:
        u = units[(units.split == rec["split"]) & (units.n_M == rec["n_M"])].iloc[0]
        m = rec["menus"]
        assert u["scalar_wins"] == float(m["scalar"]["test_mse"] < m["table"]["test_mse"])
        assert u["H_per_n"] == pytest.approx(m["table"]["H_K"] / rec["n_M"])
    (row,) = pa.interaction_diagnostic(df, sweep.records)
    assert row["n_M"] == 240 and row["splits"] == 4
    assert row["pairwise_minus_additive"] == pytest.approx(row["pairwise_test_mse"] - row["additive_test_mse"])
    assert 0 <= row["pairwise_share"] <= 1


def test_the_store_keeps_every_candidate_of_a_sweep(sweep, tmp_path):
    from fcps_core.store import Store
    from fcps_core.store.records import SWEEP_CANDIDATE_COLUMNS
    assert SWEEP_CANDIDATE_COLUMNS == CANDIDATE_COLUMNS
    store = Store(tmp_path / "s.duckdb")
    panel = make_regime("mixed", rows=1500, judges=6, seed=2)
    store.add_panel(panel, name="mixed")
    run = store.save_sweep(sweep, panel="mixed")
    back = store.sweep_candidates(run)
    mine = sweep.candidate_frame()
    assert len(back) == len(mine)
    pd.testing.assert_frame_equal(back.reset_index(drop=True), mine.reset_index(drop=True), check_dtype=False)
    # the analyses give the same answer from the store
    assert pa.controlled_complexity(back) == pa.controlled_complexity(mine)
    store.delete_run(run)
    assert store.sweep_candidates(run).empty
