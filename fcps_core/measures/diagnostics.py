"""Complexity diagnostics, losses, bounds and the regime quadrant.

For a prefix of K judges with joint pattern z and calibration counts N_z (block M):

* ``Q_K``  nominal alphabet: product of the judges' alphabet sizes.
* ``S_K``  occupied calibration support: number of patterns with N_z > 0.
* ``H_K``  entropy-effective support exp(-sum_z p_z log p_z), p_z the M frequencies
           (natural log; paper section "Complexity Diagnostics").
* ``unseen_val`` / ``unseen_test``  share of V / T rows whose pattern has N_z = 0.
* ``V_cell``  sum_{z: N_z > 0} p_T(z) / N_z + unseen_T: the held-out plug-in audit of the
           cell pressure (Eq. eq:cell-pressure, Table tab:exact-cell-pressure); uses V (and
           unseen_val) when there is no T block.
* ``V_proxy``  H_K / n_M + the same unseen rate (the cold-start proxy V-tilde).

Regime quadrant (paper Figure fig:operational-regime-map): interaction gain = validation
risk of the best scalar candidate minus that of the best table-like candidate (positive
favours the table); table pressure = H_K / n_M + unseen_val of that best table-like
candidate (validation only: T never informs advice). Thresholds ``gain_threshold``
(default 0.001, the paper's bolding cut) and ``pressure_threshold`` (default 0.1) are
parameters.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

NLL_EPS = 1e-4
GAIN_THRESHOLD = 0.001
PRESSURE_THRESHOLD = 0.1

QUADRANTS = {
    "joint_table": ("high interaction gain, low table pressure",
                    "Joint-table regime: deploy the interaction-bearing prefix when validation "
                    "gain and cell support improve together."),
    "shrink_or_collect": ("high interaction gain, high table pressure",
                          "Use shrinkage/backoff or collect more calibration labels; deploy table "
                          "structure only after validation gain clears a guard."),
    "keep_scalar": ("low interaction gain, low table pressure",
                    "Keep the low-dimensional stacker or reliability model unless validation "
                    "shows a clear table gain."),
    "prefer_scalar": ("low interaction gain, high table pressure",
                      "Prefer scalar/reliability aggregation or a shorter prefix; table "
                      "flexibility is unlikely to clear finite-cell cost."),
}


# -- losses ------------------------------------------------------------------------------
def squared_losses(y: np.ndarray, p: np.ndarray) -> np.ndarray:
    return (np.asarray(y, float) - np.asarray(p, float)) ** 2


def nll_losses(y: np.ndarray, p: np.ndarray, eps: float = NLL_EPS) -> np.ndarray:
    """Bernoulli negative log-likelihood with soft targets; p clipped to [eps, 1 - eps]."""
    p = np.minimum(np.maximum(np.asarray(p, float), eps), 1 - eps)    # np.clip's values, fewer wrappers
    y = np.asarray(y, float)
    return -(y * np.log(p) + (1 - y) * np.log(1 - p))


def losses(objective: str, y, p) -> np.ndarray:
    if objective == "mse":
        return squared_losses(y, p)
    if objective == "nll":
        return nll_losses(y, p)
    raise ValueError(f"unknown objective {objective!r}; use mse or nll")


def metric_suite(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """MSE, NLL, accuracy (at 1/2), Pearson and Spearman (paper Table tab:metric-robustness)."""
    y = np.asarray(y, float)
    p = np.asarray(p, float)
    out = {"mse": float(np.mean(squared_losses(y, p))) if len(y) else math.nan,
           "nll": float(np.mean(nll_losses(y, p))) if len(y) else math.nan}
    hard = np.abs(y - 0.5) > 1e-12
    out["accuracy"] = float(np.mean((p[hard] > 0.5) == (y[hard] > 0.5))) if hard.any() else math.nan
    if len(y) > 2 and np.ptp(y) > 0 and np.ptp(p) > 0:
        import warnings
        from scipy.stats import pearsonr, spearmanr    # scipy.stats is slow to import: only when used
        from scipy.stats import NearConstantInputWarning
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", NearConstantInputWarning)
            r = float(pearsonr(y, p).statistic)
        # an input constant up to rounding has no meaningful correlation: SciPy warns that
        # its figure may be inaccurate, and the suite reports it as undefined instead
        near_constant = False
        for w in caught:
            if issubclass(w.category, NearConstantInputWarning):
                near_constant = True
            else:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        out["pearson"] = math.nan if near_constant else r
        out["spearman"] = float(spearmanr(y, p).statistic)
    else:
        out["pearson"] = out["spearman"] = math.nan
    return out


# -- choosing among candidates ---------------------------------------------------------------
def risk_tolerance(best: float) -> float:
    """Risks this close to the best are ties: mathematically equal candidates differ by
    floating-point rounding (summation order, compressed rows), which must not decide."""
    return 1e-12 + 1e-9 * abs(best)


def argmin_with_ties(items, risk, tie_key):
    """The item of lowest ``risk``; items within :func:`risk_tolerance` of it are ties,
    broken by ``tie_key`` (e.g. smaller K, simpler family, menu order)."""
    items = list(items)
    if not items:
        return None
    best = min(risk(i) for i in items)
    tied = [i for i in items if risk(i) <= best + risk_tolerance(best)]
    return min(tied, key=tie_key)


# -- finite-menu validation ------------------------------------------------------------------
def validation_scale(menu_size: int, n_val: int) -> float:
    """sqrt(log|C| / n_V), the menu-dependent part of the validation term."""
    return math.sqrt(math.log(max(menu_size, 1)) / n_val) if n_val > 0 else math.inf


def theorem1_bound(menu_size: int, n_val: int, delta: float = 0.05) -> float:
    """2 sqrt(log(2|C|/delta) / (2 n_V)) of Theorem thm:validation-selection (Eq. eq:validation-oracle)."""
    return 2 * math.sqrt(math.log(2 * max(menu_size, 1) / delta) / (2 * n_val)) if n_val > 0 else math.inf


# -- support and pressure --------------------------------------------------------------------
def effective_support(counts: np.ndarray) -> float:
    counts = np.asarray(counts, float)
    total = counts.sum()
    if total <= 0:
        return 0.0
    p = counts[counts > 0] / total
    return float(np.exp(-np.sum(p * np.log(p))))


@dataclass
class PrefixDiagnostics:
    Q_K: float
    S_K: int
    H_K: float
    unseen_val: float
    unseen_test: float | None
    V_cell: float
    V_proxy: float
    pressure_sum: float      # sum_{N_z>0} p_hat(z)/N_z (the first term of V_cell)

    def to_dict(self) -> dict:
        return {"Q_K": self.Q_K, "S_K": self.S_K, "H_K": self.H_K, "unseen_val": self.unseen_val,
                "unseen_test": self.unseen_test, "V_cell": self.V_cell, "V_proxy": self.V_proxy,
                "cell_pressure_sum": self.pressure_sum}


def _seen_share(lookup, ids: np.ndarray, weight: np.ndarray | None = None):
    """(unseen share, sum over seen rows of 1/(n N_z)) for held-out pattern ids; ``weight``
    gives each id's row count (None = one row each); ``lookup(ids)`` gives (whether M shows
    each id's pattern, its M count N_z)."""
    if len(ids) == 0:
        return math.nan, math.nan
    w = np.ones(len(ids)) if weight is None else np.asarray(weight, float)
    n = float(w.sum())
    seen, counts = lookup(ids)
    unseen = 1.0 - float(w[seen].sum()) / n
    pressure = float(np.sum(w[seen] / counts[seen]) / n)
    return float(unseen), pressure


