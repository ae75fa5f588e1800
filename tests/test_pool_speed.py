"""Large judge pools (issue 15): the fast EM paths equal the plain ones.

* ``em_fit_nested`` (every prefix of a path in lockstep on BLAS-3 products, in chunks, on
  threads) with double-precision products equals ``em_fit`` on each prefix alone: the same
  iterates up to rounding, so the same parameters and posteriors to 1e-12, with
  abstentions, row counts, EMs that stop at once, EMs that stop at their iteration cap on
  a flat likelihood, and caps at every step;
* with its default single-precision products it stays near them: iterates within 1e-3 on
  a flat likelihood at the cap, and every ds_jury candidate's validation MSE within the
  large-pools issue's 1e-3 of each prefix fitted alone;
* the chunks and threads do not change a bit; the threads follow the process's budget;
* ``DawidSkeneJury.fit_paths`` through the nested EMs equals each prefix fitted alone;
* ``_log1p_exp`` is ``np.logaddexp(0, x)`` within two ulps;
* the path fits run BLAS on one thread and give the thread count back.
"""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.families import REGISTRY, PrefixFeatures
from fcps_core.families import ds_em, ds_jury
from fcps_core.families.ds_em import distinct_votes, em_fit, em_fit_batched, em_fit_nested


def panel(rng, n, K, *, acc=(0.55, 0.9), abstain=0.0, weights=False):
    """Binary votes of K judges on n rows (0.5 = abstention or missing output)."""
    truth = rng.random(n) < 0.5
    a = rng.uniform(*acc, K)
    scores = np.where(rng.random((n, K)) < a, truth[:, None], ~truth[:, None]).astype(float)
    if abstain:
        scores[rng.random((n, K)) < abstain] = 0.5
    w = rng.integers(1, 4, n).astype(float) if weights else np.ones(n)
    return scores, w


def _path_job(rng, n: int, K: int) -> tuple:
    """One ds_jury path-fit job on a random panel of ``n`` rows and ``K`` judges (5 %
    abstentions) with 80 unlabelled rows: (X, y, U, every prefix size)."""
    scores, _ = panel(rng, n, K, abstain=0.05)
    y = (rng.random(n) < 0.5).astype(float)
    X = PrefixFeatures(patterns=[None] * K, scores=scores)
    U = PrefixFeatures(patterns=[None] * K, scores=panel(rng, 80, K, abstain=0.05)[0])
    return X, y, U, list(range(1, K + 1))


def assert_same_em(got, want, tol=1e-12):
    prior, w1, w0, t = got
    p1, a1, b1, t1 = want
    assert prior == pytest.approx(p1, rel=tol, abs=tol)
    np.testing.assert_allclose(w1, a1, rtol=tol, atol=tol)
    np.testing.assert_allclose(w0, b1, rtol=tol, atol=tol)
    np.testing.assert_allclose(t, t1, rtol=0, atol=tol)


CASES = [
    # (rows, judges, abstention rate, row counts, max_iter)
    (300, 12, 0.0, False, 200),
    (300, 12, 0.1, True, 200),
    (250, 9, 0.3, True, 7),          # every EM at its cap
    (400, 15, 0.0, True, 1),
]


