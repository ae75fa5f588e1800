"""``backoff``: hierarchical prefix backoff table (paper Table tab:backoff-split-sensitivity).

Model: each prefix level shrinks toward the level below it,

    g_0 = ybar_cal,
    g_k(z_1..z_k) = (S_k(z) + lam * g_{k-1}(z_1..z_{k-1})) / (N_k(z) + lam),

where S_k, N_k are the calibration label sum and count of the level-k sub-pattern; an
unseen sub-pattern inherits g_{k-1}. The shrinkage ``lam`` is chosen on the validation
block from ``LAMBDA_GRID`` (each value counts toward the menu size).
"""

from __future__ import annotations

import numpy as np

from .base import pattern_table
from .estimator import Aggregator
from .fitted import BackoffModel

LAMBDA_GRID = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0)


class BackoffTable(BackoffModel, Aggregator):
    complexity_rank = 8
    ladder = 4

    @classmethod
    def grid(cls, **options):
        return [{"shrinkage": lam} for lam in options.get("backoff_grid", LAMBDA_GRID)]

    def _fit(self, X, y, unlabelled):
        self.levels_ = [pattern_table(X.patterns[k], y, X.weight, X.pattern_codes(k)) for k in range(X.K)]

    @classmethod
    def fit_grid(cls, settings, X, y, unlabelled=None, **fixed):
        """The level tables do not depend on the shrinkage: count once, share across the grid
        (same models as fitting each setting on its own)."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        models = []
        for params in settings:
            model = cls(**fixed, **params)
            model._validate_params()
            if models:
                model.ybar_, model.levels_ = models[0].ybar_, models[0].levels_
            else:
                model.fit(X, y, unlabelled)
            models.append(model)
        return models

    @classmethod
    def predict_grid(cls, models, X):
        """The grid's models share their level tables (:meth:`fit_grid`), so each level's
        sub-pattern lookup of ``X`` is made once; every shrinkage then combines the looked-up
        sums and counts (``BackoffModel._shrunk``, what its own prediction does)."""
        if not models or any(m.levels_ is not models[0].levels_ or m.ybar_ != models[0].ybar_ for m in models):
            return super().predict_grid(models, X)
        cells = models[0]._level_cells(X)
        return [np.clip(model._shrunk(cells, X.n_rows), 0.0, 1.0) for model in models]
