"""Which items to label next: an audited, variance-reducing batch (issue "Which items to label next").

A batch of ``n`` items to send to annotators is drawn in two parts.

**Audit part.** Its size is the precision rule of :func:`audit_size` (the smallest audit
that keeps E, below, at least half of the labelled rows once the batch is labelled, so the
honest estimate's standard error stays within sqrt(2) of one read on every labelled row), or
``ceil(audit_share * n)`` for a fixed ``audit_share``. The audit items are a
simple random sample of the pool: the rows outside the research test block T, in a
seeded random order, walked until the audit part holds its new items. Rows already in the
*evaluation set* E are skipped; a labelled row outside E that the walk meets (an item an
earlier batch chose actively) joins E without a new label (a free audit row, reported).
E starts as the rows labelled before any active batch. So E is, at every step, a simple
random sample without replacement of the pool, whatever the active part chose: each draw
is uniform over the pool rows not yet in E and never reads a label. Every held-out risk,
tie and deployed-risk estimate computed on E alone (the selector's ``eval_rows``, see
:mod:`fcps_core.selection.evaluation_rows`) is therefore that of a random sample, not of the
active choice: active testing needs such a correction (Kossen et al., "Active Testing:
Sample-Efficient Model Evaluation", ICML 2021); the audit split is the design-based
alternative to their importance weights, with known (uniform) inclusion probabilities, as
in the audit/prediction split of active statistical inference (Zrnic & Candes, "Active
Statistical Inference", ICML 2024).

**Active part** (the rest of the batch). Greedy expected reduction of the deployed
predictor's integrated prediction variance over the pool's traffic (V-optimal design,
Cohn, Ghahramani & Jordan, "Active Learning with Statistical Models", JAIR 1996). For each
deployed member (one candidate, or the tied candidates an averaging deployment
averages) the prediction is read as a linear smoother of features x:

* table-like members: x is the one-hot joint output pattern z of the member's judges, the
  design matrix A is diagonal with the labelled count N_z plus the smoothing alpha;
* scalar members, linearised: x = (1, scalar scores of the member's judges),
  A = X_L' W_L X_L + I.

w(x) is the label noise at x: the Bernoulli variance p(1 - p) of the deployed prediction
(clipped to [0.01, 0.25]) when every label is 0/1 -- for a logistic-type member also the
link's slope, so the variance of the predicted probability is w(x)^2 x' A^-1 x -- else 1.
With Sigma = E_pool[w(x)^2 x x'] (the traffic's weighted second moment), labelling an item
at x lowers the integrated variance sum_pool Var(f(x)) by

    gain(x) = w(x) * x' A^-1 Sigma A^-1 x / (1 + w(x) x' A^-1 x),

which for a table is w_z p_z / ((N_z + alpha)(N_z + alpha + 1)): the cell pressure
p_z / N_z of Eq. eq:cell-pressure, differenced (a heavy, thinly labelled, noisy cell first).
The member gains are averaged; the best item is added, A updated (Sherman-Morrison: one
rank-one step, O(d) per pool pattern), and the next item chosen, so a batch spreads over
joint patterns instead of piling into one. Items are handled by their distinct feature
rows: which item of a chosen pattern is labelled is a seeded uniform draw, so the active
part chooses by judge outputs only (never by a label), and the label distribution given the
outputs is untouched.

**Groups.** With ``whole_groups`` the unlabelled items sharing a chosen item's group are
added right after it (while the batch has room): labels that arrive by source stay
together, as the grouped folds keep them.

Reasons. Each chosen row carries why it was chosen: ``audit`` (uniform draw, inclusion
probability the audit part's size over the pool rows outside E) or ``active`` with its
gain and, for a table member, the cell's labelled count and traffic share.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..wording import count_of, noun_for
from ..errors import FCPSError

#: default audit share: None = the precision rule (:func:`audit_size`)
DEFAULT_AUDIT_SHARE = None
#: the evaluation set E is kept at least this share of the labelled rows (precision rule)
MIN_EVALUATION_SHARE = 0.5
#: ridge of the scalar members' design matrix A (features are scores in [0, 1])
DESIGN_RIDGE = 1.0
#: Bernoulli variance clip: a prediction of exactly 0 or 1 still carries some doubt
NOISE_FLOOR, NOISE_CEILING = 0.01, 0.25


class LabelNextError(FCPSError):
    """The batch cannot be drawn (no unlabelled row, a batch larger than the pool, ...);
    ``hint`` (what to do) is appended in parentheses."""

    def __init__(self, message: str, *, hint: str | None = None):
        self.hint = hint
        super().__init__(message + (f" ({hint})" if hint else ""))


@dataclass
class LabelBatch:
    """The chosen rows (panel row indices, in the order chosen) and why."""

    rows: np.ndarray
    audit: np.ndarray            # bool per chosen row: drawn by the uniform audit
    gain: np.ndarray             # expected variance reduction (NaN for audit rows)
    inclusion: np.ndarray        # audit rows: the draw's inclusion probability; active: NaN
    reasons: list[str]
    free_audit_rows: np.ndarray  # labelled rows the audit walk met (join E with no new label)
    info: dict = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.rows)


def pool_rows(panel, test_rows: np.ndarray | None = None) -> np.ndarray:
    """The rows a batch may come from: every row outside the research test block T."""
    pool = np.ones(panel.n_rows, dtype=bool)
    if test_rows is not None and len(test_rows):
        pool[np.asarray(test_rows, dtype=np.int64)] = False
    return pool


def check_batch(panel, n: int, pool: np.ndarray) -> None:
    """One clear error when ``n`` new unlabelled items cannot be returned."""
    if not isinstance(n, (int, np.integer)) or n < 1:
        raise LabelNextError(f"the batch size must be a whole number of at least 1 (got {n!r})",
                             hint="give --batch N with N >= 1")
    free = int((pool & ~panel.labelled).sum())
    if free == 0:
        raise LabelNextError("the panel has no unlabelled rows to choose from (every label cell is filled)",
                             hint="add items with a blank label, or all of them are labelled already")
    if n > free:
        raise LabelNextError(f"a batch of {n} items was asked for but only {free} rows are unlabelled",
                             hint=f"give --batch {free} or fewer")


def audit_size(n: int, n_labelled: int, n_evaluated: int, audit_share: float | None = None,
               min_evaluation_share: float = MIN_EVALUATION_SHARE) -> int:
    """How many of a batch of ``n`` are audit items.

    With ``audit_share`` given: ``ceil(audit_share * n)``. Otherwise the precision rule: the
    smallest audit that keeps the evaluation set E at least ``min_evaluation_share`` of the
    labelled rows once the batch is labelled, ``max(0, ceil(s (L + n) - |E|))`` (at most n).
    The deployed-risk estimate read on E is a mean over |E| random rows, so its standard error
    is at most ``1 / sqrt(s)`` times that of the same mean over every labelled row (with
    s = 1/2: at most sqrt(2) times); every label beyond that goes to the active part. While E
    (the random start) is still large, whole batches are active."""
    if audit_share is not None:
        return min(n, int(math.ceil(audit_share * n)))
    return int(min(n, max(0, math.ceil(min_evaluation_share * (n_labelled + n) - n_evaluated - 1e-9))))


def audit_draw(panel, n_audit: int, pool: np.ndarray, evaluated: np.ndarray,
               rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """(new unlabelled audit rows, labelled rows met on the way, inclusion probability).

    The walk is a uniform random order of the pool rows outside the evaluation set; a
    labelled row met joins the evaluation set for free, an unlabelled one is an audit row to
    label, until ``n_audit`` of those are drawn."""
    candidates = np.flatnonzero(pool & ~evaluated)
    order = rng.permutation(candidates)
    unl = ~panel.labelled[order]
    if n_audit <= 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), 0.0
    stop = int(np.searchsorted(np.cumsum(unl), n_audit)) + 1
    walked = order[:stop]
    new = walked[unl[:stop]]
    met = walked[~unl[:stop]]
    return new.astype(np.int64), met.astype(np.int64), float(stop / max(len(candidates), 1))


class _TableDesign:
    """A table-like member: one-hot joint patterns, A = diag(N_z + alpha)."""

    def __init__(self, codes: np.ndarray, labelled: np.ndarray, pool: np.ndarray, alpha: float,
                 noise: np.ndarray):
        _, self.cell = np.unique(codes, axis=0, return_inverse=True)
        self.cell = self.cell.reshape(-1)
        n_cells = int(self.cell.max(initial=-1)) + 1
        self.count = np.bincount(self.cell[labelled], minlength=n_cells).astype(float) + alpha
        self.share = np.bincount(self.cell[pool], minlength=n_cells).astype(float) / max(int(pool.sum()), 1)
        self.noise = noise
        self.alpha = alpha

    def prepare(self, rows: np.ndarray) -> None:
        """Nothing to keep: a cell's gain is read from its count."""

    def gains(self, rows: np.ndarray) -> np.ndarray:
        z = self.cell[rows]
        return self.noise[rows] * self.share[z] / (self.count[z] * (self.count[z] + 1.0))

    def add(self, row: int) -> None:
        self.count[self.cell[row]] += 1.0

    def describe(self, row: int) -> str:
        z = self.cell[row]
        return f"cell with {count_of(float(self.count[z] - self.alpha), 'label')}, {100 * self.share[z]:.1f}% of traffic"


