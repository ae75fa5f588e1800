"""Dawid-Skene EM for ``ds_jury``: vote rows, the EM map and its runners.

One-coin-per-class model with a binary truth: prior pi, judge j's sensitivity and
specificity; votes are scores binarised at 1/2 (1/2 = abstain), rows come with
multiplicities. EM starts from the majority vote, its M-step is Laplace-smoothed, and it
stops when one step moves no row's posterior by ``tol`` or after ``max_iter`` steps.

Runners, all giving :func:`em_fit`'s iterates up to rounding (tests: 1e-12), the nested
runner's default single-precision products aside (below):

* :func:`em_fit`: one problem, matrix-vector products (a single model's fit);
* :func:`em_fit_batched` / :func:`em_fit_many`: many small problems (few distinct vote
  patterns) in lockstep on sparse block operators, one Python loop for all of them;
* :func:`em_fit_nested_many`: the nested prefixes of judge paths on the paths' vote rows, in
  chunks of consecutive prefixes: one EM step of a chunk is two dense matrix products
  (posteriors x count-weighted votes, vote weights x votes) instead of two matrix-vector
  products per prefix, in single precision (below); the chunks run on two threads with
  BLAS on one each. What is left is the arithmetic itself, steps x every prefix, plus the
  elementwise steps (one tanh per cell, :func:`_em_chunk`); the saving is measured in
  docs/performance.md.

**Single-precision products** (:data:`PRODUCT_DTYPE`): the nested runner's two products per
step, its state and stopping test run in float32 (the M-step's sums and logs in float64),
about halving the EM's time (docs/performance.md). The
iterates round by about 1e-7 per step; a flat likelihood's EM crawls (its posteriors still
move 1e-3 to 1e-2 per step at the 200-step cap), so there they end up to 7.6e-4 from the
float64 ones. Largest change in a ds_jury candidate's validation MSE under ``select
--protocol split``: LLMBar 2.5e-7, HANNA 5.4e-5, 2,000 x 200 additive 2.8e-4 (below the 1e-3
accepted); the selected candidate and the deployed risk are unchanged on all three. The
larger changes come from isotonic calibration (a tiny change in the log-odds can reorder
two rows' scores and re-pool the fit). ``dtype=np.float64`` keeps double precision; tests
hold it to em_fit's iterates to 1e-11. Double M-steps with float32 E-steps stayed within
3e-5 of float64 but saved less time; float32 M-steps summed over 64-row blocks
in double still moved 1.7e-4.

Tried and left out: SQUAREM acceleration and starting prefix K from prefix K-1's
posteriors cut EM steps, but EMs that stop at the cap or on a flat likelihood then end
elsewhere (on LLMBar up to 0.03 apart in a candidate's validation MSE). Not done: row-block
("four Russians") tables of the binary votes need 8x fewer additions, but as numpy gathers
they stream (prefixes x rows) arrays once per 8 judges, slower than BLAS-3. Nor splitting
a chunk's products into the columns every prefix uses (a fifth of the flops at 48
consecutive sizes go to weights fixed at 0): the thin ragged products lose about that
much efficiency (chunks of 32, 48 and 64 measured within 2%).
"""

from __future__ import annotations

import os

import numpy as np
from scipy import sparse

from .base import blas_on_one_thread, log1p_exp as _log1p_exp
from .fitted import DS_MAX_ITER, DS_TOL, vote_matrix

try:        # the routine behind a CSR matrix times a vector, without scipy's dispatch
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:                             # pragma: no cover - a scipy without it
    _csr_matvec = None

