"""Large judge pools: the honesty machinery on distinct held-out rows equals it on raw rows.

Under the split protocol the held-out matrix is kept once per distinct V row (every
judge's output and the label; a continuous judge's exact value), groups enter as units of
identical contents, identical prediction columns are stored once, and the baselines are
fitted on distinct score rows with counts. These tests run the choice rules, the
bias-corrected bootstrap, the tie report, the regime verdict and the baselines both on the
distinct rows and on the raw rows of the same selection (discrete and continuous judges,
groups of several rows, every choice rule) and require the same choice and the same
numbers to 1e-12. The bootstrap is also checked against a plain loop over its draws
(the rule replayed with ``choose(w=...)`` on raw rows), and the cross-fitted protocol's
compressed held-out matrix against its raw one.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.measures.diagnostics import losses
from fcps_core.data.panel import Panel, build_judge_column
from fcps_core.selection.baselines import _STACKERS, baseline_predictions, majority_vote
from fcps_core.selection.choice import (GroupedLosses, choose, choose_deployed, line_ids, preference_order, row_losses,
                                        rule_choice, tie_break_order)
from fcps_core.selection.crossfit import heldout_key
from fcps_core.selection.folds import ExpandedPredictions, HeldOut, grouped_folds
from fcps_core.selection.honesty import assess
from fcps_core.families import REGISTRY, PrefixFeatures
from fcps_core.paper.synthetic import make_regime

RULES = ("tie_average", "simplest_within_se", "cheapest_tied", "argmin")
REL = 1e-12


def _with_continuous(panel: Panel, seed: int) -> Panel:
    """``panel`` plus two continuous judges: one on a coarse grid (repeated values), one
    exact (every value distinct)."""
    rng = np.random.default_rng(seed)
    y = np.nan_to_num(panel.labels, nan=0.5)
    coarse = np.round(y * 0.6 + rng.random(panel.n_rows) * 0.4, 1)
    fine = y * 0.3 + rng.random(panel.n_rows)
    cols = [build_judge_column("C_coarse", [f"{v:.1f}" for v in coarse], schema="continuous"),
            build_judge_column("C_fine", [repr(float(v)) for v in fine], schema="continuous")]
    return Panel(item_ids=panel.item_ids, group_ids=panel.group_ids, labels=panel.labels,
                 judges=list(panel.judges) + cols, name=panel.name + "+continuous")


def _panel(kind: str) -> Panel:
    if kind == "discrete":
        return make_regime("mixed", rows=1500, judges=5, seed=4, group_size=3, tie_rate=0.1)
    if kind == "few_judges":            # many repeated rows inside a group: units merge groups
        return make_regime("additive", rows=1200, judges=3, seed=2, group_size=4)
    return _with_continuous(make_regime("mixed", rows=900, judges=3, seed=5, group_size=2), 5)


def _costs(panel: Panel) -> dict:
    rng = np.random.default_rng(0)
    return {j: {"cost": float(rng.integers(1, 9)), "latency": float(rng.random())} for j in panel.judge_names}


@pytest.fixture(scope="module", params=["discrete", "few_judges", "continuous"])
def split_run(request):
    """One split selection (its fits) and the held-out matrix on distinct and on raw rows."""
    panel = _panel(request.param)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    r = select(panel, blocks, protocol="split", choice="argmin", estimate="none", with_baselines=False,
               judge_costs=_costs(panel), seed=1)
    outside = np.ones(panel.n_rows, dtype=bool)
    outside[blocks.M] = outside[blocks.T] = False
    base = {n: p[None] for n, p in baseline_predictions(r.encoded.scores, r.panel.labels, blocks.M, blocks.V,
                                                        np.flatnonzero(outside)).items()}
    P = r.val_prediction_matrix()
    distinct = HeldOut.of(r.panel, blocks.V, P, base)
    raw = HeldOut.of(r.panel, blocks.V, np.asarray(P), base)
    return request.param, r, distinct, raw


def _decide(r, heldout, rule: str, estimate: str = "bbc"):
    """The choice rule, the audit-free verdicts and the bootstrap on ``heldout``."""
    costs = r.selector.judge_costs
    if rule == "cheapest_tied" and not costs:      # later judges cheaper: the cheapest tied
        names = r.panel.judge_names                 # candidate is rarely the best's own line
        costs = {j: {"cost": float(len(names) - k), "latency": 0.0} for k, j in enumerate(names)}
    sel = replace(r.selector, choice=rule, estimate=estimate, with_baselines=True, n_boot=150, judge_costs=costs)
    res = replace(r, selector=sel, **choose_deployed(r.candidates, sel, r.panel, heldout).fields())
    return replace(res, **assess(res, heldout))


def _close(a, b, path="", rel=REL):
    """Recursive equality: floats to ``rel`` (relative, 1e-15 absolute floor), the rest exactly."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            _close(a[k], b[k], f"{path}/{k}", rel)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]", rel)
    elif isinstance(a, float) or isinstance(b, float):
        if a is None or b is None or (math.isnan(a) and math.isnan(b)):
            assert a is b or (math.isnan(a) and math.isnan(b)), path
        else:
            assert abs(a - b) <= rel * max(abs(a), abs(b)) + 1e-15, (path, a, b)
    else:
        assert a == b, (path, a, b)