def _dense_bound(*id_arrays) -> int | None:
    """One past the largest id when the ids are non-negative and few enough (at most twice
    the rows plus 1024) for a count per id; else None."""
    arrays = [a for a in id_arrays if a is not None and len(a)]
    if not arrays or not all(np.issubdtype(a.dtype, np.integer) for a in arrays):
        return None
    if min(int(a.min()) for a in arrays) < 0:
        return None
    top = max(int(a.max()) for a in arrays) + 1
    return top if ids_dense(top, sum(len(a) for a in arrays)) else None


def ids_dense(top: int, n_ids: int) -> bool:
    """Whether ids below ``top`` on ``n_ids`` rows in all are few enough for a count per id
    (:func:`prefix_diagnostics` then counts instead of sorting)."""
    return top <= 2 * n_ids + 1024


#: :func:`search_sorted` searches the keys in sorted order from this many keys against this
#: many table entries on (below either the sort costs more than the shorter searches save)
SORTED_SEARCH_KEYS = 2048
SORTED_SEARCH_TABLE = 64


def search_sorted(table: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """``np.searchsorted(table, keys)``. Many keys against a long table (pattern ids against
    the distinct patterns of M here, a model's table in :func:`fcps_core.families.base.lookup`)
    are searched in sorted order and the positions put back: numpy's search keeps the lower
    bound of the previous key when the keys ascend, and a sorted key's search takes the same
    branches as its neighbour's, where an unsorted key's binary search mispredicts about one
    branch per step. Each key's position depends only on the key and the table, so the
    answer is the same array."""
    keys = np.asarray(keys)
    if keys.ndim == 1 and len(keys) >= SORTED_SEARCH_KEYS and len(table) >= SORTED_SEARCH_TABLE:
        order = np.argsort(keys)
        out = np.empty(len(keys), dtype=np.intp)
        out[order] = np.searchsorted(table, keys[order])
        return out
    return np.searchsorted(table, keys)


def prefix_diagnostics(ids_M: np.ndarray, ids_V: np.ndarray, ids_T: np.ndarray | None,
                       Q_K: float, *, w_M: np.ndarray | None = None,
                       w_V: np.ndarray | None = None,
                       w_T: np.ndarray | None = None,
                       codes_M: Callable[[], tuple[np.ndarray, np.ndarray]] | None = None) -> PrefixDiagnostics:
    """All prefix diagnostics from the pattern ids of the M, V and (optional) T rows.

    ``w_*`` (optional) are row counts when the ids are distinct rows with multiplicities;
    the diagnostics are those of the expanded rows. Dense ids (the selection's pattern ids)
    are counted per id with ``np.bincount`` (no sort); others through ``np.unique``. The
    same sums in the same order either way. ``codes_M`` (optional): a function giving
    ``np.unique(ids_M, return_inverse=True)``, called instead of it where ids are not dense
    (the caller's table fits factorise the same ids, and keep the result).
    """
    n_M = len(ids_M) if w_M is None else float(np.sum(w_M))
    bound = _dense_bound(ids_M, ids_V, ids_T)
    if bound is not None:
        per_id = np.bincount(ids_M, weights=w_M, minlength=bound).astype(float, copy=False)
        in_M = per_id > 0 if w_M is None else np.bincount(ids_M, minlength=bound) > 0
        counts_M = per_id[in_M]

        def lookup(ids):
            return in_M[ids], per_id[ids]
    else:
        uniq_M, inv = np.unique(ids_M, return_inverse=True) if codes_M is None else codes_M()
        counts_M = np.bincount(inv.reshape(-1), weights=w_M, minlength=len(uniq_M)).astype(float, copy=False)

        def lookup(ids):
            if not len(uniq_M):
                return np.zeros(len(ids), dtype=bool), np.zeros(len(ids))
            pos = np.minimum(search_sorted(uniq_M, ids), len(uniq_M) - 1)
            return (uniq_M[pos] == ids) & (ids >= 0), counts_M[pos]
    H = effective_support(counts_M)
    unseen_val, pressure_val = _seen_share(lookup, ids_V, w_V)
    if ids_T is not None and len(ids_T):
        unseen_test, pressure_test = _seen_share(lookup, ids_T, w_T)
        u, pressure = unseen_test, pressure_test
    else:
        unseen_test = None
        u, pressure = unseen_val, pressure_val
    return PrefixDiagnostics(Q_K=Q_K, S_K=int(len(counts_M)), H_K=H, unseen_val=unseen_val,
                             unseen_test=unseen_test, V_cell=pressure + u,
                             V_proxy=H / n_M + u, pressure_sum=pressure)


# -- regime ---------------------------------------------------------------------------------
def table_pressure(H_K: float, n_M: int, unseen: float) -> float:
    """The regime map's table pressure: H_K / n_M + unseen rate (the proxy V-tilde)."""
    return H_K / n_M + unseen


def gap_verdict(ci_low: float | None, ci_high: float | None) -> str:
    """Winner of a table-minus-scalar paired interval: ``table`` when it lies below 0,
    ``scalar`` when above, ``no clear winner`` when it straddles 0."""
    if ci_low is None or ci_high is None or not (math.isfinite(ci_low) and math.isfinite(ci_high)):
        return "no clear winner"
    return "table" if ci_high < 0 else "scalar" if ci_low > 0 else "no clear winner"

def regime_quadrant(interaction_gain: float | None, table_pressure: float | None, *,
                    gain_threshold: float = GAIN_THRESHOLD,
                    pressure_threshold: float = PRESSURE_THRESHOLD) -> dict:
    """Place a panel on the 2x2 operational regime map and return the quadrant's advice."""
    if interaction_gain is None or table_pressure is None or \
            not (math.isfinite(interaction_gain) and math.isfinite(table_pressure)):
        return {"quadrant": None, "interaction_gain": interaction_gain,
                "table_pressure": table_pressure, "gain_threshold": gain_threshold,
                "pressure_threshold": pressure_threshold,
                "advice": "The menu needs at least one table-like and one scalar family to place "
                          "the panel on the regime map."}
    high_gain = interaction_gain > gain_threshold
    high_pressure = table_pressure > pressure_threshold
    key = ("shrink_or_collect" if high_pressure else "joint_table") if high_gain else \
          ("prefer_scalar" if high_pressure else "keep_scalar")
    description, advice = QUADRANTS[key]
    return {"quadrant": key, "description": description, "advice": advice,
            "interaction_gain": float(interaction_gain), "table_pressure": float(table_pressure),
            "gain_threshold": gain_threshold, "pressure_threshold": pressure_threshold}
