"""The protocols are plain functions over a menu fit (issue 27): a table names them, they
never call back into the selector, the choice is a value computed by hand here, and the
result is frozen."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.defaults import PROTOCOLS as PROTOCOL_NAMES
from fcps_core.selection import FCPSSelector
from fcps_core.selection.choice import argmin_choice
from fcps_core.selection.crossfit import fit_crossfit
from fcps_core.selection.menu import MenuRows
from fcps_core.selection.selector import PROTOCOLS
from fcps_core.selection.split_protocol import fit_split
from fcps_core.paper.synthetic import make_regime

SELECTION = Path(__file__).resolve().parent.parent / "fcps_core" / "selection"
#: the selector's methods a protocol used to call back into
CALLBACKS = {"fit_menu", "checked_panel", "_choose", "default_prior"}


def test_the_protocol_table_names_every_protocol_once():
    assert tuple(PROTOCOLS) == PROTOCOL_NAMES
    assert PROTOCOLS["split"] is fit_split and PROTOCOLS["crossfit"] is fit_crossfit


@pytest.mark.parametrize("module", ["menu", "split_protocol", "crossfit", "choice", "honesty"])
def test_protocol_modules_never_reach_back_into_the_selector(module):
    tree = ast.parse((SELECTION / f"{module}.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert node.module not in ("selector", "fcps_core.selection.selector"), f"{module} imports the selector"
            assert not (node.level and node.module is None and any(a.name == "selector" for a in node.names))
        if isinstance(node, ast.Attribute) and node.attr in CALLBACKS:
            assert False, f"{module}.py line {node.lineno} calls .{node.attr} on an object"


def _cand(index, risk, se, K, family="table", judges=("a",)):
    return SimpleNamespace(index=index, val_risk=risk, val_se=se, K=K, family=family, judges=list(judges))


def test_argmin_choice_by_hand():
    settings = FCPSSelector()
    # 0.2 twice (within rounding): the smaller K wins, so index 2 (K=2) over index 1 (K=3)
    cands = [_cand(0, 0.30, 0.01, 1), _cand(1, 0.20, 0.01, 3), _cand(2, 0.20 + 1e-17, 0.01, 2)]
    out = argmin_choice(cands, settings, panel=None)
    assert (out.selected_index, out.guard, out.members, out.choice_info) == (2, None, None, {})


def test_argmin_guard_by_hand():
    panel = SimpleNamespace(judges=[SimpleNamespace(schema="continuous")])     # prior: ridge_iso
    guarded = dataclasses.replace(FCPSSelector(), guard="one_se")
    # argmin table at 0.20, prior ridge_iso at 0.25: with SE 0.02 the upper 0.22 is below the
    # prior's lower 0.23, so the argmin is kept; with SE 0.04 (0.24 against 0.21) the prior is
    narrow = [_cand(0, 0.20, 0.02, 2), _cand(1, 0.25, 0.02, 1, family="ridge_iso")]
    wide = [_cand(0, 0.20, 0.04, 2), _cand(1, 0.25, 0.04, 1, family="ridge_iso")]
    a, b = argmin_choice(narrow, guarded, panel), argmin_choice(wide, guarded, panel)
    assert a.selected_index == 0 and a.guard["adapted"] is True
    assert a.guard["argmin_upper"] == pytest.approx(0.22) and a.guard["prior_lower"] == pytest.approx(0.23)
    assert b.selected_index == 1 and b.guard["adapted"] is False


def test_menu_rows_name_the_blocks_roles():
    b = SimpleNamespace(S=np.array([0]), M=np.array([1, 2]), V=np.array([3]), T=np.array([4]))
    rows = MenuRows.of_blocks(b, unlabelled=np.array([5]))
    assert {k: v.tolist() for k, v in rows.block_map().items()} == \
        {"S": [0], "M": [1, 2], "V": [3], "T": [4], "rest": [5]}
    assert MenuRows.of_map(rows.block_map()).block_map().keys() == rows.block_map().keys()


@pytest.mark.parametrize("protocol", ["split", "crossfit"])
def test_the_result_is_frozen_and_built_with_its_choice(protocol):
    panel = make_regime("mixed", rows=240, judges=4, seed=0)
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    res = select(panel, blocks, protocol=protocol, choice="tie_average", families=["mean_iso", "ridge_iso", "table"],
                 k_max=3, folds=3, repeats=1, n_boot=50, seed=0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.selected_index = 0
    # the chosen candidate is the rule's (recorded with it), the assessment is filled in
    assert res.choice_info["rule"] == "tie_average"
    assert res.selected_index in ([res.choice_info["best_index"]] if not res.members else res.members)
    assert res.regime and res.tie is not None and res.deployed_risk is not None and res.bootstrap is None
