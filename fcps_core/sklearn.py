"""Every aggregator family as a scikit-learn estimator on a plain array of judge outputs.

The families (:mod:`fcps_core.families`) fit on a :class:`~fcps_core.families.PrefixFeatures`
-- the joint-pattern ids of each judge prefix and a score in [0, 1] per judge -- that the
engine builds from a panel. The estimators here take what a notebook has instead: a 2-D
array (or DataFrame) ``X`` with one column per judge and one row per item, and build those
features themselves, then fit the family unchanged (a thin adapter, not a second
implementation)::

    from fcps_core.sklearn import LogisticEstimator
    est = LogisticEstimator(C=1.0).fit(X, y)        # X: (items, judges), y: labels in [0, 1]
    p = est.predict(X_new)                           # P(positive label), in [0, 1]

``ESTIMATORS`` maps each family name to its estimator class, :func:`make_estimator` builds
one by name. They work in ``Pipeline``, ``GridSearchCV`` and ``cross_val_score`` (with
``GroupKFold`` when items share a prompt) like any regressor.

**Judge outputs.** Each column is read on the rows ``fit`` calibrates on (the labelled rows;
every row when none is labelled), as the engine's encoders are fitted on the calibration
block only (:mod:`fcps_core.data.encoding`):

* *numeric* columns (every non-missing value converts to a number: verdicts 0/1,
  preferences 0/0.5/1, rubric grades, probabilities, raw scores). Score: the value itself
  when every fitted value lies in [0, 1] (already a score; 1/2 is an abstention for the
  vote-based families), else min-max scaled on the fitted values and clipped; a missing
  output scores 1/2 (abstains). Table cells: each distinct value when a column has at most
  :data:`MAX_LEVELS` of them, else ``n_bins`` weighted quantile bins.
* *categorical* columns (anything else: strings, mixed objects). Table cells: the
  categories, a missing output being one more category. Score: the category's smoothed
  mean label on the fitted rows (the engine's categorical encoding); with no label at all
  (``DSJuryEstimator`` unsupervised) every category scores 1/2, so a categorical judge then
  abstains.

Missing outputs are NaN (or None/pd.NA in object arrays); an output never seen in ``fit``
(a new category, a numeric level outside a discrete column's levels) makes the row's
pattern unseen, which each table family resolves by its fallback. Joint patterns get dense
ids per prefix level (the distinct prefixes seen in ``fit``), so any number of judges can be
tabulated, not only tables small enough for mixed-radix ids.

**Labels and predictions.** ``predict`` returns the probability of the positive label, in
[0, 1]. Labels in [0, 1] are used as they are: 0/1 labels are classes and the prediction
is P(y = 1 | outputs); fractional labels (soft labels, the share of annotators preferring
A, a tie as 1/2) are fitted as the families fit them (cell means, squared loss, the
soft-label logistic likelihood), so the prediction is E[y | outputs]. Labels outside
[0, 1] are mapped onto it by the fitted labels' range, (y - min) / (max - min): two label
values {a < b} become 0/1 and the prediction is P(y = b); a label outside [0, 1] that takes
one value only is refused (one class: nothing to predict). ``label_range_`` holds the map;
``score`` is the R^2 of the predictions against the mapped labels (on 0/1 or soft labels
the plain R^2, the Brier skill score). **NaN labels are unlabelled rows**: the supervised
families fit on the labelled rows only (ValueError when none is labelled); ``ds_jury`` is
semi-supervised (its Dawid-Skene EM runs on every row, the labelled rows orient and
calibrate it) and fits without labels (``y=None``) as the plain unsupervised jury.

``sample_weight`` (non-negative) counts each row that many times: every family's weighted
fit is its fit on repeated rows, and the column encodings use weighted quantiles and means,
so an integer weight equals repeating the row and a zero weight equals leaving it out.
``n_iter_``: EM iterations (``DSJuryEstimator``) or Newton iterations (the logistic ones).

Tests: ``tests/test_sklearn_api.py`` runs scikit-learn's ``check_estimator`` suite on every
estimator through ``parametrize_with_checks``; :data:`EXPECTED_FAILED_CHECKS` lists the
checks each one does not pass and why.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import (_check_sample_weight, check_consistent_length,
                                      check_is_fitted, column_or_1d, validate_data)

from .families import PrefixFeatures
from .families.fitted import DS_MAX_ITER, DS_TOL
from .families.registry import REGISTRY

#: a numeric judge with at most this many distinct fitted values is tabulated by value
#: (verdicts, preferences, rubric grades); one with more is cut into quantile bins
MAX_LEVELS = 10
#: smoothing of the categorical per-category mean label (as :mod:`fcps_core.data.encoding`)
CATEGORY_SMOOTHING = 1.0


# -- judge columns -------------------------------------------------------------------------
def _missing(col: np.ndarray) -> np.ndarray:
    if col.dtype.kind == "f":
        return np.isnan(col)
    if col.dtype.kind != "O":
        return np.zeros(len(col), dtype=bool)
    import pandas as pd
    return np.asarray(pd.isna(col), dtype=bool)


def _numeric(col: np.ndarray, missing: np.ndarray) -> np.ndarray | None:
    """The column as floats (NaN where missing), or None when some output is not a number."""
    if col.dtype.kind in "biuf":
        values = col.astype(float)
    else:
        values = np.full(len(col), np.nan)
        try:
            values[~missing] = col[~missing].astype(float)
        except (TypeError, ValueError):
            return None
    if np.isinf(values).any():
        raise ValueError("Input X contains infinity: a judge output must be finite or missing (NaN)")
    return values


def _weighted_quantiles(values: np.ndarray, weight: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Quantiles of ``values`` with integer-like ``weight`` equal to the quantiles of the
    repeated values (the inverted-CDF definition, the one that weights by repetition)."""
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(weight[order])
    return v[np.minimum(np.searchsorted(cum, q * cum[-1], side="left"), len(v) - 1)]


