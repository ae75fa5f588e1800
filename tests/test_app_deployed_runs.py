"""The dashboard's run lists describe what a run DEPLOYED (AppTest; issue 24: "the runs list
shows the best member's family for a run that deployed a tie average", and "no two numbers
on the page contradict each other").

The store is one the previous fcps (schema 7) wrote, opened by the app (which migrates it):

* a run that deployed an average of tied models: the Results browser's runs table, the
  Overview's latest runs and the Select page show the same family ("average of N models"),
  the same number of judges as the answer's "Deploy these k judges", and the same held-out
  MSE, estimate on new items and test MSE as the run's own metrics, at the same 4 decimals;
* a run whose stored result lacks the estimate (written before it existed) shows its other
  values and "not recorded" for the estimate; a run with nothing of its result left says
  "not recorded" for every value, never a blank.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import app_store, by_label
from fcps_core import make_blocks, select
from fcps_core.paper.synthetic import make_regime
from fcps_core.seed import SEED_VERSION
from fcps_core.store import Store
from store_helpers import as_version_7, edit_summary

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300
RUNS_COLUMNS = {"run_id", "panel", "family"}


@pytest.fixture(scope="module")
def old_store(tmp_path_factory):
    """A version-7 store (marked seeded) with three selections of one tie-average result: one
    whole, one without its deployed-risk estimate, one with nothing of its result but its
    predictor; the app points at it. Yields (run ids, the result's JSON)."""
    where = tmp_path_factory.mktemp("deployed")
    made = where / "made.duckdb"
    store = Store(made)
    panel = make_regime("additive", rows=400, judges=6, seed=0)
    store.add_panel(panel, name="additive", licence="MIT")
    result = select(panel, make_blocks(panel, split="1:2:1:1", seed=0),
                    families=["table", "backoff", "logistic", "ridge_iso"], paths=["info_first"], n_jobs=1)
    d = result.to_dict()
    assert d["selected"]["family"] == "tie_average" and len(d["selected"]["members"]) > 1
    ids = {"bare": store.save_selection(result, panel="additive"),
           "older": store.save_selection(result, panel="additive"),
           "full": store.save_selection(result, panel="additive")}
    store.set_meta("seed_version", SEED_VERSION)
    with store.reading():
        pass
    path = where / "fcps.duckdb"
    shutil.copy(made, path)
    as_version_7(path)
    edit_summary(path, ids["older"], lambda s: s.pop("deployed_risk"))
    edit_summary(path, ids["bare"], lambda s: s.pop("selected"))
    for _ in app_store(path):
        yield ids, d


def _page(page: str, **query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _runs_table(at):
    return next(df.value for df in at.dataframe if RUNS_COLUMNS <= set(df.value.columns))


def _cell(value, spec: str) -> str:
    """A runs-table cell as the page shows it (a column holding "not recorded" is text)."""
    return value if isinstance(value, str) or value is None else spec % value


def _row(table, run_id: int) -> dict:
    row = table[table["run_id"].astype(int) == run_id].iloc[0].to_dict()
    return {c: row.get(c) for c in ("family", "K", "val_mse", "deployed_risk", "test_mse")}


def _metrics(at) -> dict:
    return {m.label: m.value for m in at.metric}


def _answer_judges(text: str) -> int:
    m = re.match(r"Deploy these (\d+) judges", text)
    assert m, text
    return int(m.group(1))


def test_the_results_browser_lists_the_average_with_the_numbers_of_its_answer(old_store):
    ids, d = old_store
    at = _page("app_pages/results.py", run=str(ids["full"]))
    table = _runs_table(at)
    row = _row(table, ids["full"])
    n = len(d["selected"]["members"])
    assert row["family"] == f"average of {n} models"
    # the run's own view, below the table: the answer and the metrics
    k = _answer_judges(at.success[0].value)
    shown = _metrics(at)
    assert _cell(row["K"], "%d") == str(k) == str(len(d["selected"]["judges"]))
    assert _cell(row["val_mse"], "%.4f") == shown["held-out MSE"] == f"{d['selected']['val_mse']:.4f}"
    # named as on the Select page ("MSE on new items"), not "deployed risk" (issue 24 walk)
    assert _cell(row["deployed_risk"], "%.4f") == shown["MSE on new items"]
    assert _cell(row["test_mse"], "%.4f") == shown["test MSE (T)"]
    # the run stored before the estimate existed: its values, and "not recorded" for the estimate
    older = _row(table, ids["older"])
    assert older["deployed_risk"] == "not recorded"
    assert (older["K"], older["val_mse"]) == (row["K"], row["val_mse"])
    # nothing of its result left but its predictor: the family, and "not recorded" elsewhere (never blank)
    bare = _row(table, ids["bare"])
    assert bare["family"] == f"average of {n} models"
    assert [bare[c] for c in ("K", "val_mse", "deployed_risk", "test_mse")] == ["not recorded"] * 4
    # the family filter offers what the table shows
    assert f"average of {n} models" in by_label(at.multiselect, "deployed family").options


def test_the_overview_and_the_select_page_show_the_same_numbers(old_store):
    ids, d = old_store
    row = _row(_runs_table(_page("")), ids["full"])       # the Overview's latest runs
    at = _page("app_pages/select.py", run=str(ids["full"]))
    answer = next(e.value for e in at.main.children[2].children.values() if str(e.value).startswith("Deploy"))
    assert row["family"] == f"average of {len(d['selected']['members'])} models"
    assert _cell(row["K"], "%d") == str(_answer_judges(answer))
    assert _cell(row["val_mse"], "%.4f") == _metrics(at)["held-out MSE (deployed average)"]
    assert _cell(row["test_mse"], "%.4f") == _metrics(at)["test MSE (T audit)"]


def test_the_side_by_side_comparison_names_the_deployment_as_the_runs_table_does(old_store):
    ids, d = old_store
    at = _page("app_pages/results.py", compare=f"{ids['full']},{ids['older']}")
    row = _row(_runs_table(at), ids["full"])
    toggle = next(t for t in at.toggle if t.label.startswith("Only what differs"))
    toggle.set_value(False).run()
    facts = next(df.value for df in at.dataframe if "fact" in df.value.columns).set_index("fact")
    full = facts[f"run {ids['full']}"]
    assert full["deployed family"] == row["family"] == f"average of {len(d['selected']['members'])} models"
    assert str(full["judges called (K)"]) == _cell(row["K"], "%d")


def test_the_run_picker_captions_the_deployment_with_the_same_numbers(old_store):
    ids, d = old_store
    at = _page("app_pages/audit.py", run=str(ids["full"]))
    options = by_label(at.selectbox, "Run").options
    sel = d["selected"]
    full = next(o for o in options if o.startswith(f"run {ids['full']} "))
    assert f"average of {len(sel['members'])} models over {sel['K']} judges, held-out MSE {sel['val_mse']:.4f}" in full
    bare = next(o for o in options if o.startswith(f"run {ids['bare']} "))
    assert bare.endswith("what it deployed: not recorded")


def test_no_run_table_shows_the_choice_rule_name_for_a_deployment(old_store):
    """The runs table names an average once, in words: never the internal label beside it."""
    ids, _ = old_store
    for page in ("", "app_pages/results.py"):
        table = _runs_table(_page(page))
        assert "tie_average" not in {str(v) for v in table.to_numpy().ravel()}, page
