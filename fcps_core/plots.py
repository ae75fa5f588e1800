"""Plotly figure builders: pure functions from result data to figures (no Streamlit).

Every page imports its figures from here; they live by subject in :mod:`fcps_core.figures`
(``style``: the shared colours and axes; ``selection``: one selection's figures;
``sweep``: calibration-growth sweeps and the labelling plan; ``panel``: the judges, the
next-judge plan and the deployment audit).

Colours are shared by every figure so one family (or one sweep menu) looks the same on
every page: table-like families in warm hues, scalar families in cool ones, the sweep
menus in the hue of the families they hold (``FAMILY_COLORS``, ``MENU_COLORS``). Budget
axes (n_M) are logarithmic with ticks at the budgets actually used (``budget_axis``).
"""

from __future__ import annotations

from .figures.paper import (binned_relation, main_regime_diagnostics, over_budget, risk_over_k,
                            sourced_regime_map, uncertainty_diagnostics)
from .figures.frontier import frontier_figure
from .figures.panel import (STATUS_COLORS, audit_drift_bars, calibrate_vs_curate, judge_matrix_heatmap,
                            judge_output_shift, next_judge_risk_changes, reliability_diagram)
from .figures.selection import (all_candidates_over_k, best_per_family_over_k, regime_map, regime_map_points,
                                risk_cost_pareto, risk_vs_pressure, validation_risk_over_k)
from .figures.style import (FAMILY_COLORS, MENU_COLORS, OTHER_COLOR, WINNER_MARKER, budget_axis, family_color,
                            menu_color)
from .figures.sweep import (ablation_bars, calibration_growth_risk, family_shares, gap_forest, oracle_gap,
                            plan_curves, selected_k_over_budget, unseen_over_budget)

__all__ = ["FAMILY_COLORS", "MENU_COLORS", "OTHER_COLOR", "STATUS_COLORS", "WINNER_MARKER", "ablation_bars",
           "all_candidates_over_k", "audit_drift_bars", "best_per_family_over_k", "binned_relation", "budget_axis",
           "calibrate_vs_curate", "calibration_growth_risk", "family_color", "family_shares", "frontier_figure",
           "gap_forest",
           "judge_matrix_heatmap", "judge_output_shift", "main_regime_diagnostics", "menu_color",
           "next_judge_risk_changes", "oracle_gap", "over_budget", "plan_curves", "regime_map", "regime_map_points",
           "reliability_diagram", "risk_cost_pareto",
           "risk_over_k", "risk_vs_pressure", "selected_k_over_budget", "sourced_regime_map",
           "uncertainty_diagnostics", "unseen_over_budget", "validation_risk_over_k"]
