"""The unseen-shape bench's recipe scoring (bench/shape_recipes.py, bench_shapes.py --recipes):
the panel and its fresh items in one panel keep the fresh rows out of the deployable rows,
the gaps are run minus baseline, and each draw of a shape has its own seed."""

import csv

import numpy as np
import pytest

from bench import shape_recipes as R
from bench.bench_shapes import SHAPES, Shape, drawn, write_panel
from fcps_core.files.csv_writer import write_csv


def _read(path):
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    return rows[0], rows[1:]


def test_the_combined_panel_keeps_fresh_rows_out_of_the_deployable_rows(tmp_path):
    shape = Shape("tiny", 4, 30, ("binary", "rubric"), "binary", group_size=3, seed=5, truth_rows=24)
    panel_csv, _ = write_panel(shape, tmp_path)
    fresh_csv = tmp_path / "tiny.fresh.csv"
    _, rows = _read(panel_csv)
    _, fresh = _read(fresh_csv)
    assert {r[0] for r in rows} & {r[0] for r in fresh}         # the two files share item ids
    panel, D, T = R.combined_panel(panel_csv, fresh_csv, tmp_path / "both.csv")
    assert not (tmp_path / "both.csv").exists()
    assert list(panel.item_ids[D]) == [r[0] for r in rows]
    assert list(panel.item_ids[T]) == [R.FRESH_PREFIX + r[0] for r in fresh]
    assert not set(panel.group_ids[D]) & set(panel.group_ids[T])
    assert list(panel.labels[T]) == [float(r[2]) for r in fresh]
    assert list(panel.labels[D]) == [float(r[2]) for r in rows]


def test_a_panel_id_with_the_fresh_prefix_is_refused(tmp_path):
    shape = Shape("tiny", 3, 12, ("binary",), "binary", seed=6, truth_rows=12)
    panel_csv, _ = write_panel(shape, tmp_path)
    header, rows = _read(panel_csv)
    rows[3][1] = R.FRESH_PREFIX + "g3"
    write_csv(str(panel_csv), header, rows, force=True, lineterminator="\n")
    with pytest.raises(ValueError, match="starts with"):
        R.combined_panel(panel_csv, tmp_path / "tiny.fresh.csv", tmp_path / "both.csv")


def test_gaps_are_a_run_minus_its_baseline_and_biases_estimate_minus_fresh():
    runs = {"default": (0.17, 0.175), "max1": (0.21, 0.20), "max3": (0.19, 0.18)}
    recipes = {"single": 0.199, "top3": 0.1795, "hindsight": 0.174}
    rec = R.record("s", 0, runs, recipes)
    assert rec["gaps"] == pytest.approx({"max1-single": 0.001, "max3-top3": 0.0005, "default-hindsight": 0.001})
    assert rec["bias"] == pytest.approx({"default": -0.005, "max1": 0.01, "max3": 0.01})
    other = R.record("t", 0, {k: (v[0], v[1] + 0.01) for k, v in runs.items()}, recipes)
    lines = R.summary_lines([rec, other])
    gap_line = next(line for line in lines if line.strip().startswith("max1-single"))
    assert "+0.0060 (0.0050)" in gap_line and "1/2" in gap_line and "worst t +0.0110" in gap_line


def test_the_panels_luck_is_the_control_recipes_cross_fitted_minus_fresh_risk():
    """A panel whose own rows happen to be easy scores every predictor low: the control
    recipe (chooses nothing) shows it, and each run's est - fresh less that luck is what the
    estimate itself adds (hand-computed)."""
    runs = {"default": (0.150, 0.160), "max1": (0.160, 0.175)}
    recipes = {"single": 0.17, "top3": 0.16, "hindsight": 0.155, R.CONTROL: 0.158}
    rec = R.record("s", 0, runs, recipes, control_risk=0.150)
    assert rec["luck"] == pytest.approx(-0.008)
    assert rec["bias_less_luck"] == pytest.approx({"default": -0.002, "max1": -0.007})
    assert "luck" not in R.record("s", 1, runs, recipes)          # no control risk: nothing claimed
    lines = R.summary_lines([rec, R.record("s", 1, runs, recipes, control_risk=0.154)])
    row = next(line for line in lines if line.startswith("s ") and "-0.0060" in line)
    assert "-0.0060 (0.0020)" in row and "-0.0040 (0.0020)" in row     # luck -0.008/-0.004; default less it


def test_every_draw_of_every_shape_has_its_own_seed():
    seeds = [drawn(s, d).seed for d in range(4) for s in SHAPES]
    assert len(set(seeds)) == len(seeds)
    second = drawn(SHAPES[0], 2)
    assert second.base == SHAPES[0].name != second.name and drawn(SHAPES[0], 0) is SHAPES[0]
