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

EM starts from the majority vote and stops when one EM step moves no row's posterior by
``tol`` or after ``max_iter`` iterations. Along a judge path
(:meth:`DawidSkeneJury.fit_paths`) every prefix's EM runs on the distinct vote patterns of
its own judges, and the small EMs of all paths and prefixes advance in lockstep
(:func:`em_fit_many`): the same fits as one at a time. (Tried and left out: SQUAREM
acceleration and starting prefix K from prefix K-1's posteriors. Both cut EM steps on large
pools, but EMs that stop at the iteration cap or on a flat likelihood then end elsewhere: on
LLMBar up to 0.03 apart in a candidate's validation MSE.)
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from ..paths import extend_ids
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


def _theta(pi, a1, a0, col1, col0) -> np.ndarray:
    """The Laplace-smoothed M-step as logits (prior, sensitivities, specificities), from the
    t-weighted 1-votes ``a1`` and 0-votes ``a0`` and each column's weighted vote count:
    sensitivity = (a1 + 1) / (a1 + a0 + 2), specificity = (b0 + 1) / (b0 + b1 + 2) with
    b = the votes' counts minus a. Leading axes (several problems at once) broadcast."""
    pi = np.asarray(pi, dtype=float)[..., None]
    return np.log(np.concatenate([pi / (1 - pi), (a1 + 1.0) / (a0 + 1.0),
                                  (col0 - a0 + 1.0) / (col1 - a1 + 1.0)], axis=-1))


def _vote_weights(theta: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Interleaved log-odds weights of a 1-vote and a 0-vote per judge into ``out`` (leading
    axes broadcast); theta = (prior, logit sensitivities, logit specificities)."""
    K = out.shape[-1] // 2
    ls, lp = theta[..., 1:K + 1], theta[..., K + 1:]
    d = np.logaddexp(0.0, -lp) - np.logaddexp(0.0, -ls)     # log sens - log spec
    out[..., 0::2] = d + lp                                  # log sens - log(1 - spec)
    out[..., 1::2] = d - ls                                  # log(1 - sens) - log spec
    return out


class _EM:
    """The EM map of one DS problem on vote rows with multiplicities; parameters as logits
    theta = (prior logit, logit sensitivity_j, logit specificity_j)."""

    def __init__(self, votes: np.ndarray, count: np.ndarray):
        self.votes, self.count = votes, count
        self.K = votes.shape[1] // 2
        self.total = float(count.sum())
        col = count @ votes                           # count-weighted votes per column
        self.col1, self.col0 = col[0::2], col[1::2]
        self.w = np.empty(2 * self.K)
        # Every judge voting on every row (no abstention): a 0-vote is 1 - a 1-vote, so the
        # 1-votes alone carry the products (half the cells per step, the same sums).
        self.ones = None
        if np.array_equal(col[0::2] + col[1::2], np.full(self.K, self.total)):
            self.ones = np.ascontiguousarray(votes[:, 0::2])

    def m_step(self, t: np.ndarray) -> np.ndarray:
        tw = t * self.count
        tw_sum = float(tw.sum())
        if self.ones is None:
            s = tw @ self.votes
            a1, a0 = s[0::2], s[1::2]                 # t-weighted 1-votes and 0-votes
        else:
            a1 = tw @ self.ones
            a0 = tw_sum - a1
        pi = min(max(tw_sum / self.total, _PI_CLIP), 1 - _PI_CLIP)
        return _theta(pi, a1, a0, self.col1, self.col0)

    def weights(self, theta: np.ndarray) -> tuple[float, np.ndarray]:
        """(prior log-odds, interleaved vote weights)."""
        return float(theta[0]), _vote_weights(theta, self.w)

    def e_step(self, theta: np.ndarray) -> np.ndarray:
        prior, w = self.weights(theta)
        if self.ones is None:
            lo = prior + self.votes @ w
        else:
            lo = (prior + float(w[1::2].sum())) + self.ones @ (w[0::2] - w[1::2])
        return 0.5 + 0.5 * np.tanh(0.5 * lo)          # the logistic function, overflow-free


def em_fit(votes: np.ndarray, count: np.ndarray, *, max_iter: int = MAX_ITER,
           tol: float = TOL) -> tuple[float, np.ndarray, np.ndarray, np.ndarray]:
    """Dawid-Skene EM (one-coin-per-class, binary truth) on vote rows (:func:`vote_matrix`)
    with multiplicities, from the majority vote.

    Returns (prior log-odds, weight of a 1-vote, weight of a 0-vote, posteriors) of the first
    M-step whose E-step moves no posterior by ``tol``, or after ``max_iter`` iterations.
    """
    em = _EM(votes, count)
    t = majority_start(votes)
    for _ in range(max_iter):
        theta = em.m_step(t)
        new_t = em.e_step(theta)
        done = np.max(np.abs(new_t - t), initial=0.0) < tol
        t = new_t
        if done:
            break
    prior, w = em.weights(theta)
    return prior, w[0::2].copy(), w[1::2].copy(), t


#: stacked problems up to this many vote cells run in lockstep (one numpy pass per EM step
#: for all of them); larger ones run one by one on BLAS products
BATCH_CELLS = 400_000


def em_fit_batched(problems: list[tuple[np.ndarray, np.ndarray]], *, max_iter: int = MAX_ITER,
                   tol: float = TOL) -> list[tuple]:
    """:func:`em_fit` (majority-vote start) of every (votes, count) problem: problems are
    taken by size, small ones in lockstep batches of at most ``BATCH_CELLS`` padded vote
    cells (:func:`em_fit_many`), large ones alone."""
    out: list = [None] * len(problems)
    order = sorted(range(len(problems)), key=lambda i: (problems[i][0].shape[1], len(problems[i][1])))
    batch: list[int] = []

    def run(batch):
        for i, res in zip(batch, em_fit_many([problems[i] for i in batch], max_iter=max_iter, tol=tol)):
            out[i] = res

    for i in order:
        width = problems[i][0].shape[1]         # sorted: the widest of the batch so far
        cells = (sum(len(problems[j][1]) for j in batch) + len(problems[i][1])) * width
        if batch and cells > BATCH_CELLS:
            run(batch)
            batch = []
        batch.append(i)
    if batch:
        run(batch)
    return out


def em_fit_many(problems: list[tuple[np.ndarray, np.ndarray]], *, max_iter: int = MAX_ITER,
                tol: float = TOL) -> list[tuple]:
    """:func:`em_fit` of several problems in lockstep: each problem keeps its own
    parameters and stopping point (the same arithmetic as alone, summed by segment instead of
    by a matrix product), but one numpy pass serves all of them, so small problems cost one
    Python loop instead of one each. Narrower problems are padded with judges that never
    vote: their smoothed rates stay 1/2 and their weights 0."""
    if len(problems) == 1:
        v, c = problems[0]
        return [em_fit(v, c, max_iter=max_iter, tol=tol)]
    width = max(v.shape[1] for v, _ in problems)
    votes = np.zeros((sum(len(c) for _, c in problems), width))
    pos = 0
    for v, c in problems:
        votes[pos:pos + len(c), :v.shape[1]] = v
        pos += len(c)
    count = np.concatenate([c for _, c in problems]).astype(float)
    sizes = np.array([len(c) for _, c in problems])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    seg = np.repeat(np.arange(len(problems)), sizes)
    P = len(problems)
    total = np.add.reduceat(count, starts)
    # Block operators: row (p, k) of G sums column k of problem p's vote rows (one sparse
    # product per step for every problem's M-step; its transpose gives the E-step's dots).
    r, k = np.nonzero(votes)
    G = sparse.csr_matrix((votes[r, k], (seg[r] * width + k, r)), shape=(P * width, len(count)))
    GT = G.T.tocsr()
    col = (G @ count).reshape(P, width)
    col1, col0 = col[:, 0::2], col[:, 1::2]

    def m_step(t):
        tw = t * count
        s = (G @ tw).reshape(P, width)
        a1, a0 = s[:, 0::2], s[:, 1::2]
        pi = np.clip(np.add.reduceat(tw, starts) / total, _PI_CLIP, 1 - _PI_CLIP)
        return _theta(pi, a1, a0, col1, col0)

    def weights(theta):
        return theta[:, 0], _vote_weights(theta, np.empty((len(theta), width)))

    def e_step(theta):
        prior, w = weights(theta)
        return 0.5 + 0.5 * np.tanh(0.5 * (prior[seg] + GT @ w.ravel()))

    t = majority_start(votes)
    active = np.ones(P, dtype=bool)
    out_theta = np.zeros((P, 1 + width))
    out_t = t.copy()
    for _ in range(max_iter):
        theta = m_step(t)
        new_t = e_step(theta)
        done = active & (np.maximum.reduceat(np.abs(new_t - t), starts) < tol)
        t = new_t
        out_theta[done] = theta[done]
        out_t[done[seg]] = t[done[seg]]
        active &= ~done
        if not active.any():
            break
    out_theta[active] = theta[active]
    out_t[active[seg]] = t[active[seg]]
    results = []
    for p, (v, _) in enumerate(problems):
        prior, w = weights(out_theta[p:p + 1])
        k = v.shape[1] // 2
        results.append((float(prior[0]), w[0, 0:2 * k:2].copy(), w[0, 1:2 * k:2].copy(),
                        out_t[starts[p]:starts[p] + sizes[p]].copy()))
    return results


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
    joint_paths = True

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
        """Every prefix in ``sizes`` fitted as on its own (EM from the majority vote), from
        the path's vote rows, oriented and calibrated with one pass over the columns."""
        return cls.fit_paths([(X, y, unlabelled, sizes)], **params)[0]

    @classmethod
    def fit_paths(cls, jobs, **params):
        """:meth:`fit_path` for several paths: the same fits as each prefix on its own. Every
        prefix's EM runs on the distinct vote patterns of its own judges; short prefixes (few
        vote cells) of all paths run in lockstep (:func:`em_fit_many`), one EM loop for the
        lot; long ones run alone on BLAS products, without copies when every row is
        distinct."""
        proto = cls(**params)
        problems, owners = [], []
        by_job: list[dict] = [{} for _ in jobs]
        paths = []                  # per job: (votes, count, {K: (first or None, group)} of long prefixes)
        for i, (X, y, unlabelled, sizes) in enumerate(jobs):
            proto._start_fit(X, y)
            K_max = max(sizes)
            S, w = X.scores[:, :K_max], X.w
            if unlabelled is not None:
                S, w = np.vstack([S, unlabelled.scores[:, :K_max]]), np.concatenate([w, unlabelled.w])
            votes, count = distinct_votes(S, w)
            digits = (votes[:, 0::2] + 2 * votes[:, 1::2]).astype(np.int64)
            group = np.zeros(len(count), dtype=np.int64)   # each row's vote pattern on the prefix
            long = {}
            for K in range(1, K_max + 1):
                group = extend_ids(group, digits[:, K - 1])
                if K not in sizes:
                    continue
                n_groups = int(group.max()) + 1 if len(group) else 0
                first = None
                if n_groups < len(count):
                    first = np.empty(n_groups, dtype=np.int64)
                    first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
                if 4 * n_groups * 2 * K > BATCH_CELLS:
                    long[K] = (first, None if first is None else group.copy())
                elif first is None:                          # every row distinct
                    problems.append((votes[:, :2 * K], count))
                    owners.append((i, K, None))
                else:
                    problems.append((votes[first, :2 * K], np.bincount(group, weights=count, minlength=n_groups)))
                    owners.append((i, K, group.copy()))
            paths.append((votes, count, long))
        for (i, K, _), em in zip(owners, em_fit_batched(problems, max_iter=proto.max_iter, tol=proto.tol)):
            by_job[i][K] = em[:3]
        for i, (votes, count, long) in enumerate(paths):
            for K, (first, group) in sorted(long.items()):
                if first is None:
                    em = em_fit(votes[:, :2 * K], count, max_iter=proto.max_iter, tol=proto.tol)
                else:
                    em = em_fit(votes[first, :2 * K], np.bincount(group, weights=count, minlength=len(first)),
                                max_iter=proto.max_iter, tol=proto.tol)
                by_job[i][K] = em[:3]
        out = []
        for (X, y, _, sizes), fits in zip(jobs, by_job):
            y = np.asarray(y, dtype=float)
            raw = prefix_dots(vote_matrix(X.scores[:, :max(sizes)]),
                              [_interleave(*fits[K][1:]) for K in sizes], [fits[K][0] for K in sizes])
            models = []
            for i, K in enumerate(sizes):
                model = cls(**params)
                model._start_fit(X, y)
                model._finish(X.first(K), y, fits[K], raw=raw[:, i])
                models.append(model)
            out.append(models)
        return out

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


def _interleave(w1: np.ndarray, w0: np.ndarray) -> np.ndarray:
    out = np.empty(2 * len(w1))
    out[0::2], out[1::2] = w1, w0
    return out
