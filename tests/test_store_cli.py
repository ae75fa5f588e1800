"""The store's command line: import / panels / show / runs / export / delete / seed, and
``select`` / ``sweep`` on a stored panel name with ``--save``.

Most commands run in-process through ``fcps_core.cli.main`` (fast); the error contract
(exit 2, one line, no traceback) is checked through a real subprocess as well.
"""

from __future__ import annotations

import csv
import json

import pandas as pd
import pytest

from fcps_core.cli import main
from fcps_core.store import Store

from store_helpers import assert_one_line_error, csv_text, good_rows, run_cli, write


@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "cli.duckdb"
    monkeypatch.setenv("FCPS_STORE", str(path))      # never the project's default store
    return path


@pytest.fixture
def panel_csv(tmp_path):
    return write(tmp_path / "judged.csv", csv_text(good_rows(240, seed=4)))


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_list_show_export_delete(store_path, panel_csv, tmp_path, capsys):
    code, out, err = cli(capsys, "import", str(panel_csv), "--name", "judged", "--licence", "CC-BY-4.0",
                         "--provenance", "collected in-house, 2024")
    assert code == 0, err
    assert "imported 'judged': 240 rows (240 labelled), 3 judges" in out
    code, out, _ = cli(capsys, "panels", "--json")
    panels = json.loads(out)["panels"]
    assert [(p["name"], p["n_rows"], p["n_judges"], p["runs"]) for p in panels] == [("judged", 240, 3, 0)]
    code, out, _ = cli(capsys, "show", "judged")
    assert "licence: CC-BY-4.0" in out and "provenance: collected in-house, 2024" in out
    assert "j1" in out and "pairwise" in out
    code, out, _ = cli(capsys, "show", "judged", "--json")
    shown = json.loads(out)
    assert shown["source"] == "judged.csv" and shown["import_options"]["label_column"] == "label"
    assert cli(capsys, "export", "judged", "--format", "csv", "--out", str(tmp_path / "e.csv"))[0] == 0
    exported = list(csv.reader(open(tmp_path / "e.csv", encoding="utf-8")))
    original = list(csv.reader(open(panel_csv, encoding="utf-8")))
    assert [r[0] for r in exported[1:]] == [r[0] for r in original[1:]]
    assert [r[3:] for r in exported[1:]] == [r[3:] for r in original[1:]]
    code, out, _ = cli(capsys, "delete", "judged")
    assert code == 0 and "deleted panel 'judged': 240 rows, 3 judges, 0 runs" in out
    assert json.loads(cli(capsys, "panels", "--json")[1])["panels"] == []


def test_preview_stores_nothing(store_path, panel_csv, capsys):
    code, out, _ = cli(capsys, "import", str(panel_csv), "--name", "p", "--preview", "3")
    assert code == 0
    assert "nothing stored (preview)" in out and "label" in out and "pairwise" in out
    assert not store_path.exists()


def test_select_on_a_stored_panel_saves_a_run(store_path, panel_csv, tmp_path, capsys):
    assert cli(capsys, "import", str(panel_csv), "--name", "judged")[0] == 0
    code, out, err = cli(capsys, "select", "judged", "--families", "table", "logistic",
                         "--split", "1:2:1:1", "--json", "--quiet", "--save")
    assert code == 0, err
    printed = json.loads(out)
    runs = json.loads(cli(capsys, "runs", "--json")[1])["runs"]
    assert len(runs) == 1 and runs[0]["status"] == "done" and runs[0]["panel"] == "judged"
    run = Store(store_path).run(runs[0]["run_id"])
    assert run["result"]["selected"] == printed["selected"]
    assert run["params"]["cli"]["split"] == "1:2:1:1"
    assert run["params"]["families"] == ["table", "logistic"]
    assert cli(capsys, "export", f"run:{runs[0]['run_id']}", "--format", "csv",
               "--out", str(tmp_path / "r.csv"))[0] == 0
    assert len(pd.read_csv(tmp_path / "r.csv")) == len(printed["candidates"])
    # the same selection straight from the file gives the same choice
    code, out, _ = cli(capsys, "select", str(panel_csv), "--families", "table", "logistic",
                       "--split", "1:2:1:1", "--json", "--quiet")
    assert json.loads(out)["selected"] == printed["selected"]