# the EM's defaults are the ds_jury model's hyperparameters (fitted.DSJuryModel)
MAX_ITER = DS_MAX_ITER
TOL = DS_TOL
_PI_CLIP = 1e-3


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
    d = _log1p_exp(-lp) - _log1p_exp(-ls)                   # log sens - log spec
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
           tol: float = TOL, return_n_iter: bool = False) -> tuple:
    """Dawid-Skene EM (one-coin-per-class, binary truth) on vote rows (:func:`vote_matrix`)
    with multiplicities, from the majority vote.

    Returns (prior log-odds, weight of a 1-vote, weight of a 0-vote, posteriors) of the first
    M-step whose E-step moves no posterior by ``tol``, or after ``max_iter`` iterations;
    ``return_n_iter``: the number of EM iterations run is appended.
    """
    em = _EM(votes, count)
    t = majority_start(votes)
    n_iter = 0
    for n_iter in range(1, max_iter + 1):
        theta = em.m_step(t)
        new_t = em.e_step(theta)
        done = np.max(np.abs(new_t - t), initial=0.0) < tol
        t = new_t
        if done:
            break
    prior, w = em.weights(theta)
    if return_n_iter:
        return prior, w[0::2].copy(), w[1::2].copy(), t, n_iter
    return prior, w[0::2].copy(), w[1::2].copy(), t


#: stacked problems up to this many vote cells run in lockstep (one numpy pass per EM step
#: for all of them); larger ones run one by one on BLAS products
BATCH_CELLS = 400_000


def em_fit_batched(problems: list[tuple[np.ndarray, np.ndarray]], *, max_iter: int = MAX_ITER,
                   tol: float = TOL, run: list | None = None) -> list[tuple]:
    """:func:`em_fit` (majority-vote start) of every (votes, count) problem: problems are
    taken by size, small ones in lockstep batches of at most ``BATCH_CELLS`` padded vote
    cells (:func:`em_fit_many`), large ones alone. ``run`` (a flag per problem; None: all):
    only the flagged problems are solved, the others' results are None; the batches are
    formed from every problem all the same, and a flagged problem of a batch of several
    runs in lockstep (over its batch's flagged problems, at the batch's width) even when it
    is the only one flagged, so its result is bit for bit the one without ``run`` (a
    problem's lockstep iterates read its own rows alone, :func:`em_fit_many`)."""
    out: list = [None] * len(problems)
    order = sorted(range(len(problems)), key=lambda i: (problems[i][0].shape[1], len(problems[i][1])))
    batch: list[int] = []

    def run_batch(batch):
        todo = batch if run is None else [i for i in batch if run[i]]
        if not todo:
            return
        width = max(problems[i][0].shape[1] for i in batch)
        for i, res in zip(todo, em_fit_many([problems[i] for i in todo], max_iter=max_iter, tol=tol,
                                            width=width, lockstep=len(batch) > 1)):
            out[i] = res

    for i in order:
        width = problems[i][0].shape[1]         # sorted: the widest of the batch so far
        cells = (sum(len(problems[j][1]) for j in batch) + len(problems[i][1])) * width
        if batch and cells > BATCH_CELLS:
            run_batch(batch)
            batch = []
        batch.append(i)
    if batch:
        run_batch(batch)
    return out


