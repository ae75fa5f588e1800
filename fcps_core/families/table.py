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

from .base import PrefixFeatures, pattern_table
from .estimator import Aggregator
from .fitted import TableModel


class JointTable(TableModel, Aggregator):
    complexity_rank = 9
    ladder = 4
    menu_fixed = ("alpha", "fallback")

    def _levels(self, X: PrefixFeatures) -> list[int]:
        top = X.K - 1
        return list(range(top + 1)) if self.fallback == "lower_prefix" else [top]

    def _fit(self, X, y, unlabelled):
        self.tables_ = {}
        for level in self._levels(X):
            uniq, sums, counts = pattern_table(X.patterns[level], y, X.weight, X.pattern_codes(level))
            self.tables_[level] = (uniq, sums, counts)