def test_select_on_a_file_with_save_stores_the_panel_once(store_path, panel_csv, tmp_path, capsys):
    args = ["--families", "table", "--paths", "info_first", "--quiet", "--save"]
    assert cli(capsys, "select", str(panel_csv), *args)[0] == 0
    assert cli(capsys, "select", str(panel_csv), *args, "--seed", "1")[0] == 0
    store = Store(store_path)
    assert [p["name"] for p in store.panels()] == ["judged"]
    assert [r["seed"] for r in store.runs()] == [1, 0]
    other = write(tmp_path / "judged.tsv", csv_text(good_rows(100, seed=9), "\t"))
    code, _, err = cli(capsys, "select", str(other), *args)
    assert code == 2 and "already holds a different panel named 'judged'" in err


def test_sweep_on_a_stored_panel_saves_its_cells(store_path, panel_csv, capsys):
    assert cli(capsys, "import", str(panel_csv), "--name", "judged")[0] == 0
    code, out, err = cli(capsys, "sweep", "judged", "--budgets", "30,60", "--splits", "2",
                         "--n-select", "40", "--n-val", "40", "--n-test", "60",
                         "--menu", "table", "logistic", "--paths", "info_first",
                         "--json", "--quiet", "--save")
    assert code == 0, err
    printed = json.loads(out)
    run = Store(store_path).run(Store(store_path).runs(kind="sweep")[0]["run_id"])
    assert run["result"]["cells"] == printed["cells"]
    assert run["params"]["budgets"] == [30, 60] and run["seconds"] > 0


def test_a_failed_select_with_save_is_kept_as_a_failed_run(store_path, panel_csv, capsys):
    assert cli(capsys, "import", str(panel_csv), "--name", "judged")[0] == 0
    code, out, err = cli(capsys, "select", "judged", "--n-select", "1000", "--n-cal", "5",
                         "--n-val", "5", "--quiet", "--save")
    assert code == 2 and out == "" and "the blocks need 1010 labelled rows" in err
    (run,) = Store(store_path).runs()
    assert run["status"] == "failed" and "1010" in run["error"]


def test_stored_panel_refuses_file_mapping_flags_and_unknown_names(store_path, panel_csv, capsys):
    assert cli(capsys, "import", str(panel_csv), "--name", "judged")[0] == 0
    code, _, err = cli(capsys, "select", "judged", "--label-column", "y")
    assert code == 2 and "--label-column maps the columns of a file" in err
    code, _, err = cli(capsys, "select", "nothing-here")
    assert code == 2 and "does not exist and the store has no panel of that name" in err
    code, _, err = cli(capsys, "select", "judged", "--judges", "j1", "j3", "--families", "table",
                       "--json", "--quiet")
    assert code == 0


def test_run_references_and_number_like_panel_names(store_path, panel_csv, tmp_path, capsys):
    assert cli(capsys, "import", str(panel_csv), "--name", "1")[0] == 0
    assert cli(capsys, "select", "1", "--families", "table", "--quiet", "--save")[0] == 0
    # "1" names the panel; run:1 names the run
    assert cli(capsys, "export", "1", "--format", "json", "--out", str(tmp_path / "p.json"))[0] == 0
    assert json.load(open(tmp_path / "p.json"))["panel"]["name"] == "1"
    assert cli(capsys, "export", "run:1", "--format", "json", "--out", str(tmp_path / "r.json"))[0] == 0
    assert json.load(open(tmp_path / "r.json"))["kind"] == "select"
    code, _, err = cli(capsys, "export", "run:x")
    assert code == 2 and "not a run reference" in err
    code, out, _ = cli(capsys, "delete", "run:1")
    assert code == 0 and Store(store_path).runs() == []
    code, _, err = cli(capsys, "delete", "run:7")
    assert code == 2 and "no stored run with id 7" in err


