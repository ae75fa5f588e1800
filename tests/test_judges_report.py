"""The judges report: per-judge metrics by hand and against scikit-learn, the effective number
of judges, redundancy, calibration error, T never read, and the select --json contract."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
from sklearn.calibration import calibration_curve
from sklearn.metrics import cohen_kappa_score, roc_auc_score

from fcps_core import make_blocks, select
from fcps_core.cli.main import main
from fcps_core.data.encoding import encode_panel
from fcps_core.ingest import build_panel
from fcps_core.measures.judge_metrics import (ABSTAIN, REDUNDANCY_THRESHOLD, decisions, effective_number,
                                     error_correlation, expected_calibration_error, kappa_matrix,
                                     reliability_curve)
from fcps_core.selection.judges_report import deployable_rows, judges_report, panel_judges_report, with_drop_one
from fcps_core.paper.synthetic import make_regime
from fcps_core.files.csv_writer import write_wide_csv


def _panel(labels, judges: dict, *, groups=None):
    n = len(labels)
    cols = {"item_id": [str(i) for i in range(n)], "group_id": [str(g) for g in (groups or range(n))],
            "label": [str(v) for v in labels]}
    cols.update({k: list(v) for k, v in judges.items()})
    return build_panel(cols, block_column=None)


def _by_name(rep):
    return {j["judge"]: j for j in rep["judges"]}


# -- by hand ------------------------------------------------------------------------------------
def test_tiny_panel_by_hand():
    """Eight items, labels 1,1,1,1,0,0,0,0.
    j1 decides 1,1,1,0 | 0,0,1,tie: right on 3 + 2 rows, the tie counts 1/2 -> accuracy 5.5/8.
      kappa: p_o = 5/8; marginals label (1/2, 1/2), j1 (1: 4/8, 0: 3/8, tie: 1/8);
      p_e = 1/2 * 4/8 + 1/2 * 3/8 = 7/16 -> (5/8 - 7/16) / (9/16) = 1/3.
    j2 decides 1,1,parse error,missing | 0,0,0,0: accuracy (6 + 2 * 1/2) / 8 = 7/8, coverage
      6/8, one parse error and one missing output in 8, abstentions 2/8.
      kappa: p_o = 6/8, j2 marginals (1: 2/8, 0: 4/8, none: 2/8), p_e = 1/8 + 2/8 = 3/8
      -> (3/4 - 3/8) / (5/8) = 3/5.
    j1 vs j2 agree on rows 1, 2, 5, 6: p_o = 1/2, p_e = (4*2 + 3*4 + 1*2) / 64 = 22/64
      -> kappa (1/2 - 22/64) / (42/64) = 10/42 = 5/21."""
    y = [1, 1, 1, 1, 0, 0, 0, 0]
    panel = _panel(y, {"j1": ["A", "A", "A", "B", "B", "B", "A", "tie"],
                       "j2": ["A", "A", "parse_error", "", "B", "B", "B", "B"]})
    assert [j.schema for j in panel.judges] == ["pairwise", "pairwise"]
    rep = panel_judges_report(panel, np.arange(8), folds=2)
    j1, j2 = _by_name(rep)["j1"], _by_name(rep)["j2"]
    assert j1["accuracy"] == pytest.approx(5.5 / 8) and j1["kappa"] == pytest.approx(1 / 3)
    assert j1["coverage"] == 1.0 and j1["abstain_rate"] == pytest.approx(1 / 8) and j1["parse_error_rate"] == 0
    assert j2["accuracy"] == pytest.approx(7 / 8) and j2["kappa"] == pytest.approx(3 / 5)
    assert j2["coverage"] == pytest.approx(6 / 8) and j2["parse_error_rate"] == pytest.approx(1 / 8)
    assert j2["missing_rate"] == pytest.approx(1 / 8) and j2["abstain_rate"] == pytest.approx(2 / 8)
    assert rep["agreement"]["kind"] == "kappa"
    assert rep["agreement"]["matrix"][0][1] == pytest.approx(5 / 21, abs=1e-4)
    assert rep["rows"] == 8 and rep["binary_rows"] == 8 and rep["base_rate"] == 0.5 and rep["label_note"] is None


# -- against scikit-learn -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def synthetic():
    return make_regime("mixed", rows=600, judges=6, seed=3, tie_rate=0.1)


def test_auc_and_kappa_equal_scikit_learn(synthetic):
    rows = np.arange(synthetic.n_rows)
    rep = panel_judges_report(synthetic, rows)
    y = synthetic.labels
    yb = (y > 0.5).astype(int)
    S = encode_panel(synthetic, rows).scores
    D = decisions(S)
    for j, row in enumerate(rep["judges"]):
        assert row["auc"] == pytest.approx(roc_auc_score(yb, S[:, j]))
        assert row["kappa"] == pytest.approx(cohen_kappa_score(yb, D[:, j]))
    K = kappa_matrix(D)
    for a in range(D.shape[1]):
        for b in range(D.shape[1]):
            assert K[a, b] == pytest.approx(cohen_kappa_score(D[:, a], D[:, b]))


def test_soft_labels_are_binarised_at_one_half():
    rng = np.random.default_rng(0)
    y = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=400)
    scores = np.clip(y + rng.normal(0, 0.2, 400), 0, 1)
    panel = _panel([f"{v}" for v in y], {"m1": [f"{v:.4f}" for v in scores],
                                         "m2": [f"{v:.4f}" for v in rng.random(400)]})
    rep = panel_judges_report(panel, np.arange(400))
    keep = y != 0.5
    assert rep["binary_rows"] == keep.sum() and "binarised at 1/2" in rep["label_note"]
    assert rep["agreement"]["kind"] == "spearman"
    m1 = _by_name(rep)["m1"]
    assert m1["decision"] == "isotonic" and m1["auc"] == pytest.approx(roc_auc_score(y[keep] > 0.5, scores[keep]))
    assert m1["brier_iso"] < _by_name(rep)["m2"]["brier_iso"]


# -- between judges -----------------------------------------------------------------------------
def _independent(n: int, K: int, seed: int = 0, acc: float = 0.75):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n)
    right = rng.random((n, K)) < acc
    return y, np.where(right, y[:, None], 1 - y[:, None])


def test_effective_number_is_k_for_independent_judges_and_one_for_copies():
    """Independent errors: each off-diagonal correlation is noise of variance ~1/n, so
    ||R||_F^2 ~ K + K(K-1)/n and K_eff ~ K / (1 + (K-1)/n) = 7.986 here; the spread of
    that sum (SD ~ sqrt(2 K(K-1)) / n = 0.003) moves K_eff by well under 0.05."""
    n, K = 4000, 8
    y, d = _independent(n, K)
    R, varies = error_correlation(d, y)
    assert varies.all()
    assert effective_number(R) == pytest.approx(K / (1 + (K - 1) / n), abs=0.05)
    same = np.repeat(d[:, :1], K, axis=1)
    assert effective_number(error_correlation(same, y)[0]) == pytest.approx(1.0)


def test_effective_number_through_a_panel():
    n, K = 3000, 5
    y, d = _independent(n, K, seed=1)
    judges = {f"j{k}": np.where(d[:, k] == 1, "A", "B") for k in range(K)}
    rep = panel_judges_report(_panel(y, judges), np.arange(n))
    assert rep["effective_judges"]["value"] == pytest.approx(K / (1 + (K - 1) / n), abs=0.05)
    assert rep["redundancy"]["n_pairs"] == 0
    judges["j0 copy"] = judges["j0"]
    rep = panel_judges_report(_panel(y, judges), np.arange(n))
    assert [p["judges"] for p in rep["redundancy"]["pairs"]] == [["j0", "j0 copy"]]
    pair = rep["redundancy"]["pairs"][0]
    assert pair["agreement"] == 1.0 and pair["error_correlation"] == 1.0
    assert rep["redundancy"]["threshold"] == REDUNDANCY_THRESHOLD
    # K + 1 judges, one pair identical: ||R||_F^2 = (K + 1) + 2 (plus noise)
    assert rep["effective_judges"]["value"] == pytest.approx((K + 1) ** 2 / (K + 3), abs=0.05)


def test_constant_judges_have_no_error_correlation():
    y, d = _independent(500, 3, seed=2)
    d[:, 2] = 1                                          # always says 1: errors = 1 - y
    R, varies = error_correlation(d, y)
    assert list(varies) == [True, True, False] and np.isnan(R[2]).all()
    d[:5, 0] = ABSTAIN
    assert error_correlation(d, y)[1][0]


# -- calibration --------------------------------------------------------------------------------
def test_ece_of_calibrated_and_miscalibrated_predictors():
    """20,000 points in 10 bins of 2,000: a calibrated bin's mean label is off by about
    sqrt(0.25 / 2000) = 0.011 at most, so ECE stays near 0.01; squeezing predictions toward
    1/2 by a factor 3 costs E|2/3 (p - 1/2)| = 1/6."""
    rng = np.random.default_rng(0)
    p = rng.random(20_000)
    y = (rng.random(20_000) < p).astype(float)
    assert expected_calibration_error(y, p) < 0.025
    assert expected_calibration_error(y, 0.5 + (p - 0.5) / 3) > 0.15
    assert expected_calibration_error(p, p) == pytest.approx(0.0, abs=1e-12)      # soft labels = truth
    curve = reliability_curve(y, p)
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="quantile")
    assert curve["mean_label"] == pytest.approx(list(prob_true)) and sum(curve["count"]) == 20_000
    soft = reliability_curve(y + 1e-9 * (y == 0), p)                               # the soft-label path
    assert soft["mean_label"] == pytest.approx(list(prob_true), abs=1e-8)
    assert soft["mean_prediction"] == pytest.approx(list(prob_pred))


# -- on a selection -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def selection():
    panel = make_regime("mixed", rows=700, judges=5, seed=4, tie_rate=0.05)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    return select(panel, blocks, families=["logistic", "one_coin_iso", "table"], k_max=4, repeats=1)


def test_report_of_a_selection(selection):
    r = selection
    rep = r.to_dict()["judges_report"]
    D = deployable_rows(r.panel, r.blocks)
    assert rep["rows"] == len(D) == r.panel.n_labelled - len(r.blocks.T)
    cal = rep["calibration"]
    assert cal["rows"] == len(D) and cal["brier"] == pytest.approx(r.selected_dict().get("val_mse"))
    assert cal["brier_base_rate"] > cal["brier"] and 0 <= cal["ece"] < 0.2
    contrib = rep["contribution"]
    assert {j["judge"] for j in contrib["judges"]} == set(r.selected_dict()["judges"])
    assert contrib["drop_one"]["rule"] == r.selector.choice and contrib["drop_one_note"] is None
    assert all(j["drop_risk_change"] is not None or j["drop_note"] for j in contrib["judges"])
    shares = [j["weight_share"] for j in contrib["judges"] if j["weight_share"] is not None]
    assert all(0 <= s <= 1 for s in shares)


def test_drop_one_merges_the_next_judge_plan(selection):
    from fcps_core.planning.next_judge import plan_next_judge
    plan = plan_next_judge(selection).to_dict()
    contrib = with_drop_one(judges_report(selection)["contribution"], plan)
    drops = {e["judge"]: e for e in plan["drop"]}
    before = {j["judge"]: j for j in judges_report(selection)["contribution"]["judges"]}
    for j in contrib["judges"]:
        if j["judge"] in drops:
            assert j["refit_drop_change"] == drops[j["judge"]]["risk_change"]
            assert j["refit_drop_ci"] == drops[j["judge"]]["ci"]
        # the no-refit change stays: every deployed judge keeps its row
        assert j["drop_risk_change"] == before[j["judge"]]["drop_risk_change"]
    assert contrib["refit_drop_one"]["family"] == plan["deployed"]["family"]


def test_test_block_labels_are_never_read(selection):
    r = selection
    before = judges_report(r)
    rng = np.random.default_rng(1)
    T = r.blocks.T
    assert len(T)
    labels = r.panel.labels.copy()
    labels[T] = rng.permutation(1.0 - labels[T])
    assert judges_report(replace(r, panel=r.panel.with_labels(labels))) == before


def test_test_block_never_read_with_categorical_and_continuous_judges():
    rng = np.random.default_rng(5)
    n = 300
    y = rng.integers(0, 2, n)
    panel = _panel(y, {"cat": np.where(rng.random(n) < 0.8, np.where(y == 1, "good", "poor"), "meh"),
                       "num": [f"{v:.3f}" for v in y + rng.normal(0, 0.7, n)],
                       "pw": np.where(rng.random(n) < 0.7, np.where(y == 1, "A", "B"), np.where(y == 1, "B", "A"))})
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    rows = deployable_rows(panel, blocks)
    before = panel_judges_report(panel, rows)
    labels = panel.labels.copy()
    labels[blocks.T] = 1.0 - labels[blocks.T]
    assert panel_judges_report(panel.with_labels(labels), rows) == before
    assert _by_name(before)["cat"]["decision"] == "isotonic" and _by_name(before)["pw"]["decision"] == "native"


def test_select_json_carries_the_judges_report(tmp_path, capsys):
    panel = make_regime("mixed", rows=400, judges=4, seed=6)
    path = tmp_path / "p.csv"
    write_wide_csv(panel, str(path))
    assert main(["select", str(path), "--families", "logistic", "--protocol", "split", "--choice", "argmin",
                 "--quiet", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)["judges_report"]
    assert rep["rows"] == 400 and len(rep["judges"]) == 4 and rep["calibration"]["ece"] is not None
    assert len(rep["agreement"]["matrix"]) == 4 and rep["effective_judges"]["value"] > 1
    assert main(["select", str(path), "--families", "logistic", "--protocol", "split", "--choice", "argmin",
                 "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "JUDGES  on 400 deployable labelled rows" in text and "effective number of independent judges" in text


def test_a_one_judge_panel_gets_its_report():
    """sklearn's roc_auc_score returns a scalar, not an array, for a single column."""
    from fcps_core import FCPSSelector, make_blocks
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("additive", rows=300, judges=3, seed=0).subset_judges(["J3"])
    result = FCPSSelector(families=["logistic"], estimate="none", with_baselines=False).fit(
        panel, make_blocks(panel, split="1:2:1", seed=0))
    report = result.to_dict()["judges_report"]
    assert [j["name"] if "name" in j else j.get("judge") for j in report["judges"]] == ["J3"]
    assert report["judges"][0]["auc"] is None or 0 <= report["judges"][0]["auc"] <= 1


