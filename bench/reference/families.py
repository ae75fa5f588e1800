"""Straightforward reference implementations of every family and of the selection loop.

Nothing here is used by the engine. These are the obvious versions -- pandas ``groupby``
for table cells, one scikit-learn estimator per candidate (``Ridge``,
``IsotonicRegression``, ``LogisticRegression`` on the weighted duplication of soft
labels), a row-level Python EM for ``ds_jury``, and a selection loop that fits every menu
entry (path, K, family, hyperparameters) on its own, sharing nothing. They exist to

* cross-check the engine's vectorised, count-weighted estimators (tests/test_vectorised*.py);
* serve as the baseline that bench/bench_sweep.py times against the engine.

Each class follows the family's documented model; they take row-level
:class:`PrefixFeatures` (no weights).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from sklearn.isotonic import IsotonicRegression
from sklearn.linear_model import LogisticRegression, Ridge

from fcps_core.measures.diagnostics import losses, prefix_diagnostics
from fcps_core.data.encoding import encode_panel, nominal_cells, prefix_patterns
from fcps_core.families.base import PrefixFeatures, pairwise_features
from fcps_core.measures.judge_paths import build_paths


# -- building blocks ------------------------------------------------------------------------
def sk_isotonic(x: np.ndarray, y: np.ndarray) -> IsotonicRegression:
    return IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True,
                              out_of_bounds="clip").fit(x, y)


def sk_ridge(F: np.ndarray, y: np.ndarray, alpha: float = 1.0) -> tuple[np.ndarray, float]:
    m = Ridge(alpha=alpha).fit(F, y)
    return np.asarray(m.coef_, float), float(m.intercept_)


def sk_logistic(F: np.ndarray, y: np.ndarray, C: float = 1.0,
                tol: float = 1e-4) -> tuple[np.ndarray, float]:
    """sklearn's L2 logistic regression with soft labels by weighted duplication."""
    soft = (y > 0) & (y < 1)
    if soft.any():
        FF = np.vstack([F, F])
        target = np.r_[np.ones(len(y)), np.zeros(len(y))]
        weight = np.r_[y, 1 - y]
        keep = weight > 0
        FF, target, weight = FF[keep], target[keep], weight[keep]
    else:
        FF, target, weight = F, y, None
    m = LogisticRegression(C=C, max_iter=10000, tol=tol).fit(FF, target, sample_weight=weight)
    return np.asarray(m.coef_[0], float), float(m.intercept_[0])