def test_export_neutralises_formulas_on_the_command_line(store_path, tmp_path, capsys):
    rows = good_rows(60)
    rows[0][3] = "=cmd|' /C calc'!A0"
    rows[5][4] = "@SUM(1)"
    path = write(tmp_path / "evil.csv", csv_text([[f'"{c}"' if "'" in c else c for c in r] for r in rows]))
    assert cli(capsys, "import", str(path), "--name", "evil", "--schema", "categorical")[0] == 0
    assert cli(capsys, "export", "evil", "--out", str(tmp_path / "x.csv"))[0] == 0
    exported = list(csv.reader(open(tmp_path / "x.csv", encoding="utf-8")))
    assert exported[0][3] == "'=cmd|' /C calc'!A0" and exported[5][4] == "'@SUM(1)"


def test_cli_errors_are_one_line_in_a_real_process(tmp_path, panel_csv):
    store = str(tmp_path / "s.duckdb")
    assert run_cli("import", str(panel_csv), "--name", "judged", "--store", store)[0] == 0
    line = assert_one_line_error(run_cli("import", str(panel_csv), "--name", "judged", "--store", store))
    assert "already exists" in line and "--replace" in line
    line = assert_one_line_error(run_cli("show", "ghost", "--store", store))
    assert "no stored panel named 'ghost'" in line and "'judged'" in line
    line = assert_one_line_error(run_cli("select", "judged", "--store", str(tmp_path / "none.duckdb")))
    assert "no store at" in line
    bad = write(tmp_path / "not-a-store.duckdb", b"this is not a database")
    line = assert_one_line_error(run_cli("panels", "--store", str(bad)))
    assert "not a readable fcps store" in line


def test_a_panel_named_like_a_run_number_is_deleted_as_a_panel(tmp_path):
    """'#1' is a panel name, not run 1: deleting it must not touch another panel's run."""
    from fcps_core.files.csv_writer import write_wide_csv
    from fcps_core.store import Store
    from fcps_core.paper.synthetic import make_regime
    store_path = tmp_path / "s.duckdb"
    csv = tmp_path / "p.csv"
    write_wide_csv(make_regime("additive", rows=300, judges=3, seed=0), str(csv))
    env = {"FCPS_STORE": str(store_path)}
    for name in ("other", "#1"):
        code, _, err = run_cli("import", str(csv), "--name", name, env=env)
        assert code == 0, err
    code, _, err = run_cli("select", "other", "--save", "--quiet", "--families", "table", env=env)
    assert code == 0, err
    run_ids = [r["run_id"] for r in Store(store_path).runs()]
    code, _, err = run_cli("delete", "#1", env=env)
    assert code == 0, err
    store = Store(store_path)
    assert not store.has_panel("#1") and store.has_panel("other")
    assert [r["run_id"] for r in store.runs()] == run_ids


def test_select_save_refuses_to_reuse_a_panel_stored_with_other_judges(tmp_path):
    from fcps_core.files.csv_writer import write_wide_csv
    from fcps_core.paper.synthetic import make_regime
    csv = tmp_path / "tr.csv"
    write_wide_csv(make_regime("additive", rows=300, judges=3, seed=0), str(csv))
    env = {"FCPS_STORE": str(tmp_path / "s.duckdb")}
    code, _, err = run_cli("select", str(csv), "--judges", "J1", "J2", "--save", "--quiet", env=env)
    assert code == 0, err
    code, out, err = run_cli("select", str(csv), "--judges", "J3", "--save", "--quiet", env=env)
    assert code == 2 and "--panel-name" in err and err.count("\n") == 1
    code, _, err = run_cli("select", str(csv), "--judges", "J3", "--save", "--quiet", "--panel-name", "tr-j3",
                           env=env)
    assert code == 0, err