def test_a_judge_that_falls_with_the_label_is_calibrated_downhill_and_named_so():
    """A quality metric read against an error-score label: its cross-fitted isotonic map runs
    downhill (scikit-learn's increasing="auto" on each fold's training rows), so its Brier
    score is that map's, not the base rate's; its AUC stays the raw score's (below 1/2) and
    ``direction`` says why."""
    import warnings
    from sklearn.isotonic import IsotonicRegression
    from fcps_core.selection.judges_report import crossfit_folds
    rng = np.random.default_rng(8)
    n = 300
    quality = rng.normal(size=n)
    errors = np.clip(np.round(rng.poisson(np.exp(-1.2 * quality)) / 5, 1), 0, 1)     # falls with quality
    panel = _panel([f"{v:.1f}" for v in errors], {"metric": [f"{v:.3f}" for v in quality + 0.3 * rng.normal(size=n)],
                                                  "noise": [f"{v:.3f}" for v in rng.normal(size=n)]})
    rows = np.arange(n)
    rep = panel_judges_report(panel, rows)
    metric = _by_name(rep)["metric"]
    assert metric["direction"] == "falls" and metric["auc"] < 0.5
    S = encode_panel(panel, rows).scores[rows]
    y = panel.labels[rows]
    P = np.empty(n)
    for tr, va in crossfit_folds(panel.group_ids[rows], 5, 0):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            P[va] = IsotonicRegression(increasing="auto", y_min=0, y_max=1, out_of_bounds="clip") \
                .fit(S[tr, 0], y[tr]).predict(S[va, 0])
    assert metric["brier_iso"] == pytest.approx(float(np.mean((y - P) ** 2)), abs=1e-4)
    assert metric["brier_iso"] < 0.8 * float(np.mean((y - y.mean()) ** 2))