class _Column:
    """One judge's encoding, fitted on the calibration rows: table codes and scores."""

    def __init__(self, n_bins: int):
        self.n_bins = n_bins

    def fit(self, col, weight, y):
        """``y``: the rows' labels on [0, 1] (None: no label)."""
        missing = _missing(col)
        values = _numeric(col, missing)
        self.has_missing = bool(missing.any())
        w = weight[~missing]
        if values is not None:
            self.kind = "numeric"
            v = values[~missing]
            distinct = np.unique(v)
            self.levels = self.edges = None
            if len(distinct) <= MAX_LEVELS:
                self.levels = distinct
            else:
                q = np.linspace(0, 1, self.n_bins + 1)[1:-1]
                self.edges = np.unique(_weighted_quantiles(v, w, q))
            lo, hi = (float(distinct[0]), float(distinct[-1])) if len(distinct) else (0.0, 1.0)
            self.scale = None if 0.0 <= lo and hi <= 1.0 else (lo, hi)
            return self
        self.kind = "categorical"
        tokens = np.array([str(t) for t in col[~missing]], dtype=object)
        self.vocab = np.array(sorted(set(tokens)), dtype=object)
        if y is None:
            self.cat_scores = np.full(len(self.vocab) + 1, 0.5)
            self.default = 0.5
            return self
        codes = np.searchsorted(self.vocab, tokens) if len(tokens) else np.zeros(0, dtype=np.int64)
        codes = np.concatenate([codes, np.full(int(missing.sum()), len(self.vocab))])
        yy = np.concatenate([y[~missing], y[missing]])
        ww = np.concatenate([w, weight[missing]])
        self.default = float(ww @ yy / ww.sum())
        sums = np.bincount(codes, weights=ww * yy, minlength=len(self.vocab) + 1)
        counts = np.bincount(codes, weights=ww, minlength=len(self.vocab) + 1)
        self.cat_scores = (sums + CATEGORY_SMOOTHING * self.default) / (counts + CATEGORY_SMOOTHING)
        return self

    @property
    def alphabet(self) -> int:
        """Number of table codes."""
        if self.kind == "categorical":
            return len(self.vocab) + 1
        n = len(self.levels) if self.levels is not None else len(self.edges) + 1
        return n + 1                     # the last code: missing

    def transform(self, col) -> tuple[np.ndarray, np.ndarray]:
        """(table codes, -1 = never seen in fit; scores in [0, 1])."""
        missing = _missing(col)
        miss_code = self.alphabet - 1 if self.has_missing else -1
        if self.kind == "categorical":
            tokens = np.array([str(t) for t in col], dtype=object)
            pos = np.minimum(np.searchsorted(self.vocab, tokens), max(len(self.vocab) - 1, 0))
            found = (self.vocab[pos] == tokens) if len(self.vocab) else np.zeros(len(col), bool)
            found &= ~missing
            codes = np.where(found, pos, -1)
            scores = np.where(found, self.cat_scores[pos] if len(self.vocab) else 0.5, self.default)
            codes[missing] = miss_code
            if self.has_missing:
                scores[missing] = self.cat_scores[-1]
            return codes.astype(np.int64), scores
        values = _numeric(col, missing)
        if values is None:
            raise ValueError("a numeric judge column received an output that is not a number")
        filled = np.where(missing, 0.0, values)
        if self.levels is not None:
            pos = np.minimum(np.searchsorted(self.levels, filled), max(len(self.levels) - 1, 0))
            found = self.levels[pos] == filled if len(self.levels) else np.zeros(len(col), bool)
            codes = np.where(found, pos, -1)
        else:
            codes = np.searchsorted(self.edges, filled, side="right")
        codes = np.where(missing, miss_code, codes)
        if self.scale is None:
            scores = np.clip(filled, 0.0, 1.0)
        else:
            lo, hi = self.scale
            scores = np.clip((filled - lo) / (hi - lo), 0.0, 1.0) if hi > lo else np.full(len(col), 0.5)
        return codes.astype(np.int64), np.where(missing, 0.5, scores)