def em_fit_many(problems: list[tuple[np.ndarray, np.ndarray]], *, max_iter: int = MAX_ITER,
                tol: float = TOL, width: int | None = None, lockstep: bool | None = None) -> list[tuple]:
    """:func:`em_fit` of several problems in lockstep: each problem keeps its own
    parameters and stopping point (the same arithmetic as alone, summed by segment instead of
    by a matrix product), but one numpy pass serves all of them, so small problems cost one
    Python loop instead of one each. Narrower problems are padded with judges that never
    vote: their smoothed rates stay 1/2 and their weights 0.

    Problems stop at very different steps (a few dozen for most, the iteration cap for some
    one- or two-judge prefixes): once the ones still running hold at most half of the
    operators' vote rows, the operators are rebuilt over those alone, so a step costs the
    running problems' rows, not the whole batch's. A problem's sums are the same in the
    smaller operators (its own entries in the same order), so its iterates do not change.

    ``width`` (default: the widest problem's) pads the operators to that many vote columns;
    ``lockstep`` (default: when there are several problems) runs them here even when there
    is one, which :func:`em_fit` otherwise solves alone (:func:`em_fit_batched` with ``run``)."""
    if not (len(problems) > 1 if lockstep is None else lockstep):
        v, c = problems[0]
        return [em_fit(v, c, max_iter=max_iter, tol=tol)]
    width = max(v.shape[1] for v, _ in problems) if width is None else width
    results: list = [None] * len(problems)
    live = np.arange(len(problems))              # the problems the operators hold
    ops = _Lockstep([problems[p] for p in live], width)
    active = np.ones(len(live), dtype=bool)      # of those, the ones still iterating
    t = majority_start(ops.votes)
    for step in range(max_iter):
        theta = ops.m_step(t)
        new_t = ops.e_step(theta)
        done = active & (np.maximum.reduceat(np.abs(new_t - t), ops.starts) < tol)
        t = new_t
        if step == max_iter - 1:
            done = active.copy()
        for i in np.flatnonzero(done):
            results[live[i]] = ops.result(i, theta, t, problems[live[i]][0].shape[1] // 2)
        active &= ~done
        if not active.any():
            break
        if done.any() and 2 * int(ops.sizes[active].sum()) <= len(t):
            t = t[active[ops.seg]]
            live = live[active]
            ops = _Lockstep([problems[p] for p in live], width)
            active = np.ones(len(live), dtype=bool)
    return results


class _Lockstep:
    """Block operators of :func:`em_fit_many` over a list of problems padded to ``width``
    vote columns: row (p, k) of G sums column k of problem p's vote rows (one sparse
    product per step for every problem's M-step; its transpose gives the E-step's dots)."""

    def __init__(self, problems: list[tuple[np.ndarray, np.ndarray]], width: int):
        self.sizes = np.array([len(c) for _, c in problems])
        self.votes = np.zeros((int(self.sizes.sum()), width))
        pos = 0
        for v, c in problems:
            self.votes[pos:pos + len(c), :v.shape[1]] = v
            pos += len(c)
        self.count = np.concatenate([c for _, c in problems]).astype(float)
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]])
        self.seg = np.repeat(np.arange(len(problems)), self.sizes)
        self.P, self.width = len(problems), width
        self.total = np.add.reduceat(self.count, self.starts)
        # GT straight in CSR form (the nonzero cells in row-major order: each row's columns
        # ascending), G its transpose (each row's vote rows ascending): the same arrays as
        # from (row, column) pairs, without the coordinate format's conversion and checks
        flat = np.flatnonzero(self.votes)
        r, k = np.divmod(flat, width)
        indptr = np.zeros(len(self.count) + 1, dtype=np.int64)
        np.cumsum(np.bincount(r, minlength=len(self.count)), out=indptr[1:])
        self.GT = sparse.csr_matrix((self.votes.ravel()[flat], self.seg[r] * width + k, indptr),
                                    shape=(len(self.count), self.P * width))
        self.G = self.GT.T.tocsr()
        col = (self.G @ self.count).reshape(self.P, width)
        self.col1, self.col0 = col[:, 0::2], col[:, 1::2]

    @staticmethod
    def _times(A, x):
        """``A @ x`` for a CSR matrix and a float vector, the same routine and output
        (scipy's ``_matmul_vector``) without the operator's dispatch: a step of a small
        batch is a few dozen microseconds of arithmetic, about as much as the dispatch."""
        if _csr_matvec is None:                 # pragma: no cover
            return A @ x
        out = np.zeros(A.shape[0])
        _csr_matvec(A.shape[0], A.shape[1], A.indptr, A.indices, A.data, x, out)
        return out

    def m_step(self, t):
        tw = t * self.count
        s = self._times(self.G, tw).reshape(self.P, self.width)
        pi = np.clip(np.add.reduceat(tw, self.starts) / self.total, _PI_CLIP, 1 - _PI_CLIP)
        return _theta(pi, s[:, 0::2], s[:, 1::2], self.col1, self.col0)

    def weights(self, theta):
        return theta[:, 0], _vote_weights(theta, np.empty((len(theta), self.width)))

    def e_step(self, theta):
        prior, w = self.weights(theta)
        return 0.5 + 0.5 * np.tanh(0.5 * (prior[self.seg] + self._times(self.GT, w.ravel())))

    def result(self, i, theta, t, K):
        """em_fit's output for problem ``i`` (``K`` judges) at parameters ``theta`` and
        posteriors ``t``."""
        prior, w = self.weights(theta[i:i + 1])
        return (float(prior[0]), w[0, 0:2 * K:2].copy(), w[0, 1:2 * K:2].copy(),
                t[self.starts[i]:self.starts[i] + self.sizes[i]].copy())


