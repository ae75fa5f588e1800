"""``table``: the smoothed joint-pattern table (paper Eq. eq:smooth-estimator).

Model: g(z) = E[Y | Z_K = z] for the joint output pattern z of the K judges, estimated on
the calibration block as

    g_hat(z) = (sum_{i: Z_i = z} y_i + alpha * ybar_cal) / (N_z + alpha),

with fallback on patterns never seen in calibration (N_z = 0):

* ``global`` (paper default): ybar_cal.
* ``lower_prefix``: the smoothed table of the longest shorter prefix (K-1, K-2, ...) in
  which the row's sub-pattern was seen, else ybar_cal (paper Table tab:table-sensitivity).
"""

from __future__ import annotations

import numpy as np

from .base import Aggregator, PrefixFeatures, ids_from_json, ids_to_json, lookup, pattern_table

FALLBACKS = ("global", "lower_prefix")


class JointTable(Aggregator):
    name = "table"
    table_like = True
    needs_patterns = True
    complexity_rank = 9
    ladder = 4
    menu_fixed = ("alpha", "fallback")

    def __init__(self, alpha: float = 0.5, fallback: str = "global"):
        self.alpha = alpha
        self.fallback = fallback

    def _validate_params(self) -> None:
        if not (isinstance(self.alpha, (int, float)) and self.alpha >= 0):
            raise ValueError("alpha must be >= 0")
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {FALLBACKS}")

    def _levels(self, X: PrefixFeatures) -> list[int]:
        top = X.K - 1
        return list(range(top + 1)) if self.fallback == "lower_prefix" else [top]

    def _fit(self, X, y, unlabelled):
        self.tables_ = {}
        for level in self._levels(X):
            uniq, sums, counts = pattern_table(X.patterns[level], y, X.weight)
            self.tables_[level] = (uniq, sums, counts)

    def _cell_values(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        uniq, sums, counts = self.tables_[level]
        return uniq, (sums + self.alpha * self.ybar_) / (counts + self.alpha)

    def _predict(self, X):
        pred = np.full(X.n_rows, self.ybar_)
        unresolved = np.ones(X.n_rows, dtype=bool)
        for level in sorted(self.tables_, reverse=True):
            uniq, values = self._cell_values(level)
            pos, found = lookup(uniq, X.patterns[level])
            take = unresolved & found
            pred[take] = values[pos[take]]
            unresolved &= ~found
        return pred

    def _state(self):
        return {"tables": {str(level): {"patterns": ids_to_json(u), "sums": s.tolist(),
                                        "counts": c.tolist()}
                           for level, (u, s, c) in self.tables_.items()}}

    def _load(self, state):
        self.tables_ = {int(level): (ids_from_json(t["patterns"]), np.asarray(t["sums"], float),
                                     np.asarray(t["counts"], float))
                        for level, t in state["tables"].items()}
