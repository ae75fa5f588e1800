"""Calibration-growth sweeps: nested blocks, summary arithmetic, qualitative regimes."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from fcps_core import read_panel
from fcps_core.errors import SplitError
from fcps_core.paper.experiments import MENUS, calibration_growth, nested_blocks, summarise_budget
from fcps_core.paper.synthetic import make_regime

ROOT = Path(__file__).resolve().parents[1]


def test_nested_blocks_fix_S_V_T_and_nest_M():
    panel = make_regime("additive", rows=1200, judges=3, seed=0, group_size=2)
    blocks = nested_blocks(panel, [50, 100, 400], n_select=100, n_val=100, n_test=200, seed=3)
    for b in blocks[1:]:
        for name in "SVT":
            assert np.array_equal(getattr(b, name), getattr(blocks[0], name))
    for small, big in zip(blocks, blocks[1:]):
        assert set(small.M) <= set(big.M)
    for b, n_M in zip(blocks, [50, 100, 400]):
        assert n_M <= len(b.M) <= n_M + 1
        groups = [set(panel.group_ids[getattr(b, k)]) for k in "SMVT"]
        for i in range(4):
            for j in range(i + 1, 4):
                assert not groups[i] & groups[j]
    with pytest.raises(SplitError, match="needs"):
        nested_blocks(panel, [2000], n_select=100, n_val=100, n_test=100, seed=0)


def _record(split, table, scalar, K):
    menu = lambda mse, k: {"test_mse": mse, "test_nll": 0.6, "val_mse": mse, "K": k,  # noqa: E731
                           "family": "table", "path_rule": "info_first", "unseen_test": 0.1,
                           "V_cell": 0.2, "V_proxy": 0.3, "H_K": 4.0, "pairwise": False,
                           "oracle_test_mse": mse - 0.01}
    return {"split": split, "n_M": 100, "menus": {"table": menu(table, K), "scalar": menu(scalar, 2)},
            "ablation": {}, "regret_vs_short": 0.001 * split}


def test_summary_paired_delta_and_interval_by_hand():
    records = [_record(0, 0.20, 0.18, 2), _record(1, 0.22, 0.19, 3), _record(2, 0.21, 0.21, 3)]
    cell = summarise_budget(records)
    diffs = [0.02, 0.03, 0.0]
    mean = sum(diffs) / 3
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 2)
    se = sd / math.sqrt(3)
    assert cell["delta"] == pytest.approx(mean)
    assert cell["ci_low"] == pytest.approx(mean - 1.959963984540054 * se)
    assert cell["ci_high"] == pytest.approx(mean + 1.959963984540054 * se)
    t = cell["menus"]["table"]
    assert t["K_mean"] == pytest.approx(8 / 3) and t["K_mode"] == 3 and t["K_mode_share"] == pytest.approx(2 / 3)
    assert t["K_sd"] == pytest.approx(np.std([2, 3, 3], ddof=1))
    assert cell["table_test_mse"] == pytest.approx(0.21)
    assert cell["regret_vs_K_le_3"] == pytest.approx(0.001)


def test_sweep_menus_choose_their_own_validation_argmin():
    panel = make_regime("mixed", rows=1500, judges=5, seed=2)
    res = calibration_growth(panel, [100, 300], n_select=200, n_val=200, n_test=300, splits=2, seed=1)
    assert [c["n_M"] for c in res.cells] == [100, 300]
    for rec in res.records:
        full = rec["menus"]["full"]
        parts = [rec["menus"][m]["val_mse"] for m in ("table_like", "scalar")]
        assert full["val_mse"] <= min(parts) + 1e-12
        assert rec["menus"]["table"]["family"] == "table"
        assert rec["menus"]["scalar"]["family"] in MENUS["scalar"]
        assert rec["menus"]["table"]["oracle_test_mse"] <= rec["menus"]["table"]["test_mse"]


def test_parity_regime_unseen_falls_and_table_wins_once_covered():
    panel = make_regime("parity", rows=3000, judges=7, seed=0)
    res = calibration_growth(panel, [16, 256, 1024], n_select=300, n_val=300, n_test=600, splits=3,
                             seed=0, families=["table", "ridge_iso", "logistic", "mean_iso"])
    unseen = [c["unseen_mean"] for c in res.cells]
    assert unseen[0] > 0.5 and unseen[-1] < 0.02 and unseen == sorted(unseen, reverse=True)
    last = res.cells[-1]
    assert last["ci_high"] < 0                     # table minus scalar: table clearly better
    assert last["table_K_mean"] >= 6               # the interaction-bearing prefix


def test_additive_regime_scalar_at_least_as_good_from_64_labels():
    panel = make_regime("additive", rows=3000, judges=7, seed=1)
    res = calibration_growth(panel, [64, 256, 1024], n_select=300, n_val=300, n_test=600, splits=4,
                             seed=0)
    for cell in res.cells:
        assert cell["scalar_test_mse"] <= cell["table_test_mse"]


def test_parallel_workers_give_identical_results():
    panel = make_regime("xor", rows=900, judges=4, seed=3)
    kw = dict(n_select=150, n_val=150, n_test=200, splits=3, seed=5, families=["table", "logistic"])
    one = calibration_growth(panel, [50, 150], workers=1, **kw)
    two = calibration_growth(panel, [50, 150], workers=2, **kw)
    assert one.records == two.records


def test_synth_and_sweep_cli(tmp_path):
    out = tmp_path / "parity.csv"
    py = sys.executable
    run = subprocess.run([py, "-m", "fcps_core", "synth", "--regime", "parity", "--rows", "800",
                          "--judges", "5", "--seed", "2", "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    panel = read_panel(str(out))
    assert panel.n_rows == 800 and len(panel.judges) == 5 and panel.schema == "pairwise"
    run = subprocess.run([py, "-m", "fcps_core", "sweep", str(out), "--budgets", "50,200",
                          "--splits", "2", "--n-select", "100", "--n-val", "100", "--n-test", "200",
                          "--menu", "table", "logistic", "--json", "--quiet"], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    import json
    cells = json.loads(run.stdout)["cells"]
    for key in ("n_M", "table_test_mse", "scalar_test_mse", "delta", "ci_low", "ci_high",
                "table_K_mean", "unseen_mean", "V_cell_mean"):
        assert key in cells[0]
    bad = subprocess.run([py, "-m", "fcps_core", "sweep", str(out), "--budgets", "5000",
                          "--n-select", "100", "--n-val", "100", "--n-test", "200", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "needs" in bad.stderr


def test_custom_menus_select_within_each_family():
    panel = make_regime("and", rows=1500, judges=4, seed=9)
    menus = {"table": ("table",), "ridge_iso": ("ridge_iso",), "logistic": ("logistic",)}
    res = calibration_growth(panel, [200], n_select=200, n_val=200, n_test=400, splits=2, seed=0,
                             menus=menus)
    assert set(res.settings["families"]) == {"table", "ridge_iso", "logistic"}
    for rec in res.records:
        assert set(rec["menus"]) == set(menus)
        for name, fams in menus.items():
            assert rec["menus"][name]["family"] in fams
    assert set(res.cells[0]["menus"]) == set(menus)


def test_semi_real_synth_cli_keeps_the_real_judges(tmp_path):
    out = tmp_path / "semi.csv"
    run = subprocess.run([sys.executable, "-m", "fcps_core", "synth", "--regime", "parity", "--rows", "500",
                          "--seed", "1", "--from", "data/llmbar.csv", "--out", str(out)], cwd=ROOT,
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    semi = read_panel(str(out))
    real = read_panel(str(ROOT / "data" / "llmbar.csv"))
    assert semi.n_rows == 500 and semi.judge_names == real.judge_names
    again = tmp_path / "again.csv"
    subprocess.run([sys.executable, "-m", "fcps_core", "synth", "--regime", "parity", "--rows", "500",
                    "--seed", "1", "--from", "data/llmbar.csv", "--out", str(again)], cwd=ROOT, check=True,
                   capture_output=True)
    assert out.read_bytes() == again.read_bytes()          # seeded


def test_sweep_cli_rejects_an_unknown_backend(tmp_path):
    run = subprocess.run([sys.executable, "-m", "fcps_core", "sweep", "data/llmbar.csv", "--n-select", "50",
                          "--n-val", "50", "--n-test", "50", "--budgets", "50", "--splits", "2", "--workers", "2",
                          "--backend", "spark", "--quiet"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 2 and "unknown --backend 'spark'" in run.stderr
