"""Evaluation rows: held-out risks read on a chosen subset of the labelled rows (issue 31).

After items were chosen for labelling non-randomly (``label-next``), the labelled rows are
no longer a random sample of the traffic: held-out losses averaged over all of them weigh
the items the rule favoured (thin cells, high-variance patterns) too heavily, and every risk,
tie and deployed-risk estimate inherits that bias. The audit rows of ``label-next``
(:mod:`fcps_core.planning.label_next`) are a simple random sample of the pool, so averages
over them are unbiased for the pool again.

The selector's ``eval_rows`` (a bool per panel row, None = every row) is the hook: under the
cross-fitted protocol every row of the deployable set D still enters every fit, but the
held-out matrix (:class:`.folds.HeldOut`) the choice rule, the ties, the verdicts, the
bootstrap (BBC) and the learning-curve correction read is restricted to the rows of D that
are evaluation rows (:func:`restrict_heldout`). A distinct held-out row keeps its
predictions; its count becomes the number of its rows that are evaluation rows. With
``eval_rows`` None nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import MenuError, SplitError
from .folds import HeldOut, RepeatTables


@dataclass
class RestrictedDistinct:
    """What :func:`.crossfit.training_size_correction` reads of the distinct held-out rows:
    ``rep`` a representative position in D of each, ``counts`` its evaluation rows,
    ``inverse`` each evaluation row's distinct row."""

    rep: np.ndarray
    inverse: np.ndarray
    counts: np.ndarray

    def __len__(self) -> int:
        return len(self.rep)


def check_eval_rows(eval_rows, n_rows: int, protocol: str, estimate: str) -> np.ndarray | None:
    """``eval_rows`` as a bool array of the panel's length (None stays None)."""
    if eval_rows is None:
        return None
    mask = np.asarray(eval_rows)
    if mask.dtype != bool or mask.shape != (n_rows,):
        raise MenuError(f"eval_rows must be a bool array with one entry per panel row ({n_rows})")
    if protocol != "crossfit":
        raise MenuError("evaluation rows (eval_rows) need the crossfit protocol")
    if estimate == "nested":
        raise MenuError("evaluation rows (eval_rows) work with the bbc estimate or none, not nested")
    return mask


def restrict_heldout(heldout: HeldOut, distinct, D: np.ndarray, eval_rows: np.ndarray | None):
    """(held-out matrix, distinct rows) restricted to D's evaluation rows; unchanged when
    ``eval_rows`` is None or covers all of D."""
    if eval_rows is None:
        return heldout, distinct
    keep = np.asarray(eval_rows, dtype=bool)[D]
    if keep.all():
        return heldout, distinct
    if not keep.any():
        raise SplitError("no evaluation row (eval_rows) is a labelled row outside the test block")
    n = len(D)
    inverse = np.arange(n) if heldout.inverse is None else np.asarray(heldout.inverse)
    kept_distinct, new_inverse = np.unique(inverse[keep], return_inverse=True)
    new_inverse = new_inverse.reshape(-1).astype(np.int64)
    counts = np.bincount(new_inverse, minlength=len(kept_distinct)).astype(float)
    # a representative evaluation row of each kept distinct row (positions in D)
    positions = np.flatnonzero(keep)
    rep = np.empty(len(kept_distinct), dtype=np.int64)
    rep[new_inverse[::-1]] = positions[::-1]
    if heldout.tables is not None:
        tables = RepeatTables(heldout.tables.values, heldout.tables.index[:, kept_distinct],
                              heldout.tables.first_repeat_only)
        values = None
    else:
        tables, values = None, heldout.values[:, kept_distinct]
    baselines = {name: p[:, keep] for name, p in heldout.baselines.items()}
    out = HeldOut(rows=heldout.rows[keep], values=values, inverse=new_inverse, vcol=heldout.vcol,
                  baselines=baselines, y=heldout.y[keep], groups=heldout.groups[keep], tables=tables)
    if "columns" in heldout._cache:
        out._cache["columns"] = heldout._cache["columns"]
    return out, RestrictedDistinct(rep=rep, inverse=new_inverse, counts=counts)