def _outcome(res) -> dict:
    return {"selected": res.selected_index, "members": res.members, "choice_info": res.choice_info,
            "selected_val": res.selected_val, "deployed_risk": res.deployed_risk, "baselines": res.baselines,
            "tie": res.tie, "regime": res.regime}


def test_the_held_out_matrix_is_kept_on_distinct_rows(split_run):
    kind, r, distinct, raw = split_run
    V = r.blocks.V
    assert np.array_equal(np.asarray(distinct.preds), np.asarray(raw.preds))
    cols = [0, len(r.candidates) - 1, 3]
    assert np.array_equal(distinct.preds[:, :, cols], np.asarray(raw.preds)[:, :, cols])
    assert distinct.preds.shape == (1, len(V), len(r.candidates))
    if kind != "continuous":
        assert distinct.n_distinct < len(V)              # discrete outputs: fewer distinct rows
    if kind == "few_judges":
        assert distinct.n_distinct <= 2 ** 3 * 2           # 3 binary judges x the label
    col, _ = distinct.columns()
    assert len(set(col.tolist())) <= len(r.candidates)
    np.testing.assert_array_equal(distinct.signatures(), raw.signatures())


@pytest.mark.parametrize("rule", RULES)
def test_distinct_rows_give_the_raw_rows_choice_bootstrap_ties_regime_and_baselines(split_run, rule):
    kind, r, distinct, raw = split_run
    a, b = _decide(r, distinct, rule), _decide(r, raw, rule)
    _close(_outcome(a), _outcome(b))
    assert a.deployed_risk is not None and len(a.baselines) == 6


def test_distinct_rows_without_the_estimate(split_run):
    kind, r, distinct, raw = split_run
    _close(_outcome(_decide(r, distinct, "tie_average", "none")), _outcome(_decide(r, raw, "tie_average", "none")))


@pytest.mark.parametrize("rule", ["tie_average", "simplest_within_se", "argmin"])
def test_the_bootstrap_equals_a_loop_over_its_draws(split_run, rule):
    """The vectorised bootstrap (units, distinct columns, pruned and directly summed SEs)
    against the rule replayed draw by draw on raw rows with ``choose(w=...)``."""
    kind, r, distinct, raw = split_run
    res = _decide(r, distinct, rule)
    sel = res.selector
    P = np.asarray(raw.preds)
    y = raw.y
    g = GroupedLosses(row_losses(sel.objective, y, P), raw.groups)
    G = g.n_groups
    tie_rank = tie_break_order(res.candidates)
    simple = preference_order(rule, res.candidates, sel.judge_costs)
    rng = np.random.default_rng(np.random.SeedSequence([sel.seed, 2018]))
    procs = []
    # the averaged members are one per distinct model (issue 24: fcps_core.selection.members),
    # the rule the vectorised bootstrap replays; this test holds the bootstrap, not that rule
    from fcps_core.selection.members import MemberLookup
    lookup = MemberLookup(raw, res.candidates)
    models = np.array([lookup[c] for c in range(len(res.candidates))])
    for _ in range(sel.n_boot):
        w = np.bincount(rng.integers(0, G, G), minlength=G).astype(float)
        oob = (w == 0)[g.group_of_row]
        if not oob.any():
            continue
        ch = choose(rule, g, tie_rank=tie_rank, simple_rank=simple, signatures=models,
                    max_members=sel.max_members, w=w, lines=line_ids(res.candidates))
        p = P[0][:, ch.members].mean(axis=1) if ch.members else P[0][:, ch.chosen]
        procs.append(losses(sel.objective, y[oob], p[oob]).mean())
    procs = np.array(procs)
    dr = res.deployed_risk
    assert dr["n_boot"] == len(procs)
    assert dr["estimate"] == pytest.approx(procs.mean(), rel=REL)
    assert dr["ci"] == pytest.approx([np.percentile(procs, 2.5), np.percentile(procs, 97.5)], rel=REL)


