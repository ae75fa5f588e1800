"""Figure builders are pure functions: check the traces carry the data they were given."""

import pytest

from fcps_core import make_blocks
from paper_protocol import select
from fcps_core.experiments import calibration_growth
from fcps_core.plots import (ablation_bars, calibration_growth_risk, family_shares, gap_forest, oracle_gap,
                             regime_map, risk_vs_pressure, selected_k_over_budget, unseen_over_budget,
                             validation_risk_over_k)
from fcps_core.synthetic import make_regime


@pytest.fixture(scope="module")
def sweep():
    panel = make_regime("mixed", rows=1200, judges=4, seed=0)
    return calibration_growth(panel, [50, 200], n_select=200, n_val=200, n_test=300, splits=2, seed=0)


@pytest.fixture(scope="module")
def result():
    panel = make_regime("parity", rows=1500, judges=4, seed=1, parity_order=3)
    return select(panel, make_blocks(panel, split="1:2:1:1")).to_dict()


def test_sweep_figures(sweep):
    cells = sweep.cells
    fig = calibration_growth_risk(cells)
    lines = [t for t in fig.data if t.mode == "lines+markers"]
    assert [t.name for t in lines] == ["table", "scalar"]
    assert list(lines[0].y) == [c["menus"]["table"]["test_mse_mean"] for c in cells]
    forest = gap_forest(cells)
    assert list(forest.data[0].x) == [c["delta"] for c in cells]
    assert list(selected_k_over_budget(cells).data[0].y) == [c["menus"]["table"]["K_mean"] for c in cells]
    assert list(unseen_over_budget(cells).data[0].y) == [c["menus"]["table"]["unseen_mean"] for c in cells]
    shares = family_shares(cells)
    total = [sum(t.y[i] for t in shares.data) for i in range(len(cells))]
    assert total == pytest.approx([1.0] * len(cells))
    assert len(ablation_bars(cells).data) == 2 and len(oracle_gap(cells).data) == 4


def test_selection_figures(result):
    fig = validation_risk_over_k(result["candidates"])
    assert len(fig.data) >= 3
    table_rows = [c for c in result["candidates"] if c["family"] == "table"]
    pts = risk_vs_pressure(table_rows, result["split"]["n_M"], x="H_K/n_M")
    assert list(pts.data[0].x) == pytest.approx([c["H_K"] / result["split"]["n_M"] for c in table_rows])
    rg = result["regime"]
    rm = regime_map([{**rg, "label": "p"}], gain_threshold=rg["gain_threshold"],
                    pressure_threshold=rg["pressure_threshold"])
    assert rm.data[0].x[0] == rg["table_pressure"] and rm.data[0].y[0] == rg["interaction_gain"]
    both = regime_map([{**rg, "label": "p"}, {"interaction_gain": -0.01, "table_pressure": 0.3, "label": "",
                                              "hover": "table K=7"}],
                      gain_threshold=rg["gain_threshold"], pressure_threshold=rg["pressure_threshold"])
    assert [t.name for t in both.data] == ["candidates", "panel"] and list(both.data[0].text) == ["table K=7"]