@pytest.mark.parametrize("n, K, abstain, weights, max_iter", CASES)
def test_nested_em_equals_em_fit_on_each_prefix(n, K, abstain, weights, max_iter):
    rng = np.random.default_rng(n + K)
    scores, w = panel(rng, n, K, abstain=abstain, weights=weights)
    votes, count = distinct_votes(scores, w)
    sizes = list(range(1, K + 1))
    nested = em_fit_nested(votes, count, sizes, max_iter=max_iter, dtype=np.float64)
    for K_, got in zip(sizes, nested):
        # on the path's rows, as the nested EM runs it ...
        assert_same_em(got, em_fit(votes[:, :2 * K_], count, max_iter=max_iter))
        # ... and on the prefix's own distinct patterns, as the per-prefix fit runs it
        pv, pc = distinct_votes(scores[:, :K_], w)
        alone = em_fit(pv, pc, max_iter=max_iter)
        np.testing.assert_allclose(got[1], alone[1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got[2], alone[2], rtol=1e-12, atol=1e-12)


def test_nested_em_with_abstentions_after_full_judges():
    """Judges 1-4 vote on every row, later ones abstain: the short prefixes read the 1-votes
    alone, the long ones both indicators; sizes out of order and with gaps."""
    rng = np.random.default_rng(5)
    scores, w = panel(rng, 300, 10, weights=True)
    scores[rng.random(300) < 0.2, 4:] = 0.5
    votes, count = distinct_votes(scores, w)
    sizes = [9, 2, 4, 5, 10, 1, 7]
    for K_, got in zip(sizes, em_fit_nested(votes, count, sizes, dtype=np.float64)):
        assert_same_em(got, em_fit(votes[:, :2 * K_], count))


@pytest.mark.parametrize("abstain", [0.0, 0.05])
def test_nested_em_at_the_iteration_cap_on_a_flat_likelihood(abstain):
    """Additive-style judges (independent of one another and weakly informative): EM crawls
    and stops at its cap; the nested iterates still equal em_fit's at every cap, including
    prefixes that converge exactly at the last step allowed."""
    rng = np.random.default_rng(8)
    scores, w = panel(rng, 600, 30, acc=(0.5, 0.56), abstain=abstain)
    votes, count = distinct_votes(scores, w)
    sizes = [1, 2, 3, 10, 20, 25, 30]
    for max_iter in (1, 2, 3, 5, 8, 13, 200):
        for K_, got in zip(sizes, em_fit_nested(votes, count, sizes, max_iter=max_iter, dtype=np.float64)):
            assert_same_em(got, em_fit(votes[:, :2 * K_], count, max_iter=max_iter), tol=1e-11)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_chunks_and_threads_do_not_change_a_bit(monkeypatch, dtype):
    rng = np.random.default_rng(9)
    scores, w = panel(rng, 300, 14, abstain=0.05, weights=True)
    votes, count = distinct_votes(scores, w)
    sizes = list(range(1, 15))
    monkeypatch.setattr(ds_em, "_em_threads", lambda: 1)
    monkeypatch.setattr(ds_em, "NESTED_CHUNK", 3)
    serial = em_fit_nested(votes, count, sizes, dtype=dtype)
    monkeypatch.setattr(ds_em, "_em_threads", lambda: 2)
    threaded = ds_em.em_fit_nested_many([(votes, count, sizes), (votes[:, :10], count, [5, 3])], dtype=dtype)
    for a, b in zip(serial, threaded[0]):
        assert a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            assert np.array_equal(x, y)
    if dtype is np.float32:
        return
    for K_, got in zip([5, 3], threaded[1]):
        assert_same_em(got, em_fit(votes[:, :2 * K_], count))
    monkeypatch.setattr(ds_em, "NESTED_CHUNK", 48)
    for a, b in zip(serial, em_fit_nested(votes, count, sizes, dtype=dtype)):
        np.testing.assert_allclose(a[1], b[1], rtol=1e-12, atol=1e-12)


def test_em_threads_follow_the_process_budget(monkeypatch):
    """Two threads at most; one in a process started with one BLAS/OpenMP thread (joblib's
    workers for the cross-fitted folds)."""
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr(ds_em.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    assert ds_em._em_threads() == ds_em.EM_THREADS == 2
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert ds_em._em_threads() == 1
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "")
    monkeypatch.setattr(ds_em.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert ds_em._em_threads() == 1


@pytest.mark.parametrize("batch_cells", [ds_jury.BATCH_CELLS, 1])
def test_fit_paths_through_nested_ems_equal_each_prefix_alone(monkeypatch, batch_cells):
    """fit_paths with every prefix on the nested EMs (batch_cells=1), or split between the
    sparse lockstep EMs and the nested ones, equals each prefix fitted on its own (the
    nested products in double precision)."""
    monkeypatch.setattr(ds_jury, "BATCH_CELLS", batch_cells)
    monkeypatch.setattr(ds_em, "NESTED_CHUNK", 4)
    monkeypatch.setattr(ds_em, "PRODUCT_DTYPE", np.float64)
    rng = np.random.default_rng(12)
    jobs, probes = [], []
    for n, K in ((200, 8), (150, 11)):
        jobs.append(_path_job(rng, n, K))
        probes.append(PrefixFeatures(patterns=[None] * K, scores=panel(rng, 60, K, abstain=0.1)[0]))
    cls = REGISTRY["ds_jury"]
    for (X, y, U, sizes), models, probe in zip(jobs, cls.fit_paths(jobs), probes):
        batch = cls.predict_path(models, sizes, probe)
        for i, K in enumerate(sizes):
            alone = cls().fit(X.first(K), y, U.first(K))
            np.testing.assert_allclose(models[i].w1_, alone.w1_, rtol=1e-11, atol=1e-11)
            np.testing.assert_allclose(models[i].w0_, alone.w0_, rtol=1e-11, atol=1e-11)
            np.testing.assert_allclose(batch[:, i], alone.predict(probe.first(K)), atol=1e-9)


def test_single_precision_products_stay_near_double_on_a_flat_likelihood():
    """Forty weakly informative judges: every long prefix crawls to its 200-step cap, where
    rounding differences grow most. The float32 products' iterates stay within 1e-3 of the
    float64 ones (measured: 3e-6 here; 7.6e-4 on 2,000 x 200 additive judges)."""
    rng = np.random.default_rng(31)
    scores, w = panel(rng, 500, 40, acc=(0.5, 0.56), abstain=0.05)
    votes, count = distinct_votes(scores, w)
    sizes = [10, 20, 30, 40]
    single = em_fit_nested(votes, count, sizes)
    double = em_fit_nested(votes, count, sizes, dtype=np.float64)
    assert ds_em.PRODUCT_DTYPE is np.float32
    moved = max(np.abs(a[3] - b[3]).max() for a, b in zip(single, double))
    assert 0 < moved < 1e-3          # single precision does round (so this tests its path)
    for a, b in zip(single, double):
        np.testing.assert_allclose(a[1], b[1], atol=1e-3)
        np.testing.assert_allclose(a[2], b[2], atol=1e-3)


@pytest.mark.parametrize("acc", [(0.5, 0.56), (0.55, 0.9)])
def test_ds_jury_validation_mse_within_the_issue_bound(acc):
    """The large-pools issue's check on small pools: every ds_jury candidate of a path
    (default single-precision nested EMs) has a validation MSE within 1e-3 of the same
    prefix fitted alone (double-precision em_fit), on a flat and on an informative pool."""
    rng = np.random.default_rng(41)
    K = 30
    truth = rng.random(900) < 0.5
    a = rng.uniform(*acc, K)
    scores = np.where(rng.random((900, K)) < a, truth[:, None], ~truth[:, None]).astype(float)
    y = truth.astype(float)
    fit, rest, val = np.split(np.arange(900), [300, 600])
    X, U, V = (PrefixFeatures(patterns=[None] * K, scores=scores[r]) for r in (fit, rest, val))
    sizes = list(range(1, K + 1))
    cls = REGISTRY["ds_jury"]
    models = cls.fit_paths([(X, y[fit], U, sizes)])[0]
    path_pred = cls.predict_path(models, sizes, V)
    for i, K_ in enumerate(sizes):
        alone = cls().fit(X.first(K_), y[fit], U.first(K_)).predict(V.first(K_))
        mse_path = float(np.mean((path_pred[:, i] - y[val]) ** 2))
        mse_alone = float(np.mean((alone - y[val]) ** 2))
        assert abs(mse_path - mse_alone) <= 1e-3, K_


def test_log1p_exp_is_logaddexp_within_two_ulps():
    x = np.concatenate([np.random.default_rng(1).normal(size=20_000) * 30,
                        [0.0, -0.0, 1e-300, -1e-300, 709.0, 800.0, -800.0, np.inf, -np.inf]])
    got, want = ds_em._log1p_exp(x), np.logaddexp(0.0, x)
    finite = np.isfinite(want)
    assert np.array_equal(got[~finite], want[~finite])
    assert np.all(np.abs(got[finite] - want[finite]) <= 2 * np.spacing(np.abs(want[finite])))


def test_path_fits_run_blas_on_one_thread_and_restore_it():
    from threadpoolctl import threadpool_info

    from fcps_core.selection import path_fits

    def blas_threads():
        return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]

    before = blas_threads()
    seen = []
    probe = path_fits.one_blas_thread(lambda: seen.append(blas_threads()))
    probe()
    assert seen and all(t == 1 for t in seen[0])
    assert blas_threads() == before


def test_small_pages_switches_numpy_advice_off_and_restores_it():
    from fcps_core.families.base import _hugepage_switch, small_pages

    switch = _hugepage_switch()
    if switch is None:
        pytest.skip("this numpy has no huge-page switch")
    before = switch(True)
    try:
        seen = []
        with small_pages():
            seen.append(switch(False))          # the setting inside the block (and keep it)
        assert seen == [False]
        assert switch(True) is True             # restored on exit
        with pytest.raises(RuntimeError):
            with small_pages():
                raise RuntimeError("boom")
        assert switch(True) is True             # restored after an error too
        first, second = small_pages(), small_pages()   # overlapping blocks (two threads' fits)
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert switch(False) is False           # still off while the second block runs
        second.__exit__(None, None, None)
        assert switch(True) is True             # restored by the last one out
    finally:
        switch(before)


def test_a_tolerance_below_single_precision_runs_the_nested_em_in_double():
    """float32 steps move u by multiples of 1.2e-7 near 1: a tol under 6e-8 could only stop
    at a standstill, so the runner takes double precision for it."""
    rng = np.random.default_rng(3)
    scores, w = panel(rng, 300, 12)
    votes, count = distinct_votes(scores, w)
    sizes = [4, 8, 12]
    got = em_fit_nested(votes, count, sizes, tol=1e-9)
    want = em_fit_nested(votes, count, sizes, tol=1e-9, dtype=np.float64)
    for a, b in zip(got, want):
        assert a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))


