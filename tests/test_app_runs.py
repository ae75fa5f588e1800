"""AppTest: the analysis pages read stored runs (panel + run pickers, ``?run=`` links that
survive a rerun and a reload), bad links give one error line, the Synthetic lab stores its
own panel and run, and every table column and metric on these pages carries glossary help.

The seeded store (``store_helpers.demo_store``): run 1 = selection on llmbar, run 2 =
selection on synthetic-parity, run 3 = sweep (budgets 50, 200; 2 splits) on synthetic-parity.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import help_problems, by_label, seeded_app_store

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
TIMEOUT = 300
PARITY = "stored: synthetic-parity"


@pytest.fixture(scope="module", autouse=True)
def seeded_store(tmp_path_factory):
    yield from seeded_app_store(tmp_path_factory)


@pytest.fixture(autouse=True)
def fresh_caches():
    """Cached stored runs from another test's store never leak into this one."""
    import streamlit as st
    st.cache_data.clear()
    yield


def page(name: str, run: str | None = None, **state) -> AppTest:
    """One page file run on its own, as a browser opening ``/name?run=RUN`` would."""
    at = AppTest.from_file(str(ROOT / "app_pages" / f"{name}.py"), default_timeout=TIMEOUT)
    if run is not None:
        at.query_params["run"] = run
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def test_run_picker_lists_this_panels_stored_runs_newest_first():
    at = page("regime", "3")
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Panel").value == PARITY
    options = by_label(at.selectbox, "Run").options
    assert len(options) == 2, options                      # run 1 belongs to llmbar: not listed
    assert options[0].startswith("run 3 · sweep · ") and options[0].split(" · ")[3] == "2 budgets x 2 splits"
    assert options[1].startswith("run 2 · selection · ")
    # each page lists only its kind
    gaps = page("gaps", "3")
    assert [o.split(" · ")[:2] for o in by_label(gaps.selectbox, "Run").options] == [["run 3", "sweep"]]
    audit = page("audit", "2")
    assert [o.split(" · ")[:2] for o in by_label(audit.selectbox, "Run").options] == [["run 2", "selection"]]
    # picking a run writes it to the address
    by_label(at.selectbox, "Run").set_value(2).run()
    assert not at.exception, at.exception
    assert _qp(at) == "2"


def _qp(at: AppTest) -> str | None:
    value = at.query_params.get("run")
    return value[0] if isinstance(value, list) else value


@pytest.mark.parametrize("name, run", [("regime", 3), ("regime", 2), ("audit", 2), ("gaps", 3)])
def test_link_opens_the_run_and_survives_a_rerun_and_a_reload(name, run):
    # the session was on another panel: the link opens its run's panel
    at = page(name, str(run), current_panel="stored: llmbar")

    def check(at):
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        assert by_label(at.selectbox, "Panel").value == PARITY
        assert by_label(at.selectbox, "Run").value == run
        assert _qp(at) == str(run)
        if name == "gaps":
            assert at.dataframe[0].value["n_M"].tolist() == [50, 200]
            assert len(at.get("plotly_chart")) == 4
        elif name == "audit":
            assert by_label(at.selectbox, "Candidate").value == _audited_default(run)
            if _audited_default(run) == _stored_selected(run):      # its cells are stored with the run
                stored_cells = _stored_run(run)["result"]["cells"]
                assert len(at.dataframe) == 1 and len(at.dataframe[0].value) == len(stored_cells) > 0
            else:                                                   # a scalar selection keeps no table cells
                assert not at.dataframe and any("selected candidate only" in i.value for i in at.info)
        else:
            assert len(at.get("plotly_chart")) >= 4                   # map + three growth charts
            text = " ".join(c.value for c in at.caption)
            assert "validation risk" in text and "test risk" in text
            assert f"{'sweep' if run == 3 else 'selection'} run {run}" in text

    check(at)
    check(at.run())                                   # a rerun
    check(page(name, str(run)))                       # a reload: a new session, only the address


def test_changing_the_panel_after_a_link_is_not_undone_by_the_link():
    at = page("regime", "3")
    by_label(at.selectbox, "Panel").set_value("stored: llmbar").run()
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Panel").value == "stored: llmbar"
    assert by_label(at.selectbox, "Run").value == 1 and _qp(at) == "1"
    at.run()
    assert by_label(at.selectbox, "Panel").value == "stored: llmbar"


@pytest.mark.parametrize("name, raw, words", [
    ("audit", "3", "Run 3 is a sweep run; this page opens selection runs"),
    ("gaps", "2", "Run 2 is a selection run; this page opens sweep runs"),
    ("regime", "999", "Run 999 is not in the store"),
    ("gaps", "abc", "'abc' is not a run number"),
    ("audit", "99999999999999999999", "is not a run number"),
])
def test_a_bad_or_wrong_kind_link_gives_one_error_line(name, raw, words):
    at = page(name, raw)
    assert not at.exception, at.exception
    assert len(at.error) == 1, [e.value for e in at.error]
    assert words in at.error[0].value and "\n" not in at.error[0].value
    at.run()                                          # and the page goes on working
    assert not at.exception, at.exception


