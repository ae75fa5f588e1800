"""AppTest: every page renders; upload, selection, sweep and audit flows work in-process."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from fcps_core.io import write_wide_csv
from fcps_core.synthetic import make_regime

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300


def by_label(widgets, label):
    for w in widgets:
        if w.label == label:
            return w
    raise AssertionError(f"no widget labelled {label!r}: {[w.label for w in widgets]}")


def page(name: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def panel_csv(tmp_path_factory) -> bytes:
    path = tmp_path_factory.mktemp("up") / "mixed.csv"
    write_wide_csv(make_regime("mixed", rows=600, judges=4, seed=3, tie_rate=0.05), str(path))
    return path.read_bytes()


def test_overview_renders():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "Finite-Calibration Panel Selection" in at.title[0].value


@pytest.mark.parametrize("name", ["upload", "select", "regime", "audit", "gaps", "lab"])
def test_every_page_renders_without_state(name):
    page(name)


def _select(at: AppTest, families=("table", "logistic", "one_coin_iso")) -> AppTest:
    by_label(at.multiselect, "families").set_value(list(families))
    by_label(at.number_input, "K max (0 = whole pool)").set_value(3)
    at.button[0].click().run()
    assert not at.exception, at.exception
    return at


def test_upload_then_select_the_uploaded_panel(panel_csv):
    at = page("upload")
    at.file_uploader[0].set_value(("mixed.csv", panel_csv, "text/csv")).run()
    assert not at.exception and not at.error
    assert "600 rows" in at.success[0].value
    by_label(at.button, "Use this panel").click().run()
    assert "mixed" in at.session_state["uploads"]
    at.switch_page("pages/select.py").run()
    by_label(at.selectbox, "Panel").set_value("uploaded: mixed").run()
    _select(at)
    assert at.subheader[0].value.startswith("Selected:")
    assert at.session_state["selection"]["label"] == "uploaded: mixed"


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
    at.switch_page("pages/regime.py").run()
    assert not at.exception and len(at.get("plotly_chart")) >= 1
    at.switch_page("pages/audit.py").run()
    assert not at.exception
    assert len(at.dataframe) >= 1
    at.switch_page("pages/regime.py").run()
    by_label(at.text_input, "n_M budgets").set_value("20,60")
    by_label(at.number_input, "splits").set_value(2)
    by_label(at.multiselect, "families").set_value(["table", "logistic"])
    by_label(at.number_input, "K max").set_value(3)
    by_label(at.button, "Run sweep").click().run()
    assert not at.exception, at.exception
    assert len(at.session_state["sweep"]["data"]["cells"]) == 2
    at.switch_page("pages/gaps.py").run()
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
