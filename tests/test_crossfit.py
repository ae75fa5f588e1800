"""The cross-fitted protocol, the choice rules, baselines and the deployed-risk estimate.

Checked against direct computations: grouped folds, the clustered paired SE (a hand
formula), baselines against scikit-learn fits on the same folds, and the protocol's
information flow (a fold's held-out labels cannot move that fold's fits; T's labels cannot
move anything).
"""

import json
import math

import numpy as np
import pytest
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression

from fcps_core import FCPSPredictor, make_blocks, select
from fcps_core.families import PrefixFeatures
from fcps_core.selection import FCPSSelector
from fcps_core.selection.baselines import baseline_predictions, majority_vote
from fcps_core.selection.choice import GroupedLosses, choose, complexity_order, prediction_signatures, tie_break_order
from fcps_core.selection.crossfit import grouped_folds
from fcps_core.paper.synthetic import make_regime

MENU = dict(families=["table", "logistic", "mean_iso", "ridge_iso"], paths=["info_first", "random"], k_max=4)


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=500, judges=5, seed=3, group_size=2)


@pytest.fixture(scope="module")
def blocks(panel):
    return make_blocks(panel, split="1:2:1:1", seed=0)


@pytest.fixture(scope="module")
def result(panel, blocks):
    return select(panel, blocks, **MENU, seed=0)


def test_grouped_folds_partition_every_repeat_and_keep_groups_whole():
    groups = np.repeat(np.arange(40), 3)
    folds = grouped_folds(groups, 5, 2, seed=1)
    assert len(folds) == 10
    for r in (0, 1):
        held = np.concatenate([va for rr, _, va in folds if rr == r])
        assert sorted(held.tolist()) == list(range(120))          # every row held out once
        for rr, tr, va in folds:
            if rr == r:
                assert not set(groups[tr]) & set(groups[va])     # no group on both sides
    assert not all(np.array_equal(a[2], b[2]) for a, b in zip(folds[:5], folds[5:]))


def test_clustered_paired_se_matches_the_hand_formula():
    rng = np.random.default_rng(0)
    L = rng.random((12, 3))
    groups = np.array([0, 0, 1, 1, 1, 2, 3, 3, 4, 5, 5, 5])
    g = GroupedLosses(L, groups)
    d = L[:, 2] - L[:, 0]
    D = np.array([d[groups == k].sum() for k in range(6)])
    n_g = np.bincount(groups)
    dbar = d.mean()
    G = 6
    se = math.sqrt(((D - dbar * n_g) ** 2).sum() * G / (G - 1)) / 12
    assert g.paired_se(0)[2] == pytest.approx(se, rel=1e-12)
    assert g.paired_se(0)[0] == 0.0
    assert g.means() == pytest.approx(L.mean(axis=0))


def test_paired_se_among_a_few_columns_is_the_hand_formula_and_nan_elsewhere():
    """paired_se(among=mask) computes only the masked candidates' SEs (a full-limit level's
    tie set reads no other): each the hand formula and, to the bit, what every column's pass
    gives (the blocks holding them are formed alike), the others NaN; a mask of most columns
    gives every column's SE."""
    rng = np.random.default_rng(3)
    n, C = 40, 200
    L = rng.random((n, C))
    groups = rng.integers(0, 15, size=n)
    g = GroupedLosses(L, groups)
    G = len(np.unique(groups))
    n_g = np.array([np.sum(groups == k) for k in np.unique(groups)])

    def by_hand(c, ref):
        d = L[:, c] - L[:, ref]
        D = np.array([d[groups == k].sum() for k in np.unique(groups)])
        return math.sqrt(((D - d.mean() * n_g) ** 2).sum() * G / (G - 1)) / n
    among = np.zeros(C, dtype=bool)
    among[[1, 4, 5, 9] + list(range(20, 60))] = True          # 44 columns: two blocks of 32
    se = GroupedLosses(L, groups).paired_se(4, among=among)
    assert np.isnan(se[~among]).all()
    for c in np.flatnonzero(among):
        assert se[c] == pytest.approx(by_hand(c, 4), rel=1e-12, abs=1e-15)
    np.testing.assert_array_equal(se[among], g.paired_se(4)[among])      # the same blocks' sums, to the bit
    most = np.ones(C, dtype=bool)
    most[:3] = False
    assert np.isfinite(GroupedLosses(L, groups).paired_se(4, among=most)).all()


