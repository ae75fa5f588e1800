"""The prediction half of every family: hyperparameters, fitted state and ``predict``.

Each family is split the way its two uses differ. What a deployed predictor needs -- the
hyperparameters (``__init__``, checked by ``_validate_params``), the fitted state as JSON
(``_state``/``_load``) and the prediction (``_predict``) -- lives here, in one model class
per family, with numpy as the only dependency. The estimator in the family's own module
(``table.py``, ``ds_jury.py``, ...) subclasses its model and
:class:`~fcps_core.families.estimator.Aggregator` (scikit-learn's estimator contract) and
adds the fitting. A predictor file is loaded into these model classes (:data:`FITTED`), so scoring
traffic never imports scikit-learn or SciPy: about a second of the ``score`` command's
start-up and exit (the deploy-and-monitor issue's 1,000,000-row benchmark). Loading a
state into the estimator class (``REGISTRY[name].from_state``) runs the same code and
predicts the same numbers; tests check both against each other for every family.
"""

from __future__ import annotations

import inspect
from typing import ClassVar

import numpy as np

from .base import IsotonicMap, PrefixFeatures, ids_from_json, ids_to_json, lookup, pairwise_features, rowwise_dot

#: Dawid-Skene EM defaults (the ``ds_jury`` hyperparameters; the EM is in ``ds_em``)
DS_MAX_ITER = 200
DS_TOL = 1e-7
#: fallbacks of the ``table`` family for patterns never seen in calibration
TABLE_FALLBACKS = ("global", "lower_prefix")
#: base families of ``residual`` (scalar families with a closed-form fit)
RESIDUAL_BASES = ("mean_iso", "one_coin_iso", "ridge_iso", "logistic")


