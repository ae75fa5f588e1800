"""The paper's split protocol (paper section "FCPS Protocol", Table tab:protocol-guardrails).

Enforced by construction:

1. encoders (continuous bins, data-fitted scalar maps) are fitted on the calibration
   block M;
2. path rules see only the selection block S (and the planned n_M);
3. every candidate (path, K, family[, hyperparameters]) is fitted on M (:func:`.menu.fit_menu`);
4. the candidate with the lowest validation risk on V (MSE/Brier or NLL) is selected
   (:func:`.choice.choose_deployed`); hyperparameter grids (backoff/residual shrinkage,
   residual base) are tuned on V and count toward the menu size |C|;
5. only then does :meth:`.result.SelectionResult.audit` evaluate candidates on the research
   test block T. The choice never receives T rows, so T cannot change the selection;
   ``ds_jury``'s label-free EM runs on M plus the unlabelled traffic outside T.

:func:`fit_split` is a plain function of the panel, its blocks and the selector's settings
(read only). Every step returns values and the :class:`.result.SelectionResult` is frozen:
the result is first built with the choice made (never with a placeholder), and the
assessment (:func:`.honesty.assess`) and the frontier (:func:`.frontier.compute_frontier`),
which read that chosen result, are added as new values (``dataclasses.replace``), never
patched in.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from ..data.panel import Panel
from ..data.splits import Blocks
from ..process_memory import release_freed_memory
from .baselines import baseline_predictions
from .choice import argmin_choice, choose_deployed
from .folds import HeldOut
from . import frontier
from .honesty import assess, assess_regime_only
from .menu import MenuRows, checked_panel, fit_menu
from .result import SelectionResult, release_validation_sources, validation_prediction_matrix


def fit_split(panel: Panel, blocks: Blocks, settings) -> SelectionResult:
    """Run the split protocol on ``blocks`` (S, M, V deployable; T the research audit) under
    ``settings`` (an :class:`.selector.FCPSSelector`, validated by its caller)."""
    t0 = time.perf_counter()
    panel = checked_panel(panel, blocks)
    report = settings.progress or (lambda frac, msg: None)
    # Unlabelled traffic for unsupervised families: every row outside M and T (T is
    # held out from every fit, even label-free ones).
    outside = np.ones(panel.n_rows, dtype=bool)
    outside[blocks.M] = outside[blocks.T] = False
    rows = MenuRows.of_blocks(blocks, unlabelled=np.flatnonzero(outside))
    menu = fit_menu(settings, panel, rows, progress=lambda f, m: report(0.9 * f, m))
    report(0.93, "selecting on the validation block")
    common = dict(panel=panel, blocks=blocks, selector=settings, encoded=menu.encoded, paths=menu.paths,
                  candidates=menu.candidates, models=menu.models, menu_size=menu.menu_size,
                  feature_cache=menu.pattern_cache, views=menu.views, predictions=menu.predictions)
    if settings.estimate == "none" and not settings.with_baselines and settings.choice == "argmin":
        # the paper's protocol (sweeps): the verdict only, no held-out matrix, no extra fits
        result = SelectionResult(**common, **argmin_choice(menu.candidates, settings, panel).fields())
        result = replace(result, selected_test=result.audit())
        result = replace(result, **assess_regime_only(result, blocks.V))
    else:
        base = {}
        if settings.with_baselines:
            base = {name: p[None] for name, p in baseline_predictions(
                menu.encoded.scores, panel.labels, blocks.M, blocks.V, rows.unlabelled).items()}
        heldout = HeldOut.of(panel, blocks.V, validation_prediction_matrix(
            panel, blocks.V, menu.encoded, menu.pattern_cache, menu.candidates, menu.models, menu.predictions,
            compress=settings.compress), base)
        release_validation_sources(menu.predictions, menu.views)
        # the menu's fits and views are done with: what they freed goes back to the system
        # before the choice, the bootstrap and the frontier allocate (as the cross-fitted
        # protocol does once its folds are read)
        release_freed_memory()
        if settings.choice != "argmin":
            report(0.95, f"choice rule {settings.choice} on the validation block")
        chosen = choose_deployed(menu.candidates, settings, panel, heldout)
        result = SelectionResult(**common, **chosen.fields(), heldout=heldout)
        result = replace(result, selected_test=result.audit())
        report(0.97, "bias-corrected risk estimate (bootstrap over validation groups)")
        result = replace(result, **assess(result, heldout))
        result = with_frontier(result, heldout)
        release_freed_memory()          # the frontier's replays and the assessment's draws
    result = replace(result, timings={**result.timings, "select_seconds": time.perf_counter() - t0})
    report(1.0, "done")
    return result


def with_frontier(result: SelectionResult, heldout, *, choices=None, corrections=None,
                  replays=None, levels=None) -> SelectionResult:
    """The result with its frontier (:func:`.frontier.compute_frontier`, read through its
    module so a benchmark can time it; ``choices``, ``corrections``, ``replays`` and
    ``levels`` as it takes them), without the bootstrap draws the frontier replayed. Both
    protocols end with it. With ``limit_rule_choice`` the user's own binding limit deploys
    what the frontier's point at that limit deploys (:func:`deploy_rule_b`)."""
    result = replace(result, frontier=frontier.compute_frontier(result, heldout, choices, corrections, replays,
                                                                levels=levels),
                     bootstrap=None)
    return deploy_rule_b(result, heldout)


def deploy_rule_b(result: SelectionResult, heldout) -> SelectionResult:
    """``FCPSSelector(limit_rule_choice=True)`` under the user's own binding limit: when the
    frontier's point at that limit deploys rule B (:func:`.constraints.linear_full_limit`,
    its estimate below the limited choice's), the result is B's choice (chosen, members,
    audit, the assessment's tie, regime and baselines paired with B, its selector a copy whose
    limit is B, :func:`.constraints.rule_b_selector`, so drop-one replays B) and carries that
    point's deployed-risk estimate exactly, so ``max_judges=k`` deploys frontier point k.
    Otherwise ``result`` unchanged."""
    from .constraints import rule_b_selector
    point = next((p for p in result.frontier or [] if p["chosen"]
                  and (p.get("limit_rule") or {}).get("deployed") == "full_limit_linear"), None)
    if point is None:
        return result
    settings = rule_b_selector(result.selector)
    b = replace(result, selector=settings, **choose_deployed(result.candidates, settings, result.panel,
                                                             heldout).fields())
    b = replace(b, selected_test=b.audit())
    assessment = assess(b, heldout)
    dr = dict(assessment["deployed_risk"] or {})
    for key in ("estimate", "ci", "bbc_estimate", "training_size_correction", "own_set_level"):
        if key in point["deployed_risk"]:
            dr[key] = point["deployed_risk"][key]
    assessment.update(deployed_risk=dr, bootstrap=None)
    return replace(b, **assessment)
