"""``residual``: scalar base + count-shrunk residual table
(paper Table tab:residual-shrinkage-hybrid, "Hybrid shrinkage extension").

Model: f(x, z) = clip(b(x) + N_z / (N_z + k) * rbar_z, 0, 1), where b is a scalar family
fitted on the calibration block, rbar_z the mean calibration residual y - b(x) in joint
pattern z and N_z its calibration count; an unseen pattern gets b(x). The base family
and the shrinkage k are chosen on the validation block from ``BASES`` x ``SHRINK_GRID``
(each setting counts toward the menu size). Residuals are in-sample residuals of the base
on the calibration block, as in the paper's prototype.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .logistic import LogisticStack
from .mean_iso import MeanIsotonic
from .one_coin_iso import OneCoinIsotonic
from .ridge_iso import RidgeIsotonic
from .base import PatternCodes, pattern_table, weighted_mean
from .estimator import Aggregator
from .fitted import RESIDUAL_BASES as BASES, ResidualModel

_BASE_CLASSES = {cls.name: cls for cls in (MeanIsotonic, OneCoinIsotonic, RidgeIsotonic, LogisticStack)}
SHRINK_GRID = (2.0, 8.0, 32.0)


class ResidualTable(ResidualModel, Aggregator):
    complexity_rank = 7
    ladder = 4
    shares_base_models = True

    @classmethod
    def grid(cls, **options):
        return [{"base": b, "shrinkage": k} for b in options.get("residual_bases", BASES)
                for k in options.get("residual_grid", SHRINK_GRID)]

    def _base_class(self):
        """The base family's estimator (its fits; loading a state makes an estimator too)."""
        return _BASE_CLASSES[self.base]

    @classmethod
    def fit_grid(cls, settings, X, y, unlabelled=None, base_models=None, **fixed):
        """One base fit per base family, shared by every shrinkage value (same models as
        fitting each setting on its own). ``base_models`` (base name -> a default-parameter
        model of that family already fitted on the same X, y) lets the selector share its
        scalar-family fits."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        if X.codes is None:         # every base's table groups the rows by the same patterns
            X = dataclasses.replace(X, codes=PatternCodes())
        bases: dict[str, object] = dict(base_models or {})
        tables: dict[str, tuple] = {}      # base -> residual table (shrinkage-free)
        ybar = weighted_mean(y, X.weight)
        models = []
        for params in settings:
            model = cls(**fixed, **params)
            model._validate_params()
            if model.base not in bases:
                bases[model.base] = model._base_class()().fit(X, y, unlabelled)
            model.ybar_ = ybar
            model.base_ = bases[model.base]
            if model.base not in tables:
                model._fit_residuals(X, y, model.base_.predict(X))
                tables[model.base] = (model.uniq_, model.sums_, model.counts_)
            model.uniq_, model.sums_, model.counts_ = tables[model.base]
            models.append(model)
        return models

    def _fit(self, X, y, unlabelled):
        self.base_ = self._base_class()().fit(X, y, unlabelled)
        self._fit_residuals(X, y, self.base_.predict(X))

    def _fit_residuals(self, X, y, base_pred):
        self.uniq_, self.sums_, self.counts_ = pattern_table(X.patterns[X.K - 1], y - base_pred,
                                                            X.weight, X.pattern_codes(X.K - 1))

    @classmethod
    def predict_grid(cls, models, X):
        """The grid's models of one base share its fitted model and residual table
        (:meth:`fit_grid`), so the base's prediction of ``X`` and the table lookup are made
        once per base; every shrinkage then adds its shrunk residual (``ResidualModel._shrunk``,
        what its own prediction does)."""
        shared: dict[tuple[int, int], tuple] = {}
        out = []
        for model in models:
            key = (id(model.base_), id(model.uniq_))
            if key not in shared:
                shared[key] = (model.base_.predict(X), *model._cells(X), model.counts_, model.sums_)
            base_pred, n, s, counts, sums = shared[key]
            if counts is not model.counts_ or sums is not model.sums_:
                out.append(model.predict(X))
                continue
            out.append(np.clip(model._shrunk(base_pred, n, s), 0.0, 1.0))
        return out