def _dense_prefix_ids(codes: np.ndarray, sizes: list[int], tables: list | None):
    """Joint-pattern ids of every prefix of the judges: level k's id is the position of the
    row's first k+1 table codes among the distinct ones seen in ``fit`` (``tables``: their
    sorted keys per level; None = fitting, build them). -1: a prefix never seen in fit."""
    n, K = codes.shape
    ids = np.zeros(n, dtype=np.int64)
    unseen = np.zeros(n, dtype=bool)
    patterns, built = [], []
    for k in range(K):
        c = codes[:, k]
        key = ids * (sizes[k] + 1) + (c + 1)
        if tables is None:
            uniq, ids = np.unique(key, return_inverse=True)
            ids = ids.reshape(-1).astype(np.int64)
            built.append(uniq)
            patterns.append(ids)
            continue
        uniq = tables[k]
        pos = np.minimum(np.searchsorted(uniq, key), max(len(uniq) - 1, 0))
        found = (uniq[pos] == key) if len(uniq) else np.zeros(n, dtype=bool)
        unseen |= ~found | (c < 0)
        ids = np.where(unseen, 0, pos)
        patterns.append(np.where(unseen, -1, ids))
    return patterns, (built if tables is None else tables)


# -- the estimators ------------------------------------------------------------------------
class FamilyEstimator(RegressorMixin, BaseEstimator):
    """Base class: a family fitted on an array of judge outputs (module docstring).

    Subclasses set ``family`` (a name in ``fcps_core.families.REGISTRY``) and list the
    family's hyperparameters plus ``n_bins`` in ``__init__``. Fitted: ``model_`` (the
    family's estimator, fitted on the features), ``columns_`` (each judge's encoding),
    ``label_range_``, ``n_features_in_`` (``feature_names_in_`` for a DataFrame) and, where
    the family iterates, ``n_iter_``.
    """

    family: ClassVar[str] = ""

    def _family_params(self) -> dict:
        return {k: v for k, v in self.get_params(deep=False).items() if k != "n_bins"}

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True          # NaN = a missing judge output
        tags.input_tags.string = True             # categorical judge outputs
        tags.target_tags.required = REGISTRY[self.family].needs_labels
        return tags

    # fitting ---------------------------------------------------------------------------
    def fit(self, X, y=None, sample_weight=None):
        """Fit on judge outputs ``X`` (items x judges) and labels ``y`` (NaN: unlabelled;
        ``y=None``: no label, for the families that fit without one)."""
        if not (isinstance(self.n_bins, (int, np.integer)) and self.n_bins >= 2):
            raise ValueError("n_bins must be an integer >= 2")
        cls = REGISTRY[self.family]
        X = validate_data(self, X, dtype=None, ensure_all_finite="allow-nan", reset=True)
        if y is None:
            if cls.needs_labels:
                raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
            y = np.full(X.shape[0], np.nan)
        y = np.asarray(column_or_1d(y, warn=True), dtype=float)
        check_consistent_length(X, y)
        if np.isinf(y).any():
            raise ValueError("Input y contains infinity: a label is in [0, 1] or NaN (unlabelled)")
        weighted = sample_weight is not None
        w = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        keep = np.flatnonzero(w > 0)              # a zero weight leaves the row out
        X, y, w = X[keep], y[keep], w[keep]
        labelled = ~np.isnan(y)
        if not labelled.any() and cls.needs_labels:
            raise ValueError(f"no labelled row: {type(self).__name__} fits on labelled rows only "
                             "(a NaN label marks an unlabelled row)")
        self.label_range_ = self._label_range(y[labelled])
        y01 = self._to_unit(y)
        rows = labelled if labelled.any() else np.ones(len(y), dtype=bool)
        self.columns_ = []
        for j in range(X.shape[1]):
            self.columns_.append(_Column(self.n_bins).fit(X[rows, j], w[rows],
                                                          y01[rows] if labelled.any() else None))
        codes, scores = self._encode(X)
        self.pattern_tables_ = None
        patterns = [None] * X.shape[1]
        if cls.needs_patterns:
            patterns, self.pattern_tables_ = _dense_prefix_ids(
                codes, [c.alphabet for c in self.columns_], None)
        features = PrefixFeatures(patterns=patterns, scores=scores, weight=w if weighted else None)
        self.model_ = cls(**self._family_params()).fit(features, y01)
        if hasattr(self.model_, "n_iter_"):
            self.n_iter_ = self.model_.n_iter_
        return self

    @staticmethod
    def _label_range(y: np.ndarray) -> tuple[float, float]:
        if len(y) == 0 or (y.min() >= 0.0 and y.max() <= 1.0):
            return (0.0, 1.0)
        lo, hi = float(y.min()), float(y.max())
        if lo == hi:
            raise ValueError(f"labels outside [0, 1] take one value ({lo:g}): one class, no positive "
                             "label to predict")
        return (lo, hi)

    def _to_unit(self, y: np.ndarray) -> np.ndarray:
        lo, hi = self.label_range_
        return y if (lo, hi) == (0.0, 1.0) else (y - lo) / (hi - lo)

    # prediction ------------------------------------------------------------------------
    def _encode(self, X) -> tuple[np.ndarray, np.ndarray]:
        codes = np.empty(X.shape, dtype=np.int64)
        scores = np.empty(X.shape, dtype=float)
        for j, column in enumerate(self.columns_):
            codes[:, j], scores[:, j] = column.transform(X[:, j])
        return codes, scores

    def _features(self, X) -> PrefixFeatures:
        codes, scores = self._encode(X)
        patterns = [None] * X.shape[1]
        if self.pattern_tables_ is not None:
            patterns, _ = _dense_prefix_ids(codes, [c.alphabet for c in self.columns_],
                                            self.pattern_tables_)
        return PrefixFeatures(patterns=patterns, scores=scores)

    def predict(self, X) -> np.ndarray:
        """P(positive label | judge outputs) for each row, in [0, 1] (module docstring)."""
        check_is_fitted(self)
        X = validate_data(self, X, dtype=None, ensure_all_finite="allow-nan", reset=False)
        return self.model_.predict(self._features(X))

    def score(self, X, y, sample_weight=None) -> float:
        """R^2 of ``predict`` against the labels mapped onto [0, 1] (``label_range_``); rows
        with a NaN label are left out."""
        check_is_fitted(self)
        y = np.asarray(column_or_1d(y), dtype=float)
        keep = ~np.isnan(y)
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[keep]
        pred = self.predict(X)
        return float(r2_score(self._to_unit(y[keep]), pred[keep], sample_weight=sw))