class _LinearDesign:
    """A scalar member, linearised: x = (1, scores), w(x) the noise (Fisher) weight,
    A = X_L' W_L X_L + ridge I, Sigma = E_pool[w(x)^2 x x'] (the variance of the predicted
    probability p = g(x'b) is w(x)^2 x' A^-1 x with w = p(1 - p) for a 0/1 label, the
    logistic link's slope); an item at x adds w(x) x x' to A."""

    def __init__(self, scores: np.ndarray, labelled: np.ndarray, pool: np.ndarray, noise: np.ndarray):
        X = np.column_stack([np.ones(len(scores)), np.nan_to_num(scores, nan=0.5)])
        self.X, self.w = X, noise
        XL, XP = X[labelled], X[pool]
        A = (XL * noise[labelled, None]).T @ XL + DESIGN_RIDGE * np.eye(X.shape[1])
        self.Ainv = np.linalg.inv(A)
        self.Sigma = (XP * (noise[pool] ** 2)[:, None]).T @ XP / max(len(XP), 1)
        self.M = self.Ainv @ self.Sigma @ self.Ainv

    def prepare(self, rows: np.ndarray) -> None:
        """Fix the candidate rows whose gains are asked for: a = x'A^-1 x and
        b = x'A^-1 Sigma A^-1 x are computed once here and kept current by :meth:`add`."""
        self.rows = rows
        X = self.X[rows]
        self.a = np.einsum("ij,jk,ik->i", X, self.Ainv, X)
        self.b = np.einsum("ij,jk,ik->i", X, self.M, X)

    def gains(self, rows: np.ndarray) -> np.ndarray:
        w = self.w[rows]
        return w * self.b / (1.0 + w * self.a)

    def add(self, row: int) -> None:
        """A += w x x' (Sherman-Morrison): with v = A^-1 x, c = 1 + x'v, s = A^-1 Sigma v,
        a_u -= (x_u'v)^2 / c and b_u -= 2 (x_u's)(x_u'v) / c - (x_u'v)^2 (v'Sigma v) / c^2:
        O(d) per candidate row, never a d x d product per row."""
        x = self.X[row] * np.sqrt(self.w[row])
        v = self.Ainv @ x
        c = 1.0 + x @ v
        sv = self.Sigma @ v
        s = self.Ainv @ sv
        if getattr(self, "rows", None) is not None:
            X = self.X[self.rows]
            xv, xs = X @ v, X @ s
            self.a -= xv ** 2 / c
            self.b += -2.0 * xs * xv / c + xv ** 2 * (v @ sv) / c ** 2
        self.Ainv -= np.outer(v, v) / c
        self.M = self.Ainv @ self.Sigma @ self.Ainv

    def describe(self, row: int) -> str:
        x = self.X[row]
        return f"leverage {x @ self.Ainv @ x:.3f} under the deployed judges' scores"