def test_vote_dots_refuses_models_out_of_order():
    from fcps_core.families.fitted import vote_dots

    with pytest.raises(ValueError, match="ordered"):
        vote_dots(np.zeros((3, 3)), [np.ones(3), np.ones(1)], [np.ones(3), np.ones(1)], [0.0, 0.0])


@pytest.mark.parametrize("by_judge_rows", [0, 1024])
def test_vote_dots_equal_rowwise_dot_over_the_vote_matrix_bit_for_bit(monkeypatch, by_judge_rows):
    """ds_jury's log-odds for many prefix models at once (a gather per judge) against the
    plain definition: the interleaved vote indicators times the weights, added column by
    column; scores with abstentions (exactly 1/2) and missing outputs (NaN). Both ways of
    adding: model by model (300 rows above the threshold 0) and judge by judge over all
    models (300 rows under 1,024)."""
    from fcps_core.families import fitted
    from fcps_core.families.base import rowwise_dot
    from fcps_core.families.fitted import vote_dots, vote_matrix

    monkeypatch.setattr(fitted, "VOTE_DOTS_BY_JUDGE_ROWS", by_judge_rows)

    def interleave(w1, w0):          # vote_matrix's column weights: w1_j, w0_j per judge
        out = np.empty(2 * len(w1))
        out[0::2], out[1::2] = w1, w0
        return out

    rng = np.random.default_rng(17)
    scores = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0, np.nan], size=(300, 9))
    sizes = [1, 2, 5, 5, 9]
    w1 = [rng.normal(size=K) * 3 for K in sizes]
    w0 = [rng.normal(size=K) * 3 for K in sizes]
    starts = rng.normal(size=len(sizes))
    got = vote_dots(scores, w1, w0, starts)
    for m, K in enumerate(sizes):
        want = rowwise_dot(vote_matrix(scores[:, :K]), interleave(w1[m], w0[m]), starts[m])
        assert np.array_equal(got[:, m], want)


