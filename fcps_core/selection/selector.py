"""The FCPS selector (paper Eq. eq:general-selection): the settings of a selection and the
table of protocols that run it.

:class:`FCPSSelector` holds the menu (path rules x K x families and their limits), the
protocol, the choice rule and the assessment settings, checks them (:meth:`~FCPSSelector.validate`,
:meth:`~FCPSSelector.check_costs`) and runs the protocol its ``protocol`` names from
:data:`PROTOCOLS`. Each protocol is a plain function ``(panel, blocks, settings) ->
SelectionResult`` that reads the selector's settings and never calls back into it:

* ``split`` (:func:`.split_protocol.fit_split`): the paper's S/M/V protocol;
* ``crossfit`` (:func:`.crossfit.fit_crossfit`): repeated grouped K-fold over S+M+V.

Both build on one pass of fits over the menu (:func:`.menu.fit_menu`), choose with
:func:`.choice.choose_deployed` and assess with :func:`.honesty.assess`, all of which return
values; the frozen :class:`.result.SelectionResult` is built from them. The guarded mode
(``guard='one_se'``) keeps the prior family's best candidate unless the selected
candidate's upper one-SE validation risk is below the prior's lower one-SE risk (paper,
Cold-Start Few-Label Diagnostic; :func:`.choice.argmin_choice`).
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np

from ..defaults import (CHOICES, ESTIMATES, DEFAULT_ALPHA, DEFAULT_BOOTSTRAP, DEFAULT_CHOICE, DEFAULT_FALLBACK, DEFAULT_FOLDS,
                        DEFAULT_MAX_MEMBERS, DEFAULT_N_BINS, DEFAULT_OBJECTIVE, DEFAULT_PAIRWISE_K_MAX,
                        DEFAULT_PATHS, DEFAULT_PROTOCOL, DEFAULT_REPEATS, DEFAULT_TABLE_K_MAX)
from ..defaults import PROTOCOLS as PROTOCOL_NAMES
from ..measures.diagnostics import GAIN_THRESHOLD, PRESSURE_THRESHOLD
from ..errors import MenuError
from ..families import FAMILIES, REGISTRY, get_family
from ..families.base import small_pages
from ..data.panel import Panel
from ..measures.judge_paths import PATH_RULES
from ..data.splits import Blocks, make_blocks
from .choice import default_prior
from .crossfit import fit_crossfit
from .menu import MenuFit, MenuRows, checked_panel, deployable_label_scale, fit_menu
from .result import SelectionResult
from .screening import SCREEN_SE
from .limited_rule import ESCAPE_Z
from .split_protocol import fit_split

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
    choice : ``argmin`` (the paper's rule), ``simplest_within_se``, the tie average (see
        :mod:`.choice`).
    n_jobs : processes for the cross-fitted folds (None: all cores when deployable rows x
        judges >= 10,000, else one; results are identical either way).
    estimate : ``bbc`` (bootstrap bias-corrected risk of the whole procedure, no refits),
        ``nested`` (nested grouped cross-validation) or ``none``; ``n_boot`` resamples.
    max_judges, budget : deploy at most this many judges / judges costing at most this much
        per item (``budget`` needs ``judge_costs``): the choice rule runs on the candidates
        within the limit, an average never calls more judges than allowed
        (:mod:`.constraints`); the result's ``frontier`` shows every limit at once.
    single_judge_candidates : also offer "judge j alone" for every judge j (an isotonic map
        of its score, ``mean_iso``; path rule ``single_judge``, label ``single#j``): the same
        judge in every fold, so its cross-fitted risk is the risk of what is deployed, unlike
        a path rule's K=1 prefix whose judge the rule picks afresh per fold. They are
        ordinary candidates (the choice, its ties, the frontier, ``max_judges``); one equal
        to a path prefix is the same member (:mod:`.members`). Off by default (measured
        in docs/performance.md, "Fixed single-judge candidates").
    stable_judge_sets : a limit that excludes some candidate (``max_judges``, ``budget``,
        every frontier level below all judges) chooses only among candidates whose every
        cross-fitted fold built the judge set they deploy (``judge_set_stability`` 1): a path
        prefix's held-out risk is the path *rule's*, evidence about the set the rule picks on
        all deployable rows only when every fold picked that set (:mod:`.constraints`). The
        choice over all judges is unchanged. Off by default (measured in docs/performance.md,
        "Stable judge sets under limits").
    random_under_limits : whether a limit that excludes some candidate (``max_judges``,
        ``budget``, every frontier level below all judges) may choose a prefix of the
        ``random`` path. True by default; False leaves them out of such limits (unless only
        random prefixes fit one), the random orderings staying in the menu and the choice
        over all judges unchanged (:mod:`.constraints`). Measured, not adopted as the
        default (docs/performance.md, "Issue 24: limited choices without the `random`
        path's prefixes"; ``bench/bench_frontier.py --paired-random``).
    own_set_level : the deployed-risk estimate of a predictor whose members are not all
        stable (some fold's path rule built another judge set than the one deployed) is
        shifted by own - held-out: *own* is the held-out risk of the same members with their
        deployed judge sets fixed in every fold (refitted on the selection's folds), held-out
        the members' cross-fitted risk the choice read; the default's estimate and every
        frontier point's alike (crossfit with the ``bbc`` estimate only; choices unchanged).
        Off by default (docs/performance.md, "Issue 24: LLMBar's k = 1 pessimism decomposed").
    info_first_under_limits : a limit that excludes some candidate (``max_judges``,
        ``budget``, every frontier level below all judges) chooses only among the prefixes of
        the ``info_first`` path (judges in the order of their own single-judge risk), unless
        none fits; the prefix size, family and tie average are still chosen by cross-fitted
        risk, and the choice over all judges is unchanged (:mod:`.constraints`). False by
        default. Measured, not adopted as the default (docs/performance.md, "Issue 24: why
        `--max-judges 3` loses to the top-three stack"; ``bench/bench_frontier.py
        --paired-option info_first_under_limits``).
    full_limit_sets : a limit that excludes some candidate (``max_judges``, ``budget``, every
        frontier level below all judges) chooses only among the ``info_first`` path's
        prefixes of the largest size the limit admits on that path (``max_judges`` k: K =
        min(k, the path's length); a budget: the longest prefix within it), every family,
        unless no ``info_first`` prefix fits: the first judges in the order of their own
        single-judge risk, as a practitioner would take them, the family and tie average
        still chosen by cross-fitted risk. A limit the choice over all judges already meets
        deploys that choice (the replays likewise, draw by draw). The choice over all judges
        is unchanged
        (:mod:`.constraints`). It implies ``info_first_under_limits``' restriction (both on:
        this one alone). A frontier point k then calls exactly min(k, the path's length)
        judges, so it may have a higher cross-fitted risk than a smaller point (the answer
        then names the smaller one, :func:`fcps_core.reports.explain.answer`). True by
        default: of the limited rules measured it is the one that meets the issue's
        "within +0.001 MSE of the top-three stack" on every panel measured, and neither
        ``max_judges`` 1 nor 3 got worse on new items (docs/performance.md, "Issue 24: the full-limit prefixes
        become the limited rule"); False restores the choice among every admissible
        candidate.
    limit_escape_z : under the full-limit rule (``full_limit_sets``), where the best single
        candidate within a binding limit has a held-out risk lower than the prefix's choice by
        more than this many group-clustered paired SEs, the limit deploys the choice rule
        among every candidate within it instead (the escape; ``choice_info.limit_escape`` and
        each frontier point's ``limit_escape`` record the test). The bootstrap replays the
        escape draw by draw (in-bag paired SEs), and drop-one applies it to each choice
        without a judge. 3.29 by default (two-sided p < 0.001, which also allows for that
        candidate being the best of many): on the shapes, LLMBar and HANNA the escape fires
        rarely and changes no measure, and on a pairwise panel whose strong judge has a
        near-duplicate, ``--max-judges 3`` went from +0.0020 over the top-three stack to
        -0.0103 (docs/performance.md, "Issue 24: the escape from the full-limit rule");
        None never escapes.
    limit_rule_choice : every binding limit (``max_judges``, ``budget``, every frontier level
        below all judges) computes two limited rules, A (the limited choice the options
        above make) and B (the ``info_first`` path's prefix that uses the whole limit, as
        ``full_limit_sets`` admits it, in the ``ridge_iso`` and ``logistic`` families only,
        the choice between them and the tie average by the usual rule), each with its own
        deployed-risk estimate (its bootstrap replay and learning-curve correction), and
        deploys the one with the lower estimate (A on ties; A when B has no candidate),
        reporting that rule's estimate. B stands only where the
        points' held-out risks stay monotone wherever A's were (where A's risk at k is at
        most A's at k - 1, B's must be at most point k - 1's; where A's at k + 1 is at most
        A's at k, it must be at most B's). The choice between the two rules is not itself replayed (a choice
        between two, usually highly correlated, rules, whose winner's curse was expected to
        be small; measured, the points deploying B lean 0.0002 to 0.0034 more optimistic). The choice over all judges is unchanged (:mod:`.constraints`,
        :mod:`.frontier`). False by default (docs/performance.md, "Issue 24: a choice
        between two limited rules by their estimates"; ``bench/bench_frontier.py
        --paired-option limit_rule_choice``).
    screen_se : after the first of the ``repeats``, a candidate behind the best one calling a
        subset of its judges (and the best of its side of the regime verdict) by more than
        this many times the sum of its clustered SE and the largest SE among the candidates
        ahead keeps that repeat's held-out predictions, and the later repeats do not refit it
        (:mod:`.screening`: no judge limit can make it chosen or tied); None refits every
        candidate in every repeat. Default 2.
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
    #: judge -> {"cost", "latency"} (fcps_core.data.judge_costs); candidates then carry their cost,
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
    #: offer every judge alone (isotonic) as a candidate besides the path prefixes
    single_judge_candidates: bool = False
    #: a binding judge or cost limit chooses only among candidates whose every fold built the
    #: judge set they deploy (:mod:`.constraints`)
    stable_judge_sets: bool = False
    #: a binding judge or cost limit may choose a prefix of the ``random`` path (False: it
    #: never does unless nothing else fits, :mod:`.constraints`)
    random_under_limits: bool = True
    #: shift an estimate by its members' own fixed-set held-out risk - their held-out risk
    #: when some member's folds built other judge sets (:class:`.crossfit.OwnSetLevels`)
    own_set_level: bool = False
    #: a binding judge or cost limit admits only the ``info_first`` path's prefixes (unless
    #: none fits, :mod:`.constraints`)
    info_first_under_limits: bool = False
    #: a binding judge or cost limit admits only the ``info_first`` path's prefixes of the
    #: largest size it admits on that path (unless none fits, :mod:`.constraints`)
    full_limit_sets: bool = True
    #: every binding judge or cost limit deploys the lower-estimate one of two limited rules
    #: (today's, and the info_first prefix using the whole limit in the linear stack families,
    #: :mod:`.constraints`)
    limit_rule_choice: bool = False
    #: under a full-limit rule, a binding limit deploys the choice among every candidate within
    #: it instead of the prefix's where the best candidate within it has a held-out risk lower
    #: than the prefix's choice by more than this many paired SEs (:mod:`.limited_rule`; replayed
    #: draw by draw); None: never
    limit_escape_z: float | None = ESCAPE_Z
    #: after the first repeat, the later repeats do not refit a candidate this far behind the
    #: best one calling a subset of its judges (:mod:`.screening`); None: every repeat
    #: refits every candidate
    screen_se: float | None = SCREEN_SE

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
        if self.protocol not in PROTOCOL_NAMES:
            raise MenuError(f"protocol must be one of {', '.join(PROTOCOL_NAMES)}, not {self.protocol!r}")
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
        for name in ("single_judge_candidates", "stable_judge_sets", "random_under_limits", "own_set_level",
                     "info_first_under_limits", "full_limit_sets", "limit_rule_choice"):
            if not isinstance(getattr(self, name), (bool, np.bool_)):
                raise MenuError(f"{name} must be True or False (got {getattr(self, name)!r})")
        if self.limit_escape_z is not None and not (
                isinstance(self.limit_escape_z, (int, float, np.integer, np.floating))
                and not isinstance(self.limit_escape_z, (bool, np.bool_))
                and math.isfinite(self.limit_escape_z) and self.limit_escape_z > 0):
            raise MenuError(f"limit_escape_z must be a number > 0 (paired SEs), or None for no escape "
                            f"(got {self.limit_escape_z!r})")
        if self.screen_se is not None and not (isinstance(self.screen_se, (int, float, np.integer, np.floating))
                                               and math.isfinite(self.screen_se) and self.screen_se >= 1):
            raise MenuError(f"screen_se must be a number >= 1 (the tie band is one SE), or None for no "
                            f"screen (got {self.screen_se!r})")
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
        from ..data.judge_costs import check_costs_cover
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
        """Run the selection under ``self.protocol``: the protocol function of
        :data:`PROTOCOLS` (``split``: the paper's S/M/V protocol, :mod:`.split_protocol`;
        ``crossfit``: repeated grouped K-fold over S+M+V, :mod:`.crossfit`) with these
        settings, after they are checked."""
        if self.eval_rows is not None:      # label-next's evaluation rows (:mod:`.evaluation_rows`)
            from .evaluation_rows import check_eval_rows
            check_eval_rows(self.eval_rows, panel.n_rows, self.protocol, self.estimate)
        self.validate(len(panel.judges))
        self.check_costs(panel)
        return PROTOCOLS[self.protocol](panel, blocks, self)

    def checked_panel(self, panel: Panel, blocks: Blocks, *, crossfit: bool = False) -> Panel:
        """The panel after the block checks both protocols share (:func:`.menu.checked_panel`)."""
        return checked_panel(panel, blocks, crossfit=crossfit)

    def fit_menu(self, panel: Panel, rows: "MenuRows | dict", **options) -> MenuFit:
        """One pass of fits over this selector's menu (:func:`.menu.fit_menu`)."""
        return fit_menu(self, panel, rows, **options)

    def default_prior(self, panel: Panel) -> str:
        """The guard's task-type prior family (:func:`.choice.default_prior`)."""
        return default_prior(panel)


#: protocol name -> the plain function that runs it: ``(panel, blocks, settings) -> SelectionResult``
PROTOCOLS = {"crossfit": fit_crossfit, "split": fit_split}


def select(panel: "Panel | str | os.PathLike | pd.DataFrame", blocks: Blocks | None = None,
           **options) -> SelectionResult:
    """Run FCPS on ``panel`` with ``blocks``; ``options`` are :class:`FCPSSelector` fields.

    ``panel`` may be a :class:`Panel`, a pandas DataFrame or a panel file's path (read by
    :func:`fcps_core.read_panel`; NaN or empty labels are unlabelled rows). Without
    ``blocks`` the default blocks are drawn with the selector's seed
    (:func:`fcps_core.data.splits.make_blocks`: the file's block column, else a grouped 1:2:1
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
