"""The estimators by family name (imports the fitting code and SciPy; no scikit-learn)."""

from __future__ import annotations

from .backoff import BackoffTable
from .ds_jury import DawidSkeneJury
from .estimator import Aggregator
from .fitted import FITTED
from .logistic import LogisticStack
from .logistic_pairwise import LogisticPairwise
from .mean_iso import MeanIsotonic
from .one_coin_iso import OneCoinIsotonic
from .residual import ResidualTable
from .ridge_iso import RidgeIsotonic
from .ridge_pairwise_iso import RidgePairwiseIsotonic
from .table import JointTable

REGISTRY: dict[str, type[Aggregator]] = {cls.name: cls for cls in (
    JointTable, BackoffTable, ResidualTable, MeanIsotonic, OneCoinIsotonic, RidgeIsotonic,
    LogisticStack, RidgePairwiseIsotonic, LogisticPairwise, DawidSkeneJury)}

# Every estimator is its family's model class plus fitting: the same names, in one order.
assert list(REGISTRY) == list(FITTED) and all(issubclass(REGISTRY[n], FITTED[n]) for n in FITTED)