#: prefixes of one path whose EM steps share one matrix product (:func:`em_fit_nested`)
NESTED_CHUNK = 48
#: prefixes of at most this many vote cells (patterns x 2K) run in the lockstep batches, not
#: nested: a chunk's ~20 numpy calls per step outweigh its arithmetic below it (measured on
#: the sweep work unit: docs/performance.md)
NESTED_MIN_CELLS = 20_000
#: the nested runner's products, state and stopping test in single precision (the M-step's
#: sums and logs in double): half the time, iterates rounded ~1e-7 per step (module notes);
#: a ``tol`` under half float32's resolution at 1 (6e-8) runs in double (it could never stop)
PRODUCT_DTYPE = np.float32
#: threads running the chunks of :func:`em_fit_nested_many` (each chunk on one BLAS thread),
#: at most the cores the process may use (:func:`_em_threads`)
EM_THREADS = 2


def _em_threads() -> int:
    """:data:`EM_THREADS`, capped by the CPUs this process runs on and by the thread budget
    it was started with (``OPENBLAS_NUM_THREADS``/``OMP_NUM_THREADS``: joblib's worker
    processes for the cross-fitted folds get 1 each, so two folds on two cores stay at two
    threads)."""
    try:
        n = len(os.sched_getaffinity(0))
    except AttributeError:                      # pragma: no cover - not on Linux
        n = os.cpu_count() or 1
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.isdigit() and int(value) > 0:
            n = min(n, int(value))
    return max(1, min(EM_THREADS, n))


def em_fit_nested(votes: np.ndarray, count: np.ndarray, sizes, *, max_iter: int = MAX_ITER,
                  tol: float = TOL, dtype=None) -> list[tuple]:
    """:func:`em_fit` of ``votes[:, :2K]`` with ``count`` for every K in ``sizes`` (the nested
    prefixes of one path's vote rows), in lockstep on BLAS-3 products.

    Each prefix keeps its own start (the majority vote of its judges), parameters and
    stopping point; an EM step of :data:`NESTED_CHUNK` prefixes of consecutive sizes is two
    matrix products (their t-weighted rows times the largest one's vote columns, and their
    vote weights back) instead of two matrix-vector products each. With ``dtype=np.float64``
    the iterates are em_fit's up to rounding (the same sums added in another order); the
    default (:data:`PRODUCT_DTYPE`, float32) rounds more. A prefix whose distinct vote
    patterns are fewer than the rows runs on the rows with their counts, the same EM. The
    products read the 1-votes, plus the abstentions of judges that ever abstain.
    """
    return em_fit_nested_many([(votes, count, sizes)], max_iter=max_iter, tol=tol, dtype=dtype)[0]


def em_fit_nested_many(paths: list[tuple], *, max_iter: int = MAX_ITER, tol: float = TOL,
                       dtype=None, keep: list | None = None) -> list[list]:
    """:func:`em_fit_nested` of several (votes, count, sizes) paths; the chunks of prefixes
    are independent EMs, run on up to :data:`EM_THREADS` threads (numpy releases the GIL in
    the products and the elementwise steps; a chunk's arithmetic is the same on any thread).
    ``keep`` (per path, a flag per size, or None for all): a chunk none of whose prefixes is
    flagged is not run (its results are None); the chunks are formed from every size as
    without ``keep``, and a chunk with a flagged prefix runs whole, so every result made is
    bit for bit the one without ``keep``."""
    dtype = PRODUCT_DTYPE if dtype is None else dtype
    if 2 * tol < np.finfo(dtype).eps:
        dtype = np.float64
    tasks, slots = [], []
    out: list[list] = []
    for p, (votes, count, sizes) in enumerate(paths):
        sizes = [int(K) for K in sizes]
        out.append([None] * len(sizes))
        if sizes:
            flags = None if keep is None or keep[p] is None else keep[p]
            for task, members in _nested_tasks(votes, np.asarray(count, dtype=float), sizes, max_iter, tol, dtype):
                if flags is not None and not any(flags[i] for i in members):
                    continue
                tasks.append(task)
                slots.append((p, members))
    # the costliest chunks first: the threads end together
    order = sorted(range(len(tasks)), key=lambda t: -tasks[t][-1])
    threads = _em_threads() if len(tasks) > 1 else 1
    if threads > 1:
        from concurrent.futures import ThreadPoolExecutor
        with blas_on_one_thread(), ThreadPoolExecutor(max_workers=threads) as pool:
            done = list(pool.map(lambda t: _em_chunk(*tasks[t][:-1]), order))
    else:
        done = [_em_chunk(*tasks[t][:-1]) for t in order]
    for t, res in zip(order, done):
        p, members = slots[t]
        for i, r in zip(members, res):
            out[p][i] = r
    return out


