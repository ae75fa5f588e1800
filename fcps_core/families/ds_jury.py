"""``ds_jury``: unsupervised Dawid-Skene jury, oriented and isotonic-calibrated
(paper Table tab:jury-baseline).

Model: a latent binary truth T with prior pi; judge j votes 1 with probability
sensitivity_j when T = 1 and votes 0 with probability specificity_j when T = 0; votes are
conditionally independent given T. Votes are scalar scores binarised at 1/2 (1/2 =
abstain). The parameters are fitted by EM (Laplace-smoothed M-step, majority-vote
start) on the calibration rows plus **all unlabelled traffic the selector passes** (every
row outside M and the research test block T), without labels. The posterior log-odds is then oriented (its sign is flipped if it
correlates negatively with the calibration labels) and isotonic-calibrated on the
calibration block. Prediction on new rows uses the fitted parameters (no refit).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from .base import Aggregator, IsotonicMap, rowwise_dot, weighted_mean

MAX_ITER = 200
TOL = 1e-7


def _binary_votes(scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return (scores > 0.5).astype(float), (scores < 0.5).astype(float)


def distinct_votes(scores: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct rows of the (1-vote, 0-vote) indicators with their total weight.

    Rows with the same votes get the same posterior at every EM step, so EM on the distinct
    vote patterns with counts is EM on the rows.
    """
    ones, zeros = _binary_votes(scores)
    K = scores.shape[1]
    if K == 0 or K > 39:        # 3**K must fit in int64; no compression needed then
        return ones, zeros, np.asarray(weight, float)
    digits = (ones + 2 * zeros).astype(np.int64)
    code = digits @ (3 ** np.arange(K, dtype=np.int64))    # exact int64: 3**39 < 2**63
    uniq, first, inv = np.unique(code, return_index=True, return_inverse=True)
    return ones[first], zeros[first], np.bincount(inv, weights=weight, minlength=len(uniq))


def em_fit(ones: np.ndarray, zeros: np.ndarray, count: np.ndarray, *, max_iter: int = MAX_ITER,
           tol: float = TOL) -> tuple[float, np.ndarray, np.ndarray]:
    """Dawid-Skene EM (one-coin-per-class, binary truth) on vote rows with multiplicities.

    Returns (prior log-odds, weight of a 1-vote, weight of a 0-vote) after at most
    ``max_iter`` iterations, stopping when no row's posterior moves by ``tol``.
    """
    K = ones.shape[1]
    observed = ones + zeros
    n_obs = observed.sum(axis=1)
    t = np.where(n_obs > 0, ones.sum(axis=1) / np.maximum(n_obs, 1), 0.5)
    total = count.sum()
    pos_stats = np.hstack([ones, observed])       # sum t*w over these: 1-votes, observed
    neg_stats = np.hstack([zeros, observed])
    votes = np.hstack([ones, zeros])
    for _ in range(max_iter):
        tw = t * count
        a = tw @ pos_stats
        b = (count - tw) @ neg_stats
        pi = min(max(float(tw.sum()) / total, 1e-3), 1 - 1e-3)
        sens = (a[:K] + 1.0) / (a[K:] + 2.0)
        spec = (b[:K] + 1.0) / (b[K:] + 2.0)
        prior_logit = float(np.log(pi / (1 - pi)))
        w1 = np.log(sens) - np.log(1 - spec)      # weight of a 1-vote
        w0 = np.log(1 - sens) - np.log(spec)      # weight of a 0-vote
        new_t = 1.0 / (1.0 + np.exp(-np.clip(prior_logit + votes @ np.concatenate([w1, w0]), -35, 35)))
        done = np.max(np.abs(new_t - t)) < tol
        t = new_t
        if done:
            break
    return prior_logit, w1, w0