def _codes(X: PrefixFeatures, level: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The factorised pattern ids of ``X``'s level for :func:`.base.lookup`, when the view keeps
    them (``X.codes``: made once per level array and shared by every model that looks the
    same rows up); None otherwise (a deployed predictor's rows: each row searched)."""
    return None if X.codes is None else X.pattern_codes(level)

class FittedModel:
    """Base class of the model classes: ``predict`` clips to [0, 1]; ``from_state`` and
    ``get_state`` persist the hyperparameters (the ``__init__`` arguments), the calibration
    mean ``ybar_`` and the family's own state (``_state``/``_load``).

    Class attributes say what the model reads: ``needs_patterns`` (joint-pattern ids),
    ``table_like`` (a joint-pattern table: the regime map and the audit's support),
    ``pairwise`` (product features).
    """

    name: ClassVar[str] = ""
    table_like: ClassVar[bool] = False
    needs_patterns: ClassVar[bool] = False
    pairwise: ClassVar[bool] = False

    def _validate_params(self) -> None:
        """Raise ValueError for an impossible hyperparameter (``fit`` and ``from_state``)."""

    def predict(self, X: PrefixFeatures) -> np.ndarray:
        return np.clip(np.asarray(self._predict(X), dtype=float), 0.0, 1.0)

    def hyperparameters(self) -> dict:
        """The ``__init__`` arguments and their values (scikit-learn's
        ``get_params(deep=False)`` for the estimators)."""
        init = type(self).__init__
        if init is object.__init__:
            return {}
        return {p: getattr(self, p) for p in inspect.signature(init).parameters if p != "self"}

    def get_state(self) -> dict:
        return {"params": self.hyperparameters(), "ybar": self.ybar_, **self._state()}

    @classmethod
    def from_state(cls, state: dict) -> "FittedModel":
        obj = cls(**state.get("params", {}))
        obj._validate_params()
        obj.ybar_ = float(state["ybar"])
        obj._load(state)
        return obj

    # to implement
    def _predict(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _state(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, state: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


# -- joint-pattern tables ------------------------------------------------------------------
class TableModel(FittedModel):
    """``table``: smoothed cell means of the longest prefix, with the fallback's levels."""

    name = "table"
    table_like = True
    needs_patterns = True

    def __init__(self, alpha: float = 0.5, fallback: str = "global"):
        self.alpha = alpha
        self.fallback = fallback

    def _validate_params(self) -> None:
        if not (isinstance(self.alpha, (int, float)) and self.alpha >= 0):
            raise ValueError("alpha must be >= 0")
        if self.fallback not in TABLE_FALLBACKS:
            raise ValueError(f"fallback must be one of {TABLE_FALLBACKS}")

    def _cell_values(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        uniq, sums, counts = self.tables_[level]
        return uniq, (sums + self.alpha * self.ybar_) / (counts + self.alpha)

    def _predict(self, X):
        pred = np.full(X.n_rows, self.ybar_)
        unresolved = np.ones(X.n_rows, dtype=bool)
        for level in sorted(self.tables_, reverse=True):
            uniq, values = self._cell_values(level)
            pos, found = lookup(uniq, X.patterns[level], _codes(X, level))
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


class BackoffModel(FittedModel):
    """``backoff``: each prefix level shrunk toward the level below."""

    name = "backoff"
    table_like = True
    needs_patterns = True

    def __init__(self, shrinkage: float = 2.0):
        self.shrinkage = shrinkage

    def _validate_params(self) -> None:
        if not (isinstance(self.shrinkage, (int, float)) and self.shrinkage > 0):
            raise ValueError("shrinkage must be > 0")

    def _predict(self, X):
        return self._shrunk(self._level_cells(X), X.n_rows)

    def _level_cells(self, X) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per level, each row's label sum and count in its sub-pattern's cell (0 and 0 for an
        unseen sub-pattern)."""
        cells = []
        for k, (uniq, sums, counts) in enumerate(self.levels_):
            pos, found = lookup(uniq, X.patterns[k], _codes(X, k))
            cells.append((np.where(found, sums[pos], 0.0), np.where(found, counts[pos], 0.0)))
        return cells

    def _shrunk(self, cells, n_rows: int) -> np.ndarray:
        """The back-off prediction from the looked-up cells: each level's mean shrunk toward
        the coarser level's prediction (the overall mean first) with strength ``shrinkage``."""
        pred = np.full(n_rows, self.ybar_)
        for s, n in cells:
            pred = (s + self.shrinkage * pred) / (n + self.shrinkage)
        return pred

    def _state(self):
        return {"levels": [{"patterns": ids_to_json(u), "sums": s.tolist(), "counts": c.tolist()}
                           for u, s, c in self.levels_]}

    def _load(self, state):
        self.levels_ = [(ids_from_json(t["patterns"]), np.asarray(t["sums"], float),
                         np.asarray(t["counts"], float)) for t in state["levels"]]


class ResidualModel(FittedModel):
    """``residual``: a scalar base model plus its count-shrunk residual table."""

    name = "residual"
    table_like = True
    needs_patterns = True

    def __init__(self, base: str = "ridge_iso", shrinkage: float = 8.0):
        self.base = base
        self.shrinkage = shrinkage

    def _validate_params(self) -> None:
        if self.base not in RESIDUAL_BASES:
            raise ValueError(f"residual base must be one of {RESIDUAL_BASES}")
        if not (isinstance(self.shrinkage, (int, float)) and self.shrinkage >= 0):
            raise ValueError("shrinkage must be >= 0")

    def _base_class(self):
        """The class the base model is loaded into (the estimator overrides it)."""
        return FITTED[self.base]

    def _predict(self, X):
        return self._predict_from(X, self.base_.predict(X))

    def _predict_from(self, X, base_pred):
        return self._shrunk(base_pred, *self._cells(X))

    def _cells(self, X) -> tuple[np.ndarray, np.ndarray]:
        """Each row's residual count and sum in its pattern's cell (0 and 0 when unseen)."""
        pos, found = lookup(self.uniq_, X.patterns[X.K - 1], _codes(X, X.K - 1))
        return np.where(found, self.counts_[pos], 0.0), np.where(found, self.sums_[pos], 0.0)

    def _shrunk(self, base_pred, n, s) -> np.ndarray:
        return base_pred + s / (n + self.shrinkage)   # = N/(N+k) * mean residual

    def _state(self):
        return {"base_family": self.base, "base_state": self.base_.get_state(),
                "patterns": ids_to_json(self.uniq_), "sums": self.sums_.tolist(),
                "counts": self.counts_.tolist()}

    def _load(self, state):
        self.base_ = self._base_class().from_state(state["base_state"])
        self.uniq_ = ids_from_json(state["patterns"])
        self.sums_ = np.asarray(state["sums"], float)
        self.counts_ = np.asarray(state["counts"], float)


# -- scalar families -----------------------------------------------------------------------
class MeanIsoModel(FittedModel):
    """``mean_iso``: an isotonic map of the mean score."""

    name = "mean_iso"

    def _predict(self, X):
        return self.iso_.predict(X.scores.mean(axis=1))

    def _state(self):
        return {"isotonic": self.iso_.to_dict()}

    def _load(self, state):
        self.iso_ = IsotonicMap.from_dict(state["isotonic"])


def votes(scores: np.ndarray) -> np.ndarray:
    """One-coin votes: +1 above 1/2, -1 below, 0 (abstain) at 1/2."""
    return np.sign(scores - 0.5)


class OneCoinModel(FittedModel):
    """``one_coin_iso``: an isotonic map of the prior log-odds plus weighted votes."""

    name = "one_coin_iso"

    def _score(self, X):
        return rowwise_dot(votes(X.scores), self.weights_, self.prior_logit_)

    def _predict(self, X):
        return self.iso_.predict(self._score(X))

    def _state(self):
        return {"weights": self.weights_.tolist(), "prior_logit": self.prior_logit_,
                "isotonic": self.iso_.to_dict()}

    def _load(self, state):
        self.weights_ = np.asarray(state["weights"], float)
        self.prior_logit_ = float(state["prior_logit"])
        self.iso_ = IsotonicMap.from_dict(state["isotonic"])


class LinearModel(FittedModel):
    """A linear score of a feature map of the scores, then the family's link."""

    features = staticmethod(lambda s: s)

    def _linear(self, X):
        return rowwise_dot(self.features(X.scores), self.coef_, self.intercept_)

    def _predict(self, X):
        return self._from_linear(self._linear(X), X.n_rows)

    def _from_linear(self, z, n_rows):  # pragma: no cover - abstract
        raise NotImplementedError


class RidgeIsoModel(LinearModel):
    """``ridge_iso``: an isotonic map of the ridge score (the constant ybar when the
    calibration labels were constant)."""

    name = "ridge_iso"

    def __init__(self, ridge_alpha: float = 1.0):
        self.ridge_alpha = ridge_alpha

    def _validate_params(self) -> None:
        if not (isinstance(self.ridge_alpha, (int, float)) and self.ridge_alpha >= 0):
            raise ValueError("ridge_alpha must be >= 0")

    def _from_linear(self, z, n_rows):
        if self.iso_ is None:
            return np.full(n_rows, self.ybar_)
        return self.iso_.predict(z)

    def _state(self):
        return {"coef": self.coef_.tolist(), "intercept": self.intercept_,
                "isotonic": None if self.iso_ is None else self.iso_.to_dict()}

    def _load(self, state):
        self.coef_ = np.asarray(state["coef"], float)
        self.intercept_ = float(state["intercept"])
        self.iso_ = None if state["isotonic"] is None else IsotonicMap.from_dict(state["isotonic"])


class LogisticModel(LinearModel):
    """``logistic``: the sigmoid of the linear score (the constant ybar when the calibration
    labels were constant)."""

    name = "logistic"

    def __init__(self, C: float = 1.0):
        self.C = C

    def _validate_params(self) -> None:
        if not (isinstance(self.C, (int, float)) and self.C > 0):
            raise ValueError("C must be > 0")

    def _from_linear(self, z, n_rows):
        if self.constant_:
            return np.full(n_rows, self.ybar_)
        z = np.clip(z, -35, 35)
        return 1.0 / (1.0 + np.exp(-z))

    def _state(self):
        return {"coef": self.coef_.tolist(), "intercept": self.intercept_, "constant": self.constant_}

    def _load(self, state):
        self.coef_ = np.asarray(state["coef"], float)
        self.intercept_ = float(state["intercept"])
        self.constant_ = bool(state.get("constant", False))


class PairwiseFeatures:
    """Mixin of the pairwise stackers: scores plus all products s_i s_j (K + K(K-1)/2
    features), so the selector limits their K by ``pairwise_k_max``."""

    pairwise = True
    features = staticmethod(pairwise_features)


class RidgePairwiseIsoModel(PairwiseFeatures, RidgeIsoModel):
    name = "ridge_pairwise_iso"


class LogisticPairwiseModel(PairwiseFeatures, LogisticModel):
    name = "logistic_pairwise"


def vote_matrix(scores: np.ndarray) -> np.ndarray:
    """(rows, 2K) indicators, interleaved per judge: column 2j = judge j votes 1 (score above
    1/2), column 2j+1 = it votes 0 (below 1/2). A K-prefix's votes are the first 2K
    columns of its path's."""
    out = np.empty((scores.shape[0], 2 * scores.shape[1]))
    np.greater(scores, 0.5, out=out[:, 0::2])
    np.less(scores, 0.5, out=out[:, 1::2])
    return out


#: :func:`vote_dots` runs judge by judge over all models up to this many rows (the per-call
#: overhead of a gather per model and judge dominates there) and model by model above it
#: (contiguous passes over one column; the crossover measured at about 1,000-2,000 rows)
VOTE_DOTS_BY_JUDGE_ROWS = 1024


def vote_dots(scores: np.ndarray, w1: list[np.ndarray], w0: list[np.ndarray], starts) -> np.ndarray:
    """(rows, models) log-odds of Dawid-Skene models on their first ``len(w1[m])`` judges
    (``w1`` ordered by length): model m's column is ``starts[m]`` plus, judge by judge,
    ``w1[m][j]`` where judge j votes 1, ``w0[m][j]`` where it votes 0 and nothing where it
    abstains. That is ``rowwise_dot(vote_matrix(scores), w, start)`` with the column
    weights w = (w1_0, w0_0, w1_1, w0_1, ...) to the bit (an indicator times a weight adds
    the weight or a zero), with one gather and one addition per model and judge instead of
    a product and an addition per vote column and model. The result is column-major, built
    model by model through one scratch vector from the judges' vote codes (column-major):
    contiguous passes, no (rows x models) temporary; up to :data:`VOTE_DOTS_BY_JUDGE_ROWS`
    rows judge by judge instead, one gather and one addition for all the models that have
    the judge (the same additions in the same order, bit for bit). The models come ordered
    by their number of judges, as the Dawid-Skene paths produce them (the function's
    contract, checked)."""
    scores = np.asarray(scores, dtype=float)
    lens = np.array([len(w) for w in w1], dtype=np.int64)
    if np.any(np.diff(lens) < 0):
        raise ValueError("vote_dots takes its models ordered by their number of judges")
    n = scores.shape[0]
    out = np.empty((n, len(w1)), order="F")
    out[:] = np.asarray(starts, dtype=float)
    if not len(w1) or not lens.max(initial=0):
        return out
    K = int(lens.max())
    # per row and judge: 0 = a 0-vote, 1 = an abstention, 2 = a 1-vote
    code = np.asfortranarray(1 + (scores[:, :K] > 0.5).astype(np.intp) - (scores[:, :K] < 0.5))
    if n <= VOTE_DOTS_BY_JUDGE_ROWS:
        # few rows: judge by judge, one gather and one addition for every model that has
        # the judge (the models from ``first[j]`` on); each cell gets the same additions in
        # the same judge order
        M = len(w1)
        table = np.zeros((K, 3, M))                 # per judge: the 0-vote, abstention, 1-vote weights
        for m, (a, b) in enumerate(zip(w1, w0)):
            table[:len(a), 0, m] = b
            table[:len(a), 2, m] = a
        first = np.searchsorted(lens, np.arange(K), side="right")
        for j in range(K):
            block = out[:, int(first[j]):]
            block += np.take(table[j, :, int(first[j]):], code[:, j], axis=0)
        return out
    added = np.empty(n)
    for m, (a, b) in enumerate(zip(w1, w0)):
        column = out[:, m]
        for j in range(len(a)):
            np.take(np.array([b[j], 0.0, a[j]]), code[:, j], out=added, mode="clip")
            column += added
    return out


class DSJuryModel(FittedModel):
    """``ds_jury``: an isotonic map of the oriented Dawid-Skene posterior log-odds (or,
    fitted without any label, the EM posterior itself: ``iso_`` is None)."""

    name = "ds_jury"

    def __init__(self, max_iter: int = DS_MAX_ITER, tol: float = DS_TOL):
        self.max_iter = max_iter
        self.tol = tol

    def _validate_params(self) -> None:
        if not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError("max_iter must be an integer >= 1")
        if not (isinstance(self.tol, (int, float)) and self.tol > 0):
            raise ValueError("tol must be > 0")

    def _logodds(self, scores):
        return vote_dots(scores, [self.w1_], [self.w0_], [self.prior_logit_])[:, 0]

    def _calibrated(self, logodds: np.ndarray) -> np.ndarray:
        if self.iso_ is None:                       # unsupervised: the posterior
            return 0.5 + 0.5 * np.tanh(0.5 * logodds)
        return self.iso_.predict(logodds)

    def _predict(self, X):
        return self._calibrated(self.orientation_ * self._logodds(X.scores))

    def _state(self):
        return {"prior_logit": self.prior_logit_, "w1": self.w1_.tolist(), "w0": self.w0_.tolist(),
                "orientation": self.orientation_,
                "isotonic": None if self.iso_ is None else self.iso_.to_dict()}

    def _load(self, state):
        self.prior_logit_ = float(state["prior_logit"])
        self.w1_ = np.asarray(state["w1"], float)
        self.w0_ = np.asarray(state["w0"], float)
        self.orientation_ = float(state["orientation"])
        self.iso_ = None if state["isotonic"] is None else IsotonicMap.from_dict(state["isotonic"])


#: family name -> model class, in the registry's order (``families.REGISTRY`` has the
#: estimators under the same names)
FITTED: dict[str, type[FittedModel]] = {cls.name: cls for cls in (
    TableModel, BackoffModel, ResidualModel, MeanIsoModel, OneCoinModel, RidgeIsoModel,
    LogisticModel, RidgePairwiseIsoModel, LogisticPairwiseModel, DSJuryModel)}


def fitted_family(name: str) -> type[FittedModel]:
    """The model class of a family name (a :class:`~fcps_core.errors.MenuError` naming the
    families for any other name)."""
    from ..errors import MenuError
    try:
        return FITTED[name]
    except KeyError:
        raise MenuError(f"unknown family {name!r}; use {', '.join(FITTED)}") from None
