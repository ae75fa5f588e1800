"""The engine's fast estimators against the straightforward versions, on small data.

* building blocks: isotonic (sklearn ``IsotonicRegression``), ridge (sklearn ``Ridge``),
  logistic (sklearn ``LogisticRegression`` solved to its optimum), Dawid-Skene EM (the
  row-level loop);
* count weights: every family fitted on distinct rows with counts equals the same family
  fitted on the expanded rows;
* every family against its reference (``bench/reference/families.py``: pandas groupby,
  sklearn, loops);
* the whole selection: distinct-row compression on/off, and against the reference loop that
  fits every menu entry on its own.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression, Ridge

from fcps_core import make_blocks
from fcps_core.measures.diagnostics import prefix_diagnostics
from fcps_core.families import FAMILIES, REGISTRY, IsotonicMap, PrefixFeatures
from fcps_core.families._linear import logistic_fit, logistic_objective, ridge_fit
from bench.reference.families import RefDSJury, reference_candidates, reference_model
from fcps_core.families.ds_jury import distinct_votes, em_fit
from paper_protocol import FCPSSelector
from fcps_core.paper.synthetic import make_regime


def random_features(rng, n, K, alphabet=3, continuous=False):
    codes = rng.integers(0, alphabet, size=(n, K))
    pats, cur = [], np.zeros(n, dtype=np.int64)
    for k in range(K):
        cur = cur * alphabet + codes[:, k]
        pats.append(cur.copy())
    if continuous:
        scores = rng.random((n, K))
    else:
        scores = np.choose(np.minimum(codes, 2), [np.zeros((n, K)), np.ones((n, K)),
                                                   np.full((n, K), 0.5)])
    return PrefixFeatures(patterns=pats, scores=scores)


def compress(X: PrefixFeatures, y: np.ndarray):
    """Distinct (pattern, label) rows with counts, as the selector builds them."""
    key = X.patterns[-1] * 1000 + np.unique(y, return_inverse=True)[1]
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    W = X.take(first)
    W.weight = counts.astype(float)
    return W, y[first]


# -- isotonic ---------------------------------------------------------------------------------
@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), n=st.integers(1, 80), levels=st.integers(1, 12),
       soft=st.booleans())
def test_isotonic_equals_sklearn_thresholds(seed, n, levels, soft):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, levels, n) / 7.0            # many ties
    y = rng.random(n) if soft else (rng.random(n) < 0.5).astype(float)
    ours = IsotonicMap().fit(x, y)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x, y)
    assert np.array_equal(ours.x_, ref.X_thresholds_)
    np.testing.assert_allclose(ours.y_, ref.y_thresholds_, rtol=0, atol=1e-14)
    probe = np.linspace(-0.5, levels / 7.0 + 0.5, 50)
    np.testing.assert_allclose(ours.predict(probe), ref.predict(probe), rtol=0, atol=1e-14)


def test_isotonic_pools_sub_resolution_inputs_like_sklearn():
    # Steps below np.finfo(float).resolution are pooled relative to the run's first value.
    base = 0.3
    x = np.array([base, base + 4e-16, base + 8e-16, base + 1.2e-15, 0.9, 0.1])
    y = np.array([0.0, 1.0, 1.0, 0.2, 1.0, 0.0])   # pooled first: (0+1+1)/3, then PAVA with 0.2
    ours = IsotonicMap().fit(x, y)
    ref = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(x, y)
    assert np.array_equal(ours.x_, ref.X_thresholds_)
    np.testing.assert_allclose(ours.y_, ref.y_thresholds_, atol=1e-15)


def test_isotonic_weights_equal_repeated_rows():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 6, 30).astype(float)
    y = rng.random(30)
    w = rng.integers(1, 5, 30)
    ours = IsotonicMap().fit(x, y, w.astype(float))
    rep = IsotonicRegression(y_min=0, y_max=1, out_of_bounds="clip").fit(np.repeat(x, w), np.repeat(y, w))
    assert np.array_equal(ours.x_, rep.X_thresholds_)
    np.testing.assert_allclose(ours.y_, rep.y_thresholds_, atol=1e-12)


# -- ridge ------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_ridge_closed_form_equals_sklearn(seed):
    rng = np.random.default_rng(seed)
    n, p = rng.integers(5, 200), rng.integers(1, 30)
    F = rng.random((n, p))
    F[:, 0] = 0.5                                   # a constant feature
    y = rng.random(n)
    coef, b = ridge_fit(F, y, 1.0)
    ref = Ridge(alpha=1.0).fit(F, y)
    np.testing.assert_allclose(coef, ref.coef_, atol=1e-10)
    assert b == pytest.approx(ref.intercept_, abs=1e-10)
    w = rng.integers(1, 4, n).astype(float)
    coef_w, b_w = ridge_fit(F, y, 1.0, w)
    ref_w = Ridge(alpha=1.0).fit(np.repeat(F, w.astype(int), axis=0), np.repeat(y, w.astype(int)))
    np.testing.assert_allclose(coef_w, ref_w.coef_, atol=1e-10)
    assert b_w == pytest.approx(ref_w.intercept_, abs=1e-10)



@pytest.mark.parametrize("order", ["C", "F"])
def test_ridge_unit_weights_equal_weighted_form_bit_for_bit(order):
    """Unit weights skip the weights' multiply (a general BLAS product on the centred
    features twice): the normal equations equal the weighted form's with w = 1 bit for bit,
    for row- and column-major features (a symmetric product would round differently)."""
    from fcps_core.families._linear import _normal_equations
    rng = np.random.default_rng(3)
    F = np.asarray(rng.standard_normal((3000, 31)) * rng.random(31), order=order)
    y = rng.random(3000)
    unit = _normal_equations(F, y, 1.0, None)
    ones = _normal_equations(F, y, 1.0, np.ones(3000))
    for a, b in zip(unit, ones):
        np.testing.assert_array_equal(a, b)

# -- logistic ---------------------------------------------------------------------------------
def _stationarity(F, y, w, coef, b, C=1.0):
    z = F @ coef + b
    p = 1 / (1 + np.exp(-z))
    return max(np.max(np.abs(F.T @ (w * (p - y)) + coef / C)), abs(np.sum(w * (p - y))))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("soft", [False, True])
def test_newton_logistic_is_the_sklearn_optimum(seed, soft):
    rng = np.random.default_rng(seed)
    n, p = int(rng.integers(20, 300)), int(rng.integers(1, 29))
    F = rng.random((n, p))
    y = np.clip(F[:, 0] + 0.3 * rng.standard_normal(n), 0, 1) if soft else \
        (rng.random(n) < F[:, 0]).astype(float)
    coef, b = logistic_fit(F, y, 1.0)
    w1 = np.ones(n)
    # The exact optimum: stationarity to rounding ...
    assert _stationarity(F, y, w1, coef, b) < 1e-6
    # ... equal to sklearn solved tightly (weighted duplication for soft labels) ...
    if soft:
        FF, tt, ww = np.vstack([F, F]), np.r_[np.ones(n), np.zeros(n)], np.r_[y, 1 - y]
        keep = ww > 0
        ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(FF[keep], tt[keep], sample_weight=ww[keep])
    else:
        ref = LogisticRegression(C=1.0, tol=1e-12, max_iter=10000).fit(F, y)
    p_ours = 1 / (1 + np.exp(-(F @ coef + b)))
    p_ref = ref.predict_proba(F)[:, 1]
    np.testing.assert_allclose(p_ours, p_ref, atol=1e-6)
    # ... and never worse than sklearn's default-tolerance answer.
    default = LogisticRegression(C=1.0, max_iter=1000).fit(F, (y > 0.5).astype(float)) if not soft else None
    if default is not None:
        assert logistic_objective(F, y, w1, coef, b, 1.0) <= \
            logistic_objective(F, y, w1, default.coef_[0], default.intercept_[0], 1.0) + 1e-9


def test_logistic_weights_equal_repeated_rows():
    rng = np.random.default_rng(7)
    F = rng.random((40, 5))
    y = (rng.random(40) < 0.4).astype(float)
    w = rng.integers(1, 6, 40)
    c_w, b_w = logistic_fit(F, y, 1.0, w.astype(float))
    c_r, b_r = logistic_fit(np.repeat(F, w, axis=0), np.repeat(y, w), 1.0)
    np.testing.assert_allclose(c_w, c_r, atol=1e-9)
    assert b_w == pytest.approx(b_r, abs=1e-9)


def test_logistic_separable_data_stays_finite():
    F = np.array([[0.0], [0.0], [1.0], [1.0]])
    y = np.array([0.0, 0.0, 1.0, 1.0])
    coef, b = logistic_fit(F, y, 1.0)
    assert np.all(np.isfinite(coef)) and np.isfinite(b)
    assert _stationarity(F, y, np.ones(4), coef, b) < 1e-6


# -- Dawid-Skene EM ---------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_em_on_distinct_votes_equals_row_level_em(seed):
    rng = np.random.default_rng(seed)
    n, K = 500, int(rng.integers(1, 6))
    truth = rng.random(n) < 0.6
    acc = rng.uniform(0.55, 0.9, K)
    votes = np.where(rng.random((n, K)) < acc, truth[:, None], ~truth[:, None]).astype(float)
    votes[rng.random((n, K)) < 0.1] = 0.5             # abstentions
    dv, count = distinct_votes(votes, np.ones(n))
    assert count.sum() == n and len(count) <= 3 ** K
    prior, w1, w0, _ = em_fit(dv, count)
    X = PrefixFeatures(patterns=[np.zeros(n, dtype=np.int64)] * K, scores=votes)
    ref = RefDSJury().fit(X, truth.astype(float))
    assert prior == pytest.approx(ref.prior, abs=1e-9)
    np.testing.assert_allclose(w1, ref.w1, atol=1e-9)
    np.testing.assert_allclose(w0, ref.w0, atol=1e-9)


# -- every family: count weights and the reference -------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(3))
def test_weighted_distinct_rows_equal_expanded_rows(family, seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 4))
    X = random_features(rng, 150, K)
    y = (rng.random(150) < 0.3 + 0.4 * X.scores.mean(axis=1)).astype(float)
    y[:10] = 0.5                                      # neutral labels (one-coin leaves them out)
    U = random_features(np.random.default_rng(seed + 50), 60, K)
    W, yw = compress(X, y)
    assert W.n_rows < X.n_rows
    plain = REGISTRY[family]().fit(X, y, U)
    weighted = REGISTRY[family]().fit(W, yw, U)
    probe = random_features(np.random.default_rng(seed + 99), 80, K)
    np.testing.assert_allclose(weighted.predict(probe), plain.predict(probe), atol=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("seed", range(3))
def test_family_equals_reference_implementation(family, seed):
    rng = np.random.default_rng(seed)
    K = int(rng.integers(1, 5))
    X = random_features(rng, 200, K, alphabet=4)
    y = (rng.random(200) < 0.2 + 0.6 * X.scores[:, 0]).astype(float)
    U = random_features(np.random.default_rng(seed + 7), 100, K, alphabet=4)
    probe = random_features(np.random.default_rng(seed + 8), 120, K, alphabet=5)  # unseen cells
    for params in REGISTRY[family].grid():
        ours = REGISTRY[family](**params).fit(X, y, U if REGISTRY[family].uses_unlabelled else None)
        ref = reference_model(family, params, logistic_tol=1e-12).fit(
            X, y, U if REGISTRY[family].uses_unlabelled else None)
        tol = 1e-6 if "logistic" in family or family == "residual" else 1e-12
        np.testing.assert_allclose(ours.predict(probe), ref.predict(probe), atol=tol)


def test_table_fallbacks_equal_reference():
    rng = np.random.default_rng(3)
    X = random_features(rng, 100, 4, alphabet=4)
    y = rng.random(100)
    probe = random_features(np.random.default_rng(4), 100, 4, alphabet=5)
    for fallback in ("global", "lower_prefix"):
        for alpha in (0.0, 0.5, 3.0):
            ours = REGISTRY["table"](alpha=alpha, fallback=fallback).fit(X, y)
            ref = reference_model("table", {}, {"alpha": alpha, "fallback": fallback}).fit(X, y)
            np.testing.assert_allclose(ours.predict(probe), ref.predict(probe), atol=1e-12)


def test_weighted_diagnostics_equal_row_level():
    rng = np.random.default_rng(5)
    ids = {b: rng.integers(0, 30, n) for b, n in (("M", 200), ("V", 90), ("T", 70))}
    plain = prefix_diagnostics(ids["M"], ids["V"], ids["T"], 81.0)
    dist = {b: np.unique(v, return_counts=True) for b, v in ids.items()}
    weighted = prefix_diagnostics(dist["M"][0], dist["V"][0], dist["T"][0], 81.0,
                                  w_M=dist["M"][1].astype(float), w_V=dist["V"][1].astype(float),
                                  w_T=dist["T"][1].astype(float))
    for k, v in plain.to_dict().items():
        assert weighted.to_dict()[k] == pytest.approx(v, abs=1e-12), k


# -- the whole selection ----------------------------------------------------------------------
CHECK = ("val_mse", "val_nll", "val_risk", "val_se", "test_mse", "test_nll")


def _panel_and_blocks(seed=0, rows=700, judges=4):
    panel = make_regime("mixed", rows=rows, judges=judges, seed=seed, tie_rate=0.1, group_size=2,
                        unlabelled_share=0.2)
    return panel, make_blocks(panel, split="1:2:1:1", seed=seed)


@pytest.mark.parametrize("seed", [0, 1])
def test_selection_compressed_equals_row_level(seed):
    panel, blocks = _panel_and_blocks(seed)
    fast = FCPSSelector(paths=("info_first", "random", "complexity_penalized", "cfps"),
                        seed=seed).fit(panel, blocks)
    slow = FCPSSelector(paths=("info_first", "random", "complexity_penalized", "cfps"),
                        seed=seed, compress=False).fit(panel, blocks)
    assert fast.views is not None and any(v.X.weight is not None for v in fast.views._cache.values())
    assert all(v.X.weight is None for v in slow.views._cache.values())
    assert len(fast.candidates) == len(slow.candidates)
    for a, b in zip(fast.candidates, slow.candidates):
        assert (a.family, a.judge_idx, a.params) == (b.family, b.judge_idx, b.params)
        for k in CHECK:
            assert getattr(a, k) == pytest.approx(getattr(b, k), abs=1e-9), (a.family, k)
        if a.diagnostics:
            for k, v in a.diagnostics.to_dict().items():
                assert v == pytest.approx(b.diagnostics.to_dict()[k], abs=1e-12), k
    assert fast.selected_index == slow.selected_index
    assert fast.regime["quadrant"] == slow.regime["quadrant"]


def test_selection_equals_straightforward_reference_loop():
    panel, blocks = _panel_and_blocks(2, rows=600, judges=4)
    sel = FCPSSelector(seed=2)
    fast = sel.fit(panel, blocks)
    ref = reference_candidates(panel, blocks, sel, logistic_tol=1e-12)
    assert len(ref) == len(fast.candidates)
    for c, r in zip(fast.candidates, ref):
        assert (c.family, c.judge_idx, c.K) == (r["family"], r["judges"], r["K"])
        tol = 1e-6 if "logistic" in c.family or c.family == "residual" else 1e-12
        if c.family == "ds_jury":
            tol = 1e-6      # its nested EM's products run in single precision (ds_em.PRODUCT_DTYPE)
        for k in ("val_mse", "val_nll", "test_mse", "test_nll"):
            assert getattr(c, k) == pytest.approx(r[k], abs=tol), (c.family, k)
        if c.diagnostics:
            for k, v in r["diagnostics"].to_dict().items():
                assert c.diagnostics.to_dict()[k] == pytest.approx(v, abs=1e-12), k
    best = min(range(len(ref)), key=lambda i: (ref[i]["val_risk"], ref[i]["K"],
                                               REGISTRY[ref[i]["family"]].complexity_rank, i))
    assert fast.selected_index == best


def test_continuous_judges_are_not_compressed_and_match_row_level():
    rng = np.random.default_rng(0)
    from fcps_core.data.panel import Panel, build_judge_column
    n = 400
    y = (rng.random(n) < 0.5).astype(float)
    cols = [build_judge_column("c1", [f"{v:.4f}" for v in y * 0.3 + rng.random(n)]),
            build_judge_column("d1", list(np.where(rng.random(n) < 0.7, np.where(y > 0, "A", "B"), "tie")),
                               schema="pairwise")]
    ids = np.array([f"i{i}" for i in range(n)], dtype=object)
    panel = Panel(item_ids=ids, group_ids=ids.copy(), labels=y, judges=cols)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    fast = FCPSSelector().fit(panel, blocks)
    slow = FCPSSelector(compress=False).fit(panel, blocks)
    for a, b in zip(fast.candidates, slow.candidates):
        for k in CHECK:
            assert getattr(a, k) == pytest.approx(getattr(b, k), abs=1e-9)
    # A prefix holding the continuous judge keeps its raw rows.
    cont = [k for k, v in fast.views._cache.items() if 0 in k[0]]
    assert cont and all(fast.views._cache[k].X.weight is None for k in cont)


def test_selection_is_deterministic():
    panel, blocks = _panel_and_blocks(3)
    a = FCPSSelector(seed=3).fit(panel, blocks).to_dict()
    b = FCPSSelector(seed=3).fit(panel, blocks).to_dict()
    a.pop("timings"), b.pop("timings")
    assert a == b


@pytest.mark.parametrize("family", FAMILIES)
def test_fit_path_equals_fitting_each_prefix(family, monkeypatch):
    """Every prefix from one fit_path/predict_path call equals that prefix fitted and
    predicted on its own (ds_jury's nested EM with double-precision products: the
    single-precision default is bounded in test_pool_speed.py)."""
    from fcps_core.families import ds_em
    monkeypatch.setattr(ds_em, "PRODUCT_DTYPE", np.float64)
    cls = REGISTRY[family]
    rng = np.random.default_rng(21)
    K = 6
    X = random_features(rng, 300, K)
    y = (rng.random(300) < 0.2 + 0.6 * X.scores[:, :3].mean(axis=1)).astype(float)
    U = random_features(np.random.default_rng(22), 120, K)
    probe = random_features(np.random.default_rng(23), 200, K)
    W, yw = compress(X, y)
    sizes = [1, 2, 4, 5, 6]
    for params in cls.grid():
        for feats, labels in ((X, y), (W, yw)):
            unl = U if cls.uses_unlabelled else None
            models = cls.fit_path(feats, labels, unl, sizes, **params)
            batch = cls.predict_path(models, sizes, probe)
            for i, K_ in enumerate(sizes):
                alone = cls(**params).fit(feats.first(K_), labels, None if unl is None else unl.first(K_))
                p_alone = alone.predict(probe.first(K_))
                np.testing.assert_array_equal(batch[:, i], models[i].predict(probe.first(K_)))
                tol = 1e-7 if "logistic" in family else 1e-9
                np.testing.assert_allclose(batch[:, i], p_alone, atol=tol)



@pytest.mark.parametrize("family", ["backoff", "residual"])
def test_grid_sharing_equals_separate_fits(family):
    rng = np.random.default_rng(14)
    X = random_features(rng, 150, 3)
    y = (rng.random(150) < X.scores.mean(axis=1)).astype(float)
    W, yw = compress(X, y)
    grid = REGISTRY[family].grid()
    probe = random_features(np.random.default_rng(15), 60, 3, alphabet=4)
    for data in ((X, y), (W, yw)):
        shared = REGISTRY[family].fit_grid(grid, *data, None)
        for params, model in zip(grid, shared):
            alone = REGISTRY[family](**params).fit(*data, None)
            assert np.array_equal(model.predict(probe), alone.predict(probe))
            assert model.get_state() == alone.get_state()


def test_dense_ids_equal_numpy_unique_rows():
    from fcps_core.measures.judge_paths import dense_ids, extend_ids
    rng = np.random.default_rng(16)
    for n, k, a in ((1, 1, 2), (50, 3, 4), (500, 5, 3), (300, 2, 40)):
        codes = rng.integers(-1, a, size=(n, k))
        ref = np.unique(codes, axis=0, return_inverse=True)[1].reshape(-1)
        assert np.array_equal(dense_ids(codes), ref)
        big = rng.integers(0, 2 ** 40, n)              # a key range too large for counting
        assert np.array_equal(extend_ids(big, codes[:, 0]),
                              np.unique(big * (codes[:, 0].max() + 2) + codes[:, 0] + 1,
                                        return_inverse=True)[1].reshape(-1))


def test_grouping_by_counting_equals_unique():
    from fcps_core.selection.views import group_rows
    rng = np.random.default_rng(17)
    for bound in (1, 7, 1000, 1 << 30):
        key = rng.integers(0, bound, 500)
        pos, counts, inverse = group_rows(key, bound)
        uniq, ref_inverse, ref_counts = np.unique(key, return_inverse=True, return_counts=True)
        assert np.array_equal(key[pos], uniq) and np.array_equal(counts, ref_counts)
        assert np.array_equal(inverse, ref_inverse.reshape(-1))


def test_wide_real_panel_raw_rows_equal_distinct_rows():
    """LLMBar (65 judges): calibrated scores must not depend on a row's position. A BLAS
    product can give identical rows scores an ulp apart (|score| ~ 28 at K=15, an ulp above
    sklearn's 1e-15 pooling), which splits isotonic ties; and vote codes must stay exact
    for K >= 34. Raw rows and distinct rows must then give the same candidates."""
    from pathlib import Path
    from fcps_core import read_panel
    panel = read_panel(str(Path(__file__).resolve().parents[1] / "data" / "llmbar.csv"))
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    kw = dict(families=["one_coin_iso", "ds_jury", "ridge_iso"], paths=["info_first", "random"])
    fast = FCPSSelector(**kw).fit(panel, blocks)
    slow = FCPSSelector(compress=False, **kw).fit(panel, blocks)
    for a, b in zip(fast.candidates, slow.candidates):
        for k in CHECK:
            assert getattr(a, k) == pytest.approx(getattr(b, k), abs=1e-9), (a.family, a.K, k)


def test_distinct_votes_are_exact_for_wide_prefixes():
    """Vote-pattern codes must not collide when 3**K exceeds 2**53 (K >= 34)."""
    rng = np.random.default_rng(19)
    K = 38
    rows = rng.choice([0.0, 0.5, 1.0], size=(300, K))
    rows[1] = rows[0]
    rows[1, 0] = 1.0 - rows[0, 0] if rows[0, 0] != 0.5 else 1.0   # differs only in judge 0
    votes, count = distinct_votes(rows, np.ones(300))
    ref = np.unique(np.hstack([(rows > 0.5), (rows < 0.5)]), axis=0)
    assert len(count) == len(ref) and count.sum() == 300


def test_prefix_dots_equal_rowwise_dot_bit_for_bit():
    from fcps_core.families.base import prefix_dots, rowwise_dot
    rng = np.random.default_rng(31)
    A = rng.random((257, 9))
    sizes = [1, 3, 4, 9]
    coefs = [rng.normal(size=k) for k in sizes]
    starts = rng.normal(size=len(sizes))
    Z = prefix_dots(A, coefs, starts)
    for m, k in enumerate(sizes):
        assert np.array_equal(Z[:, m], rowwise_dot(A[:, :k], coefs[m], starts[m]))


def test_selection_keeps_no_per_prefix_views_beyond_table_size():
    """Memory: the scalar families read one path's views at a time, so the selection keeps
    per-prefix views only for table-sized prefixes (table-like families, diagnostics) and
    for prefixes short enough to have few distinct rows (3 pairwise levels x 2 labels)."""
    panel = make_regime("additive", rows=600, judges=14, seed=4)
    blocks = make_blocks(panel, split="1:2:1:1", seed=4)
    result = FCPSSelector(seed=4, table_k_max=3).fit(panel, blocks)
    assert max(c.K for c in result.candidates) == 14
    kept = result.views._cache
    assert kept and all(len(judges) <= 3 for judges, _, kind in kept if kind == "table")
    assert max(len(judges) for judges, _, _ in kept) < 14
    assert all(v.X.n_rows <= 2 * 3 ** len(judges) for (judges, _, kind), v in kept.items() if kind == "scalar")


def test_lockstep_em_equals_one_problem_at_a_time():
    """em_fit_batched: problems of different widths and sizes, padded and run in lockstep,
    each with its own stopping point, equal em_fit on its own."""
    from fcps_core.families.ds_jury import em_fit_batched
    rng = np.random.default_rng(11)
    problems = []
    for K in (1, 3, 2, 5, 4, 7):
        n = int(rng.integers(30, 400))
        truth = rng.random(n) < 0.5
        votes = np.where(rng.random((n, K)) < rng.uniform(0.5, 0.9, K), truth[:, None],
                         ~truth[:, None]).astype(float)
        votes[rng.random((n, K)) < 0.15] = 0.5
        problems.append(distinct_votes(votes, rng.integers(1, 4, n).astype(float)))
    problems.append(distinct_votes(np.ones((50, 2)), np.ones(50)))     # stops at once
    for (votes, count), (prior, w1, w0, t) in zip(problems, em_fit_batched(problems)):
        p1, a1, b1, t1 = em_fit(votes, count)
        assert prior == pytest.approx(p1, abs=1e-9)
        np.testing.assert_allclose(w1, a1, atol=1e-9)
        np.testing.assert_allclose(w0, b1, atol=1e-9)
        np.testing.assert_allclose(t, t1, atol=1e-9)
