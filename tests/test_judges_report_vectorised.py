"""The judges report's vectorised figures against scikit-learn and Python, to the bit: every
judge's kappa (``cohen_kappa_score``) and AUC (``roc_auc_score``) at once, the matrices rounded
as ``round(v, 4)`` rounds each entry, and whole reports equal to the report computed the old
way (one sklearn call per judge, one ``round`` per matrix entry)."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from scipy.stats import rankdata
from sklearn.metrics import cohen_kappa_score, roc_auc_score

import fcps_core.selection.judges_report as jr
from fcps_core import make_blocks
from fcps_core.data.encoding import encode_panel
from fcps_core.ingest import build_panel
from fcps_core.ingest.load import load_panel
from fcps_core.measures.judge_metrics import ABSTAIN, decisions, label_aucs, label_kappas, rounded_matrix
from fcps_core.selection.judges_report import deployable_rows, panel_judges_report
from fcps_core.paper.synthetic import make_regime


# -- the oracles: scikit-learn one judge at a time, Python's round one entry at a time ----------
def sk_kappa(yb, d) -> float:
    """What the report took before: cohen_kappa_score, NaN where it raised or gave NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return float(cohen_kappa_score(yb, d))
        except ValueError:
            return np.nan


def sk_kappas(yb, D) -> np.ndarray:
    return np.array([sk_kappa(yb, D[:, j]) for j in range(D.shape[1])])


def sk_aucs(yb, S) -> np.ndarray:
    return np.array([roc_auc_score(yb, S[:, j]) for j in range(S.shape[1])])


def py_matrix(M) -> list:
    return [[None if not np.isfinite(v) else round(float(v), 4) for v in row] for row in np.asarray(M, float)]


