"""AppTest: the pages render and a selection runs in-process."""

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def test_overview_renders():
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert "Finite-Calibration Panel Selection" in at.title[0].value


def test_select_page_runs_a_selection():
    at = AppTest.from_file(APP, default_timeout=120).run()
    at.switch_page("pages/select.py").run()
    assert not at.exception
    at.multiselect[0].set_value(["table", "logistic", "one_coin_iso"])
    at.number_input[1].set_value(4)          # K max
    at.button[0].click().run()
    assert not at.exception
    assert at.subheader and at.subheader[0].value.startswith("Selected:")
    assert at.session_state["result"]["menu_size"] > 0
