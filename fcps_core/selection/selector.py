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

from ..defaults import (CHOICES, ESTIMATES, PROTOCOLS, DEFAULT_ALPHA, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FALLBACK, DEFAULT_FOLDS,
                        DEFAULT_MAX_MEMBERS, DEFAULT_N_BINS, DEFAULT_OBJECTIVE, DEFAULT_PAIRWISE_K_MAX,
                        DEFAULT_PATHS, DEFAULT_PROTOCOL, DEFAULT_REPEATS, DEFAULT_TABLE_K_MAX)
from ..diagnostics import GAIN_THRESHOLD, PRESSURE_THRESHOLD, argmin_with_ties
from ..errors import MenuError
from ..families import FAMILIES, REGISTRY, get_family
from ..families.base import small_pages
from ..panel import Panel
from ..paths import PATH_RULES
from ..splits import Blocks, make_blocks
from .baselines import baseline_predictions
from .choice import apply_choice_rule
from .crossfit import fit_crossfit
from .folds import HeldOut
from .frontier import attach_frontier
from .honesty import assess, assess_regime_only
from .menu import MenuFit, checked_panel, deployable_label_scale, fit_menu
from .result import Candidate, SelectionResult

if TYPE_CHECKING:
    import os

    import pandas as pd

#: the paper's protocol exactly (sweeps, checks, the reproduction report): S/M/V blocks,
#: validation argmin, no bootstrap and no baselines
PAPER_PROTOCOL = {"protocol": "split", "choice": "argmin", "estimate": "none", "with_baselines": False}


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
        """The panel after the block checks both protocols share (:func:`.menu.checked_panel`)."""
        return checked_panel(panel, blocks, crossfit=crossfit)

    def fit_menu(self, panel: Panel, rows: dict, **options) -> MenuFit:
        """One pass of fits over this selector's menu (:func:`.menu.fit_menu`)."""
        return fit_menu(self, panel, rows, **options)

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
