"""Shared pieces of the aggregator families: the feature view, the base class, isotonic.

Every family is a small estimator in the scikit-learn style: hyperparameters in
``__init__``, ``fit(X, y, unlabelled=None)`` on the calibration block, ``predict(X)``
returning a probability in [0, 1] for any rows, fitted state in trailing-underscore
attributes, and ``get_state``/``from_state`` for JSON persistence (no pickle).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from sklearn.isotonic import IsotonicRegression


@dataclass
class PrefixFeatures:
    """What a family sees for some rows of a K-judge prefix.

    ``patterns[k]`` is the joint-pattern id of the first k+1 judges (-1 = holds an output
    never seen by the encoders; ``None`` = table too large to index). ``scores`` is the
    (rows, K) matrix of scalar scores in [0, 1].
    """

    patterns: list
    scores: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.scores.shape[0]

    @property
    def K(self) -> int:
        return self.scores.shape[1]

    def take(self, rows: np.ndarray) -> "PrefixFeatures":
        return PrefixFeatures(patterns=[None if p is None else p[rows] for p in self.patterns],
                              scores=self.scores[rows])


class Aggregator:
    """Base class. Subclasses set ``name`` and implement ``_fit``/``_predict``/state."""

    name: ClassVar[str] = ""
    table_like: ClassVar[bool] = False      # estimates a joint-pattern table (regime map)
    needs_patterns: ClassVar[bool] = False  # needs joint-pattern ids
    complexity_rank: ClassVar[int] = 0      # ladder position: ties go to the simpler family
    uses_unlabelled: ClassVar[bool] = False

    def get_params(self) -> dict:
        return {}

    @classmethod
    def grid(cls, **options) -> list[dict]:
        """Hyperparameter settings tuned on the validation block (one entry = no tuning)."""
        return [{}]

    def fit(self, X: PrefixFeatures, y: np.ndarray, unlabelled: PrefixFeatures | None = None):
        y = np.asarray(y, dtype=float)
        if X.n_rows != len(y):
            raise ValueError(f"{X.n_rows} feature rows for {len(y)} labels")
        if len(y) == 0:
            raise ValueError("cannot fit on an empty calibration block")
        self.ybar_ = float(y.mean())
        self._fit(X, y, unlabelled)
        return self

    def predict(self, X: PrefixFeatures) -> np.ndarray:
        return np.clip(np.asarray(self._predict(X), dtype=float), 0.0, 1.0)

    @classmethod
    def fit_grid(cls, settings: list[dict], X: PrefixFeatures, y: np.ndarray,
                 unlabelled: PrefixFeatures | None = None, **fixed) -> list["Aggregator"]:
        """Fit one model per hyperparameter setting; families may share work across the grid."""
        return [cls(**fixed, **params).fit(X, y, unlabelled) for params in settings]

    # JSON state --------------------------------------------------------------------------
    def get_state(self) -> dict:
        return {"params": self.get_params(), "ybar": self.ybar_, **self._state()}

    @classmethod
    def from_state(cls, state: dict) -> "Aggregator":
        obj = cls(**state.get("params", {}))
        obj.ybar_ = float(state["ybar"])
        obj._load(state)
        return obj

    # to implement
    def _fit(self, X, y, unlabelled):  # pragma: no cover - abstract
        raise NotImplementedError

    def _predict(self, X):  # pragma: no cover - abstract
        raise NotImplementedError

    def _state(self) -> dict:  # pragma: no cover - abstract
        raise NotImplementedError

    def _load(self, state: dict) -> None:  # pragma: no cover - abstract
        raise NotImplementedError


class IsotonicMap:
    """Monotone increasing calibration map to [0, 1] (scikit-learn's isotonic fit).

    Prediction interpolates linearly between the fitted thresholds and clips outside them,
    exactly as ``IsotonicRegression(out_of_bounds='clip').predict``; storing the thresholds
    keeps predictions identical after a JSON round trip.
    """

    def fit(self, x: np.ndarray, y: np.ndarray) -> "IsotonicMap":
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        self.x_ = np.asarray(iso.X_thresholds_, dtype=float)
        self.y_ = np.asarray(iso.y_thresholds_, dtype=float)
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if len(self.x_) == 1:
            return np.full(len(x), self.y_[0])
        return np.interp(x, self.x_, self.y_)

    def to_dict(self) -> dict:
        return {"x": self.x_.tolist(), "y": self.y_.tolist()}

    @classmethod
    def from_dict(cls, d: dict) -> "IsotonicMap":
        obj = cls()
        obj.x_ = np.asarray(d["x"], dtype=float)
        obj.y_ = np.asarray(d["y"], dtype=float)
        return obj


def pairwise_features(scores: np.ndarray) -> np.ndarray:
    """Scores plus all products s_i * s_j (i < j): the second-order stacking features."""
    K = scores.shape[1]
    iu, ju = np.triu_indices(K, k=1)
    return np.hstack([scores, scores[:, iu] * scores[:, ju]])


def pattern_table(ids: np.ndarray, values: np.ndarray):
    """Sorted distinct pattern ids with their value sums and counts."""
    uniq, inv = np.unique(ids, return_inverse=True)
    return uniq, np.bincount(inv, weights=values), np.bincount(inv).astype(float)


def lookup(uniq: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of ``ids`` in sorted ``uniq`` and a mask of ids that are present (-1 never is)."""
    if len(uniq) == 0:
        return np.zeros(len(ids), dtype=np.int64), np.zeros(len(ids), dtype=bool)
    pos = np.searchsorted(uniq, ids)
    pos = np.minimum(pos, len(uniq) - 1)
    found = (uniq[pos] == ids) & (ids >= 0)
    return pos, found


def ids_to_json(ids: np.ndarray) -> list[str]:
    # Pattern ids can exceed 2**53: strings keep them exact in any JSON reader.
    return [str(int(v)) for v in ids]


def ids_from_json(items: list) -> np.ndarray:
    return np.array([int(v) for v in items], dtype=np.int64)