def _same_model(a, b) -> bool:
    return (a.prior_logit_ == b.prior_logit_ and a.orientation_ == b.orientation_ and a.ybar_ == b.ybar_
            and all(np.array_equal(x, y) for x, y in ((a.w1_, b.w1_), (a.w0_, b.w0_), (a.iso_.x_, b.iso_.x_),
                                                       (a.iso_.y_, b.iso_.y_))))


@pytest.mark.parametrize("batch_cells", [ds_jury.BATCH_CELLS, 1])
def test_fit_paths_keep_makes_the_kept_models_bit_for_bit(monkeypatch, batch_cells):
    """``keep`` (a refit restricted to some candidates) makes only the kept prefixes' models,
    each bit for bit the one made without it: the lockstep batches and nested chunks are
    formed from every size (a kept prefix alone in its batch still runs in lockstep, a chunk
    with a kept prefix runs whole), the default single-precision nested products included;
    the other entries are None, and a chunk with no kept prefix is not run."""
    monkeypatch.setattr(ds_jury, "BATCH_CELLS", batch_cells)
    monkeypatch.setattr(ds_em, "NESTED_CHUNK", 3)
    rng = np.random.default_rng(17)
    jobs = [_path_job(rng, n, K) for n, K in ((200, 9), (150, 12))]
    cls = REGISTRY["ds_jury"]
    every = cls.fit_paths(jobs)
    chunks = []
    original = ds_em._em_chunk
    monkeypatch.setattr(ds_em, "_em_chunk", lambda *a, **k: chunks.append(a[7]) or original(*a, **k))
    keep = [{2, 7}, {1, 11, 12}]
    some = cls.fit_paths(jobs, keep=keep)
    for (_, _, _, sizes), kept, full, part in zip(jobs, keep, every, some):
        for K, a, b in zip(sizes, full, part):
            if K in kept:
                assert _same_model(a, b)
            else:
                assert b is None
    if batch_cells == 1:            # every prefix nested: only the chunks holding 2, 7, 1, 11, 12 ran
        assert sorted(tuple(int(k) for k in c) for c in chunks) == [(1, 2, 3), (1, 2, 3), (7, 8, 9), (10, 11, 12)]


def test_batched_run_flags_leave_the_flagged_results_alone():
    """em_fit_batched with ``run``: the flagged problems' results are bit for bit the ones of
    the whole run (a flagged problem alone among its batch's still runs in lockstep, at the
    batch's width), the others None."""
    rng = np.random.default_rng(5)
    problems = [distinct_votes(*panel(rng, int(rng.integers(20, 90)), int(rng.integers(1, 7)), abstain=0.1,
                                      weights=True)) for _ in range(10)]
    whole = em_fit_batched(problems)
    run = [i in (3, 8) for i in range(len(problems))]
    part = em_fit_batched(problems, run=run)
    for flag, a, b in zip(run, whole, part):
        if flag:
            assert a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))
        else:
            assert b is None