def same_floats(a, b) -> bool:
    """Equal to the bit (NaN where the other is NaN)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


# -- kappa ---------------------------------------------------------------------------------------
def _label_vector(rng, n):
    kind = rng.choice(["random", "all0", "all1", "one positive"])
    if kind == "all0":
        return np.zeros(n, dtype=int)
    if kind == "all1":
        return np.ones(n, dtype=int)
    if kind == "one positive":
        y = np.zeros(n, dtype=int)
        y[rng.integers(n)] = 1
        return y
    return rng.integers(0, 2, n)


def _decision_columns(rng, yb):
    """Random decisions over random subsets of {0, 1, abstain} (constant columns included),
    the label itself, its opposite and the label with abstentions."""
    n = len(yb)
    cols = []
    for _ in range(8):
        cats = rng.choice([0, 1, ABSTAIN], size=rng.integers(1, 4), replace=False)
        cols.append(rng.choice(cats, size=n))
    cols += [yb, 1 - yb, np.where(rng.random(n) < 0.3, ABSTAIN, yb), np.full(n, ABSTAIN)]
    return np.column_stack(cols).astype(np.int64)


def test_label_kappas_equal_cohen_kappa_score_to_the_bit():
    rng = np.random.default_rng(0)
    undefined = 0
    for trial in range(150):
        n = int(rng.choice([1, 2, 3, 5, 17, 60, 400]))
        yb = _label_vector(rng, n)
        D = _decision_columns(rng, yb)
        expected = sk_kappas(yb, D)
        assert same_floats(label_kappas(yb, D), expected), (trial, n)
        undefined += int(np.isnan(expected).sum())
    assert undefined > 0          # the NaN cases (label and decision constant on one category) were met


def test_label_kappas_by_hand():
    """Labels 1,1,0,0 and decisions 1,abstain,0,1: p_o = 1/2, p_e = (2/4)(2/4) + (2/4)(1/4) = 3/8,
    kappa = (1/2 - 3/8) / (5/8) = 1/5; a judge always abstaining on one-class labels: undefined."""
    k = label_kappas(np.array([1, 1, 0, 0]), np.array([[1], [ABSTAIN], [0], [1]]))
    assert k[0] == pytest.approx(0.2)
    assert np.isnan(label_kappas(np.ones(3, dtype=int), np.full((3, 1), 1)))[0]


# -- AUC -----------------------------------------------------------------------------------------
def _score_columns(rng, yb):
    n = len(yb)
    noisy = yb + rng.normal(0, 1.0, n)
    return np.column_stack([
        rng.random(n),                                        # no ties
        rng.choice([0.0, 0.5, 1.0], size=n),                  # a pairwise judge: heavy ties
        np.round(noisy, 1),                                   # ties and collinear runs
        np.round(rng.random(n), 2),
        np.full(n, 0.5),                                      # constant
        yb.astype(float), 1.0 - yb,                           # perfect, inverted
        np.where(rng.random(n) < 0.5, 0.5, yb),               # the label or a tie
    ])


def test_label_aucs_equal_roc_auc_score_to_the_bit():
    rng = np.random.default_rng(1)
    for trial in range(120):
        n = int(rng.choice([2, 3, 9, 40, 300, 2000]))
        yb = _label_vector(rng, n)
        if len(np.unique(yb)) < 2:                            # both classes: AUC is defined
            yb[rng.permutation(n)[: rng.integers(1, n)]] = 1 - yb[0]
        assert len(np.unique(yb)) == 2
        S = _score_columns(rng, yb)
        assert same_floats(label_aucs(yb, S), sk_aucs(yb, S)), (trial, n)


def test_label_aucs_are_the_mann_whitney_statistic():
    """Same area as U / (n_0 n_1) with average ranks for ties (up to the last bits)."""
    rng = np.random.default_rng(2)
    yb = rng.integers(0, 2, 500)
    S = _score_columns(rng, yb)
    R = rankdata(S, axis=0)
    n1 = yb.sum()
    n0 = len(yb) - n1
    u = (R[yb == 1].sum(axis=0) - n1 * (n1 + 1) / 2) / (n0 * n1)
    assert label_aucs(yb, S) == pytest.approx(u, abs=1e-12)


def test_one_judge_and_a_single_threshold():
    yb = np.array([0, 1, 1, 0, 1])
    assert label_aucs(yb, np.full((5, 1), 0.3)).tolist() == [0.5]
    s = np.array([[0.1], [0.9], [0.8], [0.2], [0.8]])
    assert label_aucs(yb, s).tolist() == [roc_auc_score(yb, s[:, 0])] == [1.0]


# -- rounding the matrices -----------------------------------------------------------------------
def test_matrix_rounds_like_python_round():
    rng = np.random.default_rng(3)
    halves = (np.arange(-20000, 20000) + 0.5) / 1e4            # x * 10^4 at (or within an ulp of) a half
    near = np.concatenate([halves, np.nextafter(halves, np.inf), np.nextafter(halves, -np.inf)])
    exact = np.array([0.03125, -0.03125, 0.15625, 0.5, -0.5, 1.0, 0.0, -0.0, 1 / 3, 2 / 3])
    big = np.array([1e12 + 0.00005, 123456.78905, 1e300, -1e300, 2.0 ** 60 + 0.5, 5e-5, -5e-5, 1e-320])
    odd = np.array([np.nan, np.inf, -np.inf])
    values = np.concatenate([near, exact, big, odd, rng.uniform(-1, 1, 20000), rng.normal(0, 1e4, 2000)])
    values = np.concatenate([values, np.zeros(-len(values) % 100)])
    M = values.reshape(-1, 100)
    got, want = rounded_matrix(M), py_matrix(M)
    assert got == want
    assert json.dumps(got) == json.dumps(want)                 # signs of zero and float types too
    assert all(type(v) in (float, type(None)) for row in got for v in row)


# -- whole reports: the same as the old, one-call-per-judge computation ---------------------------
def _old_way(monkeypatch):
    monkeypatch.setattr(jr, "label_kappas", sk_kappas)
    monkeypatch.setattr(jr, "label_aucs", sk_aucs)
    monkeypatch.setattr(jr, "rounded_matrix", py_matrix)


def _assert_report_as_before(monkeypatch, panel, rows, **kw):
    new = panel_judges_report(panel, rows, **kw)
    with monkeypatch.context() as m:
        _old_way(m)
        old = panel_judges_report(panel, rows, **kw)
    assert new == old
    assert json.dumps(new) == json.dumps(old)
    return new


def _panel(labels, judges: dict):
    n = len(labels)
    cols = {"item_id": [str(i) for i in range(n)], "group_id": [str(i % 37) for i in range(n)],
            "label": [str(v) for v in labels]}
    cols.update({k: list(v) for k, v in judges.items()})
    return build_panel(cols, block_column=None)


@pytest.mark.parametrize("seed", [0, 1])
def test_report_of_a_synthetic_panel_is_unchanged(monkeypatch, seed):
    panel = make_regime("mixed", rows=500, judges=8, seed=seed, tie_rate=0.15)
    rows = deployable_rows(panel, make_blocks(panel, split="1:2:1:1", seed=seed))
    rep = _assert_report_as_before(monkeypatch, panel, rows)
    # accuracy (now one mean over all judges) against each judge's own mean
    y = (panel.labels[rows] > 0.5).astype(int)
    D = decisions(encode_panel(panel, rows).scores[rows])
    for j, row in enumerate(rep["judges"]):
        assert row["accuracy"] == float(np.mean((D[:, j] == y) + 0.5 * (D[:, j] == ABSTAIN)))
        assert row["kappa"] == sk_kappa(y, D[:, j])


def test_report_with_constant_judges_abstentions_and_soft_labels_is_unchanged(monkeypatch):
    rng = np.random.default_rng(4)
    n = 300
    y = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=n)
    good = np.where(rng.random(n) < 0.8, np.where(y > 0.5, "A", "B"), "tie")
    judges = {"good": good, "copy": good, "always A": ["A"] * n, "nearly always tie": ["tie"] * (n - 1) + ["B"],
              "noisy": np.where(rng.random(n) < 0.1, "parse_error", np.where(rng.random(n) < 0.5, "A", "B"))}
    panel = _panel(y, judges)
    rep = _assert_report_as_before(monkeypatch, panel, np.arange(n))
    by = {j["judge"]: j for j in rep["judges"]}
    assert by["always A"]["auc"] == 0.5 and by["always A"]["kappa"] == 0.0
    assert by["nearly always tie"]["abstain_rate"] == pytest.approx(1 - 1 / n)
    assert rep["redundancy"]["n_pairs"] >= 1
    # one-class labels: no AUC, kappa undefined (None) for a judge constant on that class
    ones = _panel([1.0] * n, judges)
    rep = _assert_report_as_before(monkeypatch, ones, np.arange(n))
    by = {j["judge"]: j for j in rep["judges"]}
    assert all(j["auc"] is None for j in rep["judges"]) and by["always A"]["kappa"] is None


def test_report_with_continuous_and_categorical_judges_is_unchanged(monkeypatch):
    rng = np.random.default_rng(5)
    n = 400
    y = rng.integers(0, 2, n)
    panel = _panel(y, {"cat": np.where(rng.random(n) < 0.7, np.where(y == 1, "good", "poor"), "meh"),
                       "num": [f"{v:.2f}" for v in y + rng.normal(0, 0.8, n)],
                       "flat": ["0.3"] * n,
                       "pw": np.where(rng.random(n) < 0.7, np.where(y == 1, "A", "B"), "tie")})
    rep = _assert_report_as_before(monkeypatch, panel, np.arange(n))
    assert rep["agreement"]["kind"] == "spearman"
    _assert_report_as_before(monkeypatch, panel, np.arange(n), folds=1)      # no folds: no isotonic map


def test_report_of_hanna_judges_is_unchanged(monkeypatch):
    panel = load_panel("data/hanna.csv")
    panel = panel.subset_judges(panel.judge_names[:16])
    rows = deployable_rows(panel, make_blocks(panel, seed=0))
    from fcps_core.selection import deployable_label_scale
    panel = deployable_label_scale(panel, make_blocks(panel, seed=0))
    _assert_report_as_before(monkeypatch, panel, rows)
