"""Choice rules over a matrix of held-out losses, with paired, group-clustered errors.

The input is each candidate's held-out prediction for every row (out-of-fold rows under the
cross-fitted protocol, V rows under the split protocol). A rule turns it into the deployed
choice:

* ``argmin`` -- the lowest mean held-out risk (the paper's Eq. eq:general-selection);
  exact ties go to the smaller K, the simpler family, the earlier candidate.
* ``simplest_within_se`` -- among candidates whose risk is within one paired SE of the
  best, the simplest on the paper's complexity ladder (mean/vote < one-coin < ridge/logistic
  < pairwise stackers < table-like), then the smaller K.
* ``tie_average`` -- the average of the statistically tied candidates' predictions (within
  one paired SE of the best; identical prediction columns counted once; at most
  ``max_members``, lowest risk first), deployed as one predictor.
* ``cheapest_tied`` -- among the same tie set, the cheapest to run (the sum of its judges'
  costs, then the lower latency, then the simpler family and smaller K); needs judge costs
  (:mod:`fcps_core.judge_costs`).

Paired SE. For candidates c and b the per-row loss differences d_i = l_ic - l_ib are summed
within each group g (rows of one group are dependent), D_g, and the SE of the mean
difference is sqrt(G/(G-1) * sum_g (D_g - dbar n_g)^2) / n with n rows in G groups (the
cluster-robust variance of a mean). Bootstrap weights w_g (how often group g was drawn)
enter every sum, so the same code serves the bias-corrected bootstrap of :mod:`.honesty`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import losses, risk_tolerance
from ..families import REGISTRY

CHOICES = ("argmin", "simplest_within_se", "tie_average", "cheapest_tied")
#: rules that pick one member of the tie set by a fixed preference order (:func:`preference_order`)
WITHIN_TIE_RULES = ("simplest_within_se", "cheapest_tied")


@dataclass
class Choice:
    best: int                 # the lowest-risk candidate (column)
    chosen: int               # the deployed candidate (tie_average: its best member)
    members: list[int] | None  # tie_average: the averaged columns
    tied: np.ndarray          # columns within one paired SE of the best


class GroupedLosses:
    """Per-group sums of a (rows, candidates) loss matrix, for means and clustered SEs."""

    def __init__(self, row_losses: np.ndarray, groups: np.ndarray):
        uniq, inv = np.unique(groups, return_inverse=True)
        self.n_groups = len(uniq)
        self.group_of_row = inv
        self.rows_per_group = np.bincount(inv, minlength=self.n_groups).astype(float)
        self.sums = np.zeros((self.n_groups, row_losses.shape[1]))
        np.add.at(self.sums, inv, row_losses)

    def means(self, w: np.ndarray | None = None) -> np.ndarray:
        if w is None:
            return self.sums.sum(axis=0) / self.rows_per_group.sum()
        return (w @ self.sums) / (w @ self.rows_per_group)

    def mean_se(self, means: np.ndarray | None = None) -> np.ndarray:
        """Clustered SE of each column's mean (no bootstrap weights)."""
        means = self.means() if means is None else means
        G = self.n_groups
        if G <= 1:
            return np.full(self.sums.shape[1], np.nan)
        resid = self.sums - np.outer(self.rows_per_group, means)
        return np.sqrt((resid ** 2).sum(axis=0) * G / (G - 1)) / self.rows_per_group.sum()

    def paired_se(self, ref: int, w: np.ndarray | None = None,
                  means: np.ndarray | None = None) -> np.ndarray:
        """Clustered SE of mean(loss_c - loss_ref) for every column c (0 for c = ref)."""
        w = np.ones(self.n_groups) if w is None else w
        means = self.means(w) if means is None else means
        n = float(w @ self.rows_per_group)
        drawn = float(w.sum())
        if drawn <= 1 or n <= 0:
            return np.full(self.sums.shape[1], np.nan)
        diff = self.sums - self.sums[:, [ref]]
        resid = diff - np.outer(self.rows_per_group, means - means[ref])
        var = (w @ resid ** 2) * (drawn / (drawn - 1)) / n ** 2
        return np.sqrt(np.maximum(var, 0.0))


