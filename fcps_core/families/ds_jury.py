"""``ds_jury``: unsupervised Dawid-Skene jury, oriented and isotonic-calibrated
(paper Table tab:jury-baseline).

Model: a latent binary truth T with prior pi; judge j votes 1 with probability
sensitivity_j when T = 1 and votes 0 with probability specificity_j when T = 0; votes are
conditionally independent given T. Votes are scalar scores binarised at 1/2 (1/2 =
abstain). The parameters are fitted by EM (Laplace-smoothed M-step) on the calibration rows
plus **all unlabelled traffic the selector passes** (every row outside M and the research
test block T), without labels. The posterior log-odds is then oriented (its sign is
flipped if it correlates negatively with the calibration labels) and isotonic-calibrated on
the calibration block. Prediction on new rows uses the fitted parameters (no refit).

EM starts from the majority vote; along a judge path (:meth:`DawidSkeneJury.fit_path`)
prefix K starts from prefix K-1's posteriors, which are already close to a fixed point.
Steps are accelerated by SQUAREM (Varadhan & Roland 2008, scheme S3, with the EM step
kept whenever the extrapolation would lower the likelihood), and EM stops when one EM step
moves no row's posterior by ``tol`` or after ``max_iter`` EM steps. DS likelihoods can have
several fixed points (label switching is undone by the orientation step), so a warm start
may end at another one; tests bound the effect on validation risk.
"""

from __future__ import annotations

import numpy as np

from .base import Aggregator, IsotonicMap, prefix_dots, rowwise_dot

MAX_ITER = 200
TOL = 1e-7
_PI_CLIP = 1e-3


def vote_matrix(scores: np.ndarray) -> np.ndarray:
    """(rows, 2K) indicators, interleaved per judge: column 2j = judge j votes 1 (score above
    1/2), column 2j+1 = it votes 0 (below 1/2). A K-prefix's votes are the first 2K
    columns of its path's."""
    out = np.empty((scores.shape[0], 2 * scores.shape[1]))
    np.greater(scores, 0.5, out=out[:, 0::2])
    np.less(scores, 0.5, out=out[:, 1::2])
    return out


