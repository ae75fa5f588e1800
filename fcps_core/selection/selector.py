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
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..diagnostics import (GAIN_THRESHOLD, PRESSURE_THRESHOLD, PrefixDiagnostics, argmin_with_ties,
                           prefix_diagnostics)
from ..encoding import EncodedPanel, encode_panel, nominal_cells
from ..defaults import (CHOICES, ESTIMATES, PROTOCOLS, DEFAULT_ALPHA, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FALLBACK, DEFAULT_FOLDS,
                        DEFAULT_MAX_MEMBERS, DEFAULT_N_BINS, DEFAULT_OBJECTIVE, DEFAULT_PAIRWISE_K_MAX,
                        DEFAULT_PATHS, DEFAULT_PROTOCOL, DEFAULT_REPEATS, DEFAULT_TABLE_K_MAX)
from ..errors import MenuError, SplitError
from ..families import FAMILIES, REGISTRY, get_family
from ..families.base import one_blas_thread, small_pages
from ..panel import Panel
from ..paths import PATH_RULES, JudgePath, build_paths
from ..splits import Blocks, check_blocks, make_blocks
from .baselines import baseline_predictions
from .choice import apply_choice_rule
from .crossfit import fit_crossfit
from .frontier import attach_frontier
from .folds import HeldOut
from .honesty import assess, assess_regime_only
from .path_fits import fit_joint_families, fit_path_families
from .result import Candidate, SelectionResult

if TYPE_CHECKING:
    import os

    import pandas as pd
from .views import PatternCache, ViewCache, record_se, unscored_record, validation_record, view_kind

#: the paper's protocol exactly (sweeps, checks, the reproduction report): S/M/V blocks,
#: validation argmin, no bootstrap and no baselines
PAPER_PROTOCOL = {"protocol": "split", "choice": "argmin", "estimate": "none", "with_baselines": False}