def test_a_constant_judge_has_direction_constant_in_the_report():
    """Walk 2 (pair_40x2000_tie.d1's pai37: 'A' on every row): the report's sign test read the
    constant column's ties as rising, so the CLI table and the HTML report said "rises" for a
    judge the import warns carries no information. The report says "constant" for it (the
    import's own test, ``ingest.load.constant_judges``); the other judges keep their sign,
    a falling one included."""
    rng = np.random.default_rng(5)
    y = rng.integers(0, 2, 300)
    flip = lambda p: np.where(rng.random(300) < p, 1 - y, y)     # noqa: E731
    cols = {"item_id": [f"i{i}" for i in range(300)], "label": [str(v) for v in y],
            "good": [str(v) for v in flip(0.2)], "contrary": [str(1 - v) for v in flip(0.2)],
            "stuck": ["1"] * 300}
    panel = build_panel(cols, block_column=None)
    rep = panel_judges_report(panel, np.arange(300))
    direction = {j["judge"]: j["direction"] for j in rep["judges"]}
    assert direction == {"good": "rises", "contrary": "falls", "stuck": "constant"}


def test_the_html_report_says_which_judges_the_effective_number_leaves_out():
    """Browser walk (translation metrics, labels mostly below 1/2): the run report's card read
    "effective independent judges 1.0" over 1 of 12 judges without saying so."""
    from fcps_core.reports.run_report.selection import judges_section
    names = ["<b>gpt</b>", "chrF", "TER"]
    rep = {"rows": 100, "names": names, "judges": [{"judge": n, "brier_iso": 0.1} for n in names],
           "effective_judges": {"value": 1.0, "K": 1, "excluded": ["<b>gpt</b>", "TER"]},
           "redundancy": {"n_pairs": 0}}
    html = judges_section({"judges_report": rep, "selected": {}})
    assert ("Effective independent judges over 1 of 3 judges: &lt;b&gt;gpt&lt;/b&gt; and TER are left out "
            "(the decision never varies within a label class, so the error has no correlation).") in html
    rep["effective_judges"]["excluded"] = []
    assert "left out" not in judges_section({"judges_report": rep, "selected": {}})
