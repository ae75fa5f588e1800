"""The paper's menus, checks and sweep options from the command line (issue: reproduce the
whole paper): ``select --menu paper_table|paper_scalar``, ``sweep --menus paper
--fallback``, ``synth --from --use-judges`` and ``check NAME``."""

from __future__ import annotations

import json
import math

import pytest

from fcps_core.cli.main import main
from fcps_core.cli.check_commands import CHECKS
from fcps_core.families import PAPER_SCALAR
from fcps_core.paper.synthetic import make_regime
from fcps_core.files.csv_writer import write_wide_csv


@pytest.fixture(autouse=True)
def _own_store(tmp_path, monkeypatch):
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "cli.duckdb"))      # never the project's store


@pytest.fixture
def panel_csv(tmp_path):
    path = tmp_path / "mixed8.csv"
    write_wide_csv(make_regime("mixed", rows=900, judges=8, seed=3), path)
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("menu, size, families, paths", [
    ("paper_table", 21, {"table"}, {"info_first", "complexity_penalized", "random"}),
    ("paper_scalar", 42, set(PAPER_SCALAR), {"info_first"})])
def test_select_paper_menus_have_the_papers_candidate_counts(panel_csv, capsys, menu, size, families, paths):
    code, out, err = cli(capsys, "select", panel_csv, "--menu", menu, "--protocol", "split", "--choice", "argmin",
                         "--estimate", "none", "--json", "--quiet")
    assert code == 0, err
    d = json.loads(out)
    assert d["menu_size"] == size
    assert {c["family"] for c in d["candidates"]} == families
    assert {c["path"] for c in d["candidates"]} <= paths
    assert max(c["K"] for c in d["candidates"]) == 7
    # the validation scale is sqrt(log|C| / n_V), as in Table tab:candidate-menu-validation
    assert d["validation_scale"] == pytest.approx(math.sqrt(math.log(size) / d["split"]["n_V"]))


def test_select_menu_refuses_the_flags_it_replaces(panel_csv, capsys):
    code, _, err = cli(capsys, "select", panel_csv, "--menu", "paper_scalar", "--families", "table", "--quiet")
    assert code == 2
    assert "--families" in err and "--menu" in err and "Traceback" not in err


def test_sweep_paper_menus_and_fallback(panel_csv, capsys):
    code, out, err = cli(capsys, "sweep", panel_csv, "--menus", "paper", "--fallback", "lower_prefix",
                         "--budgets", "100,200", "--splits", "2", "--n-select", "100", "--n-val", "100",
                         "--n-test", "150", "--json", "--quiet")
    assert code == 0, err
    d = json.loads(out)
    assert d["settings"]["menu_sizes"] == {"table": 21, "scalar": 42}
    assert d["settings"]["fallback"] == "lower_prefix"
    for cell in d["cells"]:
        assert set(cell["menus"]) == {"table", "scalar"}
        assert cell["menus"]["table"]["K_mean"] <= 7


def test_sweep_fallback_changes_the_table_menu(panel_csv, capsys):
    """--fallback reaches the tables: on a panel with unseen patterns the two fallbacks differ."""
    args = ["sweep", panel_csv, "--menu", "table", "--budgets", "30", "--splits", "2", "--n-select", "100",
            "--n-val", "100", "--n-test", "150", "--k-max", "8", "--json", "--quiet"]
    a = json.loads(cli(capsys, *args, "--fallback", "global")[1])
    b = json.loads(cli(capsys, *args, "--fallback", "lower_prefix")[1])
    ra = [r["menus"]["table"]["val_mse"] for r in a.get("records", [])] or [a["cells"][0]["table_test_mse"]]
    rb = [r["menus"]["table"]["val_mse"] for r in b.get("records", [])] or [b["cells"][0]["table_test_mse"]]
    assert ra != rb


def test_synth_use_judges_resamples_only_those_judges(panel_csv, tmp_path, capsys):
    out = tmp_path / "semi.csv"
    code, _, err = cli(capsys, "synth", "--regime", "parity", "--from", panel_csv, "--use-judges", "J1,J3",
                       "J5", "--rows", "300", "--out", out)
    assert code == 0, err
    header = out.read_text().splitlines()[0].split(",")
    assert [h for h in header if h.startswith("J")] == ["J1", "J3", "J5"]


def test_synth_use_judges_names_an_unknown_judge(panel_csv, tmp_path, capsys):
    code, _, err = cli(capsys, "synth", "--regime", "parity", "--from", panel_csv, "--use-judges", "nope",
                       "--out", tmp_path / "x.csv")
    assert code == 2
    assert "'nope'" in err and "--use-judges" in err and str(panel_csv) in err
    assert not (tmp_path / "x.csv").exists()
    code, _, err = cli(capsys, "synth", "--regime", "parity", "--use-judges", "J1", "--out", tmp_path / "y.csv")
    assert code == 2 and "--from" in err


@pytest.mark.parametrize("name", list(CHECKS))
def test_every_check_runs_from_the_cli(name, panel_csv, capsys):
    extra = {"allocation": ["--n-h", "240"], "pool": ["--drop", "J1"], "cold-start": ["--n-h-values", "16"],
             "smoothing": [], "objective": [], "metrics": [], "tie-collapse": []}[name]
    code, out, err = cli(capsys, "check", name, panel_csv, "--splits", "2", "--n-select", "80", "--n-val", "80",
                         "--n-test", "150", "--n-m", "120", "--json", "--quiet", *extra)
    assert code == 0, err
    d = json.loads(out)
    assert d["check"] == name and d["paper_label"].startswith("tab:") and d["rows"]
    if name == "pool":
        assert [r["dropped"] for r in d["rows"]] == ["(full pool)", "J1"]
    if name == "smoothing":
        assert len(d["rows"]) == 8
    if name == "allocation":
        assert all(r["n_S"] + r["n_M"] + r["n_V"] == 240 for r in d["rows"])


def test_check_text_output_and_size_refusal(panel_csv, capsys):
    code, out, err = cli(capsys, "check", "smoothing", panel_csv, "--splits", "2", "--n-m", "100", "--quiet")
    assert code == 0, err
    assert "tab:table-sensitivity" in out and "lower_prefix" in out
    code, _, err = cli(capsys, "check", "smoothing", panel_csv, "--n-m", "5000")
    assert code == 2 and "--n-m" in err and "Traceback" not in err
