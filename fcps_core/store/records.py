"""How a selection or sweep result becomes stored rows (the columns the store keeps)."""

from __future__ import annotations

from dataclasses import fields


from ..files.json_values import json_ready


CANDIDATE_COLUMNS = ("cand_index", "path_rule", "path", "judges", "K", "family", "params",
                      "grid_size", "val_mse", "val_nll", "val_risk", "val_se", "test_mse",
                      "test_nll", "Q_K", "S_K", "H_K", "unseen_val", "unseen_test", "V_cell",
                      "V_proxy", "cell_pressure_sum", "selected")
SWEEP_CELL_NUMBERS = ("delta", "delta_se", "ci_low", "ci_high", "table_test_mse",
                       "scalar_test_mse", "table_K_mean", "unseen_mean", "V_cell_mean",
                       "V_proxy_mean", "regret_vs_K_le_3", "regret_vs_K_le_3_se")
# sweep_menu_cells columns around the integer K_mode
SWEEP_MENU_BEFORE_MODE = ("test_mse_mean", "test_mse_se", "oracle_test_mse_mean",
                           "oracle_test_mse_se", "K_mean", "K_sd")
SWEEP_MENU_AFTER_MODE = ("K_mode_share", "unseen_mean", "V_cell_mean", "V_proxy_mean",
                          "pairwise_share")


def selection_params(result) -> dict:
    """The settings that reproduce a selection: selector fields, blocks and seed."""
    sel = result.selector
    skip = {"progress"}
    params = {f.name: json_ready(getattr(sel, f.name)) for f in fields(sel) if f.name not in skip}
    params["blocks"] = {**result.blocks.sizes(), "source": result.blocks.source,
                        "seed": result.blocks.seed}
    return params

#: columns of ``sweep_candidates`` after run_id (the same as
#: ``fcps_core.paper.experiments.CANDIDATE_COLUMNS``; a test keeps them equal)
SWEEP_CANDIDATE_COLUMNS = ("split", "n_M", "path", "K", "family", "val_risk", "val_mse", "test_mse", "H_K", "Q_K",
                           "S_K", "unseen_val", "unseen_test", "V_cell", "V_proxy", "selected_by")
