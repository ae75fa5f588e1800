"""``mean_iso``: mean/vote aggregation with isotonic calibration.

Model: P(Y=1 | x) = m(mean_j s_j) with s_j the scalar judge scores (A=1, B=0, tie=1/2)
and m a monotone increasing map fitted by isotonic regression on the calibration block.
"""

from __future__ import annotations

from .base import IsotonicMap
from .estimator import Aggregator
from .fitted import MeanIsoModel


class MeanIsotonic(MeanIsoModel, Aggregator):
    complexity_rank = 1
    ladder = 0

    def _fit(self, X, y, unlabelled):
        self.iso_ = IsotonicMap().fit(X.scores.mean(axis=1), y, X.weight)