def test_this_sessions_unsaved_result_is_offered_on_an_uploaded_panel(upload_csv_bytes, seeded_store):
    from fcps_core.store import Store
    data = Store(seeded_store).run(3)["result"]
    uploads = {"mixed": ("mixed.csv", upload_csv_bytes, "{}")}
    at = page("gaps", uploads=uploads, current_panel="uploaded: mixed",
              sweep={"label": "uploaded: mixed", "data": data, "run_id": None})
    assert not at.exception, at.exception
    pick = by_label(at.selectbox, "Run")
    assert pick.options == ["this session's sweep (not stored)"]
    assert _qp(at) is None
    assert at.dataframe[0].value["n_M"].tolist() == [50, 200]


def _stored_run(run_id: int) -> dict:
    from fcps_core.store import Store
    return Store(os.environ["FCPS_STORE"]).run(run_id)


def _stored_selected(run_id: int) -> int:
    """The candidate index a stored selection run deployed (read from the store, not
    hard-coded: the seeded panel and engine decide it)."""
    return int(_stored_run(run_id)["result"]["selected"]["index"])


def _audited_default(run_id: int) -> int:
    """The candidate the audit opens on: the deployed one (or the deployed average's first
    table-like member) when table-like, else the table-like candidate of lowest held-out risk."""
    d = _stored_run(run_id)["result"]
    table_ids = set(_candidate_indices(None, run_id))
    deployed = [m["index"] for m in d["selected"].get("members") or []] or [d["selected"]["index"]]
    tables = [i for i in deployed if i in table_ids]
    if tables:
        return tables[0]
    cands = [c for c in d["candidates"] if c["index"] in table_ids]
    return min(cands, key=lambda c: c.get("val_risk", c.get("val_mse")))["index"]


def test_a_stored_selection_audits_only_its_selected_candidates_cells():
    at = page("audit", "2")
    box = by_label(at.selectbox, "Candidate")
    chosen, default = _stored_selected(2), _audited_default(2)
    assert box.value == default
    assert len(box.options) == len(_candidate_indices(at))       # table-like candidates only, in menu order
    if chosen == default:
        assert "(selected)" in box.options[_candidate_indices(at).index(chosen)] and at.dataframe
        box.set_value(next(i for i in _candidate_indices(at) if i != chosen)).run()
    assert not at.exception, at.exception
    assert not at.dataframe
    assert any("selected candidate only" in i.value for i in at.info)
    assert len(at.metric) == 14 and len(at.get("plotly_chart")) == 2     # its stored figures still show


def _candidate_indices(at: AppTest | None, run_id: int = 2) -> list[int]:
    """The candidates the audit lists: table-like ones with a pattern table."""
    from fcps_core.families import REGISTRY
    d = _stored_run(run_id)["result"]
    return [c["index"] for c in d["candidates"] if c["H_K"] is not None and REGISTRY[c["family"]].table_like]


@pytest.mark.parametrize("name, run, tables, metrics", [
    ("regime", "3", 0, 3), ("audit", "2", None, 14), ("audit", "1", None, 14), ("gaps", "3", 1, 0)])
def test_every_table_column_and_metric_has_glossary_help(name, run, tables, metrics):
    at = page(name, run)
    assert not at.exception, at.exception
    if tables is None:      # the audit's cell table: when its candidate's cells are stored with the run
        tables = int(_audited_default(int(run)) == _stored_selected(int(run)))
    assert len(at.dataframe) == tables and len(at.metric) == metrics
    assert help_problems(at) == []
    assert any(e.label.startswith("Glossary") for e in at.expander)


def test_help_check_can_fail():
    """The check above flags a bare st.dataframe and a metric without help."""
    at = AppTest.from_string("import pandas as pd, streamlit as st\n"
                             "st.dataframe(pd.DataFrame({'N_z': [1], 'odd column': [2]}))\n"
                             "st.metric('H_K', 3)\n").run()
    problems = help_problems(at)
    assert any("'N_z'" in p for p in problems) and any("'odd column'" in p for p in problems)
    assert any("metric 'H_K'" in p for p in problems)


