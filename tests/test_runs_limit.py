"""The runs list says which selections were limited (issue 24): a run asked for at most k
judges or a budget per item deployed the best *within* that limit, so a reviewer browsing
stored runs must see the limit beside what was deployed (CLI ``runs``, the dashboard's run
tables and run picker)."""

from __future__ import annotations

import pandas as pd

from fcps_core.cli.main import main
from fcps_core.paper.synthetic import make_regime
from fcps_core.defaults import limit_words
from fcps_core.files.csv_writer import write_wide_csv
from fcps_core.store import Store


def test_limit_words():
    assert limit_words(None, None) == ""
    assert limit_words(1, None) == "at most 1 judge"
    assert limit_words(3, None) == "at most 3 judges"
    assert limit_words(None, 0.02) == "cost at most 0.02 per item"
    assert limit_words(2, 1.5) == "at most 2 judges and cost at most 1.5 per item"


def test_stored_runs_carry_their_limit_and_the_lists_say_it(tmp_path, capsys):
    panel = make_regime("additive", rows=400, judges=4, seed=3)
    path = tmp_path / "p.csv"
    write_wide_csv(panel, str(path))
    costs = tmp_path / "costs.csv"
    costs.write_text("judge,cost,latency\n" + "".join(f"{j},{i + 1},0.1\n" for i, j in enumerate(panel.judge_names)))
    store = tmp_path / "s.duckdb"
    base = ["select", str(path), "--families", "logistic", "table", "--folds", "3", "--repeats", "1",
            "--estimate", "none", "--quiet", "--save", "--store", str(store), "--panel-name", "p"]
    assert main(base) == 0
    assert main(base + ["--max-judges", "2"]) == 0
    assert main(base + ["--judge-costs", str(costs), "--budget", "3"]) == 0
    capsys.readouterr()
    runs = Store(store).runs()
    limits = {r["run_id"]: (r["max_judges"], r["budget"]) for r in runs}
    assert limits == {1: (None, None), 2: (2, None), 3: (None, 3.0)}

    assert main(["runs", "--store", str(store)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "limit" in lines[0]
    by_run = {line.split()[0]: line for line in lines[1:] if line.split() and line.split()[0].isdigit()}
    assert "at most 2 judges" in by_run["2"] and "cost at most 3 per item" in by_run["3"]
    assert "at most" not in by_run["1"]

    import fcps_app.runs as app_runs
    shown = app_runs.deployed_headline(pd.DataFrame(runs))
    assert list(shown.set_index("run_id")["limit"].sort_index()) == ["", "at most 2 judges",
                                                                    "cost at most 3 per item"]
    assert "limit" in app_runs.RUN_COLUMNS and "limit" in app_runs.RUN_WORDS


def test_the_run_picker_caption_names_the_limit(monkeypatch):
    import fcps_app.runs as app_runs
    run = {"kind": "select", "status": "done", "finished_at": "2026-11-26 19:20:00", "label": "",
           "params": {"max_judges": 3, "budget": None},
           "result": {"menu_size": 120, "selected": {"family": "logistic", "K": 3, "val_mse": 0.0137}}}
    free = {**run, "params": {"max_judges": None, "budget": None}}
    monkeypatch.setattr(app_runs, "stored_run", lambda run_id: run if run_id == 1 else free)
    assert app_runs.run_caption(1).endswith("chosen from 120 candidates (at most 3 judges)")
    assert app_runs.run_caption(2).endswith("chosen from 120 candidates")
