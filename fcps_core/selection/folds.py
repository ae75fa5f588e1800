"""Grouped folds and the held-out prediction matrix they produce."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SplitError


@dataclass
class HeldOut:
    """Held-out predictions of every candidate and baseline on the same rows."""

    rows: np.ndarray            # panel rows (D under crossfit, V under split)
    preds: np.ndarray           # (repeats, rows, candidates)
    baselines: dict             # name -> (repeats, rows); single_judges -> (repeats, rows, judges)


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