def test_lab_run_is_stored_as_its_own_panel_and_leaves_the_users_sweep(seeded_store):
    from fcps_core.store import Store
    store = Store(seeded_store)
    users = {"label": PARITY, "data": store.run(3)["result"], "run_id": 3}
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.session_state["sweep"] = users
    at.session_state["current_panel"] = PARITY
    at.run()
    at.switch_page("app_pages/lab.py").run()
    assert not at.exception, at.exception
    by_label(at.selectbox, "regime").set_value("xor")
    by_label(at.number_input, "rows").set_value(1000)
    by_label(at.number_input, "judges").set_value(3)
    by_label(at.text_input, "n_M budgets").set_value("16,200")
    by_label(at.number_input, "splits").set_value(2)
    by_label(at.button, "Generate and sweep").click().run()
    assert not at.exception, at.exception
    name = "lab-xor-j3-r1000-s0"
    assert store.has_panel(name)
    runs = store.runs(panel=name)
    assert [r["kind"] for r in runs] == ["sweep"]
    lab_run = runs[0]["run_id"]
    # the user's sweep and panel are untouched; the lab keeps its own state
    assert at.session_state["sweep"] is users or at.session_state["sweep"] == users
    assert at.session_state["sweep"]["run_id"] == 3
    assert at.session_state["current_panel"] == PARITY
    assert at.session_state["lab_sweep"]["run_id"] == lab_run
    assert at.session_state["lab_sweep"]["label"] == f"stored: {name}"
    assert _qp(at) == str(lab_run)
    links = [(p.proto.label, p.proto.page) for p in at.get("page_link")]
    assert any("Regime map" in lbl for lbl, _ in links) and any("Scalar vs table gaps" in lbl for lbl, _ in links)
    assert all(p.proto.query_string == f"run={lab_run}" for p in at.get("page_link"))
    # the lab run opens on the Gaps page like any stored run
    gaps = page("gaps", str(lab_run))
    assert not gaps.exception and not gaps.error
    assert by_label(gaps.selectbox, "Panel").value == f"stored: {name}"
    assert gaps.dataframe[0].value["n_M"].tolist() == [16, 200]
    # a reload of the lab page (address only) shows the lab run again
    again = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    again.switch_page("app_pages/lab.py")
    again.query_params["run"] = str(lab_run)
    again.run()
    assert not again.exception and not again.error
    assert any("n_M=200" in m.value for m in again.markdown)


def test_a_generated_panel_is_reused_and_never_replaces_another(seeded_store):
    from fcps_core.store import Store
    from fcps_core.paper.synthetic import make_regime
    from fcps_app.runs import store_generated_panel
    store = Store(seeded_store)
    one = make_regime("and", rows=600, judges=3, seed=1)
    name, version = store_generated_panel(one, "lab-and-test", {"regime": "and"})
    assert name == "lab-and-test"
    assert store_generated_panel(one, "lab-and-test", {"regime": "and"}) == (name, version)
    other = make_regime("and", rows=600, judges=3, seed=2)
    name2, version2 = store_generated_panel(other, "lab-and-test", {"regime": "and"})
    assert name2 == "lab-and-test-2" and version2 != version
    assert store.panel_info("lab-and-test")["version"] == version


def test_new_work_of_this_session_is_shown_before_the_run_viewed_last(seeded_store):
    from fcps_core.store import Store
    at = page("gaps", "3")
    assert by_label(at.selectbox, "Run").value == 3
    # a sweep just made elsewhere in this session (unsaved); the sidebar drops the address's ?run=
    at.session_state["sweep"] = {"label": PARITY, "data": Store(seeded_store).run(3)["result"], "run_id": None}
    at.query_params.clear()
    at.run()
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Run").value == "session:sweep" and _qp(at) is None
    by_label(at.selectbox, "Run").set_value(3).run()          # the user goes back to the stored run
    assert by_label(at.selectbox, "Run").value == 3 and _qp(at) == "3"
    at.run()
    assert by_label(at.selectbox, "Run").value == 3


def test_a_run_caption_says_what_was_chosen_from_the_menu(monkeypatch):
    """Walk 2 (rubric_40x300.d2, the Regime map's run control): "run 13 · selection · ... ·
    average of 10 models over 39 judges, held-out MSE 0.0085, statistically tied of 1,128
    candidates" -- ten models tied among themselves, picked from 1,128, read as tied with all
    1,128. Said as what was picked from the menu."""
    import fcps_app.runs as runs
    members = [{"family": "logistic", "K": 13, "index": 1, "weight": 0.5},
               {"family": "mean_iso", "K": 9, "index": 2, "weight": 0.5}]
    average = {"kind": "select", "status": "done", "finished_at": "2026-11-26 19:20:00", "label": "",
               "result": {"menu_size": 1128, "selected": {"family": "tie_average", "K": 39, "val_mse": 0.0085,
                                                          "members": members}}}
    single = {**average, "result": {"menu_size": 1128, "selected": {"family": "logistic", "K": 3,
                                                                    "val_mse": 0.0137}}}
    monkeypatch.setattr(runs, "stored_run", lambda run_id: average if run_id == 13 else single)
    said = runs.run_caption(13)
    assert "tied of" not in said
    assert said.endswith("average of 2 models over 39 judges, held-out MSE 0.0085, "
                         "statistically tied models picked from 1,128 candidates")
    assert runs.run_caption(14).endswith("logistic K=3, held-out MSE 0.0137, chosen from 1,128 candidates")
