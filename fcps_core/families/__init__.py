"""Aggregator families: one module per family, their model classes and a registry.

Names are the ones used in every interface (design.md): ``table``, ``backoff``,
``residual``, ``mean_iso``, ``one_coin_iso``, ``ridge_iso``, ``logistic``,
``ridge_pairwise_iso``, ``logistic_pairwise``, ``ds_jury``.

``REGISTRY`` (name -> estimator class), :func:`get_family` and the estimator classes load
the fitting code (and SciPy) on first use; the names, the family kinds and the model classes
(``fitted.FITTED``, what a deployed predictor is loaded into) do not. No family imports
scikit-learn (:mod:`fcps_core.families.estimator_params`).
"""

from __future__ import annotations

import importlib

from .base import IsotonicMap, PrefixFeatures
from .fitted import FITTED, fitted_family

FAMILIES = tuple(FITTED)
TABLE_LIKE = tuple(n for n, c in FITTED.items() if c.table_like)
SCALAR = tuple(n for n, c in FITTED.items() if not c.table_like)
#: the paper's six scalar and reliability families (the ``scalar`` sweep menu)
PAPER_SCALAR = ("mean_iso", "one_coin_iso", "ridge_iso", "logistic", "ridge_pairwise_iso",
                "logistic_pairwise")
PAIRWISE_FEATURE = ("ridge_pairwise_iso", "logistic_pairwise")

#: names loaded on first use, and the module that defines each
_LAZY = {"REGISTRY": "registry", "Aggregator": "estimator", "JointTable": "table",
         "BackoffTable": "backoff", "ResidualTable": "residual", "MeanIsotonic": "mean_iso",
         "OneCoinIsotonic": "one_coin_iso", "RidgeIsotonic": "ridge_iso", "LogisticStack": "logistic",
         "RidgePairwiseIsotonic": "ridge_pairwise_iso", "LogisticPairwise": "logistic_pairwise",
         "DawidSkeneJury": "ds_jury"}


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def get_family(name: str):
    """The estimator class of a family name (a MenuError naming the families otherwise)."""
    from .registry import REGISTRY
    fitted_family(name)              # the one message for an unknown name
    return REGISTRY[name]


__all__ = ["Aggregator", "IsotonicMap", "PrefixFeatures", "REGISTRY", "FAMILIES", "TABLE_LIKE",
           "SCALAR", "PAPER_SCALAR", "PAIRWISE_FEATURE", "FITTED", "get_family", "fitted_family"]