def distinct_votes(scores: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of :func:`vote_matrix` with their total weight.

    Rows with the same votes get the same posterior at every EM step, so EM on the distinct
    vote patterns with counts is EM on the rows.
    """
    votes = vote_matrix(scores)
    K = scores.shape[1]
    if K == 0 or len(votes) == 0:
        return votes, np.asarray(weight, float)
    digits = (votes[:, 0::2] + 2 * votes[:, 1::2]).astype(np.int8)
    if K <= 39:                 # exact int64 codes: 3**39 < 2**63
        code = digits.astype(np.int64) @ (3 ** np.arange(K, dtype=np.int64))
        _, first, inv = np.unique(code, return_index=True, return_inverse=True)
    else:                       # wider: distinct rows of the digit matrix
        _, first, inv = np.unique(digits, axis=0, return_index=True, return_inverse=True)
    inv = inv.reshape(-1)
    return votes[first], np.bincount(inv, weights=weight, minlength=len(first))


def majority_start(votes: np.ndarray) -> np.ndarray:
    """Each row's share of 1-votes among its votes (1/2 when it has none): EM's cold start."""
    ones, n_obs = votes[:, 0::2].sum(axis=1), votes.sum(axis=1)
    return np.where(n_obs > 0, ones / np.maximum(n_obs, 1), 0.5)


class _EM:
    """EM map of one DS problem on vote rows with multiplicities; parameters as logits
    theta = (prior logit, logit sensitivity_j, logit specificity_j) so that SQUAREM may
    extrapolate them freely."""

    def __init__(self, votes: np.ndarray, count: np.ndarray):
        self.votes, self.count = votes, count
        self.K = votes.shape[1] // 2
        self.total = float(count.sum())
        self.col = count @ votes                      # count-weighted votes per column

    def m_step(self, t: np.ndarray) -> np.ndarray:
        tw = t * self.count
        s = tw @ self.votes
        a1, a0 = s[0::2], s[1::2]                     # t-weighted 1-votes and 0-votes
        b1, b0 = self.col[0::2] - a1, self.col[1::2] - a0
        pi = min(max(float(tw.sum()) / self.total, _PI_CLIP), 1 - _PI_CLIP)
        # sensitivity = (a1 + 1) / (a1 + a0 + 2), specificity = (b0 + 1) / (b0 + b1 + 2)
        return np.concatenate([[np.log(pi / (1 - pi))], np.log((a1 + 1.0) / (a0 + 1.0)),
                               np.log((b0 + 1.0) / (b1 + 1.0))])

    def weights(self, theta: np.ndarray) -> tuple[float, np.ndarray, np.ndarray]:
        """(prior log-odds, interleaved vote weights, interleaved T=0 log-likelihood terms)."""
        K = self.K
        ls, lp = theta[1:K + 1], theta[K + 1:]
        log_sens, log_spec = -np.logaddexp(0.0, -ls), -np.logaddexp(0.0, -lp)
        log_1sens, log_1spec = log_sens - ls, log_spec - lp     # log(1 - s) = log s - logit s
        w = np.empty(2 * K)
        w[0::2], w[1::2] = log_sens - log_1spec, log_1sens - log_spec    # 1-vote, 0-vote
        base = np.empty(2 * K)
        base[0::2], base[1::2] = log_1spec, log_spec                     # log P(vote | T=0)
        return float(theta[0]), w, base

    def e_step(self, theta: np.ndarray) -> tuple[np.ndarray, float]:
        """(posteriors, objective) at theta. The Laplace-smoothed M-step is the MAP step
        under Beta(2, 2) priors on sensitivities and specificities, so EM increases the
        log-likelihood plus sum_j log[s_j (1 - s_j)] over both rates, the objective
        SQUAREM's safeguard checks."""
        prior, w, base = self.weights(theta)
        lo = prior + self.votes @ w
        # log-likelihood: sum_r count_r [log P(votes_r | T=0) + log(1 - pi) + log(1 + e^lo_r)];
        # the first term sums to col . base (no second product over the rows)
        log_1pi = -np.logaddexp(0.0, prior)
        ll = float(self.col @ base) + self.total * log_1pi + float(self.count @ np.logaddexp(0.0, lo))
        rates = theta[1:]
        ll -= float(np.sum(np.logaddexp(0.0, -rates) + np.logaddexp(0.0, rates)))
        return 1.0 / (1.0 + np.exp(-np.clip(lo, -35, 35))), ll


def em_fit(votes: np.ndarray, count: np.ndarray, *, start: np.ndarray | None = None,
           max_iter: int = MAX_ITER, tol: float = TOL) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Dawid-Skene EM (one-coin-per-class, binary truth) on vote rows (:func:`vote_matrix`)
    with multiplicities, SQUAREM-accelerated, from the posteriors ``start`` (default: the
    majority vote).

    Returns (prior log-odds, weight of a 1-vote, weight of a 0-vote, posteriors) at the first
    parameters whose E-step moves no posterior by ``tol``, or after ``max_iter`` E-steps.
    """
    em = _EM(votes, count)
    t = majority_start(votes) if start is None else start
    theta = em.m_step(t)
    steps = 0
    while True:
        t1, ll0 = em.e_step(theta)
        steps += 1
        if np.max(np.abs(t1 - t), initial=0.0) < tol or steps >= max_iter:
            t = t1
            break
        theta1 = em.m_step(t1)
        t2, ll1 = em.e_step(theta1)
        steps += 1
        if np.max(np.abs(t2 - t1), initial=0.0) < tol or steps >= max_iter:
            t, theta = t2, theta1
            break
        theta2 = em.m_step(t2)
        r, v = theta1 - theta, theta2 - 2 * theta1 + theta
        norm_v = float(np.linalg.norm(v))
        alpha = min(-float(np.linalg.norm(r)) / norm_v, -1.0) if norm_v > 0 else -1.0
        t, theta = t2, theta2                        # two plain EM steps
        if alpha < -1.0:                             # SQUAREM extrapolation from theta0
            jump = theta1 - r - 2 * alpha * r + alpha * alpha * v
            if np.all(np.isfinite(jump)):
                t_jump, ll_jump = em.e_step(jump)
                steps += 1
                if ll_jump >= ll1:                  # keep it only if the likelihood holds
                    t, theta = t_jump, em.m_step(t_jump)
            if steps >= max_iter:
                break
    prior, w, _ = em.weights(theta)
    return prior, w[0::2].copy(), w[1::2].copy(), t


def _weighted_corr(a: np.ndarray, b: np.ndarray, weight: np.ndarray | None) -> float:
    if weight is None:
        return float(np.corrcoef(a, b)[0, 1])
    w = weight / weight.sum()
    da, db = a - w @ a, b - w @ b
    return float((w * da) @ db / np.sqrt((w * da) @ da * ((w * db) @ db)))


class DawidSkeneJury(Aggregator):
    name = "ds_jury"
    complexity_rank = 7
    ladder = 1
    uses_unlabelled = True

    def __init__(self, max_iter: int = MAX_ITER, tol: float = TOL):
        self.max_iter = max_iter
        self.tol = tol

    def _validate_params(self) -> None:
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError("max_iter must be an integer >= 1")
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise ValueError("tol must be > 0")

    def _fit(self, X, y, unlabelled):
        votes, count = self._em_rows(X, unlabelled)
        self._finish(X, y, em_fit(votes, count, max_iter=self.max_iter, tol=self.tol)[:3])

    @staticmethod
    def _em_rows(X, unlabelled):
        """EM input: distinct vote rows of the calibration rows plus the unlabelled traffic."""
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        w = X.w if unlabelled is None else np.concatenate([X.w, unlabelled.w])
        return distinct_votes(S, w)

    def _finish(self, X, y, params, raw=None) -> None:
        """Orientation and isotonic calibration of the EM log-odds on the calibration rows."""
        self.prior_logit_, self.w1_, self.w0_ = params
        if raw is None:
            raw = self._logodds(X.scores)
        self.orientation_ = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and _weighted_corr(raw, y, X.weight) < 0:
            self.orientation_ = -1.0
        self.iso_ = IsotonicMap().fit(self.orientation_ * raw, y, X.weight)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, **params):
        """EM for every prefix 1..max(sizes) of the path, each started from the previous
        prefix's posteriors (prefix 1 from the majority vote); the prefixes in ``sizes``
        are oriented and calibrated. The vote rows are the path's, shared by every prefix."""
        proto = cls(**params)
        y = proto._start_fit(X, y)
        K_max = max(sizes)
        S = X.scores[:, :K_max]
        w = X.w
        if unlabelled is not None:
            S, w = np.vstack([S, unlabelled.scores[:, :K_max]]), np.concatenate([w, unlabelled.w])
        votes, count = distinct_votes(S, w)
        digits = (votes[:, 0::2] + 2 * votes[:, 1::2]).astype(np.int64)
        group = np.zeros(len(count), dtype=np.int64)    # each row's vote pattern on the prefix
        fitted, t = {}, None                              # t: posteriors of the path's rows
        for K in range(1, K_max + 1):
            group = _dense(group * 3 + digits[:, K - 1])
            n_groups = int(group.max()) + 1 if len(group) else 0
            if n_groups < len(count) // 2:
                # Short prefixes have few vote patterns: EM on those (with counts) is EM on
                # the rows, at a fraction of the cost.
                first = np.empty(n_groups, dtype=np.int64)
                first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
                *em, t_groups = em_fit(votes[first, :2 * K], np.bincount(group, weights=count),
                                       start=None if t is None else t[first],
                                       max_iter=proto.max_iter, tol=proto.tol)
                t = t_groups[group]
            else:
                *em, t = em_fit(votes[:, :2 * K], count, start=t, max_iter=proto.max_iter, tol=proto.tol)
            if K in sizes:
                fitted[K] = em
        raw = prefix_dots(vote_matrix(X.scores[:, :K_max]), [_interleave(*fitted[K][1:]) for K in sizes],
                          [fitted[K][0] for K in sizes])
        models = []
        for i, K in enumerate(sizes):
            model = cls(**params)
            model._start_fit(X, y)
            model._finish(X.first(K), y, fitted[K], raw=raw[:, i])
            models.append(model)
        return models

    @classmethod
    def predict_path(cls, models, sizes, X):
        raw = prefix_dots(vote_matrix(X.scores[:, :max(sizes)]),
                          [_interleave(m.w1_, m.w0_) for m in models], [m.prior_logit_ for m in models])
        return np.column_stack([np.clip(m.iso_.predict(m.orientation_ * raw[:, i]), 0.0, 1.0)
                                for i, m in enumerate(models)])

    def _logodds(self, scores):
        return rowwise_dot(vote_matrix(scores), _interleave(self.w1_, self.w0_), self.prior_logit_)

    def _predict(self, X):
        return self.iso_.predict(self.orientation_ * self._logodds(X.scores))

    def _state(self):
        return {"prior_logit": self.prior_logit_, "w1": self.w1_.tolist(), "w0": self.w0_.tolist(),
                "orientation": self.orientation_, "isotonic": self.iso_.to_dict()}

    def _load(self, state):
        self.prior_logit_ = float(state["prior_logit"])
        self.w1_ = np.asarray(state["w1"], float)
        self.w0_ = np.asarray(state["w0"], float)
        self.orientation_ = float(state["orientation"])
        self.iso_ = IsotonicMap.from_dict(state["isotonic"])


def _dense(key: np.ndarray) -> np.ndarray:
    """Ranks 0..n-1 of a small non-negative integer key's distinct values (by counting)."""
    if len(key) == 0:
        return key
    present = np.zeros(int(key.max()) + 1, dtype=np.int64)
    present[key] = 1
    return (np.cumsum(present) - 1)[key]


def _interleave(w1: np.ndarray, w0: np.ndarray) -> np.ndarray:
    out = np.empty(2 * len(w1))
    out[0::2], out[1::2] = w1, w0
    return out
