"""The FCPS selector (paper Eq. eq:general-selection and section "FCPS Protocol").

Protocol (paper Table tab:protocol-guardrails), enforced by construction:

1. encoders (continuous bins, data-fitted scalar maps) are fitted on the calibration
   block M;
2. path rules see only the selection block S (and the planned n_M);
3. every candidate (path, K, family[, hyperparameters]) is fitted on M;
4. the candidate with the lowest validation risk on V (MSE/Brier or NLL) is selected;
   hyperparameter grids (backoff/residual shrinkage, residual base) are tuned on V and
   count toward the menu size |C|;
5. only then does :meth:`SelectionResult.audit` evaluate candidates on the research test
   block T. ``_choose`` never receives T rows, so T cannot change the selection; ``ds_jury``'s
   label-free EM runs on M plus the unlabelled traffic outside T.

Schema-level preprocessing (output vocabularies, the observed rubric range) reads the judge
outputs of all rows, never labels.

Distinct rows. For a prefix whose judges are all discrete, a row's scalar scores are a
function of its joint pattern, so every family sees block M as its distinct
(pattern, label) rows with their counts (``PrefixFeatures.weight``), V and T are scored the
same way with count-weighted losses, and the unlabelled traffic as distinct patterns.
Each family's weighted fit equals its fit on the expanded rows (tests check both and the
whole selection with ``compress=False``), so this changes cost, not results.

The guarded mode (``guard='one_se'``) keeps the prior family's best candidate unless the
selected candidate's upper one-SE validation risk is below the prior's lower one-SE risk
(paper, Cold-Start Few-Label Diagnostic).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from .diagnostics import (GAIN_THRESHOLD, PRESSURE_THRESHOLD, PrefixDiagnostics, argmin_with_ties,
                          losses, metric_suite, prefix_diagnostics, regime_quadrant, table_pressure, theorem1_bound, validation_scale)
from .encoding import (INT64_SAFE, EncodedPanel, encode_panel, nominal_cells, pattern_labels,
                       prefix_patterns)
from .errors import MenuError, SplitError
from .families import FAMILIES, PAIRWISE_FEATURE, REGISTRY, PrefixFeatures, get_family
from .panel import Panel
from .paths import PATH_RULES, JudgePath, build_paths
from .splits import Blocks, check_blocks

DEFAULT_PATHS = ("info_first", "complexity_penalized", "random")
DEFAULT_TABLE_K_MAX = 8
DEFAULT_PAIRWISE_K_MAX = 12


@dataclass
class Candidate:
    """One (path, K, family) entry of the menu with its validation and diagnostic record."""

    index: int
    path_rule: str
    path_label: str
    judges: list[str]
    judge_idx: tuple[int, ...]
    K: int
    family: str
    params: dict
    grid_size: int
    val_mse: float
    val_nll: float
    val_risk: float
    val_se: float
    diagnostics: PrefixDiagnostics | None
    test_mse: float | None = None
    test_nll: float | None = None

    def to_dict(self) -> dict:
        d = {"index": self.index, "path_rule": self.path_rule, "path": self.path_label or self.path_rule,
             "judges": self.judges, "K": self.K, "family": self.family, "params": self.params,
             "grid_size": self.grid_size, "val_mse": self.val_mse, "val_nll": self.val_nll,
             "val_risk": self.val_risk, "val_se": self.val_se,
             "test_mse": self.test_mse, "test_nll": self.test_nll}
        diag = self.diagnostics.to_dict() if self.diagnostics else {
            k: None for k in ("Q_K", "S_K", "H_K", "unseen_val", "unseen_test", "V_cell",
                              "V_proxy", "cell_pressure_sum")}
        d.update(diag)
        return d


@dataclass
class FCPSSelector:
    """Finite-Calibration Panel Selection over paths x K x families.

    Parameters
    ----------
    paths : path rules (``info_first``, ``random``, ``complexity_penalized``, ``cfps``).
    families : aggregator families (see ``fcps_core.families``).
    k_max : largest prefix for every family (None = the whole pool for scalar families).
    table_k_max : largest prefix for table-like families (default 8; nominal tables grow as
        |alphabet|^K).
    pairwise_k_max : largest prefix for pairwise-feature stackers (K(K-1)/2 features).
    alpha, fallback : ``table`` smoothing and unseen-pattern fallback.
    objective : ``mse`` (Brier, the theory's loss) or ``nll``.
    guard : None or ``one_se``; ``prior_family`` None = task-type prior (``one_coin_iso``
        for pairwise/binary panels, ``ridge_iso`` otherwise).
    refit : ``frozen`` (deploy the M-fitted candidate) or ``refit`` (refit the chosen
        candidate on S+M+V before deployment).
    n_bins : quantile bins for continuous judges (fitted on M).
    seed : seeds the random path.
    """

    paths: Sequence[str] = DEFAULT_PATHS
    families: Sequence[str] = FAMILIES
    k_max: int | None = None
    table_k_max: int = DEFAULT_TABLE_K_MAX
    pairwise_k_max: int = DEFAULT_PAIRWISE_K_MAX
    alpha: float = 0.5
    fallback: str = "global"
    objective: str = "mse"
    guard: str | None = None
    prior_family: str | None = None
    refit: str = "frozen"
    n_bins: int = 5
    seed: int = 0
    complexity_penalty: float = 1.0
    cfps_max_paths: int = 32
    gain_threshold: float = GAIN_THRESHOLD
    pressure_threshold: float = PRESSURE_THRESHOLD
    family_options: dict = field(default_factory=dict)
    progress: Callable[[float, str], None] | None = None
    compress: bool = True   # fit and score on distinct (pattern, label) rows with counts

    def validate(self, n_judges: int) -> None:
        for f in self.families:
            get_family(f)
        for r in self.paths:
            if r not in PATH_RULES:
                raise MenuError(f"unknown path rule {r!r}; use {', '.join(PATH_RULES)}")
        if not self.families:
            raise MenuError("the family menu is empty")
        if not self.paths:
            raise MenuError("the path-rule menu is empty")
        if self.objective not in ("mse", "nll"):
            raise MenuError(f"objective must be mse or nll, not {self.objective!r}")
        if self.guard not in (None, "one_se"):
            raise MenuError(f"guard must be one_se or none, not {self.guard!r}")
        if self.refit not in ("frozen", "refit"):
            raise MenuError(f"refit must be frozen or refit, not {self.refit!r}")
        if self.k_max is not None and self.k_max < 1:
            raise MenuError("k_max must be at least 1")
        if not (self.alpha >= 0 and math.isfinite(self.alpha)):
            raise MenuError(f"alpha must be a finite number >= 0 (got {self.alpha})")
        if self.n_bins < 1:
            raise MenuError(f"n_bins must be at least 1 (got {self.n_bins})")
        if self.fallback not in ("global", "lower_prefix"):
            raise MenuError("fallback must be global or lower_prefix")
        if self.prior_family is not None:
            get_family(self.prior_family)

    # -- K limits ------------------------------------------------------------------------
    def k_limit(self, family: str, n_judges: int) -> int:
        limit = n_judges if self.k_max is None else min(self.k_max, n_judges)
        if REGISTRY[family].table_like:
            limit = min(limit, self.table_k_max)
        if family in PAIRWISE_FEATURE:
            limit = min(limit, self.pairwise_k_max)
        return limit

    def family_fixed(self, family: str) -> dict:
        """Hyperparameters the menu fixes (not tuned on V)."""
        return {"alpha": self.alpha, "fallback": self.fallback} if family == "table" else {}

    def family_instance(self, family: str, params: dict):
        return get_family(family)(**self.family_fixed(family), **params)

    def family_grid(self, family: str) -> list[dict]:
        return get_family(family).grid(**self.family_options)

    # -- main ----------------------------------------------------------------------------
    def fit(self, panel: Panel, blocks: Blocks) -> "SelectionResult":
        t0 = time.perf_counter()
        self.validate(len(panel.judges))
        for b in ("S", "M", "V"):
            if len(getattr(blocks, b)) == 0:
                raise SplitError(f"block {b} is empty: FCPS needs selection, calibration and validation labels")
        check_blocks(panel, blocks)
        panel = deployable_label_scale(panel, blocks)
        y = panel.labels
        for b in ("S", "M", "V", "T"):
            rows = getattr(blocks, b)
            if len(rows) and np.isnan(y[rows]).any():
                raise SplitError(f"block {b} contains unlabelled rows")
        report = self.progress or (lambda frac, msg: None)
        encoded = encode_panel(panel, blocks.M, n_bins=self.n_bins)
        alph = encoded.alphabet_sizes
        report(0.02, "building judge paths on the selection block")
        paths = build_paths(list(self.paths), encoded.codes[blocks.S], y[blocks.S], len(blocks.M),
                            table_k_max=min(self.table_k_max, self.k_max or self.table_k_max),
                            seed=self.seed, penalty=self.complexity_penalty,
                            cfps_max_paths=self.cfps_max_paths)
        names = panel.judge_names
        # Unlabelled traffic for unsupervised families: every row outside M and T (T is
        # held out from every fit, even label-free ones).
        outside = np.ones(panel.n_rows, dtype=bool)
        outside[blocks.M] = outside[blocks.T] = False
        traffic = np.flatnonzero(outside)
        work = []  # (path, K)
        for path in paths:
            top = max(self.k_limit(f, len(path.judges)) for f in self.families)
            for K in path.prefix_sizes:
                if K <= top:
                    work.append((path, K))
        if not work:
            raise MenuError("no candidate fits the K limits; raise --k-max")
        fits: dict[tuple, dict] = {}        # cache: (judges, family, params) -> fitted record
        diag_cache: dict[tuple, PrefixDiagnostics | None] = {}
        pattern_cache: dict[tuple, list] = {}
        views = _ViewCache(encoded, blocks, y, traffic, pattern_cache, self.compress)
        self._fit_batched(work, encoded, pattern_cache, views, fits)
        candidates: list[Candidate] = []
        models: dict[int, object] = {}
        menu_size = 0
        for w, (path, K) in enumerate(work):
            report(0.05 + 0.9 * w / len(work), f"{path.label or path.rule}: K={K}")
            judges = path.judges[:K]
            patterns = self._patterns(encoded, path, K, pattern_cache)
            if judges not in diag_cache:
                diag_cache[judges] = self._diagnostics(patterns, views, judges, blocks,
                                                       alph[list(judges)])
            diag = diag_cache[judges]
            for family in self.families:
                cls = REGISTRY[family]
                if K > self.k_limit(family, len(path.judges)):
                    continue
                if cls.needs_patterns and patterns[K - 1] is None:
                    continue
                kind = _view_kind(cls)
                vM, vV = views.get(judges, "M", kind), views.get(judges, "V", kind)
                vR = views.get(judges, "rest", kind) if cls.uses_unlabelled else None
                grid = self.family_grid(family)
                keys = [(judges, family, tuple(sorted(p.items()))) for p in grid]
                todo = [p for p, k in zip(grid, keys) if k not in fits]
                if todo:
                    extra = {}
                    if family == "residual":
                        # The residual bases are the scalar families' own fits: share them.
                        extra["base_models"] = {
                            b: self._fit_one(fits, views, judges, b)["model"]
                            for b in dict.fromkeys(p["base"] for p in todo)}
                    fitted = cls.fit_grid(todo, vM.X, vM.y,
                                          vR.X if cls.uses_unlabelled else None,
                                          **self.family_fixed(family), **extra)
                    for params, model in zip(todo, fitted):
                        fits[(judges, family, tuple(sorted(params.items())))] = \
                            _record(model, vV)
                # Grid entries within rounding of the best are ties: the first (simplest) wins.
                risk, params, rec = argmin_with_ties(
                    [(fits[k][self.objective], p, fits[k], i) for i, (p, k) in enumerate(zip(grid, keys))],
                    lambda t: t[0], lambda t: t[3])[:3]
                menu_size += len(grid)
                cand = Candidate(
                    index=len(candidates), path_rule=path.rule, path_label=path.label,
                    judges=[names[j] for j in judges], judge_idx=judges, K=K, family=family,
                    params=dict(params), grid_size=len(grid),
                    val_mse=rec["mse"], val_nll=rec["nll"], val_risk=risk,
                    val_se=_se(rec, self.objective), diagnostics=diag)
                candidates.append(cand)
                models[cand.index] = rec["model"]
        if not candidates:
            raise MenuError("the menu produced no candidates (every family was out of its K range)")
        report(0.96, "selecting on the validation block")
        selected_index, guard_info = self._choose(candidates, panel)
        result = SelectionResult(panel=panel, blocks=blocks, selector=self, encoded=encoded,
                                 paths=paths, candidates=candidates, models=models,
                                 menu_size=menu_size, selected_index=selected_index,
                                 guard=guard_info, feature_cache=pattern_cache, views=views)
        result._compute_regime()
        result.audit()
        result.timings["select_seconds"] = time.perf_counter() - t0
        report(1.0, "done")
        return result

    def _fit_batched(self, work, encoded, pattern_cache, views, fits) -> None:
        """Pre-fit families that share work across prefixes (``batch_fit``: ds_jury's EMs
        run as one batch); the main loop then finds them in ``fits``."""
        for family in self.families:
            cls = REGISTRY[family]
            if not cls.batch_fit:
                continue
            jobs = []
            for path, K in work:
                judges = path.judges[:K]
                patterns = self._patterns(encoded, path, K, pattern_cache)
                if K > self.k_limit(family, len(path.judges)) or judges in jobs:
                    continue
                if cls.needs_patterns and patterns[K - 1] is None:
                    continue
                jobs.append(judges)
            fixed = self.family_fixed(family)
            kind = _view_kind(cls)
            for params in self.family_grid(family):
                problems = [(views.get(j, "M", kind).X, views.get(j, "M", kind).y,
                             views.get(j, "rest", kind).X if cls.uses_unlabelled else None)
                            for j in jobs]
                for judges, model in zip(jobs, cls.fit_many(problems, **fixed, **params)):
                    fits[(judges, family, tuple(sorted(params.items())))] = \
                        _record(model, views.get(judges, "V", kind))

    def _fit_one(self, fits: dict, views: "_ViewCache", judges: tuple, family: str) -> dict:
        """Fit (or fetch) a default-parameter model of ``family`` and its validation record."""
        key = (judges, family, ())
        if key not in fits:
            cls = REGISTRY[family]
            kind = _view_kind(cls)
            vM = views.get(judges, "M", kind)
            model = self.family_instance(family, {}).fit(
                vM.X, vM.y, views.get(judges, "rest", kind).X if cls.uses_unlabelled else None)
            fits[key] = _record(model, views.get(judges, "V", kind))
        return fits[key]

    def _patterns(self, encoded: EncodedPanel, path: JudgePath, K: int, cache: dict) -> list:
        """Joint-pattern ids (every row) of each level of the path's K-prefix."""
        judges = path.judges[:K]
        # Pattern ids depend only on the ordered judges: share them across paths, and the
        # levels of a prefix are the first levels of its path (computed once per path).
        if judges not in cache:
            full = path.judges
            if full not in cache:
                cache[full] = prefix_patterns(encoded.codes[:, list(full)],
                                              encoded.alphabet_sizes[list(full)])
            cache[judges] = cache[full][:K]
        return cache[judges]

    @staticmethod
    def _diagnostics(patterns: list, views: "_ViewCache", judges: tuple, blocks: Blocks,
                     alph: np.ndarray) -> PrefixDiagnostics | None:
        if patterns[-1] is None:
            return None
        vM, vV = views.get(judges, "M"), views.get(judges, "V")
        vT = views.get(judges, "T") if len(blocks.T) else None
        return prefix_diagnostics(vM.ids, vV.ids, vT.ids if vT is not None else None,
                                  nominal_cells(alph), w_M=vM.X.weight, w_V=vV.X.weight,
                                  w_T=vT.X.weight if vT is not None else None)

    def default_prior(self, panel: Panel) -> str:
        kinds = {j.schema for j in panel.judges}
        return "one_coin_iso" if kinds <= {"pairwise", "binary"} else "ridge_iso"

    def _choose(self, candidates: list[Candidate], panel: Panel) -> tuple[int, dict | None]:
        """Validation argmin (ties: smaller K, simpler family, menu order). Uses no T data."""
        def ties(c: Candidate):
            return (c.K, REGISTRY[c.family].complexity_rank, c.index)

        def pick(pool):
            return argmin_with_ties(pool, lambda c: c.val_risk, ties)
        best = pick(candidates)
        if self.guard != "one_se":
            return best.index, None
        prior = self.prior_family or self.default_prior(panel)
        pool = [c for c in candidates if c.family == prior]
        if not pool:
            return best.index, {"mode": "one_se", "prior_family": prior, "adapted": True,
                                "reason": "prior family not in the menu"}
        prior_best = pick(pool)
        if best.family == prior:
            return best.index, {"mode": "one_se", "prior_family": prior, "adapted": False,
                                "reason": "the validation argmin is already the prior family"}
        upper = best.val_risk + (best.val_se if math.isfinite(best.val_se) else 0.0)
        lower = prior_best.val_risk - (prior_best.val_se if math.isfinite(prior_best.val_se) else 0.0)
        adapted = upper < lower
        return (best.index if adapted else prior_best.index), {
            "mode": "one_se", "prior_family": prior, "adapted": bool(adapted),
            "argmin_index": best.index, "prior_index": prior_best.index,
            "argmin_upper": upper, "prior_lower": lower}


def deployable_label_scale(panel: Panel, blocks: Blocks) -> Panel:
    """Integer rubric labels normalised by their *observed* range used every row, T included.
    Re-scale them to the range of the deployable blocks S, M, V (an affine map of the stored
    labels, so no raw labels are needed); T labels outside that range are clipped."""
    if not panel.label_range_inferred:
        return panel
    rows = np.concatenate([blocks.S, blocks.M, blocks.V])
    lo, hi = float(np.min(panel.labels[rows])), float(np.max(panel.labels[rows]))
    if (lo, hi) == (0.0, 1.0) or hi <= lo:
        return panel
    return panel.with_labels(np.clip((panel.labels - lo) / (hi - lo), 0.0, 1.0))


@dataclass
class SelectionResult:
    """Everything a selection produced: candidates, the choice, diagnostics, the predictor."""

    panel: Panel
    blocks: Blocks
    selector: FCPSSelector
    encoded: EncodedPanel
    paths: list[JudgePath]
    candidates: list[Candidate]
    models: dict
    menu_size: int
    selected_index: int
    guard: dict | None
    feature_cache: dict
    views: "_ViewCache | None" = None
    regime: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)

    @property
    def selected(self) -> Candidate:
        return self.candidates[self.selected_index]

    @property
    def n_val(self) -> int:
        return len(self.blocks.V)

    @property
    def validation_scale(self) -> float:
        return validation_scale(self.menu_size, self.n_val)

    @property
    def theorem1_bound(self) -> float:
        return theorem1_bound(self.menu_size, self.n_val)

    def features(self, cand: Candidate) -> PrefixFeatures:
        ids = self.feature_cache[cand.judge_idx]
        return PrefixFeatures(patterns=ids, scores=self.encoded.scores[:, list(cand.judge_idx)])

    def predict_rows(self, cand: Candidate, rows: np.ndarray) -> np.ndarray:
        return self.models[cand.index].predict(self.features(cand).take(rows))

    def audit(self) -> None:
        """Research-test audit: T metrics for every candidate, after selection is fixed."""
        T = self.blocks.T
        if len(T) == 0:
            return
        views = self.views or _ViewCache(self.encoded, self.blocks, self.panel.labels,
                                         np.zeros(0, dtype=np.int64), self.feature_cache, False)
        done: dict[int, tuple[float, float]] = {}
        for c in self.candidates:
            mid = id(self.models[c.index])
            if mid not in done:
                vT = views.get(c.judge_idx, "T", _view_kind(REGISTRY[c.family]))
                p = self.models[c.index].predict(vT.X)
                done[mid] = (_wmean(losses("mse", vT.y, p), vT.X.weight),
                             _wmean(losses("nll", vT.y, p), vT.X.weight))
            c.test_mse, c.test_nll = done[mid]

    def _compute_regime(self) -> None:
        table_like = [c for c in self.candidates if REGISTRY[c.family].table_like and c.diagnostics]
        scalar = [c for c in self.candidates if not REGISTRY[c.family].table_like]
        s = self.selector
        if not table_like or not scalar:
            self.regime = regime_quadrant(None, None, gain_threshold=s.gain_threshold,
                                          pressure_threshold=s.pressure_threshold)
            return
        best_t = argmin_with_ties(table_like, lambda c: c.val_risk, lambda c: (c.K, c.index))
        best_s = argmin_with_ties(scalar, lambda c: c.val_risk, lambda c: (c.K, c.index))
        n_M = len(self.blocks.M)
        pressure = table_pressure(best_t.diagnostics.H_K, n_M, best_t.diagnostics.unseen_val)
        gain = best_s.val_risk - best_t.val_risk
        # Paired SE of the validation loss difference: how far the gain is from noise.
        yV = self.panel.labels[self.blocks.V]
        diff = losses(s.objective, yV, self.predict_rows(best_s, self.blocks.V)) - \
            losses(s.objective, yV, self.predict_rows(best_t, self.blocks.V))
        se = float(np.std(diff, ddof=1) / math.sqrt(len(diff))) if len(diff) > 1 else math.nan
        self.regime = regime_quadrant(gain, pressure, gain_threshold=s.gain_threshold,
                                      pressure_threshold=s.pressure_threshold)
        self.regime.update({"interaction_gain_se": se, "best_table_like_index": best_t.index,
                            "best_scalar_index": best_s.index})

    # -- per-cell audit ------------------------------------------------------------------
    def cell_table(self, cand: Candidate | int | None = None, *, limit: int | None = None) -> list[dict]:
        """Per-pattern audit of a candidate's prefix: pattern, N_z (M), mean label (M),
        prediction, and V/T frequencies; sorted by N_z descending, unseen cells last."""
        if cand is None:
            cand = self.selected
        elif isinstance(cand, int):
            cand = self.candidates[cand]
        feats = self.features(cand)
        ids = feats.patterns[cand.K - 1]
        if ids is None:
            return []
        b = self.blocks
        y = self.panel.labels
        model = self.models[cand.index]
        rows_all = np.concatenate([b.M, b.V, b.T])
        uniq = np.unique(ids[rows_all])
        out = []
        codes = self.encoded.codes[:, list(cand.judge_idx)]
        encoders = [self.encoded.encoders[j] for j in cand.judge_idx]
        first_row = {}
        for r in rows_all:
            first_row.setdefault(int(ids[r]), int(r))
        pred_all = model.predict(feats.take(rows_all))
        pred_by_id: dict[int, list[float]] = {}
        for r, p in zip(rows_all, pred_all):
            pred_by_id.setdefault(int(ids[r]), []).append(float(p))
        n_V, n_T = max(len(b.V), 1), max(len(b.T), 1)
        for z in uniq:
            z = int(z)
            in_M = b.M[ids[b.M] == z]
            out.append({
                "pattern": pattern_labels(codes[first_row[z]], encoders),
                "N_z": int(len(in_M)),
                "mean_label": float(y[in_M].mean()) if len(in_M) else None,
                "prediction": float(np.mean(pred_by_id[z])),
                "freq_val": float(np.sum(ids[b.V] == z) / n_V),
                "freq_test": float(np.sum(ids[b.T] == z) / n_T) if len(b.T) else None,
                "unseen": len(in_M) == 0,
            })
        out.sort(key=lambda d: (d["unseen"], -d["N_z"], -d["freq_val"], d["pattern"]))
        return out[:limit] if limit else out

    # -- deployment ----------------------------------------------------------------------
    def predictor(self):
        """The deployable predictor of the selected candidate under the refit policy."""
        from .predictor import FCPSPredictor
        return FCPSPredictor.from_selection(self)

    # -- reporting -----------------------------------------------------------------------
    def to_dict(self, *, cells_limit: int = 200) -> dict:
        sel = self.selected
        sizes = self.blocks.sizes()
        return {
            "panel": {"name": self.panel.name, "rows": self.panel.n_rows,
                      "labelled": self.panel.n_labelled, "judges": self.panel.judge_names,
                      "schema": self.panel.schema,
                      "judge_schemas": {j.name: j.schema for j in self.panel.judges},
                      "label_note": self.panel.label_note or None},
            "split": {**sizes, "seed": self.blocks.seed, "source": self.blocks.source,
                      "groups": {b: int(len(set(self.panel.group_ids[getattr(self.blocks, b)])))
                                 for b in ("S", "M", "V", "T")}},
            "menu": {"paths": list(self.selector.paths), "families": list(self.selector.families),
                     "k_max": self.selector.k_max, "table_k_max": self.selector.table_k_max,
                     "pairwise_k_max": self.selector.pairwise_k_max, "alpha": self.selector.alpha,
                     "fallback": self.selector.fallback, "objective": self.selector.objective,
                     "guard": self.selector.guard, "refit": self.selector.refit,
                     "n_bins": self.selector.n_bins},
            "menu_size": self.menu_size,
            "n_candidates": len(self.candidates),
            "validation_scale": self.validation_scale,
            "theorem1_bound": self.theorem1_bound,
            "selected": {"path_rule": sel.path_rule, "path": sel.path_label or sel.path_rule,
                         "judges": sel.judges, "K": sel.K, "family": sel.family,
                         "params": sel.params, "val_mse": sel.val_mse, "val_nll": sel.val_nll,
                         "test_mse": sel.test_mse, "test_nll": sel.test_nll,
                         "index": sel.index},
            "guard": self.guard,
            "paths": [{"rule": p.rule, "label": p.label or p.rule,
                       "judges": [self.panel.judge_names[j] for j in p.judges],
                       "prefix_sizes": list(p.prefix_sizes) if p.rule == "cfps" else None}
                      for p in self.paths],
            "candidates": [c.to_dict() for c in self.candidates],
            "regime": self.regime,
            "cells": self.cell_table(sel, limit=cells_limit),
            "timings": self.timings,
        }


