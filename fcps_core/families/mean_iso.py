"""``mean_iso``: mean/vote aggregation with isotonic calibration.

Model: P(Y=1 | x) = m(mean_j s_j) with s_j the scalar judge scores (A=1, B=0, tie=1/2)
and m a monotone increasing map fitted by isotonic regression on the calibration block.
"""

from __future__ import annotations

from .base import IsotonicMap, label_ranks
from .estimator import Aggregator
from .fitted import MeanIsoModel


class MeanIsotonic(MeanIsoModel, Aggregator):
    complexity_rank = 1
    ladder = 0
    path_keeps_prefixes = True

    def _fit(self, X, y, unlabelled, y_rank=None):
        self.iso_ = IsotonicMap().fit(X.scores.mean(axis=1), y, X.weight, y_rank=y_rank)

    @classmethod
    def fit_each(cls, parts: list, y, **params) -> list["MeanIsotonic"]:
        """``cls(**params).fit(part, y)`` for every part (features of the same rows: a path's
        prefixes, or one judge's column each for the single-judge baselines), the isotonic
        maps sharing the labels' dense ranks (:func:`.base.label_ranks`), which only speed up
        their sort of tie-heavy means: each model is the one its own fit gives."""
        models, y_rank = [], None
        for part in parts:
            part, y_part, _ = cls._labelled_rows(part, y, None)    # the same rows for every part
            model = cls(**params)
            y_part = model._start_fit(part, y_part)
            if y_rank is None:
                y_rank = label_ranks(y_part)
            model._fit(part, y_part, None, y_rank=y_rank)
            models.append(model)
        return models

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, keep=None, **params):
        """Every prefix's mean, calibrated on its own (:meth:`fit_each`); ``keep`` (sizes;
        None: all): only those prefixes, the others' entries None."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        made = [K for K in sizes if keep is None or K in keep]
        models = dict(zip(made, cls.fit_each([X.first(K) for K in made], y, **params)))
        return [models.get(K) for K in sizes]
