"""AppTest of the Label next page: choose a batch of a stored panel's unlabelled items, upload
the labelled batch back (merged into the stored panel by item id), and see the decision
before and after; bad uploads (unknown ids, changed judge outputs, a differing label without
confirmation) are refused with one error and leave the stored panel as it was."""

from __future__ import annotations

import csv
import json
import io
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import app_store, by_label
from store_helpers import csv_text, good_rows, write

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300
NAME = "to_label"


@pytest.fixture(scope="module")
def truth_and_store(tmp_path_factory):
    """A fresh store holding one pairwise panel: 160 items, the first 60 labelled."""
    from fcps_core.ingest import load_panel
    from fcps_core.store import Store
    tmp = tmp_path_factory.mktemp("label_next")
    rows = good_rows(160, seed=3)
    truth = {r[0]: r[2] for r in rows[1:]}
    for r in rows[61:]:
        r[2] = ""
    path = write(tmp / "panel.csv", csv_text(rows))
    store_path = tmp / "fcps.duckdb"
    store = Store(store_path)
    store.set_meta("seed_version", "test")     # the app seeds a store without this mark
    store.add_panel(load_panel(str(path)), name=NAME)
    for p in app_store(store_path):
        yield truth, store_path
        break


def _open() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/label_next.py").run()
    assert not at.exception, at.exception
    by_label(at.selectbox, "Stored panel").set_value(NAME).run()
    return at


def _filled(csv_data: str, truth: dict, *, change=None) -> bytes:
    rows = list(csv.reader(io.StringIO(csv_data)))
    header = rows[0]
    for r in rows[1:]:
        r[header.index("label")] = truth[r[0]]
        if change:
            change(header, r)
    buf = io.StringIO()
    csv.writer(buf).writerows(rows)
    return buf.getvalue().encode()


def _stored(store_path):
    from fcps_core.store import Store
    return Store(store_path).load_panel(NAME)


def test_choose_download_upload_and_see_the_decision_move(truth_and_store):
    truth, store_path = truth_and_store
    at = _open()
    by_label(at.number_input, "Batch size").set_value(12).run()
    by_label(at.checkbox, "Fixed audit share").check().run()
    by_label(at.button, "Choose the next items").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    state = at.session_state["label_next"]
    items = [i["item_id"] for i in state["items"]]
    before = _stored(store_path)
    unlabelled = {str(i) for i, y in zip(before.item_ids, before.labels) if np.isnan(y)}
    assert len(items) == 12 and len(set(items)) == 12 and set(items) <= unlabelled
    assert {i["chosen_by"] for i in state["items"]} == {"audit", "active"}

    # a bad upload first: an id the panel does not have -> one error, nothing stored
    bad = _filled(state["csv"], truth) + b"nope,gX,1,A,A,A,audit,,,x\n"
    at.file_uploader[0].set_value(("batch.csv", bad, "text/csv")).run()
    by_label(at.button, "Merge the labels into the panel").click().run()
    assert not at.exception, at.exception
    assert any("nope" in e.value and "not in panel" in e.value for e in at.error), [e.value for e in at.error]
    np.testing.assert_array_equal(_stored(store_path).labels, before.labels)

    # a changed judge output -> refused
    def flip(header, r):
        k = header.index("j1")
        r[k] = "B" if r[k] == "A" else "A"
    at.file_uploader[0].set_value(("batch.csv", _filled(state["csv"], truth, change=flip), "text/csv")).run()
    by_label(at.button, "Merge the labels into the panel").click().run()
    assert any("stored output" in e.value for e in at.error), [e.value for e in at.error]
    np.testing.assert_array_equal(_stored(store_path).labels, before.labels)

    # the good upload: merged, and the decision shown before and after
    at.file_uploader[0].set_value(("batch.csv", _filled(state["csv"], truth), "text/csv")).run()
    by_label(at.button, "Merge the labels into the panel").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    after = _stored(store_path)
    assert after.n_labelled == before.n_labelled + 12
    for item in items:
        k = list(after.item_ids).index(item)
        assert after.labels[k] == float(truth[item])
    labels = [m.label for m in at.metric]
    # the estimate on new items, named as on the Select page ("MSE on new items"; issue 24 walk 2: "deployed risk")
    assert "Before: MSE on new items" in labels and "After: MSE on new items" in labels
    done = at.session_state["label_next_merged"]
    assert done["after"]["n_labelled"] == done["before"]["n_labelled"] + 12


def test_a_differing_label_needs_confirmation(truth_and_store):
    truth, store_path = truth_and_store
    before = _stored(store_path)
    item = next(str(i) for i, y in zip(before.item_ids, before.labels) if not np.isnan(y))
    k = list(before.item_ids).index(item)
    flipped = "0" if before.labels[k] == 1.0 else "1"
    data = f"item_id,group_id,label\n{item},g,{flipped}\n".encode()
    at = _open()
    at.file_uploader[0].set_value(("fix.csv", data, "text/csv")).run()
    by_label(at.button, "Merge the labels into the panel").click().run()
    assert any("confirm" in e.value for e in at.error), [e.value for e in at.error]
    assert _stored(store_path).labels[k] == before.labels[k]
    by_label(at.checkbox, "Replace labels that differ from the stored ones").check().run()
    by_label(at.button, "Merge the labels into the panel").click().run()
    assert not at.error, [e.value for e in at.error]
    assert _stored(store_path).labels[k] == float(flipped)


def test_opens_on_the_panel_in_use(truth_and_store, tmp_path):
    """Issue 24: the page opens on the panel picked on the other pages, not the first stored one,
    and a panel picked here stays picked on the others."""
    from fcps_app.common import get_store
    from fcps_core.ingest import load_panel
    store = get_store()
    if "second_panel" not in [p["name"] for p in store.panels()]:
        store.add_panel(load_panel(str(write(tmp_path / "second.csv", csv_text(good_rows(40, seed=5))))),
                        name="second_panel")
    names = [p["name"] for p in store.panels()]
    in_use = next(n for n in names if n != names[0])          # not the page's old default
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.session_state["current_panel"] = f"stored: {in_use}"
    at.switch_page("app_pages/label_next.py").run()
    assert not at.exception, at.exception
    assert by_label(at.selectbox, "Stored panel").value == in_use
    by_label(at.selectbox, "Stored panel").set_value(names[0]).run()
    assert at.session_state["current_panel"] == f"stored: {names[0]}"


def test_the_chosen_items_print_each_gain_as_its_reason_does(truth_and_store):
    """Issue 24 walk: the chosen items' table printed every expected variance reduction as
    0.0000 beside a reason saying 1.94e-05; each row's number is printed as its reason prints
    it, and the headers are words (the download keeps the keys item_id, group_id)."""
    import re
    at = _open()
    by_label(at.number_input, "Batch size").set_value(12).run()
    by_label(at.checkbox, "Fixed audit share").check().run()
    by_label(at.button, "Choose the next items").click().run()
    assert not at.exception, at.exception
    df = at.dataframe[0]
    shown = df.value
    active = shown[shown["chosen_by"] == "active"]
    assert len(active)
    for _, row in active.iterrows():
        said = re.search(r"expected variance reduction (\S+) \(", row["reason"]).group(1)
        assert str(row["expected_variance_reduction"]) == said, (row["expected_variance_reduction"], said)
    config = json.loads(df.proto.columns)
    headers = [(config.get(str(c)) or {}).get("label") or str(c) for c in shown.columns]
    assert not [h for h in headers if "_" in h], headers
    assert at.session_state["label_next"]["csv"].startswith("item_id,")
