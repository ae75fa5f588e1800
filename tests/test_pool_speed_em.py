"""Large judge pools (issue 15): the Dawid-Skene runners' shortcuts leave the iterates alone.

* ``em_fit_many`` rebuilds its lockstep operators over the problems still running: every
  problem's result is bit for bit what it gets in any other batch, and em_fit's to 1e-12,
  when its batch mates stop at once, late, or at the cap;
* the nested EM's arithmetic (posteriors kept doubled, weights as logs of ratios, prior and
  totals inside the products) gives em_fit's iterates on wide paths with abstentions and at
  every iteration cap (its products in double precision; test_pool_speed.py bounds the
  default single-precision ones).
"""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.families.ds_em import distinct_votes, em_fit, em_fit_batched, em_fit_many, em_fit_nested


def votes_of(rng, n, K, *, acc=(0.55, 0.9), abstain=0.0):
    truth = rng.random(n) < 0.5
    a = rng.uniform(*acc, K)
    scores = np.where(rng.random((n, K)) < a, truth[:, None], ~truth[:, None]).astype(float)
    if abstain:
        scores[rng.random((n, K)) < abstain] = 0.5
    return distinct_votes(scores, rng.integers(1, 4, n).astype(float))


def mixed_problems(seed):
    """Problems that stop at very different steps: clear panels (a few dozen steps), flat
    ones (the cap), one-judge ones (at once)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(12):
        kind = i % 3
        if kind == 0:
            out.append(votes_of(rng, int(rng.integers(20, 120)), int(rng.integers(2, 9)), abstain=0.1))
        elif kind == 1:
            out.append(votes_of(rng, int(rng.integers(20, 120)), int(rng.integers(2, 9)), acc=(0.5, 0.54)))
        else:
            out.append(votes_of(rng, 30, 1))
    return out


def same_bits(a, b):
    return a[0] == b[0] and all(np.array_equal(x, y) for x, y in zip(a[1:], b[1:]))


@pytest.mark.parametrize("max_iter", [1, 3, 40, 200])
def test_lockstep_results_do_not_depend_on_the_batch(max_iter):
    problems = mixed_problems(max_iter)
    together = em_fit_many(problems, max_iter=max_iter)
    for i, (votes, count) in enumerate(problems):
        mate = problems[(i + 1) % len(problems)]
        assert same_bits(together[i], em_fit_many([(votes, count), mate], max_iter=max_iter)[0])
        prior, w1, w0, t = em_fit(votes, count, max_iter=max_iter)
        assert together[i][0] == pytest.approx(prior, abs=1e-12)
        np.testing.assert_allclose(together[i][1], w1, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(together[i][2], w0, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(together[i][3], t, rtol=0, atol=1e-12)


def test_batched_runner_keeps_the_input_order():
    problems = mixed_problems(7)
    got = em_fit_batched(problems)
    for (votes, count), res in zip(problems, got):
        np.testing.assert_allclose(res[1], em_fit(votes, count)[1], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("abstain", [0.0, 0.15])
def test_nested_em_on_a_wide_flat_path(abstain):
    """Sixty weakly informative judges (every long prefix crawls to its cap), some judges
    abstaining: each prefix equals em_fit at several caps."""
    rng = np.random.default_rng(21)
    votes, count = votes_of(rng, 400, 60, acc=(0.5, 0.57), abstain=abstain)
    sizes = [1, 7, 30, 31, 45, 59, 60]
    for max_iter in (1, 2, 17, 200):
        for K, got in zip(sizes, em_fit_nested(votes, count, sizes, max_iter=max_iter, dtype=np.float64)):
            prior, w1, w0, t = em_fit(votes[:, :2 * K], count, max_iter=max_iter)
            assert got[0] == pytest.approx(prior, abs=1e-11)
            np.testing.assert_allclose(got[1], w1, rtol=1e-11, atol=1e-11)
            np.testing.assert_allclose(got[2], w0, rtol=1e-11, atol=1e-11)
            np.testing.assert_allclose(got[3], t, rtol=0, atol=1e-11)
