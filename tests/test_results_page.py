"""The results browser (AppTest): a run's view, its report download, notes, deletes and the
side-by-side comparison.

* A selection's view shows its held-out and test MSE and its split sizes (n_S, n_M, n_V, n_T
  from the stored split) as metrics without delta arrows, each with glossary help; every
  table column has help.
* "Download report (HTML)" is offered for every run.
* A note typed in the page is stored and listed; a delete asks first, can be cancelled, and
  then removes the run from the store and from the page's deep link.
* ``?compare=A,B`` shows a parameter diff whose differing rows are marked.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import by_label
from fcps_core import make_blocks, select
from fcps_core.paper.experiments import calibration_growth
from fcps_core.seed import SEED_VERSION
from fcps_core.store import Store
from fcps_core.paper.synthetic import make_regime
from paper_protocol import select as paper_select

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300
OPEN = "Open runs (two or more: side by side)"


@pytest.fixture(scope="module")
def page_store(tmp_path_factory):
    """A store (marked seeded: the app adds no demo content) with a split-protocol and a
    cross-fitted selection, a sweep and a failed run; the app points at it."""
    path = tmp_path_factory.mktemp("results") / "fcps.duckdb"
    store = Store(path)
    panel = make_regime("mixed", rows=400, judges=4, seed=0)
    store.add_panel(panel, name="mixed", licence="MIT")
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    ids = {"split": store.save_selection(paper_select(panel, blocks, families=["table", "logistic"],
                                                      paths=["info_first"]), panel="mixed"),
           "crossfit": store.save_selection(select(panel, blocks, families=["table", "backoff"],
                                                   paths=["info_first"], n_jobs=1), panel="mixed"),
           "sweep": store.save_sweep(calibration_growth(panel, [40, 80], n_select=80, n_val=80, n_test=120,
                                                        splits=2, seed=0, families=["table", "logistic"],
                                                        paths=["info_first"]), panel="mixed"),
           "failed": store.save_failed_run(panel="mixed", kind="select", params={"k_max": 2}, error="boom")}
    store.set_meta("seed_version", SEED_VERSION)
    old = os.environ.get("FCPS_STORE")
    os.environ["FCPS_STORE"] = str(path)
    from fcps_app.common import get_store
    get_store.clear()
    yield store, ids
    get_store.clear()
    if old is None:
        os.environ.pop("FCPS_STORE", None)
    else:
        os.environ["FCPS_STORE"] = old


def results(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.switch_page("app_pages/results.py").run()
    assert not at.exception, at.exception
    return at


def metrics(at) -> dict:
    return {m.label: m for m in at.metric}


def test_a_selection_shows_test_mse_and_split_sizes_without_delta_arrows(page_store):
    store, ids = page_store
    at = results(run=str(ids["split"]))
    res = store.run(ids["split"])["result"]
    shown = metrics(at)
    assert shown["test MSE (T)"].value == f"{res['selected']['test_mse']:.4f}"
    assert shown["held-out MSE"].value == f"{res['selected']['val_mse']:.4f}"
    for key in ("n_S", "n_M", "n_V", "n_T"):
        assert shown[key].value == f"{res['split'][key]:,}", key
    for m in at.metric:
        assert m.proto.delta == "" and m.help, m.label             # no arrow, always words
    assert "Download report (HTML)" in [b.label for b in at.download_button]
    # a cross-fitted run names its fold sizes
    at = results(run=str(ids["crossfit"]))
    cf = store.run(ids["crossfit"])["result"]["split"]
    shown = metrics(at)
    assert shown["n_deployable"].value == f"{cf['n_deployable']:,}" and shown["n_T"].value == f"{cf['n_T']:,}"
    assert "held out" in shown["n_deployable"].help
    # no S, M or V size that would differ from the blocks drawn before pooling
    assert not {"n_S", "n_M", "n_V"} & set(shown)
    assert "Download report (HTML)" in [b.label for b in at.download_button]


@pytest.mark.parametrize("kind", ["split", "sweep", "failed"])
def test_every_table_column_has_help_and_every_run_a_report(page_store, kind):
    _, ids = page_store
    at = results(run=str(ids[kind]))
    assert at.dataframe
    for df in at.dataframe:
        config = json.loads(df.proto.columns or "{}")
        for column in df.value.columns:
            text = (config.get(str(column)) or {}).get("help")
            assert text and text != f"{column}.", (kind, column)
    assert "Download report (HTML)" in [b.label for b in at.download_button]


def test_compare_shows_a_parameter_diff(page_store):
    _, ids = page_store
    a, b = ids["split"], ids["crossfit"]
    at = results(compare=f"{a},{b}")
    assert by_label(at.multiselect, OPEN).value == [a, b]
    assert "Compare runs" in [s.value for s in at.subheader]
    diff = next(df.value for df in at.dataframe if "fact" in df.value.columns)
    assert list(diff.columns) == ["fact", f"run {a}", f"run {b}", "differs"]
    assert diff["differs"].all()                                    # default: only what differs
    rows = diff.set_index("fact")
    assert rows.loc["protocol", f"run {a}"] == "split" and rows.loc["protocol", f"run {b}"] == "crossfit"
    assert "param: families" in rows.index
    toggle = next(t for t in at.toggle if t.label.startswith("Only what differs"))
    toggle.set_value(False).run()
    full = next(df.value for df in at.dataframe if "fact" in df.value.columns).set_index("fact")
    assert len(full) > len(rows) and not full.loc["panel", "differs"]
    assert full.loc["panel", f"run {a}"] == full.loc["panel", f"run {b}"] == "mixed"
    assert sum(f"Run {i}" in m.value for m in at.markdown for i in (a, b)) == 2


def test_a_note_is_saved_and_listed(page_store):
    store, ids = page_store
    run_id = ids["sweep"]
    at = results(run=str(run_id))
    by_label(at.text_area, "Note on this run").set_value("check the *budgets* <again>")
    by_label(at.button, "Save note").click().run()
    assert not at.exception, at.exception
    assert store.run(run_id)["note"] == "check the *budgets* <again>"
    assert any(f"Note saved on run {run_id}" in s.value for s in at.success)
    listed = at.dataframe[0].value.set_index("run_id")
    assert listed.loc[run_id, "note"] == "check the *budgets* <again>"
    assert by_label(at.text_area, "Note on this run").value == "check the *budgets* <again>"
    by_label(at.text_area, "Note on this run").set_value("")
    by_label(at.button, "Save note").click().run()
    assert store.run(run_id)["note"] is None


def test_a_delete_asks_first_and_then_removes_the_run(page_store):
    store, ids = page_store
    run_id = ids["failed"]
    at = results(run=str(run_id))
    by_label(at.button, f"Delete run {run_id}").click().run()
    assert any(f"Delete run {run_id}" in w.value for w in at.warning)
    assert run_id in {r["run_id"] for r in store.runs()}            # nothing deleted yet
    by_label(at.button, "Cancel").click().run()
    assert not at.warning and run_id in {r["run_id"] for r in store.runs()}
    by_label(at.button, f"Delete run {run_id}").click().run()
    by_label(at.button, f"Yes, delete run {run_id}").click().run()
    assert not at.exception, at.exception
    assert run_id not in {r["run_id"] for r in store.runs()}
    assert any(f"Deleted run {run_id}" in s.value for s in at.success)
    assert run_id not in at.dataframe[0].value["run_id"].tolist()
    assert by_label(at.multiselect, OPEN).value == []
    assert "run" not in at.query_params


def test_the_runs_table_shows_no_none_and_the_candidates_no_empty_or_repeated_column(page_store):
    _, ids = page_store
    at = results(run=str(ids["crossfit"]))
    runs = at.dataframe[0].value
    assert "sweep" in set(runs["kind"])                       # a sweep's selection columns are empty...
    assert not runs.isna().any().any()                        # ...shown blank or "–", never "None"
    assert "None" not in {str(v) for v in runs.to_numpy().ravel()}
    cands = next(df.value for df in at.dataframe if "val_se" in df.value.columns)
    assert not cands.isna().all().any()                       # no all-empty column (without T: no test_mse)
    assert "path_rule" not in cands.columns or not (cands["path_rule"] == cands["path"]).all()
    # the chart names the risk as the Select page does, from the run's protocol
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    per_k = next(sp for sp in specs if "over K" in str(sp["layout"].get("title")))
    assert per_k["layout"]["yaxis"]["title"]["text"] == "cross-fitted MSE"
    # the answer first, then the frontier (as on the Select page)
    assert at.success[0].value.startswith("Deploy th") and "What fewer judges cost" in str(specs[0]["layout"]["title"])


def test_the_runs_table_headers_are_words_not_keys(page_store):
    """Issue 24 walk: the runs table (Results browser and Overview) heads its columns in words
    ('held-out MSE', 'estimate on new items', ...), not with the store's keys (val_mse,
    deployed_risk, run_id); the frame keeps the keys (its CSV and the tests read them)."""
    _, ids = page_store
    at = results(run=str(ids["crossfit"]))
    runs = at.dataframe[0]
    assert {"run_id", "val_mse", "test_mse"} <= set(runs.value.columns)
    config = json.loads(runs.proto.columns or "{}")
    headers = {str(c): (config.get(str(c)) or {}).get("label") or str(c) for c in runs.value.columns}
    assert not [h for h in headers.values() if "_" in h], headers
    assert headers["val_mse"] == "held-out MSE" and headers["run_id"] == "run"
    # the deployed count is "judges": the glossary's K is a path prefix's size (second walk)
    assert headers["K"] == "judges"
    # the cells keep their type and alignment under the new header (text here: the sweep's row has none)
    assert config["val_mse"].get("type_config") and config["val_mse"].get("help")


def test_a_small_mse_keeps_the_answers_decimals_in_the_metrics(page_store, monkeypatch):
    """Walk 4 (1,500-item continuous panel): the Select page's answer read "estimated MSE 0.000071
    (95% interval 0.000046 to 0.000094)" while the metrics of the same stored run read 0.0001 and
    0.0002 at four decimals. The Results browser's metrics print at the answer's decimals."""
    import copy
    from fcps_core.reports.explain import answer_digits, point_estimate
    store, ids = page_store
    run_id = ids["crossfit"]
    real = Store.run

    def small_run(self, rid, *a, **kw):
        run = real(self, rid, *a, **kw)
        if int(rid) != run_id:
            return run
        run = copy.deepcopy(run)
        res = run["result"]
        for r in [p.get("deployed_risk") for p in res["frontier"]] + [res["deployed_risk"]]:
            if r:
                r["estimate"], r["ci"] = r["estimate"] / 1000, [v / 1000 for v in r["ci"]]
        for p in res["frontier"]:
            p["risk"], p["ci"] = p["risk"] / 1000, [v / 1000 for v in p["ci"]]
        res["selected"]["val_mse"] /= 1000
        return run
    monkeypatch.setattr(Store, "run", small_run)
    res = store.run(run_id)["result"]
    chosen = next(p for p in res["frontier"] if p.get("chosen"))
    k = answer_digits(chosen)
    assert k > 4
    at = results(run=str(run_id))
    shown = metrics(at)
    printed = f"{point_estimate(chosen)['estimate']:.{k}f}"
    assert f"estimated MSE {printed} (95% interval" in at.success[0].value
    assert shown["MSE on new items"].value == f"{res['deployed_risk']['estimate']:.{k}f}"
    assert shown["held-out MSE"].value == f"{res['selected']['val_mse']:.{k}f}"


def test_the_results_browser_says_under_its_frontier_chart_what_the_select_page_says(page_store, monkeypatch):
    """Walk 7 (20 continuous metrics): the Results browser drew the run's frontier titled "What
    fewer judges cost" with no note under it, while the Select page (and the report) said under
    the same chart that a looser limit deploys a predictor estimated higher than a tighter one."""
    import copy

    import fcps_app.results_view as view
    from fcps_app.common import md
    from fcps_core.figures.frontier import NON_MONOTONE_TITLES
    from fcps_core.reports.explain import non_monotone_note
    _, ids = page_store
    stored = view.load

    def changed(run_id):
        run = copy.deepcopy(stored(run_id))
        fr = [p for p in run["result"]["frontier"] if p.get("constraint") == "max_judges"]
        low = min(p["deployed_risk"]["estimate"] for p in fr) - 0.01
        q = next(p for p in fr if not p.get("chosen"))
        q["deployed_risk"] = {**q["deployed_risk"], "estimate": low, "ci": [low - 0.01, low + 0.01]}
        for p in fr:        # every looser point clearly above it, paired in the same draws
            if p["n_judges"] > q["n_judges"]:
                change = p["deployed_risk"]["estimate"] - low
                p["fewer_judges_estimate"] = {"n_judges": q["n_judges"], "cost": q.get("cost"), "estimate": change,
                                              "ci": [change - 0.001, change + 0.001]}
        changed.result = run["result"]
        return run
    monkeypatch.setattr(view, "load", changed)
    at = results(run=str(ids["crossfit"]))
    note = non_monotone_note(changed.result)
    assert note and sum(c.value == md(note) for c in at.caption) == 1, [c.value for c in at.caption]
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    assert specs[0]["layout"]["title"]["text"] == NON_MONOTONE_TITLES[True]


def test_the_results_browser_verdict_names_the_select_page_not_a_flag(page_store, monkeypatch):
    """Walk 7: the Results browser's verdict said "...; deploy it with --max-judges 7" (the
    command line's words) beside the page's own words. It names the Select page's form."""
    import fcps_app.results_view as view
    _, ids = page_store
    asked = []
    real = view.verdict_parts

    def recording(d, **kwargs):
        asked.append(kwargs.get("limit_words"))
        return real(d, **kwargs)
    monkeypatch.setattr(view, "verdict_parts", recording)
    results(run=str(ids["crossfit"]))
    assert asked and asked[0] is not None, asked
    words = asked[0](7)
    assert "--max-judges" not in words and "'most judges deployed' to 7 on the Select page" in words
