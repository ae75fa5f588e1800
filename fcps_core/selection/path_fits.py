"""The scalar families fitted along a judge path: every prefix of the path in one pass.

The prefixes of a path are nested, so a family fits all of them from one set of path-level
views (:meth:`ViewCache.path_view`: the distinct rows of M, V, T and the unlabelled traffic
over the whole path) with :meth:`Aggregator.fit_path` and scores them on V and T with
:meth:`Aggregator.predict_path`. The views of one path are built, used and dropped before
the next path, so memory holds one path's rows, not one copy per prefix. Each prefix's
record is what fitting it on its own gives (see the families' ``fit_path``), plus its
predictions on V and T, which the choice rules, the held-out matrix and the audit read
instead of predicting again.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..diagnostics import losses
from ..families import REGISTRY
from .views import PathView, weighted_mean_loss


@dataclass
class BlockPrediction:
    """A model's predictions on a block's distinct rows, and the map back to its raw rows."""

    values: np.ndarray
    view: PathView

    def raw(self) -> np.ndarray:
        return self.view.expand(self.values)


def record_from_predictions(model, vV: PathView | None, pV: np.ndarray | None, score_val: bool) -> dict:
    """A fitted model's validation record (both objectives) from its V predictions."""
    if not score_val or vV is None or pV is None or len(pV) == 0:
        empty = np.zeros(0)
        return {"model": model, "mse": np.nan, "nll": np.nan, "losses": (empty, empty), "weight": None}
    w = vV.X.weight
    l_mse, l_nll = losses("mse", vV.y, pV), losses("nll", vV.y, pV)
    return {"model": model, "mse": weighted_mean_loss(l_mse, w), "nll": weighted_mean_loss(l_nll, w),
            "losses": (l_mse, l_nll), "weight": w}


def fit_path_families(selector, views, judges: tuple, sizes_by_family: dict[str, list[int]],
                      fits: dict, *, score_val: bool, has_T: bool) -> None:
    """Fit every (family, K) of ``sizes_by_family`` on the path ``judges`` (K ascending) and
    store each record in ``fits`` under (prefix judges, family, params), with its V (and T)
    predictions under ``record['pred']``."""
    todo = {f: s for f, s in sizes_by_family.items() if s}
    if not todo:
        return
    K_max = max(max(s) for s in todo.values())
    path = judges[:K_max]
    block_views = {b: views.path_view(path, b) for b in ("M", "V")}
    if has_T:
        block_views["T"] = views.path_view(path, "T")
    if any(REGISTRY[f].uses_unlabelled for f in todo):
        block_views["rest"] = views.path_view(path, "rest")
    vM, vV = block_views["M"], block_views["V"]
    for family, sizes in todo.items():
        cls = REGISTRY[family]
        unlabelled = block_views["rest"].X if cls.uses_unlabelled else None
        for params in selector.family_grid(family):
            models = cls.fit_path(vM.X, vM.y, unlabelled, sizes, **selector.family_fixed(family), **params)
            pV = cls.predict_path(models, sizes, vV.X) if vV.X.n_rows else None
            pT = cls.predict_path(models, sizes, block_views["T"].X) if has_T else None
            key_params = tuple(sorted(params.items()))
            for i, (K, model) in enumerate(zip(sizes, models)):
                rec = record_from_predictions(model, vV, None if pV is None else pV[:, i], score_val)
                rec["pred"] = {}
                if pV is not None:
                    rec["pred"]["V"] = BlockPrediction(pV[:, i].copy(), vV)
                if pT is not None:
                    rec["pred"]["T"] = BlockPrediction(pT[:, i].copy(), block_views["T"])
                fits[(judges[:K], family, key_params)] = rec
