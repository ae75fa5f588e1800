"""``own_set_level``: an estimate whose members some fold built with another judge set is
shifted by (the members' own fixed-set held-out risk - their held-out risk),
:class:`fcps_core.selection.crossfit.OwnSetLevels`. Estimates change, choices do not."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core import make_blocks, select
from fcps_core.errors import MenuError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime
from fcps_core.selection.crossfit import OwnSetLevels, group_codes
from fcps_core.selection.folds import grouped_folds
from menu_helpers import option_runs

MENU = dict(families=["mean_iso", "logistic", "ridge_iso", "table", "residual", "backoff"], n_boot=60, n_jobs=1)


@pytest.fixture(scope="module")
def panel():
    return make_regime("mixed", rows=600, judges=6, seed=3, group_size=2, tie_rate=0.1)


@pytest.fixture(scope="module")
def runs(panel):
    return option_runs(panel, "own_set_level", **MENU)


def _levels(res) -> OwnSetLevels:
    sel, panel = res.selector, res.panel
    D = np.sort(np.concatenate([res.blocks.S, res.blocks.M, res.blocks.V])).astype(np.int64)
    seen = np.zeros(panel.n_rows, dtype=bool)
    seen[D] = seen[res.blocks.T] = True
    folds = grouped_folds(group_codes(panel.group_ids[D]), sel.folds, sel.repeats, sel.seed)
    return OwnSetLevels(sel, panel, D, folds, res.heldout, np.flatnonzero(~seen), res.candidates)


def test_estimates_shift_and_choices_stay(runs):
    off, on = (json_ready(runs[k].to_dict()) for k in (False, True))
    cands = runs[True].candidates
    assert on["selected"] == off["selected"]
    shifted = 0
    for p_on, p_off in zip(on["frontier"], off["frontier"]):
        assert (p_on["n_judges"], p_on["members"], p_on["risk"]) == (p_off["n_judges"], p_off["members"],
                                                                     p_off["risk"])
        d_on, d_off = p_on["deployed_risk"], p_off["deployed_risk"]
        assert "own_set_level" not in d_off
        level = d_on.get("own_set_level")
        stable = all(cands[m["index"]].stability == pytest.approx(1.0) for m in p_on["members"])
        if level is None:
            assert stable or p_on["chosen"]
            assert d_on["estimate"] == d_off["estimate"]
            continue
        shifted += 1
        assert not stable
        assert level["heldout_risk"] == pytest.approx(p_on["risk"], rel=1e-12)
        assert level["shift"] == pytest.approx(level["own_risk"] - level["heldout_risk"], abs=1e-15)
        assert d_on["estimate"] == pytest.approx(d_off["estimate"] + level["shift"], abs=1e-14)
        assert d_on["ci"][1] - d_on["ci"][0] == pytest.approx(d_off["ci"][1] - d_off["ci"][0], abs=1e-14)
        assert d_on["bbc_estimate"] == d_off["bbc_estimate"]
    assert shifted > 0                  # the option has something to shift on this panel
    dep_on, dep_off = on["deployed_risk"], off["deployed_risk"]
    s = (dep_on.get("own_set_level") or {}).get("shift", 0.0)
    assert dep_on["estimate"] == pytest.approx(dep_off["estimate"] + s, abs=1e-14)
    # a point's more_judges_estimate stays the difference of the two (shifted) estimates
    for p in on["frontier"]:
        m = p.get("more_judges_estimate")
        if m is None:
            continue
        q = next(x for x in on["frontier"] if x["constraint"] == p["constraint"] and x["n_judges"] == m["n_judges"]
                 and x["cost"] == m["cost"])
        assert m["estimate"] == pytest.approx(q["deployed_risk"]["estimate"] - p["deployed_risk"]["estimate"],
                                              abs=1e-12)


def test_own_refits_reproduce_a_stable_members_column(runs):
    """Where every fold built the deployed prefix, the fixed-set refits on the selection's
    folds are the candidate's own column: the own risk equals its held-out risk, for one-
    and several-judge prefixes of every family. Every fold's ``random`` path is the same
    permutation, so its prefixes are the same *ordered* sets in every fold (stability
    compares sets: another rule's stable prefix may come in another order, which an
    order-dependent family such as backoff reads)."""
    res = runs[False]
    levels = _levels(res)
    picked = {}
    for c in res.candidates:
        if c.stability == pytest.approx(1.0) and c.repeats == res.selector.repeats and \
                (c.path_rule == "random" or c.K == 1):
            picked.setdefault((c.family, min(c.K, 3)), c)
    assert len({k[1] for k in picked}) >= 3 and len({k[0] for k in picked}) >= 5
    assert ("backoff", 3) in picked
    for c in picked.values():
        c_unstable = type(c)(**{**c.__dict__, "stability": 0.5})     # force the refit
        levels.candidates = [c_unstable if x.index == c.index else x for x in res.candidates]
        level = levels.shift([c.index])
        assert level["heldout_risk"] == pytest.approx(c.val_risk, rel=1e-12)
        assert level["own_risk"] == pytest.approx(level["heldout_risk"], rel=1e-10), (c.family, c.K, c.path_rule)


def test_max_judges_equals_the_frontier_point(panel, runs):
    on = json_ready(runs[True].to_dict())
    point = next(p for p in on["frontier"] if p["n_judges"] == 1)
    res = select(panel, make_blocks(panel, seed=0), seed=0, own_set_level=True, max_judges=1, **MENU)
    assert point["deployed_risk"]["estimate"] == pytest.approx(res.deployed_risk["estimate"], rel=1e-9)
    assert ("own_set_level" in point["deployed_risk"]) == ("own_set_level" in res.deployed_risk)


def test_own_set_level_must_be_a_bool(panel):
    with pytest.raises(MenuError, match="own_set_level must be True or False"):
        select(panel, make_blocks(panel, seed=0), seed=0, own_set_level="yes", **MENU)
