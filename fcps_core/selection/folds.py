"""Grouped folds and the held-out prediction matrix they produce."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import SplitError
from .choice import GroupedLosses, prediction_signatures, row_losses


@dataclass
class HeldOut:
    """Held-out predictions of every candidate and baseline on the same rows, with the
    matrices derived from them (row losses, per-group sums, prediction signatures) computed
    once and shared by the choice rule, the verdicts and the bootstrap."""

    rows: np.ndarray            # panel rows (D under crossfit, V under split)
    preds: np.ndarray           # (repeats, rows, candidates)
    baselines: dict             # name -> (repeats, rows); single_judges -> (repeats, rows, judges)
    y: np.ndarray               # labels of ``rows``
    groups: np.ndarray          # group ids of ``rows``
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def of(cls, panel, rows: np.ndarray, preds: np.ndarray, baselines: dict) -> "HeldOut":
        return cls(rows=rows, preds=preds, baselines=baselines, y=panel.labels[rows],
                   groups=panel.group_ids[rows])

    def losses(self, objective: str) -> np.ndarray:
        """(rows, candidates) held-out loss, averaged over the repeats."""
        key = ("losses", objective)
        if key not in self._cache:
            self._cache[key] = row_losses(objective, self.y, self.preds)
        return self._cache[key]

    def grouped(self, objective: str) -> GroupedLosses:
        key = ("grouped", objective)
        if key not in self._cache:
            self._cache[key] = GroupedLosses(self.losses(objective), self.groups)
        return self._cache[key]

    def signatures(self) -> np.ndarray:
        if "signatures" not in self._cache:
            self._cache["signatures"] = prediction_signatures(self.preds)
        return self._cache["signatures"]


def grouped_folds(groups: np.ndarray, folds: int, repeats: int, seed: int) -> list[tuple]:
    """``repeats`` x ``folds`` (repeat, train positions, held-out positions) into ``groups``;
    each repeat shuffles the groups with its own seed and deals them to folds in turn."""
    uniq, inv = np.unique(groups, return_inverse=True)
    if len(uniq) < folds:
        raise SplitError(f"cross-fitting needs at least {folds} labelled groups outside T "
                         f"(found {len(uniq)}); lower --folds or label more groups")
    out = []
    for r, s in enumerate(np.random.SeedSequence(seed).generate_state(repeats)):
        order = np.random.default_rng(int(s)).permutation(len(uniq))
        fold_of_group = np.empty(len(uniq), dtype=np.int64)
        fold_of_group[order] = np.arange(len(uniq)) % folds
        fold = fold_of_group[inv]
        for f in range(folds):
            out.append((r, np.flatnonzero(fold != f), np.flatnonzero(fold == f)))
    return out