def test_choice_rules_on_a_constructed_matrix():
    class C:  # minimal candidate records
        def __init__(self, i, family, K):
            self.index, self.family, self.K = i, family, K
    cands = [C(0, "table", 3), C(1, "logistic", 4), C(2, "mean_iso", 2), C(3, "logistic", 5)]
    rng = np.random.default_rng(1)
    base = rng.random((200, 1)) * 0.2
    e1, e2 = rng.standard_normal((2, 200, 1))
    e1, e2 = e1 - e1.mean(), e2 - e2.mean()        # exact mean differences 0.001 and 0.002
    L = np.hstack([base, base + 0.001 + 0.05 * e1, base + 0.002 + 0.05 * e2, base + 0.5])
    preds = rng.random((1, 200, 4))
    g = GroupedLosses(L, np.arange(200))
    kw = dict(tie_rank=tie_break_order(cands), simple_rank=complexity_order(cands),
              signatures=prediction_signatures(preds), max_members=10)
    assert choose("argmin", g, **kw).chosen == 0
    tied = set(choose("simplest_within_se", g, **kw).tied.tolist())
    assert tied == {0, 1, 2}                                     # 3 is far worse
    assert choose("simplest_within_se", g, **kw).chosen == 2     # mean_iso is the simplest
    avg = choose("tie_average", g, **kw)
    assert avg.members == [0, 1, 2] and 3 not in avg.members


def test_json_contract_and_protocol_report(result, blocks):
    d = result.to_dict()
    sp = d["split"]
    assert d["protocol"] == "crossfit" and d["choice"] == "tie_average"
    assert sp["protocol"] == "crossfit" and sp["folds"] == 5 and sp["repeats"] == 2
    assert sp["n_deployable"] == len(blocks.S) + len(blocks.M) + len(blocks.V) and sp["n_T"] == len(blocks.T)
    assert d["validation_scale"] == pytest.approx(math.sqrt(math.log(d["menu_size"]) / sp["n_deployable"]))
    dr = d["deployed_risk"]
    assert dr["method"] == "bbc" and dr["ci"][0] <= dr["estimate"] <= dr["ci"][1]
    assert {b["name"] for b in d["baselines"]} == {"best_single_judge", "mean_vote_iso", "majority_vote",
                                                   "ridge_iso_all", "logistic_all", "ds_jury_all"}
    for b in d["baselines"]:
        assert b["ci"][0] <= b["diff_vs_selected"] <= b["ci"][1]
    assert isinstance(d["tie"]["tied"], bool) and "alternatives" in d["tie"]
    assert isinstance(d["regime"]["determined"], bool)
    if not d["regime"]["determined"]:
        assert d["regime"]["quadrant"] == "undetermined"
    sel = d["selected"]
    if sel["family"] == "tie_average":
        assert sel["judges"] == sorted({j for m in sel["members"] for j in m["judges"]},
                                       key=d["panel"]["judges"].index)
    assert all(0 < c["judge_set_stability"] <= 1 for c in d["candidates"])
    json.dumps(d, default=float)


def test_tie_average_predictor_round_trips_and_scores(result, panel, tmp_path):
    forced = select(panel, make_blocks(panel, split="1:2:1:1", seed=0), **MENU, seed=0, max_members=3)
    pred = forced.predictor()
    path = tmp_path / "m.json"
    pred.save(str(path))
    again = FCPSPredictor.load(str(path))
    p = again.predict(panel)
    T = forced.blocks.T
    np.testing.assert_allclose(p[T], forced.predict_deployed(T), atol=1e-12)
    if forced.members:
        assert len(again.members) == len(forced.members) and again.family == forced.selected_dict()["family"]
        doc = json.loads(path.read_text())
        doc["judges"] = doc["judges"][:1]
        with pytest.raises(Exception, match="union"):
            FCPSPredictor.from_dict(doc)