# -- distinct-row views of the blocks ---------------------------------------------------------
@dataclass
class _View:
    """A block's rows for one prefix: distinct rows with counts (``X.weight``) when the
    prefix allows it, else the raw rows. ``ids``: the prefix's joint-pattern ids."""

    X: PrefixFeatures
    y: np.ndarray | None
    ids: np.ndarray | None


def _view_kind(cls) -> str:
    """Families that read pattern ids get table views; the others see only the scores."""
    return "table" if cls.needs_patterns else "scalar"


#: key ranges up to this size are grouped by counting (no sort)
_COUNTING_LIMIT = 1 << 22


def _group(key: np.ndarray, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """(a representative position, count) of each distinct value of ``key`` (ints in
    [0, bound)), in increasing key order. Rows sharing a key are identical in everything
    the view keeps, so which row represents them does not matter."""
    if bound <= max(_COUNTING_LIMIT, 4 * len(key)):
        counts = np.bincount(key, minlength=bound)
        present = np.flatnonzero(counts)
        rep = np.empty(bound, dtype=np.int64)
        rep[key] = np.arange(len(key))
        return rep[present], counts[present]
    _, first, counts = np.unique(key, return_index=True, return_counts=True)
    return first, counts


class _ViewCache:
    """Per-(judges, block, kind) views, built once per selection, shared by every family.

    ``kind='table'``: distinct (joint pattern, label) rows, for families that read pattern
    ids (their scores are a function of the pattern). ``kind='scalar'``: distinct
    (score vector, label) rows, for families that read only the scores (tie and parse_error
    share a score, so this is coarser). Unlabelled traffic (block ``rest``) is grouped
    without labels. A prefix with a continuous judge keeps its raw rows.
    """

    def __init__(self, encoded: EncodedPanel, blocks: Blocks, labels: np.ndarray,
                 traffic: np.ndarray, pattern_cache: dict, compress: bool):
        self.encoded, self.labels, self.pattern_cache = encoded, labels, pattern_cache
        self.rows = {"M": blocks.M, "V": blocks.V, "T": blocks.T, "rest": traffic}
        self.compress = compress
        self.continuous = np.array([e.schema == "continuous" for e in encoded.encoders])
        self._cache: dict[tuple, _View] = {}
        self._ycode: dict[str, tuple[int, np.ndarray]] = {}
        self._score_code: dict[int, tuple[int, np.ndarray]] = {}

    def get(self, judges: tuple, block: str, kind: str = "table") -> _View:
        key = (judges, block, kind)
        if key not in self._cache:
            self._cache[key] = self._build(judges, block, kind)
        return self._cache[key]

    def _labels_code(self, block: str) -> tuple[int, np.ndarray]:
        if block not in self._ycode:
            levels, code = np.unique(self.labels[self.rows[block]], return_inverse=True)
            self._ycode[block] = (len(levels), code.astype(np.int64))
        return self._ycode[block]

    def _scores_code(self, j: int) -> tuple[int, np.ndarray] | None:
        """(number of distinct scores, per-row index of the row's score) for judge j; None
        when a row holds a code the encoder never saw (its score is the default)."""
        if j not in self._score_code:
            codes = self.encoded.codes[:, j]
            if len(codes) and codes.min() < 0:
                self._score_code[j] = None
            else:
                values, index = np.unique(self.encoded.encoders[j].code_scores(),
                                          return_inverse=True)
                self._score_code[j] = (len(values), index[codes])
        return self._score_code[j]

    def _build(self, judges: tuple, block: str, kind: str) -> _View:
        rows = self.rows[block]
        cols = list(judges)
        patterns = self.pattern_cache[judges]
        top = patterns[-1]
        labelled = block != "rest"
        table_kind = kind == "table"
        if (self.compress and len(rows) and not self.continuous[cols].any()
                and (top is not None or not table_kind)):
            if table_kind:
                ids, bound = top[rows], None
            else:
                ids, bound = np.zeros(len(rows), dtype=np.int64), 1
                for j in cols:
                    coded = self._scores_code(j)
                    if coded is None or bound * coded[0] >= INT64_SAFE:
                        ids = None
                        break
                    ids = ids * coded[0] + coded[1][rows]
                    bound *= coded[0]
            if ids is not None and ids.min() >= 0:
                if bound is None:
                    bound = int(ids.max()) + 1
                key = ids
                if labelled:
                    n_levels, ycode = self._labels_code(block)
                    if bound >= INT64_SAFE // max(n_levels, 1):
                        ids = np.unique(ids, return_inverse=True)[1]
                        bound = int(ids.max()) + 1
                    key, bound = ids * n_levels + ycode, bound * n_levels
                pos, counts = _group(key, bound)
                sel = rows[pos]
                pats = ([None if p is None else p[sel] for p in patterns] if table_kind
                        else [None] * len(cols))
                X = PrefixFeatures(patterns=pats, scores=self.encoded.scores[np.ix_(sel, cols)],
                                   weight=counts.astype(float))
                return _View(X=X, y=self.labels[sel] if labelled else None,
                             ids=top[sel] if table_kind else None)
        X = PrefixFeatures(patterns=[None if p is None else p[rows] for p in patterns],
                           scores=self.encoded.scores[np.ix_(rows, cols)])
        return _View(X=X, y=self.labels[rows] if labelled else None,
                     ids=None if top is None else top[rows])


def _wmean(values: np.ndarray, weight: np.ndarray | None) -> float:
    return float(np.mean(values)) if weight is None else float(weight @ values / weight.sum())


def _wse(values: np.ndarray, weight: np.ndarray | None) -> float:
    """Standard error of the mean of the expanded rows (std with ddof=1 / sqrt(n))."""
    n = len(values) if weight is None else float(weight.sum())
    if n <= 1:
        return math.nan
    m = _wmean(values, weight)
    dev = (values - m) ** 2
    ss = float(dev.sum()) if weight is None else float(weight @ dev)
    return math.sqrt(ss / (n - 1)) / math.sqrt(n)


def _record(model, vV: _View) -> dict:
    """A fitted model with its validation risks (both objectives); ``_se`` adds their SEs."""
    p = model.predict(vV.X)
    w = vV.X.weight
    l_mse, l_nll = losses("mse", vV.y, p), losses("nll", vV.y, p)
    return {"model": model, "mse": _wmean(l_mse, w), "nll": _wmean(l_nll, w),
            "losses": (l_mse, l_nll), "weight": w}


def _se(rec: dict, objective: str) -> float:
    """SE of a record's mean validation loss (computed for the grid's chosen entry only)."""
    key = "se_" + objective
    if key not in rec:
        rec[key] = _wse(rec["losses"][0 if objective == "mse" else 1], rec["weight"])
    return rec[key]


def select(panel: Panel, blocks: Blocks, **options) -> SelectionResult:
    """Run FCPS on ``panel`` with ``blocks``; ``options`` are :class:`FCPSSelector` fields."""
    return FCPSSelector(**options).fit(panel, blocks)


def progress_to_stderr(frac: float, message: str) -> None:
    sys.stderr.write(f"\r[{frac * 100:5.1f}%] {message[:70]:<70}")
    if frac >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()