def test_grouped_losses_on_units_equal_the_raw_group_sums():
    """Groups of identical contents merge into units; means and clustered SEs do not move."""
    rng = np.random.default_rng(3)
    U, n = 12, 600
    inverse = rng.integers(0, U, n)
    groups = np.repeat(np.arange(n // 3), 3)
    same = groups % 4 == 0                                        # groups of one repeated row
    inverse[same] = np.repeat(inverse[::3], 3)[same]
    Ld = rng.random((U, 5))
    Ld[:, 4] = Ld[:, 1]                                           # an identical column
    from fcps_core.selection.folds import group_units
    u = group_units(groups, inverse, U)
    assert len(u.groups) < len(np.unique(groups))                  # some groups merged
    col = np.array([0, 1, 2, 3, 1])
    gd = GroupedLosses.from_units(Ld[:, :4], u.matrix, u.groups, u.group_unit, col)
    gr = GroupedLosses(Ld[inverse], groups)
    np.testing.assert_allclose(gd.sums, gr.sums, rtol=1e-14)
    np.testing.assert_allclose(gd.means(), gr.means(), rtol=1e-14)
    np.testing.assert_allclose(gd.mean_se(), gr.mean_se(), rtol=1e-12)
    w = rng.integers(0, 3, gr.n_groups).astype(float)
    for ref in range(5):
        np.testing.assert_allclose(gd.paired_se(ref, w), gr.paired_se(ref, w), rtol=1e-10, atol=1e-15)
        np.testing.assert_allclose(gd.paired_se(ref), gr.paired_se(ref), rtol=1e-10, atol=1e-15)


def test_raw_group_sums_are_np_add_at_bit_for_bit():
    rng = np.random.default_rng(1)
    L = rng.random((500, 7))
    groups = rng.integers(0, 90, 500)
    sums = np.zeros((90, 7))
    np.add.at(sums, groups, L)
    assert np.array_equal(GroupedLosses(L, groups).sums, sums[np.unique(groups)])


def _raw_baselines(scores, labels, fit_rows, pred_rows, unlabelled_rows) -> dict:
    """The recipes fitted on raw rows (no counts): the reference for the distinct-row fits."""
    feats = lambda S: PrefixFeatures(patterns=[None] * S.shape[1], scores=S)   # noqa: E731
    y = labels[fit_rows]
    out = {"majority_vote": majority_vote(scores[pred_rows])}
    for name, family in _STACKERS.items():
        cls = REGISTRY[family]
        unlabelled = feats(scores[unlabelled_rows]) if cls.uses_unlabelled else None
        model = cls().fit(feats(scores[fit_rows]), y, unlabelled)
        out[name] = model.predict(feats(scores[pred_rows]))
    out["single_judges"] = np.column_stack([
        REGISTRY["mean_iso"]().fit(feats(scores[fit_rows][:, [j]]), y).predict(feats(scores[pred_rows][:, [j]]))
        for j in range(scores.shape[1])])
    return out


@pytest.mark.parametrize("kind", ["discrete", "continuous"])
def test_baselines_fitted_on_distinct_score_rows_equal_raw_row_fits(kind):
    """Weighted fits on distinct rows equal fits on the rows (up to the order of the
    floating-point sums inside each fit: Newton steps, isotonic pools, normal equations)."""
    panel = _panel(kind)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    from fcps_core.data.encoding import encode_panel
    enc = encode_panel(panel, blocks.M)
    rest = np.setdiff1d(np.arange(panel.n_rows), np.concatenate([blocks.M, blocks.T]))
    got = baseline_predictions(enc.scores, panel.labels, blocks.M, blocks.V, rest)
    ref = _raw_baselines(enc.scores, panel.labels, blocks.M, blocks.V, rest)
    assert set(got) == set(ref)
    for name in ref:
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-9, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("rule", ["tie_average", "simplest_within_se"])
def test_crossfit_held_out_matrix_compressed_by_outputs_and_folds_equals_raw(rule):
    panel = make_regime("mixed", rows=700, judges=4, seed=6, group_size=2, tie_rate=0.1)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    r = select(panel, blocks, protocol="crossfit", choice=rule, n_jobs=1, n_boot=100, seed=2,
               families=["table", "logistic", "mean_iso", "ridge_iso", "one_coin_iso"])
    h = r.heldout
    assert h.inverse is not None and h.n_distinct < len(h.rows)
    D = h.rows
    folds = grouped_folds(panel.group_ids[D], r.selector.folds, r.selector.repeats, r.selector.seed)
    key = heldout_key(r.selector, r.panel, D, folds)
    P = np.asarray(h.preds)
    keyed = HeldOut.of(r.panel, D, P, h.baselines, key=key)
    raw = HeldOut.of(r.panel, D, P, h.baselines)
    assert keyed.distinct(P[:, :, 0]) is not None                   # predictions agree inside a key
    sel = r.selector
    for objective in ("mse", "nll"):
        a, b = keyed.grouped(objective), raw.grouped(objective)
        _close(a.means().tolist(), b.means().tolist())
        _close(a.mean_se().tolist(), b.mean_se().tolist())
    outs = []
    for heldout in (keyed, raw):
        res = replace(r, **rule_choice(r.candidates, sel, heldout).fields())
        res = replace(res, **assess(res, heldout))
        dr = {k: v for k, v in res.deployed_risk.items() if k not in ("training_size_correction", "bbc_estimate")}
        outs.append({**_outcome(res), "deployed_risk": dr})
    _close(outs[0], outs[1])


def test_expanded_predictions_read_like_the_raw_array():
    rng = np.random.default_rng(0)
    values = rng.random((2, 5, 3))
    inverse = np.array([0, 4, 4, 1, 2, 3, 0])
    col = np.array([2, 0, 0, 1])
    e = ExpandedPredictions(values, inverse, col)
    dense = values[:, inverse][:, :, col]
    assert e.shape == dense.shape and len(e) == 2
    assert np.array_equal(np.asarray(e), dense)
    assert np.array_equal(e[:, :, [1, 3]], dense[:, :, [1, 3]])
    assert np.array_equal(e[:, :, 2], dense[:, :, 2])
    assert np.array_equal(e[1, 2:5], dense[1, 2:5])
    assert np.array_equal(e - 1.0, dense - 1.0) and np.array_equal(1.0 - e, 1.0 - dense)


def test_large_panel_never_builds_a_rows_by_candidates_matrix():
    """The bench's panel at 100k rows: the held-out matrix, its losses and the bootstrap
    stay on distinct rows (discrete judges: a fraction of V), and the split selection with
    the default choice rule, estimate and baselines reports them."""
    from bench.bench_large import build_panel
    panel = build_panel(100_000, 10)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    r = select(panel, blocks, protocol="split")
    h = r.heldout
    n_V = len(blocks.V)
    assert h.values.shape[1] < 0.7 * n_V
    assert h.distinct_losses(r.selector.objective).shape[0] == h.values.shape[1]
    assert r.deployed_risk["method"] == "bbc" and len(r.baselines) == 6
    assert r.choice_info["rule"] == "tie_average"


def test_risk_order_runs_equal_the_sequential_definition():
    """risk_order finds its runs (risks within rounding_tolerance of a run's first) for all
    positions at once; the sequential walk is the definition."""
    from fcps_core.selection.choice import risk_order, rounding_tolerance

    def walk(cols, means, tie_rank):
        order = cols[np.lexsort((tie_rank[cols], means[cols]))]
        m, out, i = means[order], [], 0
        while i < len(order):
            j = int(np.searchsorted(m, m[i] + rounding_tolerance(float(m[i])), side="right")) \
                if np.isfinite(m[i]) else len(order)
            run = order[i:max(j, i + 1)]
            out.extend(run[np.argsort(tie_rank[run], kind="stable")])
            i = max(j, i + 1)
        return np.asarray(out, dtype=np.int64)
    rng = np.random.default_rng(0)
    for _ in range(2000):
        n = int(rng.integers(1, 40))
        means = rng.random(n) * 0.3
        if rng.random() < 0.5:      # risks equal up to rounding, and just outside it
            means[rng.integers(0, n, size=n // 2)] = means[0] + rng.choice([0, 1e-16, 5e-13, 1e-10], size=n // 2)
        if rng.random() < 0.1:
            means[rng.integers(0, n)] = rng.choice([np.inf, np.nan])
        tie_rank = rng.permutation(n)
        cols = rng.choice(n, size=int(rng.integers(1, n + 1)), replace=False).astype(np.int64)
        np.testing.assert_array_equal(risk_order(cols, means, tie_rank), walk(cols, means, tie_rank))