def test_a_folds_held_out_labels_cannot_move_its_fits(panel, blocks):
    sel = FCPSSelector(**MENU, seed=0)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
    _, tr, va = grouped_folds(panel.group_ids[D], 5, 1, 0)[0]
    rows = {"S": D[tr], "M": D[tr], "V": D[va], "T": D[:0], "rest": D[:0]}
    a = sel.fit_menu(panel, rows, expand_grid=True)
    labels = panel.labels.copy()
    labels[D[va]] = 1.0 - labels[D[va]]
    b = sel.fit_menu(panel.with_labels(labels), rows, expand_grid=True)
    assert [(c.judge_idx, c.family, c.params) for c in a.candidates] == \
        [(c.judge_idx, c.family, c.params) for c in b.candidates]
    every = np.arange(panel.n_rows)
    for ca, cb in zip(a.candidates, b.candidates):
        fa = PrefixFeatures(patterns=a.pattern_cache[ca.judge_idx], scores=a.encoded.scores[:, list(ca.judge_idx)])
        fb = PrefixFeatures(patterns=b.pattern_cache[cb.judge_idx], scores=b.encoded.scores[:, list(cb.judge_idx)])
        np.testing.assert_array_equal(a.models[ca.index].predict(fa.take(every)),
                                      b.models[cb.index].predict(fb.take(every)))


def test_test_labels_cannot_move_anything(panel, blocks, result):
    labels = panel.labels.copy()
    labels[blocks.T] = 1.0 - labels[blocks.T]
    other = select(panel.with_labels(labels), blocks, **MENU, seed=0)
    strip = ("test_mse", "test_nll")
    da, db = result.to_dict(cells_limit=0), other.to_dict(cells_limit=0)
    for key in ("deployed_risk", "baselines", "tie", "regime", "choice_info"):
        assert da[key] == db[key], key
    assert {k: v for k, v in da["selected"].items() if k not in strip} == \
        {k: v for k, v in db["selected"].items() if k not in strip}
    for ca, cb in zip(da["candidates"], db["candidates"]):
        assert {k: v for k, v in ca.items() if k not in strip + ("unseen_test",)} == \
            {k: v for k, v in cb.items() if k not in strip + ("unseen_test",)}


def test_baselines_equal_direct_sklearn_fits_on_the_same_fold(panel, blocks):
    from fcps_core.data.encoding import encode_panel
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V]))
    _, tr, va = grouped_folds(panel.group_ids[D], 5, 1, 0)[0]
    enc = encode_panel(panel, D[tr])
    got = baseline_predictions(enc.scores, panel.labels, D[tr], D[va], D[:0])
    S, y = enc.scores, panel.labels
    iso = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip")
    want = iso.fit(S[D[tr]].mean(axis=1), y[D[tr]]).predict(S[D[va]].mean(axis=1))
    np.testing.assert_allclose(got["mean_vote_iso"], want, atol=1e-12)
    lr = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(S[D[tr]], y[D[tr]])
    np.testing.assert_allclose(got["logistic_all"], lr.predict_proba(S[D[va]])[:, 1], atol=1e-6)
    j = 2
    single = iso.fit(S[D[tr], j], y[D[tr]]).predict(S[D[va], j])
    np.testing.assert_allclose(got["single_judges"][:, j], single, atol=1e-12)
    # majority vote: 1-votes vs 0-votes, 1/2 on ties (abstentions at exactly 1/2)
    votes = np.array([[1.0, 0.0, 0.5], [0.0, 0.0, 1.0], [1.0, 0.0, 0.9], [0.5, 0.5, 0.5]])
    np.testing.assert_array_equal(majority_vote(votes), [0.5, 0.0, 1.0, 0.5])


