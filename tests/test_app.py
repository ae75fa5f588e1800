"""AppTest: every page renders; upload, selection, sweep and audit flows work in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import by_label, seeded_app_store

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300


def page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    at.switch_page(f"app_pages/{name}.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module", autouse=True)
def seeded_store(tmp_path_factory):
    yield from seeded_app_store(tmp_path_factory)




def test_overview_renders():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "Finite-Calibration Panel Selection" in at.title[0].value


@pytest.mark.parametrize("name", ["upload", "select", "regime", "audit", "gaps", "deploy", "results", "lab"])
def test_every_page_renders_without_state(name):
    page(name)


def _select(at: AppTest, families=("table", "logistic", "one_coin_iso")) -> AppTest:
    by_label(at.multiselect, "families").set_value(list(families))
    by_label(at.number_input, "K max (0 = whole pool)").set_value(3)
    at.button[0].click().run()
    assert not at.exception, at.exception
    return at


def _sweep(at: AppTest, budgets: str, splits: int) -> AppTest:
    """A small table + logistic sweep from the Regime map page."""
    by_label(at.text_input, "n_M budgets").set_value(budgets)
    by_label(at.number_input, "splits").set_value(splits)
    by_label(at.multiselect, "families").set_value(["table", "logistic"])
    by_label(at.number_input, "K max").set_value(3)
    by_label(at.button, "Run sweep").click().run()
    assert not at.exception, at.exception
    return at


def test_upload_then_select_the_uploaded_panel(upload_csv_bytes):
    at = page("upload")
    at.file_uploader[0].set_value(("mixed.csv", upload_csv_bytes, "text/csv")).run()
    assert not at.exception and not at.error
    assert "600 rows" in at.success[0].value
    by_label(at.button, "Use this panel").click().run()
    assert "mixed" in at.session_state["uploads"]
    at.switch_page("app_pages/select.py").run()
    by_label(at.selectbox, "Panel").set_value("uploaded: mixed").run()
    _select(at)
    # the page reruns after a selection: the answer opens it, above the verdict's details
    assert at.subheader[0].value == "Verdict" and at.success[0].value.startswith("Deploy ")
    assert at.session_state["selection"]["label"] == "uploaded: mixed"
    d = at.session_state["selection"]["dict"]
    assert d["protocol"] == "crossfit" and d["deployed_risk"]["method"] == "bbc"
    # the baselines table lists every recipe the result carries
    shown = [df.value for df in at.dataframe if "baseline" in df.value.columns]
    assert shown and list(shown[0]["baseline"]) == [b["label"] for b in d["baselines"]]


def test_select_page_runs_the_paper_protocol_on_request(upload_csv_bytes):
    at = page("select")
    by_label(at.selectbox, "protocol").set_value("split")
    by_label(at.selectbox, "choice rule").set_value("argmin")
    _select(at)
    d = at.session_state["selection"]["dict"]
    assert d["protocol"] == "split" and d["choice"] == "argmin" and d["selected"]["family"] != "tie_average"


def test_bad_upload_shows_the_library_message():
    at = page("upload")
    bad = b"item_id,label,j1\n1,1,A\n2,0,B,extra\n"
    at.file_uploader[0].set_value(("bad.csv", bad, "text/csv")).run()
    assert not at.exception
    assert at.error and "line 3" in at.error[0].value and "expected 3 fields" in at.error[0].value


def test_select_then_regime_audit_and_sweep_pages():
    at = page("select")
    _select(at)
    assert at.session_state["selection"]["dict"]["menu_size"] > 0
    at.switch_page("app_pages/regime.py").run()
    assert not at.exception and len(at.get("plotly_chart")) >= 1
    at.switch_page("app_pages/audit.py").run()
    assert not at.exception
    assert len(at.dataframe) >= 1
    cells = at.dataframe[0].value      # the default blocks hold no T: no column of "None" for it
    assert "share of T rows" not in cells.columns and not cells.isna().any().any()
    at.switch_page("app_pages/regime.py").run()
    _sweep(at, "20,60", 2)
    assert len(at.session_state["sweep"]["data"]["cells"]) == 2
    at.switch_page("app_pages/gaps.py").run()
    assert not at.exception and len(at.dataframe) == 1 and len(at.get("plotly_chart")) == 4


def test_synthetic_lab_shows_the_winner_by_budget():
    at = page("lab")
    by_label(at.selectbox, "regime").set_value("xor")
    by_label(at.number_input, "rows").set_value(1000)
    by_label(at.number_input, "judges").set_value(3)
    by_label(at.text_input, "n_M budgets").set_value("16,200")
    by_label(at.number_input, "splits").set_value(2)
    by_label(at.button, "Generate and sweep").click().run()
    assert not at.exception, at.exception
    assert "n_M=200: table" in at.markdown[-1].value or any("n_M=200: table" in m.value for m in at.markdown)


def test_overview_lists_the_store_and_opens_the_demo():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    names = at.dataframe[0].value["name"].tolist()
    assert "synthetic-parity" in names and "llmbar" in names
    assert len(at.dataframe[1].value) >= 1                   # latest runs
    assert not at.dataframe[1].value.isna().any().any()      # a sweep's empty cells shown blank or "–"
    by_label(at.button, "Open the demo (selection and sweep)").click().run()
    assert not at.exception, at.exception
    assert at.session_state["current_panel"] == "stored: synthetic-parity"
    assert len(at.session_state["sweep"]["data"]["cells"]) == 2
    assert at.session_state["selection"]["label"] == "stored: synthetic-parity"
    assert at.title[0].value == "Select a panel and aggregator"


def test_results_browser_deep_link_filters_and_comparison(seeded_store):
    from fcps_core.store import Store
    runs = Store(seeded_store).runs()
    select_run = next(r["run_id"] for r in runs if r["kind"] == "select")
    sweep_run = next(r["run_id"] for r in runs if r["kind"] == "sweep")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = str(select_run)
    at.run()
    at.switch_page("app_pages/results.py").run()
    assert not at.exception, at.exception
    assert by_label(at.multiselect, "Open runs (two or more: side by side)").value == [select_run]
    assert any(f"Run {select_run}" in m.value for m in at.markdown)
    by_label(at.multiselect, "kind").set_value(["sweep"]).run()
    assert set(at.dataframe[0].value["kind"]) == {"sweep"}
    by_label(at.multiselect, "Open runs (two or more: side by side)").set_value([select_run, sweep_run]).run()
    assert not at.exception
    assert at.query_params["compare"] in (f"{select_run},{sweep_run}", [f"{select_run},{sweep_run}"])
    assert sum(f"Run {i}" in m.value for m in at.markdown for i in (select_run, sweep_run)) == 2


def test_upload_saves_to_the_store_and_selections_are_stored_runs(upload_csv_bytes, seeded_store):
    from fcps_core.store import Store
    at = page("upload")
    at.file_uploader[0].set_value(("kept.csv", upload_csv_bytes, "text/csv")).run()
    by_label(at.text_input, "Name").set_value("kept-panel")
    by_label(at.button, "Save to the store").click().run()
    assert not at.exception and not at.error, at.error
    assert Store(seeded_store).has_panel("kept-panel")
    at.switch_page("app_pages/select.py").run()
    assert by_label(at.selectbox, "Panel").value == "stored: kept-panel"
    _select(at)
    run_id = at.session_state["selection"]["run_id"]
    stored = Store(seeded_store).run(run_id)
    assert stored["panel_name"] == "kept-panel" and stored["status"] == "done"
    assert stored["result"]["selected"]["family"] == at.session_state["selection"]["dict"]["selected"]["family"]


def test_dashboard_saves_use_the_import_checks(seeded_store):
    """A panel the CLI import rejects (one label value) is rejected by the dashboard too."""
    from fcps_core.store import Store
    at = page("upload")
    one_class = "item_id,label,j1,j2\n" + "".join(f"{i},1,{'A' if i % 2 else 'B'},A\n" for i in range(30))
    at.file_uploader[0].set_value(("oneclass.csv", one_class.encode(), "text/csv")).run()
    by_label(at.text_input, "Name").set_value("one-class")
    by_label(at.button, "Save to the store").click().run()
    assert not at.exception
    assert at.error and "same label" in at.error[0].value
    assert not Store(seeded_store).has_panel("one-class")
    assert (Path(seeded_store).parent / "uploads").is_dir()


def test_csv_downloads_neutralise_formulas():
    import pandas as pd
    from fcps_app import common
    captured = {}
    original = common.st.download_button
    common.st.download_button = lambda label, data, *a, **k: captured.setdefault("csv", data)
    try:
        common.table_download(pd.DataFrame({"pattern": ['=HYPERLINK("http://x")|A', "A|B"], "N_z": [3, 4]}), "t")
    finally:
        common.st.download_button = original
    text = captured["csv"]
    assert "'=HYPERLINK" in text
    assert not any(line.startswith("=") for line in text.splitlines())


def test_deploy_page_audits_uploaded_traffic_and_stores_the_audit(seeded_store):
    from fcps_core.store import Store
    store = Store(seeded_store)
    run = next(r for r in store.runs(kind="select") if r["status"] == "done")
    traffic = store.export_panel(run["panel"], "csv")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = str(run["run_id"])
    at.run()
    at.switch_page("app_pages/deploy.py").run()
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Deploy").value.startswith(f"run {run['run_id']} ")
    at.file_uploader[0].set_value(("traffic.csv", traffic, "text/csv")).run()
    assert not at.exception, at.exception
    assert [s.value for s in at.subheader][:4] == ["1. Predictor", "2. Traffic", "3. Audit", "4. Use it"]
    status = (at.success or at.warning or at.error)[0].value
    assert status.startswith(("**OK**", "**WARN**", "**REFUSE**"))
    # traffic = the calibration panel itself: every pattern was seen, nothing is missing beyond it
    assert "0.0%" == next(m.value for m in at.metric if m.label == "unseen patterns")
    by_label(at.button, "Store this audit").click().run()
    assert not at.exception and not at.error, at.error
    audits = store.runs(kind="audit")
    assert len(audits) == 1 and audits[0]["panel"] == run["panel"]
    assert by_label(at.selectbox, "Open a stored audit").value == audits[0]["run_id"]
    at.query_params["run"] = str(audits[0]["run_id"])
    at.switch_page("app_pages/results.py").run()
    assert not at.exception, at.exception
    assert any("audit on" in m.value for m in at.markdown)


def test_deploy_page_refuses_a_broken_predictor_file():
    """A broken or tampered upload is refused on upload, in one line naming it, before any
    traffic is asked for (a 5,000-digit integer and deep nesting included)."""
    at = page("deploy")
    by_label(at.selectbox, "Deploy").set_value("upload a predictor file (JSON)").run()
    for data, words in ((b'{"format": "nope"}', "not an fcps predictor file"),
                        (b'{"format_version": ' + b"7" * 5000 + b"}", "integer of 5,000 digits"),
                        (b"[" * 50_000 + b"]" * 50_000, "nests deeper than")):
        at.file_uploader[0].set_value(("p.json", data, "application/json")).run()
        assert not at.exception
        shown = at.error[0].value.replace("\\", "") if at.error else ""     # Markdown escapes removed
        assert words in shown and "'p.json'" in shown
        assert len(at.file_uploader) == 1          # no traffic uploader: the page stopped


def test_select_page_uses_stored_costs_and_shows_the_pareto_chart(upload_csv_bytes, seeded_store):
    from fcps_core.store import Store
    store = Store(seeded_store)
    at = page("upload")
    at.file_uploader[0].set_value(("costed.csv", upload_csv_bytes, "text/csv")).run()
    by_label(at.text_input, "Name").set_value("costed")
    by_label(at.button, "Save to the store").click().run()
    judges = [j["name"] for j in store.panel_info("costed")["judges"]]
    store.set_judge_costs("costed", {j: {"cost": float(i + 1), "latency": 0.5} for i, j in enumerate(judges)})
    at.switch_page("app_pages/select.py").run()
    assert by_label(at.selectbox, "Panel").value == "stored: costed"
    by_label(at.selectbox, "choice rule").set_value("cheapest_tied")
    _select(at)
    d = at.session_state["selection"]["dict"]
    assert d["choice"] == "cheapest_tied" and d["costs"]["cheapest_tied"]["index"] == d["selected"]["index"]
    assert any(m.value.startswith("**Cost** of the deployed choice") for m in at.markdown)
    assert "cost_aware" in d["menu"]["paths"]


def test_a_budget_without_judge_costs_names_the_pages_costs_table(upload_csv_bytes, seeded_store):
    """Walk 5 (2,000-item rubric panel, two judge costs not yet filled in): 'budget per item' 3 and
    Run selection answered "a budget needs judge costs (--judge-costs FILE with judge,cost,latency
    rows, or costs stored with the panel)", the command line's words, under a progress bar left at
    "starting". The page names its own costs table, and runs nothing."""
    at = page("upload")
    at.file_uploader[0].set_value(("nocosts.csv", upload_csv_bytes, "text/csv")).run()
    by_label(at.text_input, "Name").set_value("nocosts")
    by_label(at.button, "Save to the store").click().run()
    at.switch_page("app_pages/select.py").run()
    assert by_label(at.selectbox, "Panel").value == "stored: nocosts"
    by_label(at.number_input, "budget per item (0 = no limit)").set_value(3.0)
    by_label(at.button, "Run selection").click().run()
    assert not at.exception, at.exception
    errors = [e.value for e in at.error]
    assert errors == ["A budget needs every judge's cost: fill in the table under 'Judge costs (optional)' above "
                      "(0 for a free judge), or set the budget to 0."], errors
    assert not any("--judge-costs" in e for e in errors)
    assert "selection" not in at.session_state


def test_next_judge_page_runs_or_reuses_the_selection_and_plans():
    at = page("plan")
    # no selection in this session: the page runs one itself, which the session then reuses
    by_label(at.multiselect, "families").set_value(["table", "logistic"])
    by_label(at.number_input, "K max (0 = whole pool)").set_value(2)
    by_label(at.button, "Run selection").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert at.session_state["selection"]["label"] == by_label(at.selectbox, "Panel").value
    assert not [b for b in at.button if b.label == "Run selection"]
    by_label(at.button, "Plan the next judge").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert [s.value for s in at.subheader][:2] == ["Add or drop one judge", "Calibrate, don't curate"]
    plan = at.session_state["next_judge"]["dict"]
    deployed = at.session_state["selection"]["dict"]["selected"]
    assert plan["deployed"]["K"] <= deployed["K"] and plan["add"] and len(at.get("plotly_chart")) == 2
    assert len(at.dataframe[0].value) == len(plan["add"]) + len(plan["drop"])
    # the metrics name the families as the chart does (a browser walk read "whole pool (8 judges, one_coin_iso)")
    from fcps_core.service.reports import FAMILY_NAMES
    c = plan["calibrate_vs_curate"]
    c["pool"]["family"], c["curated"]["family"] = "one_coin_iso", "ridge_iso"     # ids unlike their names
    at.run()
    assert not at.exception, at.exception
    labels = [m.label for m in at.metric]
    assert f"whole pool ({c['pool']['n_judges']} judges, {FAMILY_NAMES[c['pool']['family']]})" in labels, labels
    assert f"curated top-{c['curated']['k']} ({FAMILY_NAMES[c['curated']['family']]})" in labels, labels


def test_regime_page_plans_the_next_labels_from_a_sweep():
    at = page("regime")
    _sweep(at, "20,40,80", 3)
    assert "Plan the next labels" in [s.value for s in at.subheader]
    plan = at.session_state["sweep"]["data"]["plan"]
    assert plan["status"] == "ok" and plan["delta"] == 80
    answers = [m.value for m in at.markdown if "more labels" in m.value]
    assert answers == [f"**{plan['answer']}**"] and answers[0].startswith("**With 80 more labels (n_M = 160)")
    charts = len(at.get("plotly_chart"))
    assert charts >= 4                                   # three sweep figures and the plan's curves
    by_label(at.number_input, "more calibration labels (delta)").set_value(40).run()
    assert not at.exception, at.exception
    answers = [m.value for m in at.markdown if "more labels" in m.value]
    assert len(answers) == 1 and answers[0].startswith("**With 40 more labels (n_M = 120)")
    assert len(at.get("plotly_chart")) == charts


def test_judges_page_renders_without_and_with_a_selection():
    at = page("judges")
    # no selection yet: the per-judge table and the matrices, and a pointer to the Select page
    assert not at.error and any("run a selection on the Select page" in i.value for i in at.info)
    assert len(at.get("plotly_chart")) == 1 and len(at.dataframe) >= 1
    assert any(m.label == "effective number of judges" and m.help for m in at.metric)
    by_label(at.radio, "Matrix").set_value("error correlation").run()
    assert not at.exception and len(at.get("plotly_chart")) == 1
    at.switch_page("app_pages/select.py").run()
    _select(at)
    at.switch_page("app_pages/judges.py").run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert [s.value for s in at.subheader][-2:] == ["Contribution to the deployed predictor",
                                                     "Calibration of the deployed predictor"]
    assert len(at.get("plotly_chart")) == 2 and {"ECE", "Brier score", "base rate's Brier"} <= {m.label for m in at.metric}
    deployed = at.session_state["selection"]["dict"]["selected"]["judges"]
    contributions = at.dataframe[-1].value
    # every judge the deployment calls has a row with its drop-one change (no refit, no button)
    assert set(contributions["judge"]) == set(deployed) and not at.button
    contrib = at.session_state["selection"]["dict"]["judges_report"]["contribution"]
    shown = contributions.set_index("judge")
    for j in contrib["judges"]:
        if j["drop_risk_change"] is None:
            assert j["drop_note"] and shown.loc[j["judge"], "deployed without it"] == j["drop_note"]
        else:
            assert shown.loc[j["judge"], "drop-one change"] == pytest.approx(j["drop_risk_change"])
    assert contributions["drop-one change"].notna().sum() == sum(j["drop_risk_change"] is not None
                                                                  for j in contrib["judges"])