def em_fit_batch(problems: list[tuple[np.ndarray, np.ndarray, np.ndarray]], *, max_iter: int = MAX_ITER,
                 tol: float = TOL
                 ) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """:func:`em_fit` for many independent problems at once (same iterations, same stopping
    rule per problem), so one selection's EM fits cost one loop instead of one per prefix.

    The problems' vote rows are stacked (judge columns zero-padded: a padded judge never
    votes, so its weights stay 0); per-problem sums of the M-step and the E-step's per-row
    log-odds are sparse block products. A problem that meets the tolerance keeps the
    parameters of that iteration, exactly as ``em_fit`` breaks out of its loop.
    """
    F = len(problems)
    if F == 0:
        return []
    Ks = [p[0].shape[1] for p in problems]
    Kmax = max(Ks)
    sizes = np.array([len(p[2]) for p in problems])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    R = int(sizes.sum())
    ones = np.zeros((R, Kmax))
    zeros = np.zeros((R, Kmax))
    for (o, z, _), st, K in zip(problems, starts, Ks):
        ones[st:st + len(o), :K] = o
        zeros[st:st + len(z), :K] = z
    count = np.concatenate([p[2] for p in problems]).astype(float)
    seg = np.repeat(np.arange(F), sizes)
    observed = ones + zeros
    n_obs = observed.sum(axis=1)
    t = np.where(n_obs > 0, ones.sum(axis=1) / np.maximum(n_obs, 1), 0.5)
    total = np.bincount(seg, weights=count, minlength=F)

    def block(stat: np.ndarray) -> sparse.csr_matrix:
        """(F*Kmax, R) operator: row (f, k) sums stat[r, k] * v[r] over problem f's rows."""
        r, k = np.nonzero(stat)
        return sparse.csr_matrix((stat[r, k], (seg[r] * Kmax + k, r)), shape=(F * Kmax, R))

    G1, Gobs, G0 = block(ones), block(observed), block(zeros)
    Gsum = sparse.csr_matrix((np.ones(R), (seg, np.arange(R))), shape=(F, R))
    M_step = sparse.vstack([G1, Gobs, G0, Gsum]).tocsr()
    zeros_c = (G0 @ count).reshape(F, Kmax)       # sum count * zeros (constant)
    obs_c = (Gobs @ count).reshape(F, Kmax)
    E_step = sparse.hstack([G1.T, G0.T]).tocsr()  # (R, 2*F*Kmax): row r's vote indicators
    FK = F * Kmax
    active = np.ones(F, dtype=bool)
    out_prior, out_w1, out_w0 = np.zeros(F), np.zeros((F, Kmax)), np.zeros((F, Kmax))
    for _ in range(max_iter):
        tw = t * count
        s = M_step @ tw
        a1, a_obs = s[:FK].reshape(F, Kmax), s[FK:2 * FK].reshape(F, Kmax)
        b0, b_obs = zeros_c - s[2 * FK:3 * FK].reshape(F, Kmax), obs_c - a_obs
        pi = np.clip(s[3 * FK:] / total, 1e-3, 1 - 1e-3)
        sens = (a1 + 1.0) / (a_obs + 2.0)
        spec = (b0 + 1.0) / (b_obs + 2.0)
        prior = np.log(pi / (1 - pi))
        w1 = np.log(sens) - np.log(1 - spec)
        w0 = np.log(1 - sens) - np.log(spec)
        lo = prior[seg] + E_step @ np.concatenate([w1.ravel(), w0.ravel()])
        new_t = 1.0 / (1.0 + np.exp(-np.clip(lo, -35, 35)))
        done = active & (np.maximum.reduceat(np.abs(new_t - t), starts) < tol)
        out_prior[done], out_w1[done], out_w0[done] = prior[done], w1[done], w0[done]
        active &= ~done
        t = new_t
        if not active.any():
            break
    out_prior[active], out_w1[active], out_w0[active] = prior[active], w1[active], w0[active]
    return [(float(out_prior[f]), out_w1[f, :K].copy(), out_w0[f, :K].copy())
            for f, K in enumerate(Ks)]


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
    batch_fit = True

    def __init__(self, max_iter: int = MAX_ITER, tol: float = TOL):
        self.max_iter = max_iter
        self.tol = tol

    def _validate_params(self) -> None:
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError("max_iter must be an integer >= 1")
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise ValueError("tol must be > 0")

    def _fit(self, X, y, unlabelled):
        self._finish(X, y, em_fit(*self._em_rows(X, unlabelled), max_iter=self.max_iter, tol=self.tol))

    @staticmethod
    def _em_rows(X, unlabelled):
        """EM input: distinct vote rows of the calibration rows plus the unlabelled traffic."""
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        w = X.w if unlabelled is None else np.concatenate([X.w, unlabelled.w])
        return distinct_votes(S, w)

    def _finish(self, X, y, params) -> None:
        """Orientation and isotonic calibration of the EM log-odds on the calibration rows."""
        self.prior_logit_, self.w1_, self.w0_ = params
        raw = self._logodds(X.scores)
        self.orientation_ = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and _weighted_corr(raw, y, X.weight) < 0:
            self.orientation_ = -1.0
        self.iso_ = IsotonicMap().fit(self.orientation_ * raw, y, X.weight)

    @classmethod
    def fit_many(cls, problems: list, **params) -> list["DawidSkeneJury"]:
        """Fit one model per (X, y, unlabelled) problem, the EMs batched (:func:`em_fit_batch`)."""
        proto = cls(**params)
        proto._validate_params()
        em = em_fit_batch([cls._em_rows(X, U) for X, _, U in problems], max_iter=proto.max_iter, tol=proto.tol)
        models = []
        for (X, y, U), fitted in zip(problems, em):
            model = cls(**params)
            y = np.asarray(y, dtype=float)
            model.ybar_ = weighted_mean(y, X.weight)
            model._finish(X, y, fitted)
            models.append(model)
        return models

    def _logodds(self, scores):
        ones, zeros = _binary_votes(scores)
        return rowwise_dot(np.hstack([ones, zeros]), np.concatenate([self.w1_, self.w0_]),
                           self.prior_logit_)

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