class TableEstimator(FamilyEstimator):
    """``table``: the smoothed joint-pattern table (:mod:`fcps_core.families.table`)."""

    family = "table"

    def __init__(self, alpha: float = 0.5, fallback: str = "global", n_bins: int = 5):
        self.alpha = alpha
        self.fallback = fallback
        self.n_bins = n_bins


class BackoffEstimator(FamilyEstimator):
    """``backoff``: the hierarchical prefix backoff table (:mod:`fcps_core.families.backoff`)."""

    family = "backoff"

    def __init__(self, shrinkage: float = 2.0, n_bins: int = 5):
        self.shrinkage = shrinkage
        self.n_bins = n_bins


class ResidualEstimator(FamilyEstimator):
    """``residual``: a scalar base family plus a count-shrunk residual table
    (:mod:`fcps_core.families.residual`)."""

    family = "residual"

    def __init__(self, base: str = "ridge_iso", shrinkage: float = 8.0, n_bins: int = 5):
        self.base = base
        self.shrinkage = shrinkage
        self.n_bins = n_bins


class MeanIsoEstimator(FamilyEstimator):
    """``mean_iso``: the isotonic-calibrated mean score (:mod:`fcps_core.families.mean_iso`)."""

    family = "mean_iso"

    def __init__(self, n_bins: int = 5):
        self.n_bins = n_bins


class OneCoinIsoEstimator(FamilyEstimator):
    """``one_coin_iso``: the supervised one-coin reliability vote, isotonic-calibrated
    (:mod:`fcps_core.families.one_coin_iso`)."""

    family = "one_coin_iso"

    def __init__(self, n_bins: int = 5):
        self.n_bins = n_bins


