"""The families' estimator base class.

Every family follows scikit-learn's estimator contract: hyperparameters are only stored in
``__init__`` (``get_params``/``set_params``/``sklearn.base.clone`` work), they are validated
in ``fit(X, y, unlabelled=None)``, fitted state lives in trailing-underscore attributes,
``predict(X)`` checks the model is fitted (scikit-learn's ``NotFittedError`` otherwise) and
returns a probability in [0, 1] for any rows, and ``get_state``/``from_state`` persist it as
JSON (no pickle). The families are the engine's private solvers, so they do not import
scikit-learn: :class:`~fcps_core.families.estimator_params.EstimatorParams` gives them
``BaseEstimator``'s parameter protocol, and a selection (its main process and its fold worker
processes) never pays scikit-learn's import. The public scikit-learn estimators are
:mod:`fcps_core.sklearn`.

``X`` is a :class:`~fcps_core.families.base.PrefixFeatures` (joint-pattern ids and
scores of a prefix), not a plain array, so scikit-learn's data-driven estimator checks do
not apply here (``tests/test_estimators.py``); :mod:`fcps_core.sklearn` wraps every family
as an estimator on a plain array of judge outputs, which runs them
(``tests/test_sklearn_api.py``). The prediction half of each family (its ``__init__``,
state and ``_predict``) is its model class in ``fitted``, which loads with numpy only
(no SciPy) for scoring.

NaN labels. A NaN label marks an unlabelled row (as in pandas and the rest of the
ecosystem), never a value to fit: the supervised families fit on the labelled rows only
and refuse with one ValueError when no row is labelled; a family that uses unlabelled
traffic (``uses_unlabelled``: ``ds_jury``'s EM) adds the NaN-labelled rows to it, and one
that can fit without any label (``needs_labels = False``: ``ds_jury``) accepts ``y=None``
or all-NaN labels. Without a NaN label the data reach the fits unchanged (the same
objects), so the selector's fits are bit for bit what they were.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from .base import PrefixFeatures, weighted_mean
from .estimator_params import EstimatorParams
from .fitted import FittedModel


class Aggregator(FittedModel, EstimatorParams):
    """Base class of the estimators. A family's estimator subclasses its model class
    (``fitted``: ``__init__``, ``_validate_params``, ``_predict``, ``_state``/``_load``)
    and this class, and implements ``_fit``.

    Class attributes declare what the selector needs to know (no name checks there):
    ``table_like``, ``needs_patterns``, ``uses_unlabelled``, ``pairwise`` (K limited by
    ``pairwise_k_max``), ``shares_base_models``, ``menu_fixed`` (parameters the menu sets),
    ``complexity_rank`` (argmin ties) and ``ladder`` (simplest_within_se).

    Paths. The candidates of a judge path are nested (prefix K+1 is prefix K plus one
    judge), so :meth:`fit_path` fits every prefix of a path in one call and
    :meth:`predict_path` scores them together; families override them to share work along
    the path (one Gram matrix and its Cholesky factor for ridge, warm-started Newton for
    logistic, lockstep EMs for Dawid-Skene). The defaults fit and predict each prefix on
    its own.
    """

    complexity_rank: ClassVar[int] = 0      # ladder position: ties go to the simpler family
    #: the paper's complexity ladder: 0 mean/vote < 1 one-coin (and Dawid-Skene) <
    #: 2 ridge/logistic < 3 pairwise stackers < 4 table-like (simplest_within_se)
    ladder: ClassVar[int] = 2
    uses_unlabelled: ClassVar[bool] = False
    #: False: fits without a single label (an unsupervised model, calibrated when labels exist)
    needs_labels: ClassVar[bool] = True
    shares_base_models: ClassVar[bool] = False  # fit_grid takes the scalar families' fits
    menu_fixed: ClassVar[tuple] = ()        # parameters the selector's menu fixes (not tuned)
    joint_paths: ClassVar[bool] = False     # fit_paths shares work across paths
    #: True: :meth:`fit_path`'s model of a prefix K reads nothing of the longer prefixes in
    #: ``sizes`` (each prefix fitted on its own, or a path carried forward from the shorter
    #: ones), so a path cut after its last wanted prefix fits those prefixes bit for bit
    #: alike (:func:`.selection.menu.fit_menu` with ``only``). False where one computation
    #: spans the longest prefix (ridge's Cholesky factor of the whole path's Gram matrix,
    #: the Dawid-Skene EMs' chunks of prefixes).
    path_prefixes_apart: ClassVar[bool] = True
    #: True: :meth:`fit_path` takes ``keep`` (the sizes whose models are read; the others'
    #: entries are None) and makes each kept model bit for bit as without it, skipping the
    #: per-prefix work of the others (their isotonic maps): a refit restricted by ``only``
    path_keeps_prefixes: ClassVar[bool] = False

    def __sklearn_is_fitted__(self) -> bool:
        """Fitted: ``fit`` (or ``from_state``) has set ``ybar_`` (scikit-learn's
        ``check_is_fitted`` reads this)."""
        return hasattr(self, "ybar_")

    @classmethod
    def grid(cls, **options) -> list[dict]:
        """Hyperparameter settings tuned on the validation block (one entry = no tuning)."""
        return [{}]

    def fit(self, X: PrefixFeatures, y: np.ndarray | None = None,
            unlabelled: PrefixFeatures | None = None):
        """Fit on the rows of ``X`` with labels ``y`` (NaN or ``y=None``: unlabelled rows,
        see the module docstring); ``unlabelled``: extra label-free traffic for the families
        that use it (ignored by the others)."""
        X, y, unlabelled = self._labelled_rows(X, y, unlabelled)
        if len(y) == 0 and X.n_rows == 0 and unlabelled is not None and not self.needs_labels:
            self._validate_params()
            self._fit_without_labels(unlabelled)
            return self
        y = self._start_fit(X, y)
        self._fit(X, y, unlabelled)
        return self

    @classmethod
    def _labelled_rows(cls, X: PrefixFeatures, y, unlabelled: PrefixFeatures | None):
        """(labelled features, their labels as floats, unlabelled traffic): rows whose label
        is NaN (every row for ``y=None``) leave the fit's rows; a family that uses
        unlabelled traffic gets them added to it, the others drop them. Without a NaN label
        ``X`` and ``unlabelled`` are returned as they are."""
        y = np.full(X.n_rows, np.nan) if y is None else np.asarray(y, dtype=float)
        if y.ndim != 1 or X.n_rows != len(y):
            raise ValueError(f"{X.n_rows} feature rows for {y.size} labels")
        missing = np.isnan(y)
        if not missing.any():
            return X, y, unlabelled
        if missing.all() and cls.needs_labels:
            raise ValueError(f"no labelled row: {cls.name} fits on labelled rows only "
                             f"(a NaN label marks an unlabelled row)")
        if X.weight is not None and (len(X.weight) != len(y) or np.any(X.weight <= 0)):
            raise ValueError("row weights must be positive, one per row")
        if cls.uses_unlabelled:
            extra = X.take(np.flatnonzero(missing))
            unlabelled = extra if unlabelled is None else _stack(extra, unlabelled)
        keep = np.flatnonzero(~missing)
        return X.take(keep), y[keep], unlabelled

    def _start_fit(self, X: PrefixFeatures, y: np.ndarray) -> np.ndarray:
        """Validate parameters and data, set ``ybar_``; returns y as floats."""
        self._validate_params()
        y = np.asarray(y, dtype=float)
        if X.n_rows != len(y):
            raise ValueError(f"{X.n_rows} feature rows for {len(y)} labels")
        if len(y) == 0:
            raise ValueError("cannot fit on an empty calibration block")
        if X.weight is not None and (len(X.weight) != len(y) or np.any(X.weight <= 0)):
            raise ValueError("row weights must be positive, one per row")
        self.ybar_ = weighted_mean(y, X.weight)
        return y

    def predict(self, X: PrefixFeatures) -> np.ndarray:
        if not self.__sklearn_is_fitted__():
            from sklearn.exceptions import NotFittedError     # only on this error's path
            raise NotFittedError(f"This {type(self).__name__} instance is not fitted yet. Call 'fit' "
                                 f"with appropriate arguments before using this estimator.")
        return super().predict(X)

    @classmethod
    def fit_grid(cls, settings: list[dict], X: PrefixFeatures, y: np.ndarray,
                 unlabelled: PrefixFeatures | None = None, **fixed) -> list["Aggregator"]:
        """Fit one model per hyperparameter setting; families may share work across the grid."""
        return [cls(**fixed, **params).fit(X, y, unlabelled) for params in settings]

    @classmethod
    def predict_grid(cls, models: list["Aggregator"], X: PrefixFeatures) -> list[np.ndarray]:
        """Each model of one :meth:`fit_grid` call predicting ``X``. Families whose grid
        shares fitted parts (tables, base models) compute those parts' share of the
        prediction once; the values are each model's own :meth:`predict`."""
        return [model.predict(X) for model in models]

    def _fit_without_labels(self, unlabelled: PrefixFeatures) -> None:  # pragma: no cover
        raise NotImplementedError     # families with needs_labels = False implement it

    @classmethod
    def fit_path(cls, X: PrefixFeatures, y: np.ndarray, unlabelled: PrefixFeatures | None,
                 sizes: list[int], keep=None, **params) -> list["Aggregator"]:
        """One model per prefix size in ``sizes`` (ascending), each fitted on the first K
        columns of ``X`` (a path's judges in path order). Equal to fitting every prefix on its
        own. ``keep`` (sizes; None: all): only those prefixes are fitted, the others' entries
        are None."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        return [cls(**params).fit(X.first(K), y, None if unlabelled is None else unlabelled.first(K))
                if keep is None or K in keep else None for K in sizes]

    @classmethod
    def fit_paths(cls, jobs: list[tuple], **params) -> list[list["Aggregator"]]:
        """:meth:`fit_path` for several (X, y, unlabelled, sizes) jobs (families with
        ``joint_paths`` share work across paths)."""
        return [cls.fit_path(X, y, U, sizes, **params) for X, y, U, sizes in jobs]

    @classmethod
    def predict_path(cls, models: list["Aggregator"], sizes: list[int], X: PrefixFeatures) -> np.ndarray:
        """(rows, len(models)) predictions of each prefix model on the path features ``X``."""
        out = np.empty((X.n_rows, len(models)))
        for m, (model, K) in enumerate(zip(models, sizes)):
            out[:, m] = model.predict(X.first(K))
        return out

    # to implement
    def _fit(self, X, y, unlabelled):  # pragma: no cover - abstract
        raise NotImplementedError


def _stack(a: PrefixFeatures, b: PrefixFeatures) -> PrefixFeatures:
    """The rows of ``a`` then those of ``b`` (same judges); pattern levels missing in either
    are None."""
    if a.K != b.K:
        raise ValueError(f"unlabelled rows have {b.K} judges, the labelled ones {a.K}")
    patterns = [None if p is None or q is None else np.concatenate([p, q])
                for p, q in zip(a.patterns, b.patterns)]
    weight = None if a.weight is None and b.weight is None else np.concatenate([a.w, b.w])
    return PrefixFeatures(patterns=patterns, scores=np.vstack([a.scores, b.scores]), weight=weight)