def groupby_table(ids: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    """Per-pattern sum and count of ``values`` (pandas groupby)."""
    return pd.DataFrame({"z": ids, "v": values}).groupby("z")["v"].agg(["sum", "count"])


def _lookup(table: pd.DataFrame, ids: np.ndarray, column: str) -> np.ndarray:
    """Per-row value of ``column`` for pattern ``ids`` (NaN when unseen)."""
    return pd.Series(ids).map(table[column]).to_numpy(dtype=float)


# -- families -------------------------------------------------------------------------------
class RefTable:
    def __init__(self, alpha=0.5, fallback="global"):
        self.alpha, self.fallback = alpha, fallback

    def fit(self, X, y, unlabelled=None):
        self.ybar = float(np.mean(y))
        levels = range(X.K) if self.fallback == "lower_prefix" else [X.K - 1]
        self.tables = {}
        for k in levels:
            t = groupby_table(X.patterns[k], y)
            t["g"] = (t["sum"] + self.alpha * self.ybar) / (t["count"] + self.alpha)
            self.tables[k] = t
        return self

    def predict(self, X):
        pred = np.full(X.n_rows, np.nan)
        for k in sorted(self.tables, reverse=True):
            vals = _lookup(self.tables[k], X.patterns[k], "g")
            pred = np.where(np.isnan(pred), vals, pred)
        return np.clip(np.where(np.isnan(pred), self.ybar, pred), 0, 1)


class RefBackoff:
    def __init__(self, shrinkage=2.0):
        self.lam = shrinkage

    def fit(self, X, y, unlabelled=None):
        self.ybar = float(np.mean(y))
        self.levels = [groupby_table(X.patterns[k], y) for k in range(X.K)]
        return self

    def predict(self, X):
        pred = np.full(X.n_rows, self.ybar)
        for k, t in enumerate(self.levels):
            s = np.nan_to_num(_lookup(t, X.patterns[k], "sum"))
            n = np.nan_to_num(_lookup(t, X.patterns[k], "count"))
            pred = (s + self.lam * pred) / (n + self.lam)
        return np.clip(pred, 0, 1)


class RefMeanIso:
    def fit(self, X, y, unlabelled=None):
        self.iso = sk_isotonic(X.scores.mean(axis=1), y)
        return self

    def predict(self, X):
        return np.clip(self.iso.predict(X.scores.mean(axis=1)), 0, 1)


class RefOneCoin:
    def fit(self, X, y, unlabelled=None):
        K = X.K
        self.w = np.zeros(K)
        for j in range(K):
            correct = votes = 0
            for s, lab in zip(X.scores[:, j], y):
                if s == 0.5 or lab == 0.5:
                    continue
                votes += 1
                correct += (s > 0.5) == (lab > 0.5)
            acc = min(max((correct + 1.0) / (votes + 2.0), 0.05), 0.95)
            self.w[j] = math.log(acc / (1 - acc))
        pos = sum(1 for lab in y if lab > 0.5)
        neg = sum(1 for lab in y if lab < 0.5)
        prior = (pos + 1.0) / (pos + neg + 2.0)
        self.prior = math.log(prior / (1 - prior))
        self.iso = sk_isotonic(self._score(X), y)
        return self

    def _score(self, X):
        return self.prior + np.sign(X.scores - 0.5) @ self.w

    def predict(self, X):
        return np.clip(self.iso.predict(self._score(X)), 0, 1)


class RefRidgeIso:
    features = staticmethod(lambda s: s)

    def fit(self, X, y, unlabelled=None):
        self.ybar = float(np.mean(y))
        self.constant = np.ptp(y) == 0
        if not self.constant:
            F = self.features(X.scores)
            self.coef, self.b = sk_ridge(F, y)
            self.iso = sk_isotonic(F @ self.coef + self.b, y)
        return self

    def predict(self, X):
        if self.constant:
            return np.full(X.n_rows, self.ybar)
        return np.clip(self.iso.predict(self.features(X.scores) @ self.coef + self.b), 0, 1)


class RefRidgePairwiseIso(RefRidgeIso):
    features = staticmethod(pairwise_features)


class RefLogistic:
    features = staticmethod(lambda s: s)
    tol = 1e-4

    def fit(self, X, y, unlabelled=None):
        F = self.features(X.scores)
        ybar = float(np.mean(y))
        if np.ptp(y) == 0:
            self.coef = np.zeros(F.shape[1])
            self.b = math.log((ybar + 1e-12) / (1 - ybar + 1e-12))
        else:
            self.coef, self.b = sk_logistic(F, y, tol=self.tol)
        return self

    def predict(self, X):
        z = np.clip(self.features(X.scores) @ self.coef + self.b, -35, 35)
        return 1 / (1 + np.exp(-z))


class RefLogisticPairwise(RefLogistic):
    features = staticmethod(pairwise_features)


class RefDSJury:
    """Row-level Dawid-Skene EM, exactly as documented in ``ds_jury`` (one row at a time
    through numpy vectors, no compression, no batching)."""

    def fit(self, X, y, unlabelled=None):
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        ones, zeros = (S > 0.5).astype(float), (S < 0.5).astype(float)
        observed = ones + zeros
        n_obs = observed.sum(axis=1)
        t = np.where(n_obs > 0, ones.sum(axis=1) / np.maximum(n_obs, 1), 0.5)
        for _ in range(200):
            pi = np.clip(t.mean(), 1e-3, 1 - 1e-3)
            sens = (t @ ones + 1.0) / (t @ observed + 2.0)
            spec = ((1 - t) @ zeros + 1.0) / ((1 - t) @ observed + 2.0)
            self.prior = float(np.log(pi / (1 - pi)))
            self.w1 = np.log(sens) - np.log(1 - spec)
            self.w0 = np.log(1 - sens) - np.log(spec)
            new_t = 1.0 / (1.0 + np.exp(-np.clip(self._logodds(S), -35, 35)))
            done = np.max(np.abs(new_t - t)) < 1e-7
            t = new_t
            if done:
                break
        raw = self._logodds(X.scores)
        self.sign = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and np.corrcoef(raw, y)[0, 1] < 0:
            self.sign = -1.0
        self.iso = sk_isotonic(self.sign * raw, y)
        return self

    def _logodds(self, S):
        return self.prior + (S > 0.5).astype(float) @ self.w1 + (S < 0.5).astype(float) @ self.w0

    def predict(self, X):
        return np.clip(self.iso.predict(self.sign * self._logodds(X.scores)), 0, 1)


SCALAR_REFS = {"mean_iso": RefMeanIso, "one_coin_iso": RefOneCoin, "ridge_iso": RefRidgeIso,
               "logistic": RefLogistic, "ridge_pairwise_iso": RefRidgePairwiseIso,
               "logistic_pairwise": RefLogisticPairwise, "ds_jury": RefDSJury}


class RefResidual:
    def __init__(self, base="ridge_iso", shrinkage=8.0, logistic_tol=1e-4):
        self.base_name, self.k, self.logistic_tol = base, shrinkage, logistic_tol

    def fit(self, X, y, unlabelled=None):
        self.base = reference_model(self.base_name, {}, logistic_tol=self.logistic_tol).fit(X, y)
        self.table = groupby_table(X.patterns[X.K - 1], y - self.base.predict(X))
        return self

    def predict(self, X):
        ids = X.patterns[X.K - 1]
        s = np.nan_to_num(_lookup(self.table, ids, "sum"))
        n = np.nan_to_num(_lookup(self.table, ids, "count"))
        return np.clip(self.base.predict(X) + s / (n + self.k), 0, 1)


REFERENCE = {"table": RefTable, "backoff": RefBackoff, "residual": RefResidual, **SCALAR_REFS}


def reference_model(family: str, params: dict, fixed: dict | None = None, *,
                    logistic_tol: float = 1e-4):
    """A reference model; ``logistic_tol`` is sklearn's tolerance for logistic fits (its
    default 1e-4, or tight to compare with the engine's exact optimum)."""
    extra = {"logistic_tol": logistic_tol} if family == "residual" else {}
    obj = REFERENCE[family](**(fixed or {}), **params, **extra)
    if isinstance(obj, RefLogistic):
        obj.tol = logistic_tol
    return obj


# -- the straightforward selection loop ------------------------------------------------------
def reference_candidates(panel, blocks, selector, *, logistic_tol: float = 1e-4) -> list[dict]:
    """Every menu entry fitted on its own, scored on V (and T), with the prefix diagnostics:
    the same menu and the same per-candidate numbers as :class:`FCPSSelector`, computed the
    obvious way. Returns one dict per (path, K, family) with the V-best grid setting."""
    from fcps_core.families import REGISTRY
    y = panel.labels
    encoded = encode_panel(panel, blocks.M, n_bins=selector.n_bins)
    paths = build_paths(list(selector.paths), encoded.codes[blocks.S], y[blocks.S],
                        len(blocks.M), table_k_max=min(selector.table_k_max,
                                                       selector.k_max or selector.table_k_max),
                        seed=selector.seed, penalty=selector.complexity_penalty,
                        cfps_max_paths=selector.cfps_max_paths)
    traffic = np.setdiff1d(np.arange(panel.n_rows), np.concatenate([blocks.M, blocks.T]))
    out = []
    for path in paths:
        top = max(selector.k_limit(f, len(path.judges)) for f in selector.families)
        for K in path.prefix_sizes:
            if K > top:
                continue
            judges = list(path.judges[:K])
            feats = PrefixFeatures(patterns=prefix_patterns(encoded.codes[:, judges],
                                                            encoded.alphabet_sizes[judges]),
                                   scores=encoded.scores[:, judges])
            XM, XV, XT, XR = (feats.take(r) for r in (blocks.M, blocks.V, blocks.T, traffic))
            ids = feats.patterns[K - 1]
            diag = None
            if ids is not None:
                diag = prefix_diagnostics(ids[blocks.M], ids[blocks.V],
                                          ids[blocks.T] if len(blocks.T) else None,
                                          nominal_cells(encoded.alphabet_sizes[judges]))
            for family in selector.families:
                cls = REGISTRY[family]
                if K > selector.k_limit(family, len(path.judges)):
                    continue
                if cls.needs_patterns and ids is None:
                    continue
                best = None
                for params in selector.family_grid(family):
                    model = reference_model(family, params, selector.family_fixed(family),
                                            logistic_tol=logistic_tol)
                    model.fit(XM, y[blocks.M], XR if cls.uses_unlabelled else None)
                    pV = model.predict(XV)
                    risk = float(np.mean(losses(selector.objective, y[blocks.V], pV)))
                    if best is None or risk < best[0] - 1e-15:
                        best = (risk, params, model, pV)
                risk, params, model, pV = best
                rec = {"path_rule": path.rule, "judges": tuple(judges), "K": K, "family": family,
                       "params": params, "val_risk": risk,
                       "val_mse": float(np.mean(losses("mse", y[blocks.V], pV))),
                       "val_nll": float(np.mean(losses("nll", y[blocks.V], pV))),
                       "diagnostics": diag}
                if len(blocks.T):
                    pT = model.predict(XT)
                    rec["test_mse"] = float(np.mean(losses("mse", y[blocks.T], pT)))
                    rec["test_nll"] = float(np.mean(losses("nll", y[blocks.T], pT)))
                out.append(rec)
    return out