class RidgeIsoEstimator(FamilyEstimator):
    """``ridge_iso``: ridge stacking of the scores, isotonic-calibrated
    (:mod:`fcps_core.families.ridge_iso`)."""

    family = "ridge_iso"

    def __init__(self, ridge_alpha: float = 1.0, n_bins: int = 5):
        self.ridge_alpha = ridge_alpha
        self.n_bins = n_bins


class LogisticEstimator(FamilyEstimator):
    """``logistic``: L2 logistic stacking of the scores (:mod:`fcps_core.families.logistic`)."""

    family = "logistic"

    def __init__(self, C: float = 1.0, n_bins: int = 5):
        self.C = C
        self.n_bins = n_bins


class RidgePairwiseIsoEstimator(FamilyEstimator):
    """``ridge_pairwise_iso``: ridge stacking on scores and pairwise products, isotonic
    (:mod:`fcps_core.families.ridge_pairwise_iso`)."""

    family = "ridge_pairwise_iso"

    def __init__(self, ridge_alpha: float = 1.0, n_bins: int = 5):
        self.ridge_alpha = ridge_alpha
        self.n_bins = n_bins


class LogisticPairwiseEstimator(FamilyEstimator):
    """``logistic_pairwise``: L2 logistic stacking on scores and pairwise products
    (:mod:`fcps_core.families.logistic_pairwise`)."""

    family = "logistic_pairwise"

    def __init__(self, C: float = 1.0, n_bins: int = 5):
        self.C = C
        self.n_bins = n_bins


class DSJuryEstimator(FamilyEstimator):
    """``ds_jury``: the Dawid-Skene jury (:mod:`fcps_core.families.ds_jury`), semi-supervised:
    EM on every row, the labelled rows (if any) orient and calibrate; ``fit(X)`` without
    labels is the unsupervised jury."""

    family = "ds_jury"

    def __init__(self, max_iter: int = DS_MAX_ITER, tol: float = DS_TOL, n_bins: int = 5):
        self.max_iter = max_iter
        self.tol = tol
        self.n_bins = n_bins


#: family name -> estimator class, in the registry's order
ESTIMATORS: dict[str, type[FamilyEstimator]] = {cls.family: cls for cls in (
    TableEstimator, BackoffEstimator, ResidualEstimator, MeanIsoEstimator, OneCoinIsoEstimator,
    RidgeIsoEstimator, LogisticEstimator, RidgePairwiseIsoEstimator, LogisticPairwiseEstimator,
    DSJuryEstimator)}
assert list(ESTIMATORS) == list(REGISTRY)


def make_estimator(family: str, **params) -> FamilyEstimator:
    """The array-input estimator of a family name, with ``params`` (a MenuError naming the
    families for an unknown name)."""
    from .families import fitted_family
    fitted_family(family)
    return ESTIMATORS[family](**params)


_REGRESSION_DATA = ("scikit-learn's synthetic regression (10 Gaussian columns, one informative, "
                    "continuous target)")
#: the ``sklearn.utils.estimator_checks`` checks an estimator does not pass (scikit-learn
#: 1.9), with the reason; ``tests/test_sklearn_api.py`` declares them to
#: ``parametrize_with_checks`` and checks that each still fails. Every other check passes.
EXPECTED_FAILED_CHECKS: dict[str, dict[str, str]] = {name: {} for name in ESTIMATORS}
EXPECTED_FAILED_CHECKS["mean_iso"]["check_regressors_train"] = (
    f"in-sample R^2 > 0.5 on {_REGRESSION_DATA}: mean_iso is a calibrated average vote, every "
    "judge weighted equally by design, so nine noise columns drown the informative one")
EXPECTED_FAILED_CHECKS["ds_jury"]["check_regressors_train"] = (
    f"in-sample R^2 > 0.5 on {_REGRESSION_DATA}: the Dawid-Skene EM is unsupervised (the labels "
    "only orient and calibrate its posterior), and the latent class of nine noise columns "
    "and one signal column is not the target")
EXPECTED_FAILED_CHECKS["ds_jury"]["check_supervised_y_no_nan"] = (
    "expects fit to refuse an all-NaN y; a NaN label marks an unlabelled row and ds_jury fits "
    "without labels (the unsupervised jury), so all-NaN y is valid input (an infinite y is "
    "refused)")

__all__ = ["FamilyEstimator", "ESTIMATORS", "EXPECTED_FAILED_CHECKS", "make_estimator",
           "MAX_LEVELS", *(cls.__name__ for cls in ESTIMATORS.values())]