def _nested_tasks(votes: np.ndarray, count: np.ndarray, sizes: list[int], max_iter: int,
                  tol: float, dtype) -> list[tuple]:
    """The :func:`_em_chunk` calls of a path's prefixes (with their cost last), each with
    the positions (in ``sizes``) of its prefixes.

    The products read the 1-votes and, for the judges that abstain on some row, the
    abstentions: a 0-vote is 1 - (1-vote) - (abstention), so the judges that vote on every
    row need one column, not two (with no abstention at all these are :class:`_EM`'s
    products on the 1-votes alone)."""
    order = np.argsort(sizes, kind="stable")
    Ks = np.asarray(sizes, dtype=np.int64)[order]
    V = votes[:, :2 * int(Ks[-1])]
    total = float(count.sum())
    col = count @ V
    V1 = np.ascontiguousarray(V[:, 0::2])
    abstains = V1 + V[:, 1::2] == 0
    ab_judges = np.flatnonzero(abstains.any(axis=0))
    AB = np.ascontiguousarray(abstains[:, ab_judges], dtype=float)
    # the majority-vote start of every prefix (sums of 0/1 votes: exact), (prefixes, rows)
    n_ones = np.cumsum(V1, axis=1)[:, Ks - 1].T
    n_obs = Ks[:, None] - np.cumsum(abstains, axis=1)[:, Ks - 1].T
    T0 = np.where(n_obs > 0, n_ones / np.maximum(n_obs, 1), 0.5)
    out = []
    cuts = np.linspace(0, len(Ks), -(-len(Ks) // NESTED_CHUNK) + 1).round().astype(int)
    for a, c in zip(cuts[:-1], cuts[1:]):
        K_top = int(Ks[c - 1])
        cost = len(count) * (c - a) * (K_top + int(np.searchsorted(ab_judges, K_top)))
        out.append(((V1, AB, ab_judges, count, total, col[0::2], col[1::2], Ks[a:c], T0[a:c], max_iter, tol, dtype,
                     cost),
                    order[a:c].tolist()))
    return out


def _em_chunk(V1, AB, ab_judges, count, total, col1, col0, Ks, T, max_iter, tol, dtype=np.float64) -> list[tuple]:
    """The lockstep EMs of a few prefixes (sizes ``Ks``, ascending, starts ``T``).

    Each step is one product of their posteriors with the count-weighted 1-votes and
    abstentions of the largest prefix's judges and the counts (the same products t * count *
    vote as em_fit's, and the t-weighted total), giving every judge's t-weighted 1-votes and
    0-votes, and one product of their vote weights and prior with the votes and a column of
    ones back; columns past a prefix's own judges get weight 0.

    Arithmetic kept to what a step needs, with the same iterates up to rounding:

    * the state is u = 2t = 1 + tanh(lo/2), so the logistic costs one tanh and one addition
      per cell; the products take u against half the counts (scaling by 2 is exact, so these
      are t's products and u's changes are exactly twice t's, tested against 2 tol); u, the
      tanh and the stopping test are in the products' precision ``dtype`` (in float32 the
      changes are multiples of 2^-23 near 1, under 2 tol = 2e-7 only when u stands still or
      moves by one step), the M-step's sums and logs in float64;
    * the prior and the vote weights come from the smoothed counts as logs of ratios (two
      logs per judge and prefix where the logit form needs six transcendentals):
      w1 - w0 = log((a1+1)(b0+1) / ((a0+1)(b1+1))), w0 = log((a0+1)(n_b+2) / ((n_a+2)(b0+1))),
      w1 = log((a1+1)(n_b+2) / ((n_a+2)(b1+1))), with a the t-weighted and b the
      (1-t)-weighted votes and n_a, n_b their totals (:func:`_theta`, :func:`_vote_weights`
      give the same values through logits);
    * the prior and the sum of the 0-vote weights enter the E-step's product as the weight
      of the column of ones, and the t-weighted total comes out of the M-step's as the last
      column, instead of two more passes over the posteriors.
    """
    K_top = int(Ks[-1])
    k_ab = int(np.searchsorted(ab_judges, K_top))     # abstaining judges among the first K_top
    aj = ab_judges[:k_ab]
    width = K_top + k_ab                              # the ones column comes after these
    A = np.empty((len(count), width + 1))
    A[:, :K_top] = V1[:, :K_top]
    A[:, K_top:width] = AB[:, :k_ab]
    A[:, width] = 1.0
    half_counts = (A * (0.5 * count)[:, None]).astype(dtype, copy=False)
    A_t = np.ascontiguousarray(A.T, dtype=dtype)
    col1_2, col0_2 = col1[:K_top] + 2.0, col0[:K_top] + 2.0   # smoothed: b + 1 = col + 2 - (a + 1)
    keep = (np.arange(K_top)[None, :] < Ks[:, None]).astype(float)
    half_keep = 0.5 * keep
    active = np.arange(len(Ks))
    out: list = [None] * len(Ks)
    U = (2.0 * np.asarray(T, dtype=float)).astype(dtype, copy=False)   # the state, in the products' precision
    for step in range(max_iter):
        S = (U @ half_counts).astype(float, copy=False)   # t-weighted 1-votes, abstentions, total
        tw_sum = S[:, width]
        a1 = S[:, :K_top] + 1.0                      # smoothed: a1 + 1, a0 + 1, b1 + 1, b0 + 1
        b1 = col1_2 - a1
        a0 = (tw_sum + 1.0)[:, None] - S[:, :K_top]
        if k_ab:
            a0[:, aj] -= S[:, K_top:width]
        b0 = col0_2 - a0
        n_b = b0 + b1                                # n_b + 2 and n_a + 2
        n_a = a1 + a0
        w0 = np.log(a0 * n_b / (n_a * b0))
        w0 *= keep
        pi = np.clip(tw_sum / total, _PI_CLIP, 1 - _PI_CLIP)
        prior = np.log(pi / (1 - pi))
        half = np.empty((len(active), width + 1))    # half the log-odds weights (halving is exact)
        h = half[:, :K_top]
        np.divide(a1 * b0, a0 * b1, out=h)
        np.log(h, out=h)
        h *= half_keep
        if k_ab:
            np.multiply(w0[:, aj], -0.5, out=half[:, K_top:width])
        half[:, width] = 0.5 * (prior + w0.sum(axis=1))
        new_U = half.astype(dtype, copy=False) @ A_t
        np.tanh(new_U, out=new_U)
        new_U += 1.0
        U -= new_U
        done = np.maximum(U.max(axis=1, initial=0.0), -U.min(axis=1, initial=0.0)) < 2.0 * tol
        U = new_U
        if step == max_iter - 1:
            done[:] = True
        if done.any():
            for m, i in zip(active[done], np.flatnonzero(done)):
                K = int(Ks[m])
                w1 = np.log(a1[i, :K] * n_b[i, :K] / (n_a[i, :K] * b1[i, :K]))
                out[m] = (float(prior[i]), w1, w0[i, :K].copy(), 0.5 * U[i].astype(float))
            still = ~done
            if not still.any():
                break
            active, U, keep, half_keep = active[still], U[still], keep[still], half_keep[still]
    return out
