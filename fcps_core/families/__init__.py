"""Aggregator families: one module per family and a registry (name -> class).

Names are the ones used in every interface (design.md): ``table``, ``backoff``,
``residual``, ``mean_iso``, ``one_coin_iso``, ``ridge_iso``, ``logistic``,
``ridge_pairwise_iso``, ``logistic_pairwise``, ``ds_jury``.
"""

from __future__ import annotations

from .backoff import BackoffTable
from .base import Aggregator, IsotonicMap, PrefixFeatures
from .ds_jury import DawidSkeneJury
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

FAMILIES = tuple(REGISTRY)
TABLE_LIKE = tuple(n for n, c in REGISTRY.items() if c.table_like)
SCALAR = tuple(n for n, c in REGISTRY.items() if not c.table_like)
#: the paper's six scalar and reliability families (the ``scalar`` sweep menu)
PAPER_SCALAR = ("mean_iso", "one_coin_iso", "ridge_iso", "logistic", "ridge_pairwise_iso",
                "logistic_pairwise")
PAIRWISE_FEATURE = ("ridge_pairwise_iso", "logistic_pairwise")


def get_family(name: str) -> type[Aggregator]:
    from ..errors import MenuError
    try:
        return REGISTRY[name]
    except KeyError:
        raise MenuError(f"unknown family {name!r}; use {', '.join(FAMILIES)}") from None


__all__ = ["Aggregator", "IsotonicMap", "PrefixFeatures", "REGISTRY", "FAMILIES", "TABLE_LIKE",
           "SCALAR", "PAPER_SCALAR", "PAIRWISE_FEATURE", "get_family"]