def complexity_order(candidates) -> np.ndarray:
    """Rank of each candidate on (ladder level, K, menu order): smaller is simpler."""
    keys = [(REGISTRY[c.family].ladder, c.K, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def cost_order(candidates, costs) -> np.ndarray:
    """Rank of each candidate on (cost, latency, ladder level, K, menu order)."""
    from ..judge_costs import judges_cost
    keys = [(*judges_cost(c.judges, costs), REGISTRY[c.family].ladder, c.K, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def preference_order(rule: str, candidates, costs=None) -> np.ndarray:
    """The order a within-tie rule prefers: simplest first, or cheapest first."""
    if rule == "cheapest_tied":
        return cost_order(candidates, costs)
    return complexity_order(candidates)


def tie_break_order(candidates) -> np.ndarray:
    """The argmin's tie rule (smaller K, simpler family, menu order) as a rank."""
    keys = [(c.K, REGISTRY[c.family].complexity_rank, c.index) for c in candidates]
    order = sorted(range(len(keys)), key=keys.__getitem__)
    rank = np.empty(len(keys), dtype=np.int64)
    rank[order] = np.arange(len(keys))
    return rank


def prediction_signatures(preds: np.ndarray) -> np.ndarray:
    """An id per candidate column; columns with identical held-out predictions share it
    (the same model reached by two paths must not count twice in an average)."""
    flat = np.ascontiguousarray(np.round(preds.reshape(-1, preds.shape[-1]).T, 12))
    seen: dict[bytes, int] = {}
    return np.array([seen.setdefault(col.tobytes(), len(seen)) for col in flat], dtype=np.int64)


def best_column(means: np.ndarray, tie_rank: np.ndarray) -> int:
    """The lowest mean risk; candidates within the numerical tolerance go by ``tie_rank``."""
    lo = float(means.min())
    near = np.flatnonzero(means <= lo + risk_tolerance(lo))
    return int(near[np.argmin(tie_rank[near])])


def tie_set(grouped: GroupedLosses, tie_rank: np.ndarray, w: np.ndarray | None = None):
    """(best, tied columns, means, paired SEs against the best): the columns within one
    paired, group-clustered SE of the lowest (possibly bootstrap-weighted) mean risk."""
    means = grouped.means(w)
    best = best_column(means, tie_rank)
    se = grouped.paired_se(best, w, means)
    se = np.where(np.isfinite(se), se, 0.0)
    tied = np.flatnonzero(means - means[best] <= se + risk_tolerance(float(means.min())))
    return best, tied, means, se


def choose(rule: str, grouped: GroupedLosses, *, tie_rank: np.ndarray, simple_rank: np.ndarray,
           signatures: np.ndarray, max_members: int, w: np.ndarray | None = None) -> Choice:
    """Apply ``rule`` to (possibly bootstrap-weighted) grouped losses; ``simple_rank`` is
    the within-tie preference (:func:`preference_order`)."""
    if rule == "argmin":
        best = best_column(grouped.means(w), tie_rank)
        return Choice(best, best, None, np.array([best]))
    best, tied, means, _ = tie_set(grouped, tie_rank, w)
    if rule in WITHIN_TIE_RULES:
        chosen = int(tied[np.argmin(simple_rank[tied])])
        return Choice(best, chosen, None, tied)
    members = pick_members(tied, means, tie_rank, signatures, max_members)
    return Choice(best, members[0], members if len(members) > 1 else None, tied)


def pick_members(tied: np.ndarray, means: np.ndarray, tie_rank: np.ndarray, signatures: np.ndarray,
                 max_members: int) -> list[int]:
    """tie_average's members: the tied columns, lowest risk first (ties by ``tie_rank``),
    one column per distinct prediction vector, at most ``max_members``."""
    order = tied[np.lexsort((tie_rank[tied], means[tied]))]
    members, seen = [], set()
    for c in order:
        if signatures[c] not in seen:
            seen.add(signatures[c])
            members.append(int(c))
        if len(members) >= max_members:
            break
    return members


def deployed_row_losses(objective: str, y: np.ndarray, preds: np.ndarray, choice: Choice) -> np.ndarray:
    """Per-row held-out loss of a choice (averaged over repeats): the chosen column, or the
    loss of the members' average prediction."""
    p = preds[:, :, choice.members].mean(axis=2) if choice.members else preds[:, :, choice.chosen]
    return np.mean([losses(objective, y, p[r]) for r in range(preds.shape[0])], axis=0)


def row_losses(objective: str, y: np.ndarray, preds: np.ndarray) -> np.ndarray:
    """(rows, candidates) loss averaged over the repeats of (repeats, rows, candidates)."""
    out = np.zeros(preds.shape[1:])
    for r in range(preds.shape[0]):
        out += losses(objective, y[:, None], preds[r])
    return out / preds.shape[0]


def apply_choice_rule(result, selector, heldout) -> Choice:
    """Choose on the held-out predictions of ``heldout`` (:class:`.folds.HeldOut`) and
    record the choice on ``result`` (selected index, members, risks)."""
    y, preds = heldout.y, heldout.preds
    cands = result.candidates
    ch = choose(selector.choice, heldout.grouped(selector.objective), tie_rank=tie_break_order(cands),
                simple_rank=preference_order(selector.choice, cands, selector.judge_costs),
                signatures=heldout.signatures(),
                max_members=selector.max_members)
    result.selected_index = ch.chosen
    result.members = ch.members
    result.choice_info = {"rule": selector.choice, "best_index": ch.best,
                          "tied_count": int(len(ch.tied))}
    if ch.members:
        result.selected_val = {
            "val_mse": float(deployed_row_losses("mse", y, preds, ch).mean()),
            "val_nll": float(deployed_row_losses("nll", y, preds, ch).mean())}
    return ch
