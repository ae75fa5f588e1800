"""AppTest of the Overview (the workflow in plain words, "Upload your panel" and "Open the
demo", which opens the demo's stored selection *and* sweep) and of the glossary help on every
metric and table column of the Overview, Judges, Next judge and Deploy pages."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import help_problems, by_label, seeded_app_store

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300
DEMO = "synthetic-parity"


@pytest.fixture(scope="module", autouse=True)
def seeded_store(tmp_path_factory):
    yield from seeded_app_store(tmp_path_factory)


def overview() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception, at.exception
    return at


def test_the_overview_states_the_workflow_with_two_primary_buttons():
    at = overview()
    text = " ".join(m.value for m in at.markdown)
    for step in ("Upload your panel", "Select", "Judges", "Regime map", "Deploy & monitor"):
        assert step in text
    upload = by_label(at.button, "Upload your panel")
    demo = by_label(at.button, "Open the demo (selection and sweep)")
    assert upload.proto.type == demo.proto.type == "primary"
    assert any(e.label.startswith("Glossary") for e in at.expander)
    assert help_problems(at) == [] and len(at.dataframe) == 2
    upload.click().run()
    assert not at.exception and at.title[0].value == "Upload a panel"


def test_open_the_demo_opens_its_stored_selection_and_sweep(seeded_store):
    from fcps_core.store import Store
    runs = Store(seeded_store).runs(panel=DEMO)
    sel_id = next(r["run_id"] for r in runs if r["kind"] == "select" and r["status"] == "done")
    sweep_id = next(r["run_id"] for r in runs if r["kind"] == "sweep" and r["status"] == "done")
    at = overview()
    by_label(at.button, "Open the demo (selection and sweep)").click().run()
    assert not at.exception, at.exception
    state = at.session_state
    assert state["selection"]["run_id"] == sel_id and state["selection"]["label"] == f"stored: {DEMO}"
    assert state["sweep"]["run_id"] == sweep_id and len(state["sweep"]["data"]["cells"]) == 2
    assert state["current_panel"] == f"stored: {DEMO}"
    assert at.title[0].value == "Select a panel and aggregator"
    assert at.query_params["run"] in (str(sel_id), [str(sel_id)])


# -- glossary help on the pages this change touched -------------------------------------------------

def test_judges_page_metrics_and_columns_have_help():
    at = overview()
    at.switch_page("app_pages/judges.py").run()
    assert not at.exception, at.exception
    assert at.metric and at.dataframe
    assert help_problems(at) == []
    assert any(e.label.startswith("Glossary") for e in at.expander)


def test_next_judge_and_deploy_pages_metrics_and_columns_have_help(seeded_store):
    at = overview()
    at.switch_page("app_pages/plan.py").run()
    by_label(at.multiselect, "families").set_value(["table", "logistic"])
    by_label(at.number_input, "K max (0 = whole pool)").set_value(2)
    by_label(at.button, "Run selection").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    by_label(at.button, "Plan the next judge").click().run()
    assert not at.exception and not at.error, (at.exception, at.error)
    assert len(at.metric) == 7 and at.dataframe
    assert help_problems(at) == []

    from fcps_core.store import Store
    store = Store(seeded_store)
    run = next(r for r in store.runs(kind="select") if r["status"] == "done")
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["run"] = str(run["run_id"])
    at.run()
    at.switch_page("app_pages/deploy.py").run()
    at.file_uploader[0].set_value(("traffic.csv", store.export_panel(run["panel"], "csv"), "text/csv")).run()
    assert not at.exception, at.exception
    assert len(at.metric) == 5 and len(at.dataframe) == 2
    assert help_problems(at) == []


def test_the_stored_panels_table_has_words_for_headers():
    """Issue 24 walk 2: the Overview's stored-panels table had the store's keys as headers
    (n_rows, n_labelled, n_judges, created_at), as the runs tables had before the first walk."""
    at = overview()
    panels = next(df.value for df in at.dataframe if "name" in df.value.columns and "schema" in df.value.columns)
    assert not [c for c in panels.columns if "_" in str(c)], list(panels.columns)
    assert {"rows", "labelled", "judges", "stored"} <= set(panels.columns), list(panels.columns)