def _designs(result, labelled: np.ndarray, pool: np.ndarray, noise: np.ndarray) -> list:
    from ..families import REGISTRY
    enc = result.encoded
    alpha = float(getattr(result.selector, "alpha", 0.5))
    out = []
    for c in result.deployed_members:
        idx = list(c.judge_idx)
        if REGISTRY[c.family].table_like or REGISTRY[c.family].needs_patterns:
            out.append(_TableDesign(enc.codes[:, idx], labelled, pool, alpha, noise))
        else:
            out.append(_LinearDesign(enc.scores[:, idx], labelled, pool, noise))
    return out


def noise_variance(result, rows: np.ndarray) -> np.ndarray:
    """sigma^2(x) per row: the deployed prediction's Bernoulli variance p(1 - p), clipped to
    [NOISE_FLOOR, NOISE_CEILING], when every label is 0/1; else constant (it then cancels in
    the ranking)."""
    y = result.panel.labels[result.panel.labelled]
    if len(y) and np.isin(y, (0.0, 1.0)).all():
        p = np.clip(result.predict_deployed(rows), 0.0, 1.0)
        return np.clip(p * (1 - p), NOISE_FLOOR, NOISE_CEILING)
    return np.ones(len(rows))


def choose_batch(result, n: int, *, seed: int = 0, audit_share: float | None = DEFAULT_AUDIT_SHARE,
                 evaluated: np.ndarray | None = None, whole_groups: bool = False,
                 test_rows: np.ndarray | None = None) -> LabelBatch:
    """The next ``n`` unlabelled rows of ``result.panel`` to label (see the module doc).

    ``result``: the selection fitted on the panel's labelled rows (its deployed members
    define the design). ``evaluated``: bool per row, the evaluation set E (default: every
    labelled row). ``test_rows``: rows of the research test block, never chosen."""
    panel = result.panel
    if audit_share is not None and (not math.isfinite(audit_share) or not 0.0 <= audit_share <= 1.0):
        raise LabelNextError(f"the audit share must be between 0 and 1 (got {audit_share})")
    pool = pool_rows(panel, test_rows)
    check_batch(panel, n, pool)
    labelled = panel.labelled & pool
    evaluated = labelled.copy() if evaluated is None else (np.asarray(evaluated, dtype=bool) & pool)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 31]))
    n_audit = audit_size(n, int(labelled.sum()), int(evaluated.sum()), audit_share)
    audit_rows, met, inclusion = audit_draw(panel, n_audit, pool, evaluated, rng)
    chosen = list(audit_rows.tolist())
    taken = labelled.copy()
    taken[audit_rows] = True
    reasons = [f"audit: uniform random draw from the pool (inclusion probability {inclusion:.3g})"] * len(chosen)
    gains = [math.nan] * len(chosen)
    incl = [inclusion] * len(chosen)
    is_audit = [True] * len(chosen)
    n_active = n - len(chosen)
    if n_active > 0:
        designs = _designs(result, taken, pool, noise_variance(result, np.arange(panel.n_rows)))
        for row in audit_rows:
            for d in designs:
                d.add(int(row))
        candidates = np.flatnonzero(pool & ~taken)
        # the distinct feature rows of the candidates: one gain per pattern, items drawn at random
        keys = np.column_stack([d.cell[candidates] if isinstance(d, _TableDesign) else
                                np.unique(d.X[candidates], axis=0, return_inverse=True)[1].reshape(-1)
                                for d in designs])
        _, pattern = np.unique(keys, axis=0, return_inverse=True)
        pattern = pattern.reshape(-1)
        rep = np.zeros(int(pattern.max()) + 1, dtype=np.int64)
        rep[pattern[::-1]] = np.arange(len(pattern) - 1, -1, -1)
        left = np.bincount(pattern).astype(np.int64)
        for d in designs:
            d.prepare(candidates[rep])
        members = {}
        for k in rng.permutation(len(candidates)):
            members.setdefault(int(pattern[k]), []).append(int(candidates[k]))
        groups = panel.group_ids
        while len(chosen) < n:
            g = np.mean([d.gains(candidates[rep]) for d in designs], axis=0)
            g[left == 0] = -np.inf
            best = int(np.argmax(g))
            row = members[best].pop()
            left[best] -= 1
            batch_rows = [row]
            if whole_groups:
                mates = np.flatnonzero((groups == groups[row]) & pool & ~taken)
                batch_rows += [int(m) for m in mates if m != row][: n - len(chosen) - 1]
            for r in batch_rows:
                why = designs[0].describe(r)
                if r != row:
                    why = "same group as the item above; " + why
                    p = int(np.flatnonzero(candidates == r)[0])
                    members[int(pattern[p])].remove(r)
                    left[pattern[p]] -= 1
                reasons.append(f"active: expected variance reduction {g[best]:.3g} ({why})")
                chosen.append(r)
                gains.append(float(g[best]))
                incl.append(math.nan)
                is_audit.append(False)
                taken[r] = True
                for d in designs:
                    d.add(r)
    return LabelBatch(rows=np.asarray(chosen, dtype=np.int64), audit=np.asarray(is_audit, dtype=bool),
                      gain=np.asarray(gains, dtype=float), inclusion=np.asarray(incl, dtype=float),
                      reasons=reasons, free_audit_rows=met,
                      info={"audit_share": audit_share, "n_audit": int(len(audit_rows)),
                            "n_active": int(n - len(audit_rows)), "n_free_audit": int(len(met)),
                            "whole_groups": bool(whole_groups),
                            "deployed": [f"{c.family} K={c.K}" for c in result.deployed_members]})


def random_batch(panel, n: int, *, seed: int = 0, test_rows: np.ndarray | None = None) -> np.ndarray:
    """A uniform random batch of ``n`` unlabelled pool rows (the baseline the bench compares)."""
    pool = pool_rows(panel, test_rows)
    check_batch(panel, n, pool)
    rng = np.random.default_rng(np.random.SeedSequence([int(seed), 31, 1]))
    return rng.choice(np.flatnonzero(pool & ~panel.labelled), size=n, replace=False).astype(np.int64)