def test_single_judge_baselines_run_the_way_each_judge_goes_with_the_label():
    """A judge whose score falls as the label rises (a quality metric read against an
    error-score label) gets a decreasing isotonic map, as scikit-learn's
    ``increasing="auto"`` fits it on the same rows, not a constant; a rising judge and an
    uninformative one get what that fit gives them too."""
    import warnings
    rng = np.random.default_rng(3)
    n = 400
    q = rng.normal(size=n)
    y = (rng.random(n) < 1 / (1 + np.exp(2 * q))).astype(float)           # falls with q
    scores = np.column_stack([1 / (1 + np.exp(-q - 0.5 * rng.normal(size=n))),   # falls with the label
                              1 / (1 + np.exp(q + 0.5 * rng.normal(size=n))),    # rises with it
                              rng.random(n)])                                    # says nothing
    tr, va = np.arange(300), np.arange(300, n)
    got = baseline_predictions(scores, y, tr, va, va[:0])["single_judges"]
    for j in range(scores.shape[1]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # sklearn warns when the rank correlation's interval spans 0
            iso = IsotonicRegression(increasing="auto", y_min=0, y_max=1, out_of_bounds="clip")
            want = iso.fit(scores[tr, j], y[tr]).predict(scores[va, j])
        np.testing.assert_allclose(got[:, j], want, atol=1e-12)
    assert np.ptp(got[:, 0]) > 0.5 and np.ptp(got[:, 1]) > 0.5


def test_the_vote_baselines_read_a_falling_judge_reversed():
    """A practitioner's majority and mean votes count a judge whose score falls as the label
    rises (an error count against a quality label) the other way round: negating such judges'
    scores (s -> 1 - s) leaves both votes' predictions unchanged, and a panel whose judges all
    fall is voted as well as the same panel with its judges rising (before, its votes were
    inverted: the majority vote predicted 1 where the judges said 0)."""
    rng = np.random.default_rng(5)
    n = 600
    y = (rng.random(n) < 0.4).astype(float)
    rising = np.column_stack([np.clip(y * 0.5 + 0.25 + rng.normal(0, 0.25, n), 0, 1) for _ in range(5)])
    rising = np.round(rising, 2)
    tr, va = np.arange(400), np.arange(400, n)
    base = baseline_predictions(rising, y, tr, va, va[:0])
    for flip in ([0, 3], [0, 1, 2, 3, 4]):
        mixed = rising.copy()
        mixed[:, flip] = 1.0 - mixed[:, flip]
        got = baseline_predictions(mixed, y, tr, va, va[:0])
        np.testing.assert_allclose(got["majority_vote"], base["majority_vote"], atol=1e-12)
        np.testing.assert_allclose(got["mean_vote_iso"], base["mean_vote_iso"], atol=1e-12)
        np.testing.assert_allclose(got["single_judges"], base["single_judges"], atol=1e-12)
    # the rising panel's majority vote is a good predictor, the all-falling one's too
    assert np.mean((base["majority_vote"] - y[va]) ** 2) < 0.15


def test_rises_with_is_the_sign_of_spearmans_rank_correlation_with_rows_repeated_by_weight():
    from scipy.stats import spearmanr
    from fcps_core.families.base import rises_with
    rng = np.random.default_rng(5)
    for _ in range(50):
        x = rng.integers(0, 4, 12).astype(float)          # ties in both
        y = rng.integers(0, 3, 12).astype(float)
        w = rng.integers(1, 4, 12)
        rho = spearmanr(np.repeat(x, w), np.repeat(y, w))[0]
        if np.isfinite(rho) and abs(rho) > 1e-12:
            assert rises_with(x, y, w.astype(float)) == (rho > 0)
    assert rises_with([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])          # constant label: rising (any map is constant)
    assert not rises_with([1.0, 2.0, 3.0, np.nan], [1.0, 0.5, 0.0, 1.0])   # the NaN row left out


def test_split_protocol_argmin_keeps_the_paper_selection(panel, blocks):
    paper = select(panel, blocks, **MENU, protocol="split", choice="argmin", estimate="none",
                   with_baselines=False)
    honest = select(panel, blocks, **MENU, protocol="split", choice="argmin")
    assert paper.selected_index == honest.selected_index
    assert [c.to_dict() for c in paper.candidates] == [c.to_dict() for c in honest.candidates]
    assert honest.deployed_risk["method"] == "bbc" and paper.deployed_risk is None


def test_estimate_never_reads_the_test_block(panel, blocks):
    a = select(panel, blocks, **MENU, protocol="split", choice="tie_average")
    labels = panel.labels.copy()
    labels[blocks.T] = 1 - labels[blocks.T]
    b = select(panel.with_labels(labels), blocks, **MENU, protocol="split", choice="tie_average")
    assert a.deployed_risk == b.deployed_risk and a.baselines == b.baselines


def test_nested_estimate_runs_the_whole_procedure_per_outer_fold(panel, blocks):
    r = select(panel, blocks, families=["logistic", "mean_iso"], paths=["info_first"], k_max=3,
               folds=3, repeats=1, estimate="nested")
    dr = r.deployed_risk
    assert dr["method"] == "nested" and dr["outer_folds"] == 3 and dr["ci"][0] < dr["estimate"] < dr["ci"][1]


def test_bad_protocol_settings_are_one_line_errors(panel, blocks):
    from fcps_core import MenuError
    with pytest.raises(MenuError, match="folds"):
        select(panel, blocks, folds=1)
    with pytest.raises(MenuError, match="crossfit"):
        select(panel, blocks, protocol="split", estimate="nested")
    with pytest.raises(MenuError, match="argmin"):
        select(panel, blocks, guard="one_se")


def test_parallel_folds_give_the_same_result_as_sequential(panel, blocks, result):
    parallel = select(panel, blocks, **MENU, seed=0, n_jobs=2)
    strip = lambda d: {k: v for k, v in d.items() if k != "timings"}  # noqa: E731
    assert strip(parallel.to_dict()) == strip(result.to_dict())
    # the judges report's panel part came from a fold worker (queued behind the folds) in
    # the parallel run and was computed by to_dict in the sequential one: equal above
    assert parallel.panel_report is not None and result.panel_report is None


def test_a_judges_report_computed_ahead_serves_only_its_own_inputs(panel, blocks):
    """A :class:`PanelReport` is read only for the very panel and blocks and the same
    threshold; anything else recomputes the panel part."""
    from dataclasses import replace
    from fcps_core.selection.judges_report import judges_report
    parallel = select(panel, blocks, **MENU, seed=0, n_jobs=2)
    marked = replace(parallel, panel_report=replace(parallel.panel_report,
                                                    report={**parallel.panel_report.report, "rows": -1}))
    assert judges_report(marked)["rows"] == -1                       # read when it serves
    assert judges_report(marked, threshold=0.5)["rows"] == len(parallel.heldout.rows)
    other = replace(marked, blocks=make_blocks(panel, split="1:2:1:1", seed=0))   # equal, not the same object
    assert judges_report(other)["rows"] == len(parallel.heldout.rows)


def test_column_means_are_the_column_risks_means(result):
    """The second objective's risks are means only (``HeldOut.column_means``): the same values
    as ``column_risks``' means to the bit, from the block loop and from a cached loss matrix,
    and the plain mean of each candidate's per-row held-out loss."""
    h = result.heldout
    for objective in ("mse", "nll"):
        means = h.column_means(objective)                     # "nll" not cached yet: the block loop
        assert np.array_equal(means, h.column_risks(objective)[0])
        np.testing.assert_allclose(means, h.losses(objective).mean(axis=0), rtol=1e-12, atol=0)
        assert [getattr(c, f"val_{objective}") for c in result.candidates] == \
            means[[c.index for c in result.candidates]].tolist()
    h.grouped("nll")                                  # now cached: both read the grouped sums
    assert np.array_equal(h.column_means("nll"), h.column_risks("nll")[0])


def test_a_panel_report_that_fails_ahead_is_left_to_to_dict(panel, blocks, result):
    """The worker's task returns None where the report raises (``to_dict`` then computes it
    and raises as before); otherwise the report itself."""
    from fcps_core.selection.crossfit import panel_report_or_none
    from fcps_core.selection.judges_report import selection_panel_report
    assert panel_report_or_none(panel, None, result.selector) is None
    with pytest.raises(AttributeError):
        selection_panel_report(panel, None, result.selector)
    assert panel_report_or_none(result.panel, blocks, result.selector) == \
        selection_panel_report(result.panel, blocks, result.selector)


def test_a_queued_result_whose_worker_died_is_computed_where_it_is_read():
    """The judges report queued behind the folds: a worker killed from outside raises when
    its result is collected; the selection then reads None (``to_dict`` forms the report)."""
    from fcps_core.selection.crossfit import _queued_result

    from joblib.externals.loky.process_executor import TerminatedWorkerError

    def dying():
        raise TerminatedWorkerError("A worker process managed by the executor was unexpectedly terminated")
        yield  # pragma: no cover

    def failing():
        raise ValueError("a bug in the queued task")
        yield  # pragma: no cover

    assert _queued_result(dying()) is None
    with pytest.raises(ValueError):                  # anything else is not swallowed
        _queued_result(failing())
    assert _queued_result(iter([])) is None
    assert _queued_result(iter([{"report": 1}])) == {"report": 1}