@dataclass
class MenuFit:
    """One pass over the menu: encoders, paths, candidates and their fitted models."""

    encoded: EncodedPanel
    paths: list
    candidates: list
    models: dict
    menu_size: int
    pattern_cache: PatternCache     # joint-pattern ids of any prefix, on demand
    views: ViewCache
    predictions: dict = field(default_factory=dict)   # candidate index -> block -> BlockPrediction


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
    seed : seeds the random path, the folds and the bootstrap.
    protocol : ``crossfit`` (repeated grouped K-fold over S+M+V, ``folds`` x ``repeats``;
        the deployed candidate is refitted on all deployable labels) or ``split`` (the
        paper's S/M/V protocol).
    choice : ``argmin`` (the paper's rule), ``simplest_within_se``, ``tie_average`` (see
        :mod:`.choice`).
    n_jobs : processes for the cross-fitted folds (None: all cores when deployable rows x
        judges >= 10,000, else one; results are identical either way).
    estimate : ``bbc`` (bootstrap bias-corrected risk of the whole procedure, no refits),
        ``nested`` (nested grouped cross-validation) or ``none``; ``n_boot`` resamples.
    max_judges, budget : deploy at most this many judges / judges costing at most this much
        per item (``budget`` needs ``judge_costs``): the choice rule runs on the candidates
        within the limit, an average never calls more judges than allowed
        (:mod:`.constraints`); the result's ``frontier`` shows every limit at once.
    eval_rows : None, or a bool per panel row: the rows held-out risks, ties and the
        deployed-risk estimate are read on (crossfit only; every labelled row still enters
        the fits), e.g. the audit rows after ``label-next`` chose items actively
        (:mod:`.evaluation_rows`).
    """

    paths: Sequence[str] = DEFAULT_PATHS
    families: Sequence[str] = FAMILIES
    k_max: int | None = None
    table_k_max: int = DEFAULT_TABLE_K_MAX
    pairwise_k_max: int = DEFAULT_PAIRWISE_K_MAX
    alpha: float = DEFAULT_ALPHA
    fallback: str = DEFAULT_FALLBACK
    objective: str = DEFAULT_OBJECTIVE
    guard: str | None = None
    prior_family: str | None = None
    refit: str = "frozen"
    n_bins: int = DEFAULT_N_BINS
    seed: int = 0
    complexity_penalty: float = 1.0
    cfps_max_paths: int = 32
    gain_threshold: float = GAIN_THRESHOLD
    pressure_threshold: float = PRESSURE_THRESHOLD
    family_options: dict = field(default_factory=dict)
    progress: Callable[[float, str], None] | None = None
    compress: bool = True   # fit and score on distinct (pattern, label) rows with counts
    protocol: str = DEFAULT_PROTOCOL
    choice: str = DEFAULT_CHOICE
    folds: int = DEFAULT_FOLDS
    repeats: int = DEFAULT_REPEATS
    estimate: str = "bbc"
    n_boot: int = DEFAULT_BOOTSTRAP
    max_members: int = DEFAULT_MAX_MEMBERS
    with_baselines: bool = True
    n_jobs: int | None = None   # crossfit folds in parallel: None = every core on large panels
    #: judge -> {"cost", "latency"} (fcps_core.judge_costs); candidates then carry their cost,
    #: the result its risk-cost Pareto front, and ``cheapest_tied`` can choose
    judge_costs: dict | None = None
    #: deploy at most this many judges (None: no limit); the choice rule runs on the
    #: candidates with at most this many judges (:mod:`.constraints`)
    max_judges: int | None = None
    #: deploy judges costing at most this much per item (needs ``judge_costs``)
    budget: float | None = None
    #: bool per panel row, the rows held-out risks, ties and the estimate are read
    #: on (every labelled row still enters the fits); None = all (:mod:`.evaluation_rows`)
    eval_rows: np.ndarray | None = None

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
        if self.protocol not in PROTOCOLS:
            raise MenuError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {self.protocol!r}")
        if self.choice not in CHOICES:
            raise MenuError(f"choice must be one of {', '.join(CHOICES)}, not {self.choice!r}")
        if self.estimate not in ESTIMATES:
            raise MenuError(f"estimate must be one of {', '.join(ESTIMATES)}, not {self.estimate!r}")
        # upper bounds keep memory bounded: the bootstrap holds n_boot x groups weights
        for name, low, high in (("folds", 2, 100), ("repeats", 1, 100), ("n_boot", 10, 100_000),
                                ("max_members", 1, 1_000)):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or not low <= v <= high:
                raise MenuError(f"{name} must be an integer from {low} to {high} (got {v!r})")
        if self.estimate == "nested" and self.protocol != "crossfit":
            raise MenuError("the nested estimate needs the crossfit protocol (--protocol crossfit)")
        if self.guard is not None and self.choice != "argmin":
            raise MenuError("the one_se guard applies to the argmin choice; use --choice argmin with --guard")

    def check_costs(self, panel: Panel) -> None:
        """Judge costs, when given, cover exactly the panel's judges; cheapest_tied needs them."""
        from .constraints import selector_constraint
        selector_constraint(self).check()
        if self.judge_costs is None:
            if self.choice == "cheapest_tied":
                raise MenuError("the cheapest_tied choice needs judge costs (--judge-costs FILE with "
                                "judge,cost,latency rows, or costs stored with the panel)")
            return
        from ..judge_costs import check_costs_cover
        check_costs_cover(self.judge_costs, panel.judge_names)

    # -- K limits ------------------------------------------------------------------------
    def k_limit(self, family: str, n_judges: int) -> int:
        limit = n_judges if self.k_max is None else min(self.k_max, n_judges)
        if REGISTRY[family].table_like:
            limit = min(limit, self.table_k_max)
        if REGISTRY[family].pairwise:
            limit = min(limit, self.pairwise_k_max)
        return limit

    def family_fixed(self, family: str) -> dict:
        """Hyperparameters the menu fixes (not tuned on V)."""
        return {name: getattr(self, name) for name in REGISTRY[family].menu_fixed}

    def family_instance(self, family: str, params: dict):
        return get_family(family)(**self.family_fixed(family), **params)

    def family_grid(self, family: str) -> list[dict]:
        return get_family(family).grid(**self.family_options)

    # -- main ----------------------------------------------------------------------------
    @small_pages()
    def fit(self, panel: Panel, blocks: Blocks) -> "SelectionResult":
        """Run the selection under ``self.protocol`` (``split``: the paper's S/M/V protocol;
        ``crossfit``: repeated grouped K-fold over S+M+V, see :mod:`.crossfit`)."""
        if self.eval_rows is not None:      # issue 31 (:mod:`.evaluation_rows`)
            from .evaluation_rows import check_eval_rows
            check_eval_rows(self.eval_rows, panel.n_rows, self.protocol, self.estimate)
        if self.protocol == "crossfit":
            self.validate(len(panel.judges))
            self.check_costs(panel)
            return fit_crossfit(self, panel, blocks)
        t0 = time.perf_counter()
        self.validate(len(panel.judges))
        self.check_costs(panel)
        panel = self.checked_panel(panel, blocks)
        report = self.progress or (lambda frac, msg: None)
        # Unlabelled traffic for unsupervised families: every row outside M and T (T is
        # held out from every fit, even label-free ones).
        outside = np.ones(panel.n_rows, dtype=bool)
        outside[blocks.M] = outside[blocks.T] = False
        rows = {"S": blocks.S, "M": blocks.M, "V": blocks.V, "T": blocks.T,
                "rest": np.flatnonzero(outside)}
        menu = self.fit_menu(panel, rows, progress=lambda f, m: report(0.9 * f, m))
        report(0.93, "selecting on the validation block")
        selected_index, guard_info = self._choose(menu.candidates, panel)
        result = SelectionResult(panel=panel, blocks=blocks, selector=self, encoded=menu.encoded,
                                 paths=menu.paths, candidates=menu.candidates, models=menu.models,
                                 menu_size=menu.menu_size, selected_index=selected_index,
                                 guard=guard_info, feature_cache=menu.pattern_cache,
                                 views=menu.views, predictions=menu.predictions)
        if self.estimate == "none" and not self.with_baselines and self.choice == "argmin":
            result.audit()
            assess_regime_only(result, blocks.V)      # sweeps: the verdict only, no extra fits
        else:
            base = {}
            if self.with_baselines:
                base = {name: p[None] for name, p in baseline_predictions(
                    menu.encoded.scores, panel.labels, blocks.M, blocks.V, rows["rest"]).items()}
            result.heldout = HeldOut.of(panel, blocks.V, result.val_prediction_matrix(), base)
            result.release_validation_sources()
            if self.choice != "argmin":
                report(0.95, f"choice rule {self.choice} on the validation block")
                apply_choice_rule(result, self, result.heldout)
            result.audit()
            report(0.97, "bias-corrected risk estimate (bootstrap over validation groups)")
            assess(result, result.heldout)
            attach_frontier(result, result.heldout)
        result.timings["select_seconds"] = time.perf_counter() - t0
        report(1.0, "done")
        return result

    def checked_panel(self, panel: Panel, blocks: Blocks, *, crossfit: bool = False) -> Panel:
        """Block checks shared by both protocols; returns the panel with rubric labels on
        the deployable blocks' scale. Cross-fitting pools S, M and V, so only their union
        must be non-empty."""
        for b in ("S", "M", "V"):
            if not crossfit and len(getattr(blocks, b)) == 0:
                raise SplitError(f"block {b} is empty: FCPS needs selection, calibration and validation labels")
        check_blocks(panel, blocks)
        panel = deployable_label_scale(panel, blocks)
        y = panel.labels
        for b in ("S", "M", "V", "T"):
            rows = getattr(blocks, b)
            if len(rows) and np.isnan(y[rows]).any():
                raise SplitError(f"block {b} contains unlabelled rows")
        return panel

    @small_pages()      # also in the cross-fitted protocol's worker processes
    @one_blas_thread    # thin products and vector dots: a second BLAS thread waits on a busy core
    def fit_menu(self, panel: Panel, rows: dict, *, expand_grid: bool = False, score_val: bool = True,
                 progress: Callable[[float, str], None] | None = None) -> "MenuFit":
        """One pass over the menu: encoders fitted on ``rows['M']``, paths built on
        ``rows['S']``, every candidate fitted on M and scored on ``rows['V']``; ``rows['T']``
        only feeds the (after-the-fact) audit views, ``rows['rest']`` is the unlabelled
        traffic of label-free fits. ``expand_grid`` makes every hyperparameter grid point its
        own candidate (the cross-fitted protocol) instead of tuning the grid on V;
        ``score_val=False`` skips the V risks (the cross-fitted protocol scores held-out rows
        itself; V still feeds the diagnostics' frequencies)."""
        report = progress or (lambda frac, msg: None)
        y = panel.labels
        encoded = encode_panel(panel, rows["M"], n_bins=self.n_bins)
        alph = encoded.alphabet_sizes
        report(0.02, "building judge paths on the selection rows")
        paths = build_paths(list(self.paths), encoded.codes[rows["S"]], y[rows["S"]], len(rows["M"]),
                            table_k_max=min(self.table_k_max, self.k_max or self.table_k_max),
                            seed=self.seed, penalty=self.complexity_penalty,
                            cfps_max_paths=self.cfps_max_paths,
                            costs=None if self.judge_costs is None else
                            np.array([self.judge_costs[j]["cost"] for j in panel.judge_names]))
        names = panel.judge_names
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
        pattern_cache = PatternCache(encoded)
        views = ViewCache(encoded, rows, y, pattern_cache, self.compress)
        record = validation_record if score_val else unscored_record
        candidates: list[Candidate] = []
        models: dict[int, object] = {}
        predictions: dict[int, dict] = {}
        menu_size = 0
        has_T = len(rows["T"]) > 0
        # The scalar families fit every prefix of a path at once (nested features); the
        # prefixes each needs per path (a prefix shared with an earlier path is fitted once).
        path_sizes, seen = {}, set()
        for path in dict.fromkeys(p for p, _ in work):
            sizes = [k for p, k in work if p is path]
            path_sizes[path] = {}
            for f in self.families:
                if REGISTRY[f].needs_patterns:
                    continue
                need = [k for k in sizes if k <= self.k_limit(f, len(path.judges))
                        and (path.judges[:k], f) not in seen]
                seen.update((path.judges[:k], f) for k in need)
                path_sizes[path][f] = need
        report(0.04, "fitting the label-free families along every path")
        prefitted = fit_joint_families(self, views, [(p.judges, s) for p, s in path_sizes.items()])
        current_path = patterns = None
        for w, (path, K) in enumerate(work):
            report(0.05 + 0.95 * w / len(work), f"{path.label or path.rule}: K={K}")
            if path is not current_path:
                # The last path's pattern ids can go before this path's are made, and so can
                # the fitting views of M and the unlabelled rows: every candidate and
                # diagnostic of their prefixes is fitted and cached (a later path sharing a
                # prefix reuses those records, not the views).
                patterns = None
                views.release(("M", "rest"))
                current_path = path
                fit_path_families(self, views, path.judges, path_sizes[path], fits,
                                  score_val=score_val, has_T=has_T, prefitted=prefitted)
            judges = path.judges[:K]
            patterns = self._patterns(path, K, pattern_cache)
            if judges not in diag_cache:
                diag_cache[judges] = self._diagnostics(patterns, views, judges, has_T,
                                                       alph[list(judges)], K <= self.table_k_max)
            diag = diag_cache[judges]
            for family in self.families:
                cls = REGISTRY[family]
                if K > self.k_limit(family, len(path.judges)):
                    continue
                if cls.needs_patterns and patterns[K - 1] is None:
                    continue
                grid = self.family_grid(family)
                keys = [(judges, family, tuple(sorted(p.items()))) for p in grid]
                todo = [p for p, k in zip(grid, keys) if k not in fits]
                if todo:
                    kind = view_kind(cls)
                    vM, vV = views.get(judges, "M", kind), views.get(judges, "V", kind)
                    vR = views.get(judges, "rest", kind) if cls.uses_unlabelled else None
                    extra = {}
                    if cls.shares_base_models:
                        # The residual bases are the scalar families' own fits: share them.
                        extra["base_models"] = {
                            b: self._fit_one(fits, views, judges, b, record)["model"]
                            for b in dict.fromkeys(p["base"] for p in todo)}
                    fitted = cls.fit_grid(todo, vM.X, vM.y,
                                          vR.X if cls.uses_unlabelled else None,
                                          **self.family_fixed(family), **extra)
                    for params, model in zip(todo, fitted):
                        fits[(judges, family, tuple(sorted(params.items())))] = \
                            record(model, vV)
                menu_size += len(grid)
                entries = [(fits[k][self.objective], p, fits[k], i) for i, (p, k) in enumerate(zip(grid, keys))]
                if not expand_grid:
                    # Grid entries within rounding of the best are ties: the first (simplest) wins.
                    entries = [argmin_with_ties(entries, lambda t: t[0], lambda t: t[3])]
                for risk, params, rec, _ in entries:
                    cand = Candidate(
                        index=len(candidates), path_rule=path.rule, path_label=path.label,
                        judges=[names[j] for j in judges], judge_idx=judges, K=K, family=family,
                        params=dict(params), grid_size=len(grid),
                        val_mse=rec["mse"], val_nll=rec["nll"], val_risk=risk,
                        val_se=record_se(rec, self.objective), diagnostics=diag)
                    candidates.append(cand)
                    models[cand.index] = rec["model"]
                    if rec.get("pred"):
                        predictions[cand.index] = rec["pred"]
        if not candidates:
            raise MenuError("the menu produced no candidates (every family was out of its K range)")
        pattern_cache.release()         # the views hold what they need of the last path's ids
        return MenuFit(encoded=encoded, paths=paths, candidates=candidates, models=models,
                       menu_size=menu_size, pattern_cache=pattern_cache, views=views,
                       predictions=predictions)

    def _fit_one(self, fits: dict, views: "ViewCache", judges: tuple, family: str, record) -> dict:
        """Fit (or fetch) a default-parameter model of ``family`` and its validation record."""
        key = (judges, family, ())
        if key not in fits:
            cls = REGISTRY[family]
            kind = view_kind(cls)
            vM = views.get(judges, "M", kind)
            model = self.family_instance(family, {}).fit(
                vM.X, vM.y, views.get(judges, "rest", kind).X if cls.uses_unlabelled else None)
            fits[key] = record(model, views.get(judges, "V", kind))
        return fits[key]

    @staticmethod
    def _patterns(path: JudgePath, K: int, cache: PatternCache) -> list:
        """Joint-pattern ids (every row) of each level of the path's K-prefix: the levels of
        a prefix are the first levels of its path, computed once per path and held while
        the path is fitted."""
        return cache.hold(path.judges)[:K]

    @staticmethod
    def _diagnostics(patterns: list, views: "ViewCache", judges: tuple, has_T: bool,
                     alph: np.ndarray, table_sized: bool) -> PrefixDiagnostics | None:
        """Prefix diagnostics; table-sized prefixes read the (shared) table views' distinct
        patterns, larger ones the raw pattern ids (no view is built for them)."""
        ids = patterns[-1]
        if ids is None:
            return None
        if not table_sized:
            rows = views.rows
            return prefix_diagnostics(ids[rows["M"]], ids[rows["V"]], ids[rows["T"]] if has_T else None,
                                      nominal_cells(alph))
        vM, vV = views.get(judges, "M"), views.get(judges, "V")
        vT = views.get(judges, "T") if has_T else None
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
        from .constraints import no_admissible_candidate, selector_constraint
        constraint = selector_constraint(self)
        if constraint.active:
            candidates = [c for c in candidates if constraint.judges_fit(c.judges)]
            if not candidates:
                raise no_admissible_candidate(constraint)
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


def select(panel: "Panel | str | os.PathLike | pd.DataFrame", blocks: Blocks | None = None,
           **options) -> SelectionResult:
    """Run FCPS on ``panel`` with ``blocks``; ``options`` are :class:`FCPSSelector` fields.

    ``panel`` may be a :class:`Panel`, a pandas DataFrame or a panel file's path (read by
    :func:`fcps_core.read_panel`; NaN or empty labels are unlabelled rows). Without
    ``blocks`` the default blocks are drawn with the selector's seed
    (:func:`fcps_core.splits.make_blocks`: the file's block column, else a grouped 1:2:1
    draw; the cross-fitted default protocol pools them into its folds), so ``select(df)``
    runs the default selection."""
    from ..ingest import as_panel
    panel = as_panel(panel)
    if blocks is None:
        blocks = make_blocks(panel, seed=options.get("seed", 0))
    return FCPSSelector(**options).fit(panel, blocks)


def progress_to_stderr(frac: float, message: str) -> None:
    sys.stderr.write(f"\r[{frac * 100:5.1f}%] {message[:70]:<70}")
    if frac >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()
